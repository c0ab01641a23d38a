#!/bin/sh
# tests/gpu/shim/dist_check.sh: a distributed float64 program under the shim, two processes on one
# GPU (gloo): tests/gpu/shim/dist_ranks.py launched by torchrun or by mpirun, natively and then
# preloaded in the modes off, phase22 and ozaki2 (its default bits, auto), size thresholds and the
# speed rule at 0 (every product emulated). Each preloaded run writes one stats file per process
# (OZCRT_STATS_FILE with %p); the files must be the ranks' own (3 and 5 cublasDgemm_v2 calls,
# all emulated, or none in off), and dist_ranks.py compare holds each run to the native one (off:
# bit-equal; otherwise each product within its mode's bound; the all-reduce and the step exact).
#
#   tests/gpu/shim/dist_check.sh BUILD_DIR torchrun     torchrun --standalone --nproc_per_node=2,
#                                                       the shim set by scripts/ozcrt-run
#   tests/gpu/shim/dist_check.sh BUILD_DIR mpirun       mpirun -np 2 -x LD_PRELOAD -x OZCRT_...: the
#                                                       first of $OZ_MPIRUN, mpirun on PATH, and
#                                                       .deps/openmpi/mpirun (scripts/fetch-openmpi;
#                                                       extracted here when only its .debs came)
#   tests/gpu/shim/dist_check.sh BUILD_DIR torchrun-nccl
#                                                       two GPUs: torchrun, NCCL, one process a GPU;
#                                                       each mode's tensors also bit-equal to the
#                                                       same mode's run with both ranks on one GPU
# SKIP (exit 0) without the launcher (or, torchrun-nccl, two GPUs); exit 1 on any failure. NVLink
# multicast stays off (NCCL_NVLS_ENABLE=0 and the like, exported to every process).
set -u
build=$(cd "${1:?usage: dist_check.sh BUILD_DIR torchrun|mpirun}" && pwd)
launcher=${2:?usage: dist_check.sh BUILD_DIR torchrun|mpirun}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
lib=$build/interpose/libozcrt.so
py=${PYTHON:-$(command -v python3)} # absolute: the interpreter mpirun starts is this one
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
case $launcher in
torchrun)
    command -v torchrun >/dev/null || { echo "SKIP: no torchrun"; exit 0; } ;;
torchrun-nccl)
    command -v torchrun >/dev/null || { echo "SKIP: no torchrun"; exit 0; }
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
    [ "$ngpu" -ge 2 ] || { echo "SKIP: $ngpu GPU(s); torchrun-nccl needs two"; exit 0; } ;;
