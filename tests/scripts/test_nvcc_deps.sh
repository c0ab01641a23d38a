#!/usr/bin/env bash
# tests/scripts/test_nvcc_deps.sh WRAPPER: scripts/nvcc-deps against a fake nvcc that records its arguments, and its --setup against a fake meson.
set -u
wrapper=$1
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
cat >"$tmp/bin/nvcc" <<'FAKE'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$NVCC_LOG"
[[ ${1:-} == fail ]] && exit 3
exit 0
FAKE
chmod +x "$tmp/bin/nvcc"
export PATH="$tmp/bin:$PATH" NVCC_LOG="$tmp/log"
fails=0
# expect NAME WANT ARGS...: runs the wrapper with ARGS, compares the fake's arguments (one a line) with WANT
expect() {
    local name=$1 want=$2
    shift 2
    "$wrapper" "$@"
    local got
    got=$(cat "$NVCC_LOG")
    if [[ $got != "$want" ]]; then
        echo "FAIL $name: nvcc got"; printf '  %s\n' "$got"; echo "  want"; printf '  %s\n' "$want"
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}
nl=$'\n'
expect "compile: -MD -MF OBJ.d added" "-O3${nl}-c${nl}-o${nl}d/x.cu.o${nl}x.cu${nl}-MD${nl}-MF${nl}d/x.cu.o.d" \
    -O3 -c -o d/x.cu.o x.cu
expect "version: unchanged" "--version" --version
expect "link: unchanged" "-o${nl}prog${nl}a.o${nl}b.o" -o prog a.o b.o
expect "compile without -o: unchanged" "-c${nl}x.cu" -c x.cu
expect "meson's own -MD: unchanged" "-MD${nl}-MT${nl}x.o${nl}-MF${nl}x.o.d${nl}-c${nl}-o${nl}x.o${nl}x.cu" \
    -MD -MT x.o -MF x.o.d -c -o x.o x.cu
expect "nvcc's long form: unchanged" "--generate-dependencies-with-compile${nl}-c${nl}-o${nl}x.o${nl}x.cu" \
    --generate-dependencies-with-compile -c -o x.o x.cu
expect "arguments with spaces kept whole" "-c${nl}-o${nl}a b/x.o${nl}-DX=a b${nl}-MD${nl}-MF${nl}a b/x.o.d" \
    -c -o "a b/x.o" "-DX=a b"
"$wrapper" fail -c -o x.o
rc=$?
if [[ $rc != 3 ]]; then echo "FAIL exit status: $rc, want nvcc's 3"; fails=$((fails + 1)); else echo "ok   exit status"; fi
"$wrapper" --native-file "$tmp/n.ini"
self=$(cd "$(dirname "$wrapper")" && pwd)/$(basename "$wrapper")
if grep -qx '\[binaries\]' "$tmp/n.ini" && grep -qx "cuda = '$self'" "$tmp/n.ini"; then
    echo "ok   native file"
else
    echo "FAIL native file:"; cat "$tmp/n.ini"; fails=$((fails + 1))
fi
if "$wrapper" --native-file 2>/dev/null; then echo "FAIL --native-file without a file succeeded"; fails=$((fails + 1)); fi

# --setup BUILD ARGS...: against a fake meson that logs its arguments (one call a line) and makes
# build.ninja naming the CUDA compiler of its native file (plain "nvcc" without one); FAKE_MESON_REFUSE:
# it fails when given a native file.
cat >"$tmp/bin/meson" <<'FAKE'
#!/usr/bin/env bash
echo "$*" >>"$MESON_LOG"
[[ $1 == setup ]] || exit 0
shift
native="" build=""
while [[ $# -gt 0 ]]; do
    case $1 in
    --native-file) native=$2; shift ;;
    --reconfigure) ;;
    -*) ;;
    *) [[ -z $build ]] && build=$1 ;;
    esac
    shift
done
[[ -n $native && -n ${FAKE_MESON_REFUSE:-} ]] && exit 1
mkdir -p "$build"
if [[ -n $native ]]; then sed -n "s/^cuda = '\(.*\)'/cuda: \1/p" "$native" >"$build/build.ninja"; else echo "cuda: nvcc" >"$build/build.ninja"; fi
FAKE
chmod +x "$tmp/bin/meson"
export MESON_LOG="$tmp/meson.log"
# setup NAME WANT_LOG [ENV...] -- ARGS...: --setup ARGS with ENV; meson's calls must be WANT_LOG
setup() {
    local name=$1 want=$2
    shift 2
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    : >"$MESON_LOG"
    env "${envs[@]}" "$wrapper" --setup "$@" >/dev/null 2>&1
    local got
    got=$(sed "s#$tmp#T#g" "$MESON_LOG")
    if [[ $got != "$want" ]]; then
        echo "FAIL setup $name: meson got"; printf '  %s\n' "$got"; echo "  want"; printf '  %s\n' "$want"
        fails=$((fails + 1))
    else
        echo "ok   setup $name"
    fi
}
b=$tmp/b
setup "a new folder" "setup --native-file T/b/nvcc-deps.ini T/b -Dx=1" -- "$b" -Dx=1
setup "a folder made with it: reconfigured" "setup --reconfigure --native-file T/b/nvcc-deps.ini T/b" -- "$b"
grep -q "cuda: $self" "$b/build.ninja" && echo "ok   setup keeps the wrapper" ||
    { echo "FAIL setup: build.ninja: $(cat "$b/build.ninja")"; fails=$((fails + 1)); }
echo "cuda: nvcc" >"$b/build.ninja"; touch "$b/stale"
setup "a folder made with plain nvcc: set up again" "setup --native-file T/b/nvcc-deps.ini T/b" -- "$b"
[[ ! -e $b/stale ]] && echo "ok   setup starts that folder over" || { echo "FAIL setup kept the old folder"; fails=$((fails + 1)); }
rm -f "$b/build.ninja"; touch "$b/stale"
setup "a half-made folder: set up again" "setup --native-file T/b/nvcc-deps.ini T/b" -- "$b"
[[ ! -e $b/stale ]] && echo "ok   setup starts a half-made folder over" || { echo "FAIL setup kept the half-made folder"; fails=$((fails + 1)); }
rm -rf "$b"
setup "meson refuses the wrapper: plain nvcc" "setup --native-file T/b/nvcc-deps.ini T/b${nl}setup T/b" FAKE_MESON_REFUSE=1 -- "$b"
if "$wrapper" --setup 2>/dev/null; then echo "FAIL --setup without a folder succeeded"; fails=$((fails + 1)); fi
# without nvcc: plain meson, and a folder made with plain nvcc is kept (reconfigured)
mkdir "$tmp/nonvcc"
for t in meson bash env sed grep cat mkdir rm dirname basename printf; do ln -s "$(command -v $t)" "$tmp/nonvcc/$t"; done
ln -sf "$tmp/bin/meson" "$tmp/nonvcc/meson"
setup "no nvcc: plain" "setup --reconfigure T/b" PATH="$tmp/nonvcc" -- "$b"
echo "test_nvcc_deps: $fails failed"
[[ $fails == 0 ]]
