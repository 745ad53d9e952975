#!/bin/bash
# test_gate_instructions.sh TANDEM RUNS_ARCHIVE WORK: `tandem gate --instructions DIR` adds
# the instruction table to gate.md beside the times, report-only: the verdict and the
# gated count do not change; a summary with a bad count is refused (exit 1, naming the
# field, no verdict); a folder without summaries is refused.
set -uo pipefail
T=$1 ZIP=$2 W=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$W" && mkdir -p "$W/runs" "$W/instr" "$W/bad" "$W/empty"
(cd "$W/runs" && unzip -q "$ZIP") || { echo "cannot unpack $ZIP"; exit 1; }
rm -rf "$W/runs/logs" "$W/runs/files.sha256"
"$T" gate --print-config | python3 -c '
import json, sys
c = json.load(sys.stdin)
c["expectedProcesses"] = 22
for s in c["suites"]:  # the packet predates the cancellation suite: no process of it
    if s["name"] == "cancellation": s["gated"] = False
for s in c["suites"]: s["samples"] = 8
json.dump(c, open(sys.argv[1], "w"), indent=1)' "$W/config.json"
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
def m(ir, locked, ind, calls):
    return {"irPerOp": ir, "lockedPerOp": locked, "indirectCallsPerOp": ind, "callsPerOp": calls}
d = {"kind": "instructions", "suite": "throughput", "backend": "aot", "buildId": "x",
     "subjects": ["tandem", "fcontext"],
     "rows": [{"name": "nextframe N=1024", "subjects": {"tandem": m(128.25, 0.125, 1.125, 1.375),
                                                         "fcontext": m(84.75, 0, 0, 4.25)}}]}
json.dump(d, open(w + "/instr/throughput-aot-instructions.json", "w"))
d["rows"][0]["subjects"]["fcontext"]["lockedPerOp"] = float("nan")
open(w + "/bad/throughput-aot-instructions.json", "w").write(json.dumps(d).replace("NaN", "-1"))
PY
"$T" gate "$W/runs" --config "$W/config.json" --out "$W/g0" >"$W/g0.out" 2>&1; rc0=$?
"$T" gate "$W/runs" --config "$W/config.json" --out "$W/g1" --instructions "$W/instr" >"$W/g1.out" 2>&1; rc1=$?
[ "$rc0" = "$rc1" ] || fail "the verdict changed with the instruction table: exit $rc0 vs $rc1"
[ "$(tail -1 "$W/g0.out" | sed 's/report .*//')" = "$(tail -1 "$W/g1.out" | sed 's/report .*//')" ] ||
  fail "the counts changed: $(tail -1 "$W/g0.out") / $(tail -1 "$W/g1.out")"
md="$W/g1/gate.md"
grep -q "^## Instructions per operation (report-only)" "$md" || fail "no instruction section"
grep -q "^| nextframe N=1024 | [0-9.]* | 128.2 (0.12, 1.12) | 84.8 (0.00, 0.00) | 1.51 |$" "$md" ||
  fail "instruction row not side by side with the time ratio: $(grep '^| nextframe N=1024 | [0-9.]* | 1' "$md")"
grep -q "^## Instructions per operation" "$W/g0/gate.md" && fail "instruction section without --instructions"
"$T" gate "$W/runs" --config "$W/config.json" --out "$W/g2" --instructions "$W/bad" >"$W/g2.out" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "a bad summary: exit $rc, expected 1"
grep -q "lockedPerOp: row 'nextframe N=1024' subject 'fcontext': expected a finite number >= 0" "$W/g2.out" ||
  fail "a bad summary: the field is not named: $(cat "$W/g2.out")"
grep -q "^gate: \(PASS\|FAIL\)" "$W/g2.out" && fail "a verdict was printed with a refused summary"
"$T" gate "$W/runs" --config "$W/config.json" --out "$W/g3" --instructions "$W/empty" >"$W/g3.out" 2>&1; rc=$?
[ "$rc" = 1 ] || fail "no summaries: exit $rc, expected 1"
[ $fails = 0 ] && echo "gate --instructions: ok" && exit 0
exit 1
