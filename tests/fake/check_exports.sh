#!/bin/sh
# tests/fake/check_exports.sh: libozcrt.so exports exactly the 8 intercepted names and needs neither libcublas nor the shared cudart.
# usage: check_exports.sh LIBOZCRT [NM] [READELF]
set -u
lib=$1
nm=${2:-nm}
readelf=${3:-readelf}
expected='cublasDestroy_v2
cublasDgemmBatched
cublasDgemmStridedBatched
cublasDgemm_v2
cublasDgemm_v2_64
cublasGemmBatchedEx
cublasGemmEx
cublasGemmStridedBatchedEx'
actual=$("$nm" -D --defined-only "$lib" | awk '{print $NF}' | LC_ALL=C sort)
if [ "$actual" != "$(printf '%s\n' "$expected" | LC_ALL=C sort)" ]; then
    echo "FAIL: exports of $lib differ from the 8 intercepted names:"
    echo "expected:"; printf '%s\n' "$expected"
    echo "actual:"; printf '%s\n' "$actual"
    exit 1
fi
needed=$("$readelf" -d "$lib" | awk '/NEEDED/ {print $NF}')
case "$needed" in
*libcublas*|*libcudart*)
    echo "FAIL: $lib needs a shared cuBLAS or cudart: $needed"
    exit 1 ;;
esac
echo "PASS: exactly $(printf '%s\n' "$actual" | wc -l) exports; NEEDED:" $needed
