#!/bin/bash
# test_gate_compare.sh TANDEM RUNS_ARCHIVE WORK: `tandem gate --compare A B`.
#  - the published runs against themselves: no flip, exit 0;
#  - against a copy where tandem's "Async method NextFrame scheduling N=4096" (AOT, a PASS
#    at median 0.54) is 3x slower in every process (samples and stated statistics
#    recomputed, so the copy is a valid run): that row flipped, exit 1, the others not, and
#    the flip is not borderline (the 3x is far outside the row's noise band);
#  - against a copy where tandem's "Async method NextFrame scheduling N=128" (AOT, a FAIL on
#    its worst ratio 1.0527, processes 1.0527 0.8521 0.8780: spread 23.5%) is 6% faster:
#    worst 0.99, a PASS: flipped and borderline (the threshold lies within the noise band),
#    and gate.md / gate-summary.json mark the row borderline in the unchanged run;
#  - --config-b: each run judged by its own configuration. Two attempts differ in
#    expectedProcesses when the sequential rule added processes to one of them (with A's
#    count, B read INVALID in a stability pair whose B had 4 added processes): the published
#    runs against themselves with B's count set to 23 read "B INVALID" (process count), and
#    with the counts the other way round "A INVALID" and B not; a --config-b that differs in
#    a threshold is refused (exit 2), naming the field; --config-b without --compare: exit 2;
#  - one folder missing: exit 2.
set -uo pipefail
T=$1 ZIP=$2 W=$3
lib=$(cd "$(dirname "$0")/../../scripts/lib" && pwd) || exit 1 # report_scale.py
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$W" && mkdir -p "$W/a"
(cd "$W/a" && unzip -q "$ZIP") || { echo "cannot unpack $ZIP"; exit 1; }
rm -rf "$W/a/logs" "$W/a/files.sha256"
cp -r "$W/a" "$W/b"
cp -r "$W/a" "$W/c"
"$T" gate --print-config | python3 -c '
import json, sys
c = json.load(sys.stdin)
c["expectedProcesses"] = 22
for s in c["suites"]:  # the packet predates the cancellation suite: no process of it
    if s["name"] == "cancellation": s["gated"] = False
for s in c["suites"]: s["samples"] = 8
json.dump(c, open(sys.argv[1], "w"), indent=1)' "$W/config.json"
# scale ROW's tandem samples (AOT, matched retention) by FACTOR in every process of DIR
scale() {
python3 - "$1" "$2" "$3" "$lib" <<'PY'
import glob, json, sys
sys.path.insert(0, sys.argv[4])
from report_scale import scale_row
ROW, FACTOR = sys.argv[2], float(sys.argv[3])
n = 0
for f in sorted(glob.glob(sys.argv[1] + "/p*primary-aot*.json")):
    d = json.load(open(f))
    if d.get("settings", {}).get("retention") != "matched": continue
    for r in d["rows"]:
        if r["subject"] != "tandem" or r["name"] != ROW: continue
        scale_row(r, FACTOR)
        n += 1
    json.dump(d, open(f, "w"), indent=1)
if n != 3: sys.exit("expected 3 processes with the row, changed %d" % n)
PY
}
scale "$W/b" "Async method NextFrame scheduling N=4096" 3 || { echo "mutation failed"; exit 1; }
scale "$W/c" "Async method NextFrame scheduling N=128" 0.94 || { echo "mutation failed"; exit 1; }

"$T" gate --compare "$W/a" "$W/a" --config "$W/config.json" --out "$W/same.md" >"$W/same.out" 2>&1; rc=$?
[ "$rc" = 0 ] || fail "same runs: exit $rc, expected 0"
grep -q "^46 gated rows compared: 0 flipped" "$W/same.out" || fail "same runs: $(tail -1 "$W/same.out")"
cmp -s "$W/same.md" "$W/same.out" || fail "--out differs from what was printed"

"$T" gate --compare "$W/a" "$W/b" --config "$W/config.json" >"$W/flip.out" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a flip: exit $rc, expected 1"
grep -q "^| primary | Async method NextFrame scheduling N=4096 | fcontext | aot | PASS | .* | FAIL | .* | \*\*flipped\*\* |" "$W/flip.out" ||
  fail "the flipped row is not reported: $(grep 'scheduling N=4096 | fcontext | aot' "$W/flip.out")"
