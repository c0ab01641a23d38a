#!/bin/sh
# tests/python/check_install.sh: `meson install --destdir` of this build: the library, ozcrt.h, ozcrt.pc,
# ozcrt-run, ozcrt-ab and the Python package; pkg-config --cflags --libs ozcrt compiles and links a program
# against the installed copy, and the installed package finds the installed library.
# usage: check_install.sh MESON BUILD_DIR OUT_DIR PYTHON CC
set -u
meson=$1
build=$2
out=$3
py=$4
cc=$5
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$out"
mkdir -p "$out" || exit 1
dest=$out/dest
"$meson" install -C "$build" --no-rebuild --destdir "$dest" > "$out/install.log" 2>&1 ||
    { cat "$out/install.log"; fail "meson install --destdir exited with $?"; }
cat "$out/install.log"
find_one() { find "$dest" -name "$1" -path "*$2*" | head -n 1; }
lib=$(find_one libozcrt.so /lib)
hdr=$(find_one ozcrt.h /include/)
pc=$(find_one ozcrt.pc /pkgconfig/)
pkg=$(find_one __init__.py /ozcrt/)
for f in "$lib" "$hdr" "$pc" "$pkg"; do [ -n "$f" ] && [ -f "$f" ] || fail "not installed: lib '$lib' header '$hdr' pc '$pc' package '$pkg'"; done
for f in ozcrt-run ozcrt-ab; do
    [ -x "$(find_one "$f" /bin/)" ] || fail "$f not installed in bindir"
done
[ -f "$(dirname "$pkg")/__main__.py" ] && [ -f "$(dirname "$pkg")/_build.py" ] || fail "the package is incomplete"
echo "ok: installed $lib $hdr $pc $pkg"

# pkg-config against the DESTDIR tree: the sysroot prefixes the .pc file's own paths
flags=$(PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_LIBDIR=/nonexistent \
        pkg-config --cflags --libs ozcrt) || fail "pkg-config --cflags --libs ozcrt failed"
echo "pkg-config --cflags --libs ozcrt: $flags"
case " $flags " in *" -I$(dirname "$hdr") "*) ;; *) fail "no -I for $(dirname "$hdr") in: $flags" ;; esac
case " $flags " in *" -L$(dirname "$lib") "*) ;; *) fail "no -L for $(dirname "$lib") in: $flags" ;; esac
case " $flags " in *" -lozcrt "*) ;; *) fail "no -lozcrt in: $flags" ;; esac
cat > "$out/use_api.c" <<'C'
#include <ozcrt.h>
#include <stdio.h>
int main(void)
{
    int v = ozcrt_api_version();
    printf("ozcrt_api_version %d (header %d)\n", v, OZCRT_API_VERSION);
    return v == OZCRT_API_VERSION ? 0 : 1;
}
C
# shellcheck disable=SC2086
"$cc" -o "$out/use_api" "$out/use_api.c" $flags || fail "a program using ozcrt.h does not compile and link with those flags"
LD_LIBRARY_PATH=$(dirname "$lib") CUDA_VISIBLE_DEVICES= "$out/use_api" || fail "the program linked against the installed libozcrt.so failed"

# the installed package finds the installed library (libdir as seen from the package: right under DESTDIR too)
got=$(cd "$out" && env -u OZCRT_LIB -u LD_PRELOAD PYTHONPATH=$(dirname "$(dirname "$pkg")") CUDA_VISIBLE_DEVICES= \
      "$py" -c 'import ozcrt; print(ozcrt.__file__); print(ozcrt.library_path()); print(ozcrt.get()["mode"])') ||
    fail "import ozcrt from the installed tree failed"
echo "$got"
[ "$(printf '%s\n' "$got" | sed -n 1p)" = "$pkg" ] || fail "not the installed package"
[ "$(realpath "$(printf '%s\n' "$got" | sed -n 2p)")" = "$(realpath "$lib")" ] || fail "the installed package did not load the installed library"
echo "PASS: meson install --destdir: library, header, ozcrt.pc (pkg-config compiles and links), launchers, Python package"
