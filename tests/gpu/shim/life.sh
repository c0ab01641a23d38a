#!/bin/sh
# tests/gpu/shim/life.sh: the shim in process life on the GPU machine: new GPUs (PTX JIT), two GPUs, exit (scripts/gpu-check runs each). Last line PASS or FAIL.
#
#   tests/gpu/shim/life.sh BUILD_DIR ptx-jit|multi-gpu|multi-gpu-speed|fork|exit-destroy|workspace-bound
#
# ptx-jit:      bits_client under the shim as built (every call emulated),
#               then test_bits with CUDA_FORCE_PTX_JIT=1 (the driver compiles
#               the embedded compute_80 PTX instead of using the machine code,
#               as on a GPU newer than the build; the sm_90a engine, which has
#               no PTX, is found unusable): bit-identical to the CPU reference.
#               (cuBLAS itself fails cublasCreate_v2 under forced JIT, so the
#               shim cannot be run that way with a real cuBLAS.)
# multi-gpu:    multi_gpu under the shim: one handle and one thread per
#               device, all at once, in the default mode and in ozaki2, and
#               in ozaki2 with 1152 rows (the 192-row residue tile) (SKIP
#               with one GPU: run it on nvidia-h200-x2); then two such
#               processes at once, each driving every GPU, in ozaki2.
# multi-gpu-speed: time_dgemm 16384 in ozaki2 on GPU 0 alone, then on every
#               GPU at once (a process a GPU): each within 10% of alone
#               (SKIP with one GPU).
# fork:         fork_client natively, then under the shim in phase22, ozaki2
#               (auto) and ozaki2 at 53 bits: it exits 0 (the parent's
#               products unchanged by its children), the children forked
#               before the parent's CUDA start compute the parent's bits,
#               every other line a child prints (cuBLAS statuses after the
#               parent's CUDA start, a child killed or hung) is native's,
#               and the parent's calls were all emulated.
# exit-destroy: exit_destroy under the shim: a handle destroyed by an atexit
#               handler after the CUDA runtime began unloading; no "ozcrt:"
#               line on stderr.
# workspace-bound: ws_bound under the shim (default thresholds): the device
#               memory one 8192^3 / 16384^3 call takes beyond its operands
#               (beta 0 and 1) stays within max(1 GiB, a quarter of the
#               operands' bytes) in the default mode; in the ozaki2 mode
#               (bits 53: N = 16) within the larger of that and the whole
#               call (16 bytes per element of A, B, C), and within
#               OZCRT_MAX_WORKSPACE_MB (2048) when that keeps the whole call
#               out (the best plan under the cap); every call emulated.
# Outputs go to BUILD_DIR/shim-gpu/.
set -u
build=$(cd "${1:?usage: life.sh BUILD_DIR CHECK}" && pwd)
check=${2:?usage: life.sh BUILD_DIR ptx-jit|multi-gpu|multi-gpu-speed|fork|exit-destroy|workspace-bound}
bin=$build/tests/gpu/shim
out=$build/shim-gpu
mkdir -p "$out"
rc=0

summary() { # STATUS DETAIL
    echo "$1: $check${2:+ ($2)}"
    [ "$1" = PASS ] || rc=1
}

# shim NAME CMD...: CMD under libozcrt.so (thresholds 128, stats in $out/NAME.stats); stdout in NAME.txt, stderr in NAME.err
shim() {
    name=$1
    shift
    rm -f "$out/$name.stats"
    OZCRT_MIN_M=128 OZCRT_MIN_N=128 OZCRT_MIN_K=128 OZCRT_MIN_SPEEDUP=0 OZCRT_STATS=1 OZCRT_STATS_FILE="$out/$name.stats" \
        "$build/interpose/ozcrt-run" -- "$@" > "$out/$name.txt" 2> "$out/$name.err"
}

# all_emulated STATS ENTRY...: each entry point has calls > 0, all emulated
all_emulated() {
    stats=$1
    shift
    for ep in "$@"; do
        awk -v ep="$ep" '$1 == ep { found = 1; ok = ($2 > 0 && $3 == $2) } END { exit !(found && ok) }' "$stats" \
            2>/dev/null || return 1
    done
}

