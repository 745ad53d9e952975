#!/bin/bash
# test_attempt_sequential.sh TANDEM WORK: the attempt runs the sequential rule (issue 42, item 4;
# tools/gate/SEQUENTIAL.md). A quick attempt with the players of gate_attempt_quick and a test
# band of 1000 (every quick gated row borderline: its threshold within the band) and a budget of
# 2 processes: exactly one suite and backend gets one batch of 2, the others are told the budget
# is spent; the terminal and attempt.log say which rows and why; the record, the manifest,
# gate.md and gate-summary.json agree; the rows of that suite and backend are decided on 3
# processes. The test band is refused without TANDEM_TEST_FAULTS=1.
set -uo pipefail
T=$1
W=$2
. "$(dirname "$0")/lib_runs.sh"   # fails, fail
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
busy_invalid() { python3 "$(dirname "$0")/../lib/busy_invalid.py" "$1"; }
P="$W/quick/players"
[ -d "$P/aot" ] || { echo "no players from the quick attempt"; exit 1; }
A="$W/sequential"
rm -rf "$A"
start=$(date +%s)
TANDEM_TEST_FAULTS=1 "$T" attempt --quick --from-git HEAD --out "$A" --players-from "$P" --test-sequential-band 1000 \
  --sequential-budget 2 >"$W/sequential.log" 2>&1; rc=$?
echo "sequential attempt: exit $rc in $(( $(date +%s) - start )) s"
case $rc in 0|3) ;; 1) [ "$(busy_invalid "$A")" = True ] || { fail "exit 1, not a busy host"; tail -20 "$W/sequential.log"; } ;;
  *) fail "exit $rc"; tail -20 "$W/sequential.log" ;; esac
n=$(json "$A/attempt-manifest.json" "len(d['processes'])")
[ "$n" = 18 ] || fail "manifest lists $n processes, expected 16 planned + 2 added"
added=$(json "$A/attempt-manifest.json" "d['sequential']['processesAdded']")
[ "$added" = 2 ] || fail "the manifest says $added processes added, budget 2"
rec=$(json "$A/runs/sequential/sequential.json" "[len(l['processes']) for l in d['looks']]")
[ "$rec" = "[2]" ] || fail "the record's looks: $rec, expected one look of 2"
grep -q "sequential look 1: .* borderline after 1 process(es): median .* against .*, band .*: 2 more process(es) of " \
  "$W/sequential.log" || fail "the terminal does not say which row got more and why"
grep -q "sequential look 1: .*no more processes (the process budget is spent)" "$A/attempt.log" ||
  fail "attempt.log does not say the budget stopped the other rows"
grep -q "sequential: 2 process(es) added in 1 look(s)" "$A/attempt.log" || fail "attempt.log: no summary line"
s="$A/gate/gate-summary.json"
got=$(json "$s" "d.get('sequential', {}).get('processesAdded')")
[ "$got" = 2 ] || fail "gate-summary.json sequential.processesAdded: $got"
got=$(json "$s" "sorted({(r['processesDecided'], r['sequentialAdded']) for r in d['rows'] if r['kind'] != 'report-only' and r['result'] != 'NA'})")
[ "$got" = "[(1, 0), (3, 2)]" ] || fail "gated rows decided on (processes, added): $got, expected [(1, 0), (3, 2)]"
got=$(json "$A/gate/gate-config.json" "d['sequential']['quickBand'] == 1000")
[ "$got" = True ] || fail "gate-config.json quickBand $got: the gate did not judge with the band the attempt used"
grep -q "^## Sequential rule" "$A/gate/gate.md" || fail "gate.md has no sequential section"
"$T" attempt --quick --out "$W/sequential-refused" --test-sequential-band 1 >/dev/null 2>&1
[ $? = 2 ] || fail "--test-sequential-band honoured without TANDEM_TEST_FAULTS=1"
[ $fails = 0 ] && echo "ok"
exit $fails
