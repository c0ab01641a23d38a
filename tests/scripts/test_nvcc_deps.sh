#!/usr/bin/env bash
# tests/scripts/test_nvcc_deps.sh WRAPPER: scripts/nvcc-deps against a fake nvcc that records its arguments.
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
echo "test_nvcc_deps: $fails failed"
[[ $fails == 0 ]]
