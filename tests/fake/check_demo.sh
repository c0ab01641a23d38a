#!/bin/sh
# tests/fake/check_demo.sh: scripts/demo as root without network: optional set-up (cmocka) failing is not fatal, and no libozcrt.so means exit 3, never "done".
# usage: check_demo.sh DEMO WORKDIR
#
# A fake root without network in front of PATH: `id -u` says 0, apt-get
# fails, pkg-config finds nothing (no cmocka). The demo builds a fresh folder
# with -Dcuda=disabled, so libozcrt.so is not built (quickly, without nvcc
# compiles): it must get past the set-up and then stop with status 3 naming
# libozcrt.so.
set -u
demo=$1
work=$2
rm -rf "$work"
mkdir -p "$work/bin" || exit 2
cat >"$work/bin/id" <<'EOS'
#!/bin/sh
if [ "${1:-}" = -u ]; then echo 0; exit 0; fi
exec /usr/bin/id "$@"
EOS
cat >"$work/bin/apt-get" <<'EOS'
#!/bin/sh
echo "E: could not resolve the archive (no network: test)" >&2
exit 100
EOS
cat >"$work/bin/pkg-config" <<'EOS'
#!/bin/sh
exit 1
EOS
chmod +x "$work/bin/id" "$work/bin/apt-get" "$work/bin/pkg-config"

out=$(PATH="$work/bin:$PATH" "$demo" --no-python --build-dir "$work/build" --meson-option -Dcuda=disabled 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 15
fail() { echo "FAIL: $*"; exit 1; }
printf '%s\n' "$out" | grep -q 'FAILED: apt-get' && fail "the demo stopped at apt-get for optional packages"
printf '%s\n' "$out" | grep -q 'building ' || fail "the demo did not get to the build"
[ "$rc" -eq 3 ] || fail "exit status $rc, expected 3 (libozcrt.so not built)"
printf '%s\n' "$out" | grep -q 'FAILED:.*libozcrt.so' || fail "the demo did not say that libozcrt.so is missing"
printf '%s\n' "$out" | grep -q '== demo: done' && fail "the demo said done"
echo "PASS: scripts/demo without libozcrt.so exits 3; optional set-up failures are not fatal"
