#!/bin/sh
# tests/gpu/shim/graphs.sh: the shim's graph, stream and capture checks on the GPU machine (scripts/gpu-check runs each). Last line PASS or FAIL.
#
#   tests/gpu/shim/graphs.sh BUILD_DIR replay|replay-wide|churn|shared|relaxed|torch
#
# replay:  graph_replay natively and under the shim: graphs replayed on two
#          streams with eager calls between them, bit-equal to the eager calls;
#          the log shows every call of its shape emulated (the captured ones
#          and the first call of the handle, a captured one, included).
# replay-wide: the same on data no automatic plan certifies (exponents
#          2^+-200 by element), under ozaki2 (auto, OZCRT_MIN_SPEEDUP=0): the
#          eager calls run cuBLAS from the native branch, the captured ones
#          from the IF node the shim put into their graphs, so every replay is
#          bit-equal to its eager call; all 47 calls taken, the GPU's plans
#          all "no plan".
# churn:   stream_churn under the shim: 1000 streams, memory flat, all emulated.
# shared:  shared_handle natively and under the shim (default mode; ozaki2
#          with OZCRT_MIN_SPEEDUP=0): one handle on cudaStreamPerThread used
#          by 4 threads at once, each bit-equal to its calls alone, all 96
#          calls emulated.
# relaxed: capture_relaxed natively and under the shim: a global-mode capture
#          survives another thread's emulated call (which allocated; the
#          other call is the warm-up's).
# torch:   torch_graph_check.py natively and under the shim: the captured
#          float64 mm is emulated and its replays bit-equal to eager.
# Outputs and logs go to BUILD_DIR/shim-gpu/.
set -u
build=$(cd "${1:?usage: graphs.sh BUILD_DIR CHECK}" && pwd)
check=${2:?usage: graphs.sh BUILD_DIR replay|replay-wide|churn|shared|relaxed|torch}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/tests/gpu/shim
out=$build/shim-gpu
python=${PYTHON:-python3}
mkdir -p "$out"
rc=0

summary() { # STATUS DETAIL
    echo "$1: $check${2:+ ($2)}"
    [ "$1" = PASS ] || rc=1
}

# run_prog NAME CMD...: CMD's output in $out/NAME.txt; 0 when it exits 0
run_prog() {
    name=$1
    shift
    "$@" > "$out/$name.txt" 2>&1
}

# under_shim NAME CMD...: CMD under libozcrt.so with one log line per call in $out/NAME.log
under_shim() {
    name=$1
    shift
    rm -f "$out/$name.log"
    OZCRT_LOG=1 OZCRT_LOG_FILE="$out/$name.log" "$build/interpose/ozcrt-run" -- "$@" > "$out/$name.txt" 2>&1
}

# calls LOG SHAPE DECISION: log lines of calls of SHAPE ("m=.. n=.. k=..") with that decision
calls() {
    grep -c -- "$2 ops=NN batch=1 -> $3" "$1" 2>/dev/null
}

# expect_calls NAME SHAPE EMULATED: exactly EMULATED calls of SHAPE emulated, none forwarded
expect_calls() {
    e=$(calls "$out/$1.log" "$2" emulated)
    f=$(calls "$out/$1.log" "$2" forward)
    if [ "${e:-0}" -eq "$3" ] && [ "${f:-0}" -eq 0 ]; then
        summary PASS "$1: $e calls of $2 emulated, none forwarded"
    else
        summary FAIL "$1: ${e:-0} calls of $2 emulated (want $3), ${f:-0} forwarded; see $out/$1.log"
    fi
}

last() { tail -n 1 "$out/$1.txt" 2>/dev/null; }

# both NAME CMD...: CMD natively ($out/NAME-native.txt) and under the shim (NAME-shim), a summary line each
both() { # (sh has no locals: run_prog and under_shim set $name)
    both_name=$1
    shift
    if run_prog "$both_name-native" "$@"; then summary PASS "native: $(last "$both_name-native")"
    else summary FAIL "native: $(last "$both_name-native")"; fi
    if under_shim "$both_name-shim" "$@"; then summary PASS "shim: $(last "$both_name-shim")"
    else summary FAIL "shim: $(last "$both_name-shim"); see $out/$both_name-shim.txt"; fi
}

