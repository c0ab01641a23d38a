#!/bin/sh
# tests/fake/check_stats.sh: OZCRT_STATS=1 writes the per-entry-point table at exit (to OZCRT_STATS_FILE).
# usage: check_stats.sh TEST_SHIM STATS_FILE  (environment as for the route suite)
set -u
client=$1
stats=$2
rm -f "$stats"
OZCRT_STATS=1 OZCRT_STATS_FILE="$stats" "$client" route >/dev/null 2>&1 || { echo "FAIL: the client failed"; exit 1; }
[ -s "$stats" ] || { echo "FAIL: no stats table in $stats"; exit 1; }
cat "$stats"
# cublasDgemm_v2: calls emulated failed forwarded GFLOP reasons
awk '$1 == "cublasDgemm_v2" {
        ok = $2 > 0 && $3 == 0 && $4 == 0 && $5 == $2 && $6 == 0.0 && /no-gpu=/ && /invalid-args=/ && /empty=/ && /k0-or-alpha0=/ && /below-threshold=/
        found = 1
     }
     $1 == "cublasGemmEx" { ok2 = $2 == 8 && /type=6/ && /no-gpu=1/ && /complex-phase22=1/ }
     $1 == "cublasZgemm_v2" { ok3 = $2 == 3 && $5 == 3 && /invalid-args=2,complex-phase22=1$/ }
     END { exit !(found && ok && ok2 && ok3) }' "$stats" || { echo "FAIL: unexpected counts"; exit 1; }
echo "PASS: stats table"
