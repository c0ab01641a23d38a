#!/bin/sh
# tests/scripts/test_dist_check.sh: tests/gpu/shim/dist_check.sh's flow and verdicts against fakes (no GPU, no torch):
# a fake torchrun (the ranks one after the other), a fake Python that plays dist_ranks.py (a rank writes its file
# and the stats file the shim would: 3 + 2 r cublasDgemm_v2 calls, emulated but in off; compare and same pass) and,
# for torchrun-nccl, a fake nvidia-smi with two GPUs. The check must pass; with the fake's emulated calls short in
# one mode (BAD_MODE), or a compare failing (BAD_COMPARE), it must fail; torchrun-nccl with one GPU SKIPs.
#
#   test_dist_check.sh DIST_CHECK_SH BUILD_DIR
set -u
check=${1:?usage: test_dist_check.sh DIST_CHECK_SH BUILD_DIR}
build=${2:?usage: test_dist_check.sh DIST_CHECK_SH BUILD_DIR}
fk=$(mktemp -d)
trap 'rm -rf "$fk"' EXIT
mkdir -p "$fk/one" "$fk/two"
cat >"$fk/torchrun" <<'FAKE'
#!/bin/sh
shift 2
for r in 0 1; do RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r "$PYTHON" "$@" || exit 1; done
FAKE
cat >"$fk/python" <<'FAKE'
#!/bin/sh
shift
case $1 in
rank)
    r=${RANK:-${OMPI_COMM_WORLD_RANK:-0}}
    n=$((3 + 2 * r))
    echo "rank $r" >"$2/rank$r.pt"
    if [ -n "${OZCRT_STATS_FILE:-}" ]; then
        e=$n
        [ "${OZCRT_MODE:-}" = off ] && e=0
        [ "${OZCRT_MODE:-}" = "${BAD_MODE:-none}" ] && e=$((n - 1))
        printf 'entry point calls emulated\ncublasDgemm_v2 %d %d 0 %d 0.0 -\n' $n $e $((n - e)) \
            >"$(echo "$OZCRT_STATS_FILE" | sed "s/%p/$$/")"
    fi ;;
compare) [ "$4" = "${BAD_COMPARE:-none}" ] && exit 1; exit 0 ;;
same) exit 0 ;;
esac
FAKE
printf '#!/bin/sh\necho "GPU 0: H200"\n' >"$fk/one/nvidia-smi"
printf '#!/bin/sh\necho "GPU 0: H200"\necho "GPU 1: H200"\n' >"$fk/two/nvidia-smi"
chmod +x "$fk/torchrun" "$fk/python" "$fk/one/nvidia-smi" "$fk/two/nvidia-smi"
rc=0
# expect WANT NAME LAUNCHER [ENV...]: dist_check.sh LAUNCHER with ENV exits WANT (0 pass, 1 fail)
expect() {
    want=$1 name=$2 launcher=$3
    shift 3
    env PATH="$fk:$PATH" PYTHON="$fk/python" "$@" sh "$check" "$build" "$launcher" >"$fk/out" 2>&1
    got=$?
    if [ $got -ne "$want" ]; then
        echo "FAIL: $name: exit $got, want $want"
        tail -20 "$fk/out"
        rc=1
    else
        echo "ok: $name (exit $got: $(tail -n 1 "$fk/out"))"
    fi
}
expect 0 "torchrun, every mode as expected" torchrun
expect 1 "torchrun, a process's emulated calls short in ozaki2" torchrun BAD_MODE=ozaki2
expect 1 "torchrun, phase22's compare failing" torchrun BAD_COMPARE=phase22
expect 0 "torchrun-nccl, two GPUs" torchrun-nccl PATH="$fk/two:$fk:$PATH"
expect 0 "torchrun-nccl, one GPU: SKIP" torchrun-nccl PATH="$fk/one:$fk:$PATH"
grep -q "^SKIP" "$fk/out" || { echo "FAIL: torchrun-nccl on one GPU did not SKIP"; rc=1; }
[ $rc -eq 0 ] && echo "test_dist_check: passed"
exit $rc