mpirun)
    mpirun=${OZ_MPIRUN:-$(command -v mpirun || true)}
    if [ -z "$mpirun" ] && [ ! -x "$root/.deps/openmpi/mpirun" ] && ls "$root"/.deps/openmpi/debs/*.deb >/dev/null 2>&1; then
        "$root/scripts/fetch-openmpi" extract >/dev/null || { echo "FAIL: scripts/fetch-openmpi extract"; exit 1; }
    fi
    [ -n "$mpirun" ] || mpirun=$("$root/scripts/fetch-openmpi" path 2>/dev/null || true)
    [ -n "$mpirun" ] || { echo "SKIP: no MPI runtime (scripts/fetch-openmpi here, then carry .deps/openmpi)"; exit 0; }
    # the GPU machine runs as root: OpenMPI refuses that unless told twice (fetch-openmpi's wrapper
    # sets these too; a system mpirun does not)
    [ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    echo "mpirun: $mpirun ($("$mpirun" --version 2>&1 | head -1))" ;;
*)
    echo "usage: dist_check.sh BUILD_DIR torchrun|mpirun|torchrun-nccl" >&2; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
port=$((29500 + $$ % 2000))
rc=0
fail() { echo "FAIL: $*"; rc=1; }

# launch MODE [DIR [BACKEND]]: the two ranks into DIR (default $out/MODE), natively (MODE native) or
# preloaded in MODE; BACKEND gloo (every rank on GPU 0) or nccl (a GPU a rank)
launch() {
    mode=$1 dir=${2:-$out/$1} backend=${3:-gloo}
    mkdir -p "$dir"
    if [ "$launcher" != mpirun ]; then
        if [ "$mode" = native ]; then
            env -u LD_PRELOAD DIST_BACKEND=$backend torchrun --standalone --nproc_per_node=2 "$here/dist_ranks.py" \
                rank "$dir"
        else
            DIST_BACKEND=$backend OZCRT_LIB=$lib "$root/scripts/ozcrt-run" --mode "$mode" --min-m 0 --min-n 0 \
                --min-k 0 --min-speedup 0 --stats-file "$dir/stats.%p.txt" -- \
                torchrun --standalone --nproc_per_node=2 "$here/dist_ranks.py" rank "$dir"
        fi
    else
        port=$((port + 1))
        if [ "$mode" = native ]; then
            env -u LD_PRELOAD "$mpirun" -np 2 --oversubscribe -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$port -x PATH ${PYTHONPATH:+-x PYTHONPATH} \
                "$py" "$here/dist_ranks.py" rank "$dir"
        else
            env -u LD_PRELOAD "$mpirun" -np 2 --oversubscribe -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$port -x PATH ${PYTHONPATH:+-x PYTHONPATH} \
                -x LD_PRELOAD="$lib" -x OZCRT_MODE="$mode" -x OZCRT_MIN_M=0 -x OZCRT_MIN_N=0 -x OZCRT_MIN_K=0 \
                -x OZCRT_MIN_SPEEDUP=0 -x OZCRT_STATS=1 -x OZCRT_STATS_FILE="$dir/stats.%p.txt" \
                "$py" "$here/dist_ranks.py" rank "$dir"
        fi
    fi
}

backend=gloo
[ "$launcher" = torchrun-nccl ] && backend=nccl
launch native "$out/native" $backend || { echo "FAIL: the native $launcher run"; exit 1; }
if [ $backend = nccl ]; then # the same data on one GPU: the mode's bits must not depend on the GPU
    launch native "$out/native-1gpu" gloo || fail "the native run on one GPU"
    "$py" "$here/dist_ranks.py" same "$out/native" "$out/native-1gpu" || fail "native: two GPUs against one"
fi
for mode in off phase22 ozaki2; do
    echo "-- $launcher, OZCRT_MODE=$mode"
    launch $mode "$out/$mode" $backend || { fail "the $mode run (exit $?)"; continue; }
    if [ $backend = nccl ]; then
        launch $mode "$out/$mode-1gpu" gloo || fail "the $mode run on one GPU"
        "$py" "$here/dist_ranks.py" same "$out/$mode" "$out/$mode-1gpu" || fail "$mode: two GPUs against one"
    fi
    nfiles=$(ls "$out/$mode"/stats.*.txt 2>/dev/null | wc -l)
    # each process's cublasDgemm_v2 calls and emulated ones (stats columns 2 and 3), sorted by calls
    counts=$(for f in "$out/$mode"/stats.*.txt; do
        awk '$1 == "cublasDgemm_v2" && $2 > 0 { print $2 ":" $3 }' "$f"
    done | sort -n | tr '\n' ' ')
    want="3:3 5:5 "
    [ "$mode" = off ] && want="3:0 5:0 "
    echo "$mode: $nfiles stats files; cublasDgemm_v2 calls:emulated per process: $counts"
    [ "$counts" = "$want" ] || fail "$mode: expected one process with ${want% } (calls:emulated) each"
    "$py" "$here/dist_ranks.py" compare "$out/native" "$out/$mode" $mode || fail "$mode: dist_ranks.py compare"
done
[ $rc -eq 0 ] && echo "dist $launcher: passed" || echo "dist $launcher: failed"
exit $rc