case $check in
ptx-jit)
    # The shim as built: every call emulated, the client's checks hold.
    if shim bits "$bin/bits_client"; then summary PASS "as built: $(tail -n 1 "$out/bits.txt")"
    else summary FAIL "as built: exit $?, see $out/bits.txt and .err"; fi
    if all_emulated "$out/bits.stats" cublasDgemm_v2 cublasDgemmStridedBatched; then summary PASS "bits: all emulated"
    else summary FAIL "bits: not all calls emulated, see $out/bits.stats"; fi
    # Forced JIT: cuBLAS itself cannot start then (cublasCreate_v2 fails: its kernels
    # ship as machine code), so the kernels are checked without it: test_bits (the
    # GPU path against the CPU reference, bit for bit) with CUDA_FORCE_PTX_JIT=1.
    # The sm_90a engine has no PTX: it must be found unusable and the portable
    # kernels, compiled from the compute_80 PTX, must give the same bits.
    if CUDA_FORCE_PTX_JIT=1 "$build/tests/gpu/test_bits" 40 > "$out/bits-jit.txt" 2>&1; then
        summary PASS "PTX JIT: $(tail -n 1 "$out/bits-jit.txt") (test_bits, bit-identical to the CPU reference)"
    else summary FAIL "PTX JIT: exit $?, see $out/bits-jit.txt"; fi
    ;;
multi-gpu)
    if shim multi "$bin/multi_gpu"; then summary PASS "$(tail -n 1 "$out/multi.txt")"
    else summary FAIL "exit $?: $(grep FAIL "$out/multi.txt" | head -n 3 | tr '\n' ' ') see $out/multi.txt and .err"; fi
    # the ozaki2 mode (its error is far inside the Phase 22 bound the client checks)
    if OZCRT_MODE=ozaki2 shim multi-oz2 "$bin/multi_gpu"; then summary PASS "ozaki2: $(tail -n 1 "$out/multi-oz2.txt")"
    else summary FAIL "ozaki2: exit $?: $(grep FAIL "$out/multi-oz2.txt" | head -n 3 | tr '\n' ' ') see $out/multi-oz2.txt and .err"; fi
    # 1152 rows: the ozaki2 engine's 192-row residue tile (no padding) on every device at once
    if OZCRT_MODE=ozaki2 shim multi-oz2-tall "$bin/multi_gpu" 1152; then summary PASS "ozaki2 1152 rows: $(tail -n 1 "$out/multi-oz2-tall.txt")"
    else summary FAIL "ozaki2 1152 rows: exit $?: $(grep FAIL "$out/multi-oz2-tall.txt" | head -n 3 | tr '\n' ' ') see $out/multi-oz2-tall.txt and .err"; fi
    # two processes at once, each driving every GPU (a handle and a thread a device), in ozaki2
    OZCRT_MODE=ozaki2 shim multi-p1 "$bin/multi_gpu" & p1=$!
    OZCRT_MODE=ozaki2 shim multi-p2 "$bin/multi_gpu" & p2=$!
    wait $p1; r1=$?
    wait $p2; r2=$?
    if [ $r1 -eq 0 ] && [ $r2 -eq 0 ]; then summary PASS "two processes at once, ozaki2: $(tail -n 1 "$out/multi-p1.txt"); $(tail -n 1 "$out/multi-p2.txt")"
    else summary FAIL "two processes at once, ozaki2: exit $r1 and $r2, see $out/multi-p1.txt, multi-p2.txt and .err"; fi
    ;;
multi-gpu-speed)
    # the ozaki2 mode's speed per GPU: cublasDgemm_v2 at 16384^3 (time_dgemm) under the shim on GPU 0
    # alone, then on every GPU at once (a process a GPU); each GPU's time within 10% of the one alone
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
    if [ "$ngpu" -lt 2 ]; then
        echo "SKIP: $ngpu GPU(s); multi-gpu-speed needs two"
        exit 0
    fi
    CUDA_VISIBLE_DEVICES=0 OZCRT_MODE=ozaki2 shim speed-alone "$bin/time_dgemm" 16384 || summary FAIL "alone: exit $?"
    alone=$(awk '{print $2}' "$out/speed-alone.txt")
    pids=""
    g=0
    while [ $g -lt "$ngpu" ]; do
        CUDA_VISIBLE_DEVICES=$g OZCRT_MODE=ozaki2 shim speed-gpu$g "$bin/time_dgemm" 16384 & pids="$pids $!"
        g=$((g + 1))
    done
    for p in $pids; do wait "$p" || summary FAIL "a process of the busy run failed"; done
    g=0
    while [ $g -lt "$ngpu" ]; do
        t=$(awk '{print $2}' "$out/speed-gpu$g.txt")
        if awk -v t="$t" -v a="$alone" 'BEGIN { exit !(t > 0 && a > 0 && t <= 1.1 * a) }'; then
            summary PASS "GPU $g busy with the others: $t ms, GPU 0 alone: $alone ms"
        else summary FAIL "GPU $g busy with the others: $t ms, GPU 0 alone: $alone ms"; fi
        all_emulated "$out/speed-gpu$g.stats" cublasDgemm_v2 || summary FAIL "GPU $g: its calls were not all emulated"
        g=$((g + 1))
    done
    ;;
