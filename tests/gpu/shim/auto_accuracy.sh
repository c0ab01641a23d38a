#!/bin/sh
# tests/gpu/shim/auto_accuracy.sh: automatic precision's accuracy table: auto_accuracy (a plain cuBLAS
# program) natively, then under the shim with OZCRT_MODE=ozaki2 and nothing else (the user's view: the
# speed rule may leave a call to cuBLAS), then with OZCRT_MIN_SPEEDUP=0 too (every call emulated or
# planned); auto_accuracy_table.py judges each case against native.
#
#   tests/gpu/shim/auto_accuracy.sh BUILD_DIR [--quick]
set -u
build=$(cd "${1:?usage: auto_accuracy.sh BUILD_DIR [--quick]}" && pwd)
quick=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/tests/gpu/shim/auto_accuracy
out=$build/shim-gpu
mkdir -p "$out"
env -u LD_PRELOAD "$bin" $quick >"$out/acc-native.txt" || { cat "$out/acc-native.txt"; echo "FAIL: the native run"; exit 1; }
env OZCRT_MODE=ozaki2 LD_PRELOAD="$build/interpose/libozcrt.so" "$bin" $quick >"$out/acc-shim.txt" ||
    { cat "$out/acc-shim.txt"; echo "FAIL: the run under the shim"; exit 1; }
env OZCRT_MODE=ozaki2 OZCRT_MIN_SPEEDUP=0 LD_PRELOAD="$build/interpose/libozcrt.so" "$bin" $quick \
    >"$out/acc-shim-all.txt" || { cat "$out/acc-shim-all.txt"; echo "FAIL: the run with every call emulated"; exit 1; }
"${PYTHON:-python3}" "$here/auto_accuracy_table.py" "$out/acc-native.txt" "$out/acc-shim.txt" "$out/acc-shim-all.txt"
