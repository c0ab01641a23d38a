#!/bin/sh
# tests/gpu/shim/torchrun_check.sh: torchrun with 2 ranks (gloo, both on one GPU) under
# `ozcrt-run --stats-file 'stats.%p.txt'`: one stats file per process, and the ranks' files
# hold their own calls (rank 0: 3 cublasDgemm_v2 calls, rank 1: 5), none lost to the other.
#
#   tests/gpu/shim/torchrun_check.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: torchrun_check.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
command -v torchrun >/dev/null || { echo "SKIP: no torchrun"; exit 0; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
OZCRT_LIB=$build/interpose/libozcrt.so "$root/scripts/ozcrt-run" --mode ozaki2 --bits 53 --min-m 0 --min-n 0 \
    --min-k 0 --min-speedup 0 --stats-file "$out/stats.%p.txt" -- \
    torchrun --standalone --nproc_per_node=2 "$here/torchrun_ranks.py"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: torchrun exited $rc"; exit 1; }
ls "$out"
# the files that saw products: their cublasDgemm_v2 counts, sorted
counts=$(for f in "$out"/stats.*.txt; do
    awk '$1 == "cublasDgemm_v2" && $2 > 0 { print $2 }' "$f"
done | sort -n | tr '\n' ' ')
echo "cublasDgemm_v2 calls per process file: $counts"
[ "$counts" = "3 5 " ] || { echo "FAIL: expected one file with 3 calls and one with 5"; exit 1; }
echo "torchrun ranks: passed"
