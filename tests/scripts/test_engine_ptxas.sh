#!/bin/sh
# tests/scripts/test_engine_ptxas.sh: the sm_90a engine as ptxas compiles it (no GPU needed).
#
#   test_engine_ptxas.sh NVCC SOURCE_ROOT
#
# Compiles kernels/sm90_engine.cu for sm_90a with the project's flags and ptxas -v, and fails when
# ptxas reports a serialized wgmma pipeline ("C7514 Potential Performance Loss": an instruction
# reads a wgmma's accumulators mid-pipeline, e.g. an accumulator array indexed at run time, which
# puts it in local memory; the estimate's epilogue did that and ran three times slower than a
# modulus of the product), or when a mode has a stack frame, except the 192-row tile's modes (168
# registers a thread: the residue mode's and the stored estimate's few spills, measured and known)
# up to 64 bytes.
set -u
nvcc=${1:?usage: test_engine_ptxas.sh NVCC SOURCE_ROOT}
src=${2:?usage: test_engine_ptxas.sh NVCC SOURCE_ROOT}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$nvcc" -DNDEBUG --std=c++17 -O3 -fmad=false --expt-relaxed-constexpr -I"$src" -I"$src/kernels" \
    -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -cubin -o "$out/e.cubin" "$src/kernels/sm90_engine.cu" \
    >"$out/log" 2>&1 || { cat "$out/log"; echo "FAIL: nvcc"; exit 1; }
rc=0
if grep -q "C7514\|Potential Performance Loss" "$out/log"; then
    grep "C7514\|Potential Performance Loss" "$out/log"
    echo "FAIL: ptxas serializes a wgmma pipeline"
    rc=1
fi
# each entry function's stack frame: "Compiling entry function 'NAME'" then "N bytes stack frame"
awk '/Compiling entry function/ { name = $0; sub(/.*function .?/, "", name); sub(/.? for .*/, "", name); next }
     /bytes stack frame/ && name != "" { print $1, name; name = "" }' "$out/log" >"$out/frames"
n=$(wc -l <"$out/frames")
[ "$n" -ge 6 ] || { cat "$out/log"; echo "FAIL: expected the engine's six instantiations, found $n entry functions"; exit 1; }
while read -r bytes name; do
    case $name in
    *ILi256ELi1ELi3E*)
        if [ "$bytes" -le 64 ]; then echo "ok: $bytes bytes stack frame (known): 192-row tile: $name"
        else echo "FAIL: $bytes bytes stack frame (192-row tile, at most 64 known): $name"; rc=1; fi ;;
    *)
        if [ "$bytes" -ne 0 ]; then echo "FAIL: $bytes bytes stack frame: $name"; rc=1; else echo "ok: no stack frame: $name"; fi ;;
    esac
done <"$out/frames"
[ $rc -eq 0 ] && echo "test_engine_ptxas: passed"
exit $rc
