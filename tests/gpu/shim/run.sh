#!/bin/sh
# tests/gpu/shim/run.sh: the shim's GPU checks, on the GPU machine. One summary line per check.
#
#   tests/gpu/shim/run.sh BUILD_DIR
#
# 1. client_dgemm natively (the program's own checks hold for plain cuBLAS);
# 2. client_dgemm under libozcrt.so: every case within the Phase 22 bound, and
#    the stats show all sixteen GEMM entry points (the grouped ones too) emulated, none failed;
# 3. torch_cupy_check.py natively, then under the shim with OZCRT_MIN_M/N/K=1
#    (cuSOLVER's LU updates have small k): within the bound, and the stats show
#    cublasDgemm_v2, cublasDgemm_v2_64, cublasDgemmStridedBatched, cublasGemmEx
#    and cublasGemmStridedBatchedEx emulated.
# Outputs, logs and stats tables go to BUILD_DIR/shim-gpu/. Exit status 1 if any check fails.
set -u
build=${1:?usage: run.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$build/interpose/libozcrt.so
client=$build/tests/gpu/shim/client_dgemm
out=$build/shim-gpu
python=${PYTHON:-python3}
mkdir -p "$out"
rc=0

summary() { # STATUS NAME DETAIL
    echo "$1: $2${3:+ ($3)}"
    [ "$1" = PASS ] || rc=1
}

# emulated_ok STATS ENTRY...: each entry point has emulated > 0 and failed == 0
emulated_ok() {
    stats=$1
    shift
    [ -s "$stats" ] || { echo "no stats table"; return 1; }
    missing=""
    for ep in "$@"; do
        awk -v ep="$ep" '$1 == ep { found = 1; ok = ($3 > 0 && $4 == 0) } END { exit !(found && ok) }' "$stats" \
            || missing="$missing $ep"
    done
    [ -z "$missing" ] || { echo "not emulated (or failed):$missing"; return 1; }
    echo "emulated: $*"
}

last_line() { tail -n 1 "$1" 2>/dev/null; }

[ -f "$lib" ] || { summary FAIL "libozcrt.so" "not built at $lib"; exit 1; }

# 1. client natively
if [ -x "$client" ]; then
    "$client" > "$out/client-native.txt" 2>&1
    if [ $? -eq 0 ]; then summary PASS "client_dgemm native" "$(last_line "$out/client-native.txt")"
    else summary FAIL "client_dgemm native" "see $out/client-native.txt"; fi

    # 2. client under the shim
    rm -f "$out/client.stats" "$out/client.log"
    # thresholds 128: the client's shapes (129..1000) are emulated, its 7x61x68 case is not
    OZCRT_STATS=1 OZCRT_STATS_FILE="$out/client.stats" OZCRT_LOG=1 OZCRT_LOG_FILE="$out/client.log" \
        OZCRT_MIN_M=128 OZCRT_MIN_N=128 OZCRT_MIN_K=128 \
        "$build/interpose/ozcrt-run" -- "$client" > "$out/client-shim.txt" 2>&1
    crc=$?
    if [ $crc -eq 0 ]; then summary PASS "client_dgemm under the shim" "$(last_line "$out/client-shim.txt")"
    else summary FAIL "client_dgemm under the shim" "exit $crc, see $out/client-shim.txt"; fi
    if msg=$(emulated_ok "$out/client.stats" cublasDgemm_v2 cublasDgemm_v2_64 cublasGemmEx \
             cublasDgemmStridedBatched cublasGemmStridedBatchedEx cublasDgemmBatched cublasGemmBatchedEx \
             cublasGemmEx_64 cublasDgemmStridedBatched_64 cublasGemmStridedBatchedEx_64 cublasDgemmBatched_64 \
             cublasGemmBatchedEx_64 cublasDgemmGroupedBatched cublasDgemmGroupedBatched_64 \
             cublasGemmGroupedBatchedEx cublasGemmGroupedBatchedEx_64); then
        summary PASS "client_dgemm stats" "$msg"
    else summary FAIL "client_dgemm stats" "$msg; see $out/client.stats"; fi
    # the captured call was emulated too: the warm-up and the captured call (replays are not cuBLAS calls)
    n=$(grep -c 'cublasDgemm_v2 m=384 n=256 k=640 ops=NT batch=1 -> emulated' "$out/client.log" 2>/dev/null)
    if [ "${n:-0}" -ge 2 ]; then summary PASS "graph-captured call emulated" "$n calls of that shape emulated"
    else summary FAIL "graph-captured call emulated" "${n:-0} emulated calls of that shape in $out/client.log"; fi
else
    summary FAIL "client_dgemm" "not built at $client"
fi

# 3. PyTorch and CuPy
"$python" "$here/torch_cupy_check.py" > "$out/python-native.txt" 2>&1
if [ $? -eq 0 ]; then summary PASS "torch/cupy native" "$(last_line "$out/python-native.txt")"
else summary FAIL "torch/cupy native" "see $out/python-native.txt"; fi

rm -f "$out/python.stats" "$out/python.log"
OZCRT_STATS=1 OZCRT_STATS_FILE="$out/python.stats" OZCRT_LOG=1 OZCRT_LOG_FILE="$out/python.log" \
    OZCRT_MIN_M=1 OZCRT_MIN_N=1 OZCRT_MIN_K=1 \
    "$build/interpose/ozcrt-run" -- "$python" "$here/torch_cupy_check.py" > "$out/python-shim.txt" 2>&1
prc=$?
if [ $prc -eq 0 ]; then summary PASS "torch/cupy under the shim" "$(last_line "$out/python-shim.txt")"
else summary FAIL "torch/cupy under the shim" "exit $prc, see $out/python-shim.txt"; fi
if msg=$(emulated_ok "$out/python.stats" cublasDgemm_v2 cublasDgemm_v2_64 cublasDgemmStridedBatched \
         cublasGemmEx cublasGemmStridedBatchedEx); then
    summary PASS "torch/cupy stats" "$msg"
else summary FAIL "torch/cupy stats" "$msg; see $out/python.stats"; fi

echo "$( [ $rc -eq 0 ] && echo PASS || echo FAIL ): shim GPU checks (outputs in $out)"
exit $rc
