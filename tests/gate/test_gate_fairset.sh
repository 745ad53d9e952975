#!/bin/bash
# test_gate_fairset.sh TANDEM RUNS_ARCHIVE WORK: the gated set is the gate configuration's.
# On a copy of the published default attempt's runs (tandem vs fcontext):
#  - the default configuration gates 46 rows: the 6 primary rows per backend where fcontext
#    runs td_peer.h (Completed, FromResult, bare NextFrame) are report-only, with the reason;
#  - gate.md documents the gated set;
#  - a configuration without the lower-bound list gates them again (58): the configuration,
#    not the reports, decides;
#  - a report claiming a different gated set (a report-only row flagged gated) is INVALID;
#  - a malformed lowerBoundRows is refused (exit 1, naming the field).
set -uo pipefail
T=$1 ZIP=$2 W=$3
. "$(dirname "$0")/lib_runs.sh"
runs_fixture "$T" "$ZIP" "$W"
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
c = json.load(open(w + "/config.json"))
for s in c["suites"]: s["lowerBoundRows"] = {}
json.dump(c, open(w + "/nolower.json", "w"), indent=1)
for s in c["suites"]:
    if s["name"] == "primary": s["lowerBoundRows"] = {"fcontext": "Completed get-result"}
json.dump(c, open(w + "/badlower.json", "w"), indent=1)
PY

run() { "$T" gate "$W/$1" --config "$W/$2" --out "$W/$3" >"$W/$3.out" 2>&1; echo $?; }

rc=$(run base config.json g-default)
[ "$rc" = 3 ] || fail "default: exit $rc, expected 3 (FAIL)"
grep -q "^gate: FAIL (46 gated rows" "$W/g-default.out" || fail "default: not 46 gated rows: $(tail -1 "$W/g-default.out")"
md="$W/g-default/gate.md"
grep -q "^## The gated set" "$md" || fail "gate.md has no gated-set section"
for row in "Completed get-result" "FromResult&lt;int&gt; get-result" "NextFrame scheduling N=128" "NextFrame get-result N=4096"; do
  for b in aot jit; do
    grep -q "^| $row | fcontext | $b | .*| peer runs lower-bound code here (td_peer.h), not its library |$" "$md" ||
      fail "gate.md: '$row' $b not report-only as lower-bound code"
  done
done
grep -q "^| Async method NextFrame scheduling N=128 | fcontext | aot | .*| \(PASS\|FAIL\)\( (borderline)\)\? |$" "$md" ||
  fail "gate.md: the async-method row is no longer gated"

rc=$(run base nolower.json g-nolower)
[ "$rc" = 3 ] || fail "no lower-bound list: exit $rc, expected 3"
grep -q "^gate: FAIL (58 gated rows" "$W/g-nolower.out" || fail "no lower-bound list: not 58 gated rows"

rm -rf "$W/claim" && cp -r "$W/base" "$W/claim"
python3 - "$W/claim" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/p*builderlifecycle*.json")):
    d = json.load(open(f))
    for r in d["rows"]:
        if r["name"] == "Resumption untyped suspensions=1 N=128 flow off": r["gated"] = True
    json.dump(d, open(f, "w"), indent=1)
PY
rc=$(run claim config.json g-claim)
[ "$rc" = 1 ] || fail "a report claiming another gated set: exit $rc, expected 1 (INVALID)"
grep -q "gated in the report but report-only in the gate.s configuration" "$W/g-claim.out" ||
  fail "a report claiming another gated set: no reason given"

rc=$(run base badlower.json g-bad)
[ "$rc" = 1 ] || fail "malformed lowerBoundRows: exit $rc, expected 1"
grep -q "lowerBoundRows" "$W/g-bad.out" || fail "malformed lowerBoundRows: the field is not named"

[ $fails = 0 ] && echo "fair gated set: ok" && exit 0
exit 1
