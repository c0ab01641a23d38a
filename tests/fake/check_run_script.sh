#!/bin/sh
# tests/fake/check_run_script.sh: scripts/ozcrt-run sets the variables, appends to LD_PRELOAD and execs the program.
# usage: check_run_script.sh OZCRT_RUN LIBOZCRT EXISTING_PRELOAD
set -u
run=$1
lib=$2
existing=$3
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }

out=$(OZCRT_LIB="$lib" LD_PRELOAD="$existing" "$run" --mode off --log 2 --log-file /tmp/ozcrt-run-test.log \
      --stats --min-m 5 --min-n 6 --min-k 7 --compare --report-file r.csv --bits 40 --min-speedup 1.5 -- env 2>&1) \
    || fail "ozcrt-run exited with $?"
for want in OZCRT_MODE=off OZCRT_LOG=2 OZCRT_LOG_FILE=/tmp/ozcrt-run-test.log OZCRT_STATS=1 \
            OZCRT_COMPARE=1 OZCRT_REPORT_FILE=r.csv OZCRT_BITS=40 OZCRT_MIN_SPEEDUP=1.5 \
            OZCRT_MIN_M=5 OZCRT_MIN_N=6 OZCRT_MIN_K=7 "LD_PRELOAD=$existing:$lib"; do
    printf '%s\n' "$out" | grep -qx "$want" || fail "no line $want"
done

# No LD_PRELOAD before: just the library. Arguments reach the program intact.
out=$(env -u LD_PRELOAD OZCRT_LIB="$lib" "$run" -- sh -c 'echo "$LD_PRELOAD|$1|$2"' sh "a b" "") \
    || fail "ozcrt-run exited with $?"
[ "$out" = "$lib|a b|" ] || fail "got '$out'"

# A bad option is refused before anything runs.
if out=$(OZCRT_LIB="$lib" "$run" --bogus -- true 2>&1); then fail "--bogus accepted"; fi
# A missing library is refused.
if out=$(OZCRT_LIB=/nonexistent/libozcrt.so "$run" -- true 2>&1); then fail "missing library accepted"; fi
# --help: on stdout, exit 0, every option of the parser there with a description
help=$("$run" --help 2>/dev/null) || fail "--help exited with $?"
[ -n "$help" ] || fail "--help printed nothing on stdout"
opts=$(sed -n 's/^    \(--[a-z][a-z-]*\)).*/\1/p' "$run")
[ "$(printf '%s\n' "$opts" | wc -l)" -ge 15 ] || fail "the options were not found in $run"
for o in $opts; do
    # an option line: "  --opt V   description", or "  -h, --help  ..." or "  --a N, --b N, --c N" (text below)
    printf '%s\n' "$help" | grep -Eq -- "^  (-{1,2}[a-z-]+( [A-Z]+)?, )*$o( [A-Z]+)?(,|  +[A-Za-z(]|$)" ||
        fail "--help does not describe $o"
done
printf '%s\n' "$help" | grep -q '%p' || fail "--help does not say %p"

# --mode and --bits are checked; good values go through (modes in lower case)
for bad in "--mode fast" "--mode phase-22" "--bits 0" "--bits 65" "--bits auto:19" "--bits auto:65" "--bits x" \
           "--bits 1.5" "--bits auto:"; do
    # shellcheck disable=SC2086
    if out=$(OZCRT_LIB="$lib" "$run" $bad -- true 2>&1); then fail "$bad accepted"; fi
    case $out in *"ozcrt-run: --"*) ;; *) fail "$bad: no clear message: $out" ;; esac
done
out=$(OZCRT_LIB="$lib" "$run" --mode OZAKI2 --bits AUTO:40 -- sh -c 'echo "$OZCRT_MODE $OZCRT_BITS"') ||
    fail "--mode OZAKI2 --bits AUTO:40 refused"
[ "$out" = "ozaki2 auto:40" ] || fail "got '$out'"
for good in 1 64 auto auto:20 auto:64; do
    out=$(OZCRT_LIB="$lib" "$run" --mode Off --bits "$good" -- sh -c 'echo "$OZCRT_MODE $OZCRT_BITS"') ||
        fail "--bits $good refused"
    [ "$out" = "off $good" ] || fail "--bits $good: got '$out'"
done
echo "PASS: ozcrt-run"
