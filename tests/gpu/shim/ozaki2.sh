#!/bin/sh
# tests/gpu/shim/ozaki2.sh: PyTorch and CuPy float64 clients under the shim in the ozaki2 mode (thresholds 0):
# results at FP64 accuracy (ozaki2_clients.py), and the stats show the calls emulated, none failed.
#
#   tests/gpu/shim/ozaki2.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: ozaki2.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=$build/shim-gpu
mkdir -p "$out"
rm -f "$out/ozaki2.stats"
OZCRT_MODE=ozaki2 OZCRT_MIN_M=0 OZCRT_MIN_N=0 OZCRT_MIN_K=0 OZCRT_MIN_SPEEDUP=0 OZCRT_STATS=1 OZCRT_STATS_FILE="$out/ozaki2.stats" \
    LD_PRELOAD="$build/interpose/libozcrt.so${LD_PRELOAD:+:$LD_PRELOAD}" \
    "${PYTHON:-python3}" "$here/ozaki2_clients.py"
rc=$?
cat "$out/ozaki2.stats" 2>/dev/null
# the entry points these clients reach (field-notes.md): each emulated, none failed
for ep in cublasDgemm_v2 cublasDgemmStridedBatched cublasGemmEx cublasGemmStridedBatchedEx cublasLtMatmul; do
    awk -v ep="$ep" '$1 == ep { found = 1; ok = ($3 > 0 && $4 == 0) } END { exit !(found && ok) }' "$out/ozaki2.stats" \
        || { echo "FAIL: $ep not emulated in the ozaki2 mode (or failed)"; rc=1; }
done
[ $rc -eq 0 ] && echo "ozaki2 clients: passed" || echo "ozaki2 clients: failed"
exit $rc
