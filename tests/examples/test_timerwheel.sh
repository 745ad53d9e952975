#!/bin/bash
# test_timerwheel.sh TANDEM CLANG TCC: the example library examples/timerwheel, which is not
# Tandem's runtime: its own unit test under clang and tcc (both paths of its port layer),
# then a quick attempt of its project (tandem.json) against fcontext and callback: a verdict,
# the wheel's rows measured on both backends (modules compiled by clang and by tcc), its
# NULL workloads NA with the subject's reason; then a quick attempt against its own HEAD in
# two seeded layouts (each side's pads its own, each process in its round's layout).
T=$1 CLANG=$2 TCC=$3
EX=$(cd "$(dirname "$0")/../../examples/timerwheel" && pwd)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d "${TMPDIR:-/tmp}/tandem-example-test.XXXXXX")
trap 'rm -rf "$W"' EXIT

"$CLANG" -O2 -Wall -Wextra -Werror -std=c11 -I"$EX/include" "$EX/test/wheel_test.c" "$EX/src/wheel.c" -o "$W/t-clang" \
  && "$W/t-clang" || fail "wheel_test under clang"
"$TCC" -Wall -Werror -I"$EX/include" "$EX/test/wheel_test.c" "$EX/src/wheel.c" -o "$W/t-tcc" \
  && "$W/t-tcc" || fail "wheel_test under tcc"

"$T" attempt --project "$EX" --quick --out "$W/a" >"$W/out" 2>&1
rc=$?
# a verdict, or INVALID for a busy host alone (a parallel ctest run: tests/lib/busy_invalid.py)
busy=$(python3 "$(dirname "$0")/../lib/busy_invalid.py" "$W/a")
[ $rc = 0 ] || [ $rc = 3 ] || { [ $rc = 1 ] && [ "$busy" = True ]; } ||
  { fail "attempt: exit $rc, expected a verdict (0 or 3)"; tail -20 "$W/out"; }
python3 - "$W/a" "$busy" <<'PY' || fail "the attempt's evidence (see above)"
import json, sys, glob
a = sys.argv[1]
d = json.load(open(a + "/gate/gate-summary.json"))
assert d["verdict"] in ("PASS", "FAIL") or (d["verdict"] == "INVALID" and sys.argv[2] == "True"), d["verdict"]
assert d["subject"] == "wheel", d["subject"]
gated = [r for r in d["rows"] if r["kind"] != "report-only" and r["result"] in ("PASS", "FAIL")]
for suite in ("primary", "throughput"):
    for be in ("aot", "jit"):
        rows = [r for r in gated if r["suite"] == suite and r["backend"] == be and r["peer"] == "fcontext"]
        assert rows, (suite, be)
compilers = {}
for rep in glob.glob(a + "/runs/p*.json"):
    j = json.load(open(rep))
    for s in j["subjects"]:
        compilers.setdefault(j["backend"], set()).add(s["moduleCompiler"])
    for r in j["rows"]:
        if r["subject"] == "wheel" and not r["supported"]:
            assert "timer wheel has no task values" in r["reason"], r
assert compilers == {"aot": {"clang"}, "jit": {"tcc"}}, compilers
m = json.load(open(a + "/attempt-manifest.json"))
assert m["project"].endswith("examples/timerwheel"), m["project"]
PY
# Seeded layouts against a baseline (issue 42): two rounds, two layouts, each side's pads its
# own (the label is in the pads' seed), every gated process in its round's layout.
"$T" attempt --project "$EX" --quick --rounds 2 --layouts 2 --baseline HEAD --out "$W/l" >"$W/lout" 2>&1
rc=$?
busy=$(python3 "$(dirname "$0")/../lib/busy_invalid.py" "$W/l")
[ $rc = 0 ] || [ $rc = 3 ] || [ $rc = 4 ] || [ $rc = 5 ] || { [ $rc = 1 ] && [ "$busy" = True ]; } ||
  { fail "attempt --baseline HEAD --layouts 2: exit $rc, expected a verdict (0, 3, or 4, 5 on a regression)"; tail -20 "$W/lout"; }
python3 - "$W/l" "$rc" <<'PY' || fail "the layouts' evidence (see above)"
import glob, json, os, re, sys
a = sys.argv[1]
lay = json.load(open(a + "/attempt-manifest.json"))["layouts"]
seeds = lay["seeds"]
assert lay["count"] == 2 and lay["measured"] == 2 and len(seeds) == 2 and all(seeds) and seeds[0] != seeds[1], lay
def pads(unit):
    text = open(unit).read()
    return re.findall(r"\nTD_LAYOUT_FILE_START\((\d+), \d+\)", text), re.search(r'TD_PLAYER_SUBJECT "([^"]+)"', text).group(1)
for k in (0, 1):
    units = {}
    for side in ("current", "baseline"):
        d = "%s/layouts/%d/%s-aot" % (a, k, side)
        assert glob.glob(d + "/*.so"), d
        units[side] = pads(glob.glob(d + "/tandem-player-*.c")[0])
        assert json.load(open(d + "/binary-manifest-aot.json"))["layoutSeed"] == seeds[k], (d, seeds[k])
    (pc, lc), (pb, lb) = units["current"], units["baseline"]
    assert lc == "wheel" and lb.startswith("wheel@"), (lc, lb)
    assert len(pc) == len(pb) > 1 and pc != pb, ("layout %d: the two sides' pads are the same" % k, pc, pb)
for rep in glob.glob(a + "/runs/p*-r[12].json"):
    j = json.load(open(rep))
    r = int(rep[-6])
    assert j["settings"]["layoutSeed"] == seeds[r - 1], (rep, j["settings"]["layoutSeed"])
g = json.load(open(a + "/gate/gate-summary.json"))
b, rc = g["baseline"], int(sys.argv[2])
assert b["verdict"] in ("no regression", "regression"), b["verdict"]
# the exit carries both verdicts (gate_exit_code): 4 / 5 exactly when the baseline regressed
if g["verdict"] != "INVALID":
    want = {"PASS": 0, "FAIL": 3}[g["verdict"]] if b["verdict"] == "no regression" else {"PASS": 4, "FAIL": 5}[g["verdict"]]
    assert rc == want, (rc, g["verdict"], b["verdict"])
# the time arm leaves busy processes out (a parallel ctest run): two layouts when none was
busy = sum(json.load(open(f)).get("noise", {}).get("status") == "busy" for f in glob.glob(a + "/runs/observations/*.json"))
assert busy or any(x.get("layouts") == 2 for x in b["rows"]), "no baseline row read over 2 layouts"
PY
[ $fails = 0 ] && echo "test_timerwheel: PASS" || echo "test_timerwheel: $fails failed"
[ $fails = 0 ]