[ "$(grep -c '\*\*flipped\*\*' "$W/flip.out")" = 1 ] || fail "more than one row flipped"
grep -q "^46 gated rows compared: 1 flipped (0 of them borderline)" "$W/flip.out" || fail "flip count: $(tail -1 "$W/flip.out")"

"$T" gate --compare "$W/a" "$W/c" --config "$W/config.json" >"$W/border.out" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a borderline flip: exit $rc, expected 1"
grep -q "^| primary | Async method NextFrame scheduling N=128 | fcontext | aot | FAIL | .* | PASS | .* | \*\*flipped\*\* | borderline |$" "$W/border.out" ||
  fail "the borderline flip is not reported as such: $(grep 'scheduling N=128 | fcontext | aot' "$W/border.out")"
grep -q "^46 gated rows compared: 1 flipped (1 of them borderline)" "$W/border.out" || fail "borderline count: $(tail -1 "$W/border.out")"
"$T" gate "$W/a" --config "$W/config.json" --out "$W/ga" >/dev/null 2>&1
grep -q "^| Async method NextFrame scheduling N=128 | fcontext | aot | .* | FAIL (borderline) |$" "$W/ga/gate.md" ||
  fail "gate.md does not mark the row borderline"
python3 - "$W/ga/gate-summary.json" <<'PY' || fail "gate-summary.json: borderline flags"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
b = {(r["row"], r["peer"], r["backend"]): r.get("borderline") for r in rows if r["kind"] != "report-only"}
assert b[("Async method NextFrame scheduling N=128", "fcontext", "aot")] is True, "the borderline row"
assert b[("Async method NextFrame scheduling N=4096", "fcontext", "aot")] is False, "a clear row"
assert all(v in (True, False) for v in b.values()), "every gated row states it"
assert all("borderline" not in r for r in rows if r["kind"] == "report-only"), "report-only rows do not"
PY

python3 - "$W/config.json" "$W" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["expectedProcesses"] = 23
json.dump(c, open(sys.argv[2] + "/config23.json", "w"), indent=1)
c["expectedProcesses"] = 22
c["thresholds"]["median"] = 0.9
json.dump(c, open(sys.argv[2] + "/config-median.json", "w"), indent=1)
PY
"$T" gate --compare "$W/a" "$W/a" --config "$W/config.json" --config-b "$W/config23.json" >"$W/cb.out" 2>"$W/cb.err"; rc=$?
[ "$rc" = 1 ] || fail "--config-b with 23 processes: exit $rc, expected 1 (B INVALID)"
grep -q "^46 gated rows compared: 0 flipped .*; A [A-Z]*, B INVALID\.$" "$W/cb.out" || fail "--config-b: B not judged by its own count: $(tail -1 "$W/cb.out")"
grep -q "^46 gated rows compared: 0 flipped .*; A \(PASS\|FAIL\)," "$W/cb.out" || fail "--config-b: A not judged by --config: $(tail -1 "$W/cb.out")"
"$T" gate --compare "$W/a" "$W/a" --config "$W/config23.json" --config-b "$W/config.json" >"$W/cb2.out" 2>&1; rc=$?
grep -q "^46 gated rows compared: 0 flipped .*; A INVALID, B \(PASS\|FAIL\)\.$" "$W/cb2.out" ||
  fail "--config-b the other way round: $(tail -1 "$W/cb2.out")"
"$T" gate --compare "$W/a" "$W/a" --config "$W/config.json" --config-b "$W/config-median.json" >"$W/cbm.out" 2>"$W/cbm.err"; rc=$?
[ "$rc" = 2 ] || fail "--config-b with another median threshold: exit $rc, expected 2"
grep -q "config-median.json.*field 'thresholds.median' differs" "$W/cbm.err" || fail "--config-b refusal does not name the field: $(cat "$W/cbm.err")"
[ -s "$W/cbm.out" ] && fail "--config-b refused, yet a comparison was printed"
"$T" gate "$W/a" --config-b "$W/config.json" >"$W/cbu.out" 2>&1; rc=$?
[ "$rc" = 2 ] || fail "--config-b without --compare: exit $rc, expected 2"

"$T" gate --compare "$W/a" "$W/nothere" >"$W/usage.out" 2>&1; rc=$?
[ "$rc" = 2 ] || fail "a missing folder: exit $rc, expected 2"
[ $fails = 0 ] && echo "gate --compare: ok" && exit 0
exit 1
