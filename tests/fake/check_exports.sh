#!/bin/sh
# tests/fake/check_exports.sh: libozcrt.so exports exactly the 33 intercepted names, dlsym and dlvsym (the hook of dlhook.c, x86_64) and the ozcrt_* API of its map, and needs neither libcublas nor the shared cudart.
# usage: check_exports.sh LIBOZCRT [NM] [READELF]
set -u
lib=$1
nm=${2:-nm}
readelf=${3:-readelf}
expected='cublasCreate_v2
cublasDestroy_v2
cublasDgemm
cublasDgemmBatched
cublasDgemmBatched_64
cublasDgemmGroupedBatched
cublasDgemmGroupedBatched_64
cublasDgemmStridedBatched
cublasDgemmStridedBatched_64
cublasDgemm_v2
cublasDgemm_v2_64
cublasGemmBatchedEx
cublasGemmBatchedEx_64
cublasGemmEx
cublasGemmEx_64
cublasGemmGroupedBatchedEx
cublasGemmGroupedBatchedEx_64
cublasGemmStridedBatchedEx
cublasGemmStridedBatchedEx_64
cublasInit
cublasLtDestroy
cublasLtMatmul
cublasSetKernelStream
cublasShutdown
cublasZgemm
cublasZgemm3m
cublasZgemm3m_64
cublasZgemmBatched
cublasZgemmBatched_64
cublasZgemmStridedBatched
cublasZgemmStridedBatched_64
cublasZgemm_v2
cublasZgemm_v2_64'
# the dlsym hook (interpose/dlhook.c) is built on x86_64 only
case $(uname -m) in
x86_64) expected="$expected
dlsym
dlvsym" ;;
esac
all=$("$nm" -D --defined-only "$lib" | awk '{print $NF}' | LC_ALL=C sort)
# The public API (interpose/ozcrt.h): exactly the ozcrt_* names of the linker map.
map=$(dirname "$0")/../../interpose/libozcrt.map
api=$(printf '%s\n' "$all" | grep '^ozcrt_')
want_api=$(sed -n 's/^ *\(ozcrt_[a-z0-9_]*\);.*/\1/p' "$map" | LC_ALL=C sort)
if [ -z "$want_api" ] || [ "$api" != "$want_api" ]; then
    echo "FAIL: the ozcrt_* exports of $lib differ from those of $map:"
    echo "expected:"; printf '%s\n' "$want_api"
    echo "actual:"; printf '%s\n' "$api"
    exit 1
fi
actual=$(printf '%s\n' "$all" | grep -v '^ozcrt_')
if [ "$actual" != "$(printf '%s\n' "$expected" | LC_ALL=C sort)" ]; then
    echo "FAIL: exports of $lib differ from the 33 intercepted names (and dlsym, dlvsym):"
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
echo "PASS: exactly $(printf '%s\n' "$actual" | wc -l) cuBLAS and dl* exports and $(printf '%s\n' "$api" | wc -l) ozcrt_* ones; NEEDED:" $needed
