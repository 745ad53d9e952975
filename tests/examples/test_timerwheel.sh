#!/bin/bash
# test_timerwheel.sh TANDEM CLANG TCC: the example library examples/timerwheel, which is not
# Tandem's runtime: its own unit test under clang and tcc (both paths of its port layer),
# then a quick attempt of its project (tandem.json) against fcontext and callback: a verdict,
# the wheel's rows measured on both backends (modules compiled by clang and by tcc), its
# NULL workloads NA with the subject's reason.
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
[ $fails = 0 ] && echo "test_timerwheel: PASS" || echo "test_timerwheel: $fails failed"
[ $fails = 0 ]