fork)
    # children_lines FILE: the lines children print (sorted: they run at once), hashes left out
    children_lines() { grep -v -e '^parent hash' -e '^pre-child hash' -e '^done:' -e '^FAIL' "$1" | sort; }
    # same_hashes FILE: every pre-child hash equals the parent's, and there are 3 of them
    same_hashes() {
        awk '$1 == "parent" { p = $3 } $1 == "pre-child" { h[++n] = $3 }
             END { ok = p != "" && n == 3; for (i = 1; i <= n; i++) ok = ok && h[i] == p; exit !ok }' "$1"
    }
    if "$bin/fork_client" > "$out/fork-native.txt" 2> "$out/fork-native.err"; then
        summary PASS "native: $(tail -n 1 "$out/fork-native.txt")"
    else summary FAIL "native: exit $?: $(grep -v hash "$out/fork-native.txt" | head -n 3 | tr '\n' ' ')"; fi
    same_hashes "$out/fork-native.txt" || summary FAIL "native: the children's products differ from the parent's"
    children_lines "$out/fork-native.txt" > "$out/fork-native.children"
    for m in phase22: ozaki2:auto ozaki2:53; do
        label=${m%:}
        name=fork-$(echo "$label" | tr : -)
        # shellcheck disable=SC2030,SC2031
        if OZCRT_MODE=${m%%:*} OZCRT_BITS=${m#*:} shim "$name" "$bin/fork_client"; then
            summary PASS "$label: $(tail -n 1 "$out/$name.txt")"
        else summary FAIL "$label: exit $?: $(grep -v hash "$out/$name.txt" | head -n 3 | tr '\n' ' ') see $out/$name.err"; fi
        if same_hashes "$out/$name.txt"; then summary PASS "$label: the children before CUDA computed the parent's bits"
        else summary FAIL "$label: the children before CUDA computed other bits than the parent, see $out/$name.txt"; fi
        if children_lines "$out/$name.txt" | cmp -s - "$out/fork-native.children"; then
            summary PASS "$label: the children's statuses are native's ($(sort -u "$out/fork-native.children" | tr '\n' ';'))"
        else summary FAIL "$label: the children's lines differ from native's: $(children_lines "$out/$name.txt" | diff - "$out/fork-native.children" | head -n 6 | tr '\n' ' ')"; fi
        if all_emulated "$out/$name.stats" cublasDgemm_v2; then summary PASS "$label: the parent's calls were emulated"
        else summary FAIL "$label: the parent's calls were not all emulated, see $out/$name.stats"; fi
    done
    ;;
exit-destroy)
    if shim exit "$bin/exit_destroy"; then summary PASS "$(head -n 1 "$out/exit.txt")"
    else summary FAIL "exit $?, see $out/exit.txt and .err"; fi
    if all_emulated "$out/exit.stats" cublasDgemm_v2; then summary PASS "its calls were emulated"
    else summary FAIL "its calls were not emulated (no workspace to free at exit), see $out/exit.stats"; fi
    if grep -q '^ozcrt:' "$out/exit.err"; then summary FAIL "stderr: $(grep '^ozcrt:' "$out/exit.err" | head -n 2 | tr '\n' ' ')"
    else summary PASS "no ozcrt line on stderr at exit"; fi
    ;;
workspace-bound)
    # NAME "ENV..." ARGS...: ws_bound ARGS under the shim with ENV (assignments without spaces)
    wsb() {
        name=$1
        envs=$2
        shift 2
        rm -f "$out/$name.stats"
        # shellcheck disable=SC2086
        if env $envs OZCRT_STATS=1 OZCRT_STATS_FILE="$out/$name.stats" "$build/interpose/ozcrt-run" -- \
            "$bin/ws_bound" "$@" > "$out/$name.txt" 2> "$out/$name.err"; then
            summary PASS "$name: $(grep -c ' ok$' "$out/$name.txt") calls within the bound: $(tr '\n' ';' < "$out/$name.txt")"
        else summary FAIL "$name: exit $?: $(tr '\n' ';' < "$out/$name.txt") see $out/$name.err"; fi
        if all_emulated "$out/$name.stats" cublasDgemm_v2; then summary PASS "$name: its calls were emulated"
        else summary FAIL "$name: its calls were not emulated, see $out/$name.stats"; fi
    }
    wsb wsb "OZCRT_MODE=phase22" 8192 16384
    wsb wsb-oz2 "OZCRT_MODE=ozaki2 OZCRT_BITS=53" --whole 16 8192 16384
    wsb wsb-oz2-cap "OZCRT_MODE=ozaki2 OZCRT_BITS=53 OZCRT_MAX_WORKSPACE_MB=2048" --cap 2048 8192
    ;;
*)
    echo "life.sh: unknown check $check" >&2
    exit 2
    ;;
esac
echo "$( [ $rc -eq 0 ] && echo PASS || echo FAIL ): life.sh $check (outputs in $out)"
exit $rc
