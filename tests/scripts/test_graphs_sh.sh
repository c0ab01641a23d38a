#!/usr/bin/env bash
# tests/scripts/test_graphs_sh.sh GRAPHS_SH: tests/gpu/shim/graphs.sh's verdicts against fake programs (no GPU).
#
# A fake build folder: each client prints PASS (or FAIL, exit 1, when told),
# and a fake interpose/ozcrt-run runs it and writes COUNT log lines of the
# check's shape to OZCRT_LOG_FILE, as the shim does with OZCRT_LOG=1. The
# checks replay and shared must pass when every run passes with the right
# count, and fail when a client fails natively, under the shim, or when the
# shim's log has a call too few or a forwarded call.
set -u
script=$1
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/gpu/shim" "$tmp/interpose"
for p in graph_replay shared_handle; do
    cat >"$tmp/tests/gpu/shim/$p" <<'FAKE'
#!/bin/sh
case "${FAKE_FAIL:-}" in
all) echo "FAIL: fake"; exit 1 ;;
shim) [ -n "${OZCRT_LOG_FILE:-}" ] && { echo "FAIL: fake under the shim"; exit 1; } ;;
native) [ -z "${OZCRT_LOG_FILE:-}" ] && { echo "FAIL: fake natively"; exit 1; } ;;
esac
echo "PASS: fake"
FAKE
    chmod +x "$tmp/tests/gpu/shim/$p"
done
cat >"$tmp/interpose/ozcrt-run" <<'FAKE'
#!/bin/sh
shift # --
"$@"
rc=$?
case $(basename "$1") in
graph_replay) shape="m=1024 n=1024 k=1024"; n=47 ;;
*) shape="m=1536 n=1536 k=1536"; n=96 ;;
esac
n=$((n + ${FAKE_EXTRA:-0}))
i=0
while [ $i -lt $n ]; do
    echo "ozcrt: cublasDgemm_v2 $shape ops=NN batch=1 -> emulated (phase22)" >>"$OZCRT_LOG_FILE"
    i=$((i + 1))
done
[ -n "${FAKE_FORWARD:-}" ] && echo "ozcrt: cublasDgemm_v2 $shape ops=NN batch=1 -> forward: launch-failed" >>"$OZCRT_LOG_FILE"
exit $rc
FAKE
chmod +x "$tmp/interpose/ozcrt-run"
fails=0
# expect NAME WANT_RC CHECK [ENV...]: graphs.sh CHECK on the fake build with ENV, its exit status WANT_RC
expect() {
    local name=$1 want=$2 check=$3
    shift 3
    local got
    env "$@" sh "$script" "$tmp" "$check" >"$tmp/out.txt" 2>&1
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $name: exit $got, want $want"; sed 's/^/  /' "$tmp/out.txt"
        fails=$((fails + 1))
    else
        echo "ok   $name ($(tail -n 1 "$tmp/out.txt"))"
    fi
}
expect "replay passes" 0 replay
expect "shared passes" 0 shared
expect "shared: a client fails everywhere" 1 shared FAKE_FAIL=all
expect "shared: a client fails under the shim only" 1 shared FAKE_FAIL=shim
expect "replay: a client fails under the shim only" 1 replay FAKE_FAIL=shim
expect "shared: a client fails natively only" 1 shared FAKE_FAIL=native
expect "replay: a client fails natively only" 1 replay FAKE_FAIL=native
expect "shared: one call too few logged" 1 shared FAKE_EXTRA=-1
expect "replay: one call too many logged" 1 replay FAKE_EXTRA=1
expect "shared: a forwarded call" 1 shared FAKE_FORWARD=1
expect "unknown check" 2 nosuch
[ "$fails" -eq 0 ] && echo "graphs.sh: all passed" || echo "graphs.sh: $fails failed"
exit $((fails != 0))
