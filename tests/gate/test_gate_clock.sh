#!/bin/bash
# test_gate_clock.sh TANDEM RUNS_ARCHIVE WORK: samples and the clock in the gate (issue 13).
# On a copy of the published default attempt's runs (written before the clock figures), each
# report is given a clock (read cost 1 ns, granularity 20 ns) and per-sample segments:
# every row 1 segment a sample (its samples are >= 640 ns: under 1%), except tandem's
# "Async method NextFrame get-result N=128" (gated; matched retention) with ns/50 segments
# (50 ns a segment: clock share 1/50 = 2.0%).
#  - gate.md's "Samples and the clock" lists every report with its clock and read cost, and
#    that row (and no other) over 1%, as gated, with the share recomputed;
#  - gate-summary.json's clock object says the same; the verdict is unchanged (report-only);
#  - the reports without clock figures are listed as such (no segments stated);
#  - a mistyped clock.readCostNs, a zero segment count, a segments array that disagrees with
#    the sample records: INVALID, each with its reason.
set -uo pipefail
T=$1 ZIP=$2 W=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$W" && mkdir -p "$W/base"
(cd "$W/base" && unzip -q "$ZIP") || { echo "cannot unpack $ZIP"; exit 1; }
rm -rf "$W/base/logs" "$W/base/files.sha256"
"$T" gate --print-config | python3 -c '
import json, sys
c = json.load(sys.stdin)
c["expectedProcesses"] = 22
for s in c["suites"]:  # the packet predates the cancellation suite: no process of it
    if s["name"] == "cancellation": s["gated"] = False
for s in c["suites"]: s["samples"] = 8
json.dump(c, open(sys.argv[1], "w"), indent=1)' "$W/config.json"
run() { "$T" gate "$W/$1" --config "$W/config.json" --out "$W/g-$1" >"$W/$1.out" 2>&1; echo $?; }
rc0=$(run base)

# clocked: every report with a clock and segments; the variants each break one thing
python3 - "$W" <<'PY'
import glob, json, os, shutil, sys
w = sys.argv[1]
ROW = "Async method NextFrame get-result N=128"
def mutate(name, fn):
    d = os.path.join(w, name)
    shutil.copytree(os.path.join(w, "base"), d)
    for f in sorted(glob.glob(d + "/p*.json")):
        doc = json.load(open(f))
        fn(os.path.basename(f), doc)
        json.dump(doc, open(f, "w"), indent=1)
def clock(f, d):
    d["clock"] = {"name": "CLOCK_MONOTONIC", "readCostNs": 1.0, "granularityNs": 20}
    for r in d["rows"]:
        if not r.get("supported", True): continue
        segs = [1] * len(r["ns"])
        if r["subject"] == "tandem" and r["name"] == ROW and d["settings"]["retention"] == "matched":
            segs = [max(1, round(int(t) / 50)) for t in r["ns"]]
        r["segments"] = segs
        for s, k in zip(r["sampleRecords"], segs): s["segments"] = k
mutate("clocked", clock)
def bad_cost(f, d):
    clock(f, d)
    if f.startswith("p01-"): d["clock"]["readCostNs"] = "fast"
mutate("badcost", bad_cost)
def zero_seg(f, d):
    clock(f, d)
    if f.startswith("p01-"):
        r = [x for x in d["rows"] if x.get("supported", True)][0]
        r["segments"][0] = 0
        r["sampleRecords"][0]["segments"] = 0
mutate("zeroseg", zero_seg)
def disagree(f, d):
    clock(f, d)
    if f.startswith("p01-"):
        r = [x for x in d["rows"] if x.get("supported", True)][0]
        r["segments"][0] = 7
mutate("disagree", disagree)
PY
[ $? = 0 ] || { echo "mutation failed"; exit 1; }

rc=$(run clocked)
[ "$rc" = "$rc0" ] || fail "clock figures changed the verdict: exit $rc, $rc0 without them"
md="$W/g-clocked/gate.md"
grep -q "^## Samples and the clock" "$md" || fail "gate.md has no clock section"
[ "$(grep -c '^| p[0-9][0-9]-.*\.json | CLOCK\\_MONOTONIC | 1\.0 | 20 | ' "$md")" = 22 ] ||
  fail "gate.md: not every report listed with its clock: $(grep -c 'CLOCK\\_MONOTONIC' "$md")"
grep -q "^| primary | matched | Async method NextFrame get-result N=128 | tandem | yes | 2\.0% | 50 | 6 |$" "$md" ||
  fail "gate.md: the over-share row: $(grep 'get-result N=128 | tandem' "$md")"
grep -q "^Rows whose clock share is over 1% in some process (1, 1 of them gated rows)" "$md" ||
  fail "gate.md: rows over 1%: $(grep '^Rows whose clock' "$md")"
python3 - "$W/g-clocked/gate-summary.json" <<'PY' || fail "gate-summary.json clock object"
import json, sys
c = json.load(open(sys.argv[1]))["clock"]
assert len(c["reports"]) == 22 and all(r["readCostNs"] == 1.0 for r in c["reports"]), "reports"
assert [(r["row"], r["subject"], r["gated"]) for r in c["rowsOverShare"]] == \
    [("Async method NextFrame get-result N=128", "tandem", True)], c["rowsOverShare"]
assert abs(c["rowsOverShare"][0]["worstShare"] - 0.02) < 0.0005, c["rowsOverShare"][0]
PY
grep -q "^| p01-primary-aot-r1.json | not stated | - | - | .* | - | no segments stated |$" "$W/g-base/gate.md" ||
  fail "reports without clock figures: $(grep '^| p01-primary-aot-r1.json' "$W/g-base/gate.md")"

rc=$(run badcost)
[ "$rc" = 1 ] || fail "a mistyped clock.readCostNs: exit $rc, expected 1 (INVALID)"
grep -q "clock.readCostNs: not a decimal number" "$W/badcost.out" || fail "badcost: no reason: $(grep -m1 INVALID "$W/badcost.out")"
rc=$(run zeroseg)
[ "$rc" = 1 ] || fail "a zero segment count: exit $rc, expected 1 (INVALID)"
grep -q "segments: 0 is out of range" "$W/zeroseg.out" || fail "zeroseg: no reason"
rc=$(run disagree)
[ "$rc" = 1 ] || fail "segments disagreeing with the records: exit $rc, expected 1 (INVALID)"
[ $fails = 0 ] && echo "gate clock figures: ok" && exit 0
exit 1