case $check in
replay)
    # 1 warm-up + 3 captured calls + 3 eager references + 2 eager calls in each of 20 rounds
    both replay "$bin/graph_replay"
    expect_calls replay-shim "m=1024 n=1024 k=1024" 47
    ;;
replay-wide)
    if GRAPH_REPLAY_WIDE=1 run_prog replay-wide-native "$bin/graph_replay"; then
        summary PASS "native: $(last replay-wide-native)"
    else summary FAIL "native: $(last replay-wide-native)"; fi
    st=$out/replay-wide-shim.stats
    rm -f "$st"
    if GRAPH_REPLAY_WIDE=1 OZCRT_MODE=ozaki2 OZCRT_MIN_SPEEDUP=0 OZCRT_STATS=1 OZCRT_STATS_FILE="$st" \
        under_shim replay-wide-shim "$bin/graph_replay"; then
        summary PASS "ozaki2 (auto): $(last replay-wide-shim)"
    else summary FAIL "ozaki2 (auto): $(last replay-wide-shim); see $out/replay-wide-shim.txt"; fi
    expect_calls replay-wide-shim "m=1024 n=1024 k=1024" 47
    plans=$(grep "^automatic plans of real products" "$st" 2>/dev/null)
    case $plans in
    *"no plan (native)="*N=*) summary FAIL "some products certified: $plans" ;;
    *"no plan (native)="*) summary PASS "the GPU's plans: ${plans#*: }" ;;
    *) summary FAIL "no plans counted; see $st" ;;
    esac
    ;;
churn)
    if under_shim churn-shim "$bin/stream_churn"; then summary PASS "shim: $(last churn-shim)"
    else summary FAIL "shim: $(last churn-shim)"; fi
    expect_calls churn-shim "m=2048 n=2048 k=2048" 1000
    ;;
shared)
    # 4 threads x (12 calls alone + 12 at once)
    both shared "$bin/shared_handle"
    expect_calls shared-shim "m=1536 n=1536 k=1536" 96
    if OZCRT_MODE=ozaki2 OZCRT_MIN_SPEEDUP=0 under_shim shared-oz2 "$bin/shared_handle"; then
        summary PASS "ozaki2: $(last shared-oz2)"
    else summary FAIL "ozaki2: $(last shared-oz2)"; fi
    expect_calls shared-oz2 "m=1536 n=1536 k=1536" 96
    ;;
relaxed)
    # Natively this fails on cuBLAS's own account (seen on the H200, 2026-11-30: with
    # plain cuBLAS, thread B's first large DGEMM invalidates A's global-mode capture;
    # cause inside cuBLAS not established). Reported, not judged: what is checked is
    # that the shim's allocations add no failure.
    if run_prog relaxed-native "$bin/capture_relaxed"; then echo "INFO: $check (native: $(last relaxed-native))"
    else echo "INFO: $check (native cuBLAS alone breaks the capture: $(last relaxed-native))"; fi
    if under_shim relaxed-shim "$bin/capture_relaxed"; then summary PASS "shim: $(last relaxed-shim)"
    else summary FAIL "shim: $(last relaxed-shim)"; fi
    expect_calls relaxed-shim "m=1024 n=1024 k=1024" 2
    ;;
torch)
    if ! "$python" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
        echo "SKIP: torch: no PyTorch with CUDA"
        exit 0
    fi
    both torch "$python" "$here/torch_graph_check.py"
    expect_calls torch-shim "m=768 n=768 k=768" 4
    ;;
*)
    echo "graphs.sh: unknown check $check" >&2
    exit 2
    ;;
esac
echo "$([ $rc -eq 0 ] && echo PASS || echo FAIL): $check"
exit $rc
