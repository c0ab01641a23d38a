#!/bin/sh
# tests/fake/xla/check_dl_lookups.sh: dl_lookups without and with libozcrt.so preloaded (and loaded late, dlopen RTLD_GLOBAL + ozcrt_hook_dlsym, as `import ozcrt`): every "same" lookup (other libraries, RTLD_DEFAULT, RTLD_NEXT, dlvsym, unknown names) gives exactly the same answer and dlerror; every "taken" one (an intercepted name on a cuBLAS / cuBLASLt handle) is the fake's without the shim and libozcrt.so's with it.
# usage: check_dl_lookups.sh DL_LOOKUPS LIBOZCRT CLIENT LIBCUBLAS LIBCUBLASLT
set -u
prog=$1 lib=$2
shift 2
without=$(env -u LD_PRELOAD "$prog" "$@") || { echo "FAIL: $prog without the shim"; exit 1; }
with=$(env LD_PRELOAD="$lib" "$prog" "$@") || { echo "FAIL: $prog with the shim preloaded"; exit 1; }
late=$(env -u LD_PRELOAD OZ_DL_LATE="$lib" "$prog" "$@") || { echo "FAIL: $prog with the shim loaded late"; exit 1; }
status=0
# the diff of two outputs, after a FAIL line
show_diff() {
    echo "FAIL: $1"
    printf '%s\n' "$2" >/tmp/dl_lookups_a.$$
    printf '%s\n' "$3" >/tmp/dl_lookups_b.$$
    diff /tmp/dl_lookups_a.$$ /tmp/dl_lookups_b.$$
    rm -f /tmp/dl_lookups_a.$$ /tmp/dl_lookups_b.$$
    status=1
}
# loaded late and hooked, every answer is the preloaded shim's
[ "$late" = "$with" ] || show_diff "the late-loaded shim answers otherwise than the preloaded one (< preloaded, > late):" "$with" "$late"
a=$(printf '%s\n' "$without" | grep '^same ')
b=$(printf '%s\n' "$with" | grep '^same ')
n=$(printf '%s\n' "$a" | grep -c .)
if [ "$n" -lt 30 ]; then
    echo "FAIL: only $n same-lookups without the shim:"; printf '%s\n' "$without"; exit 1
fi
[ "$a" = "$b" ] || show_diff "lookups the shim must not change differ (< without, > with):" "$a" "$b"
# the taken ones: libcublas*/libcublasLt* without the shim, libozcrt.so with it, no dlerror either way
bad=$(printf '%s\n' "$without" | grep '^taken ' | grep -v -E ': libcublas(Lt)?\.so[^ ]*\+0x[0-9a-f]+ -$')
[ -z "$bad" ] || { echo "FAIL: without the shim, not the fake's:"; printf '%s\n' "$bad"; status=1; }
bad=$(printf '%s\n' "$with" | grep '^taken ' | grep -v -E ': libozcrt\.so\+0x[0-9a-f]+ -$')
[ -z "$bad" ] || { echo "FAIL: with the shim, not libozcrt.so's:"; printf '%s\n' "$bad"; status=1; }
t=$(printf '%s\n' "$with" | grep -c '^taken ')
[ "$t" -ge 9 ] || { echo "FAIL: only $t taken lookups"; status=1; }
[ $status -ne 0 ] || echo "PASS: $n lookups unchanged under the shim, $t intercepted names handed out by it"
printf '%s\n' "--- without:" "$without" "--- with:" "$with"
exit $status
