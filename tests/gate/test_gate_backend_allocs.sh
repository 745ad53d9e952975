#!/bin/bash
# test_gate_backend_allocs.sh TANDEM RUNS_ARCHIVE WORK: gate.md says when the AOT compiler
# removed an allocation that the JIT performs (issue 43, item 7). On a copy of the published
# default attempt's runs, tandem's "Async method completed<int> get-result" is made to
# allocate 8 bytes (one call) per op on JIT and nothing on AOT, as when clang elides a
# malloc/free pair that tcc performs:
#  - gate.md's allocation section names that row and subject with both counts and the reason;
#  - it names no row that allocates the same on both backends (every other row here);
#  - gate-summary.json's aotJit entry carries both counts and aotRemovedAllocations;
#  - the unaltered runs say that no row allocates less on AOT.
set -uo pipefail
T=$1 ZIP=$2 W=$3
. "$(dirname "$0")/lib_runs.sh"
runs_fixture "$T" "$ZIP" "$W"
cp -r "$W/base" "$W/elided"
python3 - "$W" <<'PY' || { echo "cannot prepare the fixture"; exit 1; }
import glob, json, sys
w = sys.argv[1]
ROW = "Async method completed<int> get-result"
n = 0
for f in sorted(glob.glob(w + "/elided/p*-primary-jit-*.json")):
    d = json.load(open(f))
    for e in d["rows"]:
        if e["subject"] != "tandem" or e["name"] != ROW: continue
        for s in e["sampleRecords"]:
            s["allocs"], s["frees"], s["bytes"] = s["ops"], s["ops"], 8 * s["ops"]
        e["allocs"] = [s["allocs"] for s in e["sampleRecords"]]
        e["allocBytes"] = [s["bytes"] for s in e["sampleRecords"]]
        e["allocsPerOp"], e["allocBytesPerOp"] = 1, 8
        n += 1
    json.dump(d, open(f, "w"), indent=1)
assert n == 3, n  # one entry per JIT primary process
PY
"$T" gate "$W/elided" --config "$W/config.json" --out "$W/g-elided" >"$W/elided.out" 2>&1
"$T" gate "$W/base" --config "$W/config.json" --out "$W/g-base" >"$W/base.out" 2>&1
md="$W/g-elided/gate.md"
[ -f "$md" ] || { echo "no gate.md: $(tail -3 "$W/elided.out")"; exit 1; }
want='- primary / matched / Async method completed&lt;int&gt; get-result / \*\*tandem\*\*: AOT 0.0000 B/op (0.000000 allocs/op), JIT 8.0000 B/op (1.000000 allocs/op): the AOT compiler removed an allocation that the JIT performs (clang elided a malloc/free pair, which it may do for a pair it can see; tcc does not).'
grep -qxF -- "${want//\\/}" "$md" || fail "gate.md lacks the sentence for the elided row: $(grep -n 'by backend' "$md")"
# the sentence sits in the allocation section (between its heading and the next one)
sed -n '/^## Allocation rows/,/^## Report-only rows/p' "$md" | grep -q "the AOT compiler removed an allocation" ||
  fail "the sentence is not in the allocation section"
lines=$(grep -c "the AOT compiler removed an allocation that the JIT performs (clang" "$md")
[ "$lines" = 1 ] || fail "$lines rows named as elided, expected 1 (the rows equal on both backends are not named)"
grep -q "Async method completed get-result / \*\*tandem\*\*: AOT" "$md" && fail "a row equal on both backends is named"
python3 - "$W/g-elided/gate-summary.json" <<'PY' || fail "gate-summary.json: the aotJit counts are wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
hit = [e for e in d["aotJit"] if e["aotRemovedAllocations"]]
assert [(e["row"], e["subject"]) for e in hit] == [("Async method completed<int> get-result", "tandem")], hit
e = hit[0]
assert e["aotBytesPerOp"] == 0 and e["jitBytesPerOp"] == 8 and e["aotAllocsPerOp"] == 0 and e["jitAllocsPerOp"] == 1, e
PY
grep -q "^Allocations by backend: no row allocates less on AOT than on JIT" "$W/g-base/gate.md" ||
  fail "the unaltered runs: gate.md does not say that no row allocates less on AOT"
grep -q "the AOT compiler removed an allocation that the JIT performs (clang" "$W/g-base/gate.md" &&
  fail "the unaltered runs: a row is named as elided"

[ $fails = 0 ] && echo "allocations by backend: ok" && exit 0
exit 1
