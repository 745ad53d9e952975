#!/usr/bin/env bash
# test_ci_outputs.sh TANDEM TESTTOOL RUNS_ZIP: what CI servers read (issue 43, item 5), read
# back with real parsers: the JUnit XML by libxml2 (xmllint: well-formed, then XPath over the
# elements and attributes CI servers read: testsuites / testsuite / testcase / failure, name,
# classname, time, tests, failures), the CSV by python3's csv module; each against the JSON
# it was made from.
#  - the gate on a published packet's runs, once with its thresholds and once with limits it
#    cannot meet: one testcase per gated row per backend, a failure per failing row with the
#    ratio and the limit as its message, counts consistent; the CSV has every row;
#  - `tandem smoke --backend jit`: one testcase per case;
#  - --json (stdout: the summary object, parsed) and --quiet (stdout empty) on gate and smoke.
. "$(dirname "$0")/common.sh"
RUNS_ZIP=$3
command -v xmllint >/dev/null || { echo "FAIL: xmllint (libxml2-utils) is missing: scripts/deps.sh installs it"; exit 1; }
python3 - "$RUNS_ZIP" "$W" "$T" <<'PY' || fail "fixture"
import json, os, shutil, subprocess, sys, zipfile
runs_zip, w, t = sys.argv[1:]
zipfile.ZipFile(runs_zip).extractall(os.path.join(w, "runs"))
shutil.rmtree(os.path.join(w, "runs", "logs"), ignore_errors=True)
if os.path.exists(os.path.join(w, "runs", "files.sha256")):
    os.unlink(os.path.join(w, "runs", "files.sha256"))
cfg = json.loads(subprocess.run([t, "gate", "--print-config"], check=True, stdout=subprocess.PIPE).stdout)
cfg["expectedProcesses"] = 22  # the packet's attempt: 22 processes, 8 samples
for s in cfg["suites"]:
    s["samples"] = 8
    if s["name"] == "cancellation":  # the packet predates the cancellation suite: no process of it
        s["gated"] = False
json.dump(cfg, open(os.path.join(w, "as-is.json"), "w"))
cfg["thresholds"]["median"], cfg["thresholds"]["worst"] = 0.5, 0.6
json.dump(cfg, open(os.path.join(w, "tight.json"), "w"))
PY

x() { xmllint --xpath "$1" "$2" 2>/dev/null; }
# junit FILE SUMMARY_COUNTS...: well-formed, and the counts CI servers show consistent
junit_ok() {
  local f=$1 name=$2
  xmllint --noout "$f" 2>"$W/xml.err" || { fail "$name: not well-formed XML: $(head -2 "$W/xml.err")"; return; }
  [ "$(x 'count(/testsuites)' "$f")" = 1 ] || fail "$name: no single <testsuites> root"
  [ "$(x 'string(/testsuites/@tests)' "$f")" = "$(x 'count(//testsuite/testcase)' "$f")" ] ||
    fail "$name: testsuites@tests is not the number of testcases"
  [ "$(x 'string(/testsuites/@failures)' "$f")" = "$(x 'count(//testcase/failure)' "$f")" ] ||
    fail "$name: testsuites@failures is not the number of failures"
  [ "$(x 'count(//testsuite[not(@name) or not(@tests) or not(@failures) or not(@time)])' "$f")" = 0 ] ||
    fail "$name: a testsuite lacks name, tests, failures or time"
  [ "$(x 'count(//testcase[not(@name) or not(@classname) or not(@time)])' "$f")" = 0 ] ||
    fail "$name: a testcase lacks name, classname or time"
  [ "$(x 'count(//failure[not(@message)])' "$f")" = 0 ] || fail "$name: a failure without a message"
  for s in $(x '//testsuite/@name' "$f" | sed 's/ name="\([^"]*\)"/\1 /g'); do
    [ "$(x "string(//testsuite[@name='$s']/@tests)" "$f")" = "$(x "count(//testsuite[@name='$s']/testcase)" "$f")" ] ||
      fail "$name: testsuite $s: tests is not its number of testcases"
    [ "$(x "string(//testsuite[@name='$s']/@failures)" "$f")" = "$(x "count(//testsuite[@name='$s']/testcase/failure)" "$f")" ] ||
      fail "$name: testsuite $s: failures is not its number of failures"
  done
  pass
}

for cfg in as-is tight; do
  "$T" gate "$W/runs" --config "$W/$cfg.json" --out "$W/g-$cfg" >"$W/out" 2>&1
  rc=$?
  { [ $rc = 0 ] || [ $rc = 3 ]; } || { fail "gate ($cfg): exit $rc"; sed 's/^/    /' "$W/out" | tail -5; continue; }
  junit_ok "$W/g-$cfg/gate-junit.xml" "gate-junit.xml ($cfg)"
  # against gate-summary.json: one testcase per gated row per backend, failures = FAIL rows
  python3 - "$W/g-$cfg" "$(x 'count(//testcase)' "$W/g-$cfg/gate-junit.xml")" \
    "$(x 'count(//testcase/failure)' "$W/g-$cfg/gate-junit.xml")" <<'PY' || fail "gate ($cfg): JUnit or CSV against the summary"
import csv, json, sys
d, ncases, nfail = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = json.load(open(d + "/gate-summary.json"))
gated = [r for r in s["rows"] if r["kind"] != "report-only"]
assert ncases == len(gated) == s["counts"]["gated"], (ncases, len(gated), s["counts"])
assert nfail == sum(r["result"] == "FAIL" for r in gated) == s["counts"]["failed"], (nfail, s["counts"])
rows = list(csv.DictReader(open(d + "/gate-rows.csv", newline="")))
assert len(rows) == len(s["rows"]), (len(rows), len(s["rows"]))
for got, want in zip(rows, s["rows"]):
    assert (got["suite"], got["row"], got["backend"], got["result"]) == \
        (want["suite"], want["row"], want["backend"], want["result"]), (got, want)
    assert abs(float(got["median"]) - want["median"]) < 1e-6 if want["median"] is not None else got["median"] == ""
PY
done
# with limits it cannot meet: failures, each naming the ratio and the limit
n=$(x 'count(//failure)' "$W/g-tight/gate-junit.xml")
[ "${n:-0}" -gt 0 ] || fail "tight limits: no failure in gate-junit.xml"
msg=$(x 'string((//failure)[1]/@message)' "$W/g-tight/gate-junit.xml")
case $msg in "median ratio "*"(limit 0.5000), worst "*"(limit 0.6000)") pass ;; *) fail "failure message: '$msg'" ;; esac

# smoke: one testcase per case of the backend run, as smoke-jit.json lists them
( cd "$W" && "$T" smoke --backend jit --out "$W/sm" ) >"$W/out" 2>&1 || { fail "smoke --backend jit"; tail -5 "$W/out"; }
# the players' protocol lines stay in their reports, off the terminal (issue 43, item 3)
grep -q "^TANDEM-" "$W/out" && fail "smoke: protocol lines reached the terminal: $(grep -m1 "^TANDEM-" "$W/out")"
junit_ok "$W/sm/smoke-junit.xml" "smoke-junit.xml"
want=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cases']))" "$W/sm/smoke-jit.json")
[ "$(x 'count(//testsuite[@name="smoke.jit"]/testcase[@classname="tandem.smoke.jit"])' "$W/sm/smoke-junit.xml")" = "$want" ] &&
  pass || fail "smoke-junit.xml: not one testcase per case ($want)"

# --json: stdout is one JSON object (the summary), the rest went to stderr; --quiet: nothing
"$T" gate "$W/runs" --config "$W/tight.json" --out "$W/g-json" --json >"$W/json" 2>"$W/err"
rc=$?
python3 - "$W/json" "$rc" "$W/g-json" <<'PY' && pass || fail "gate --json: stdout is not the summary (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[3] + "/gate-summary.json"))
assert d["verb"] == "gate" and d["exitCode"] == int(sys.argv[2]) == 3, d
assert d["verdict"] == s["verdict"] == "FAIL" and d["counts"] == s["counts"], d
PY
( cd "$W" && "$T" smoke --backend jit --out "$W/sm2" --players-from "$W/sm" --filter "bounded channel" --json ) \
  >"$W/json" 2>"$W/err"
python3 - "$W/json" <<'PY' && pass || fail "smoke --json: stdout is not the summary (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verb"] == "smoke" and d["exitCode"] == 0 and d["jit"]["passed"] and d["jit"]["cases"] == 1, d
assert d["junit"].endswith("smoke-junit.xml"), d
PY
( cd "$W" && "$T" smoke --backend jit --out "$W/sm3" --players-from "$W/sm" --filter "bounded channel" --quiet ) \
  >"$W/q" 2>"$W/err" || fail "smoke --quiet: exit $?"
[ -s "$W/q" ] && fail "smoke --quiet printed on stdout: $(head -2 "$W/q")" || pass
( cd "$W" && "$T" bench --suite primary --backend jit --subjects tandem --quick --filter "completed get-result" \
  --work "$W/bw" --json ) >"$W/json" 2>"$W/err"
python3 - "$W/json" <<'PY' && pass || fail "bench --json: stdout is not the summary (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verb"] == "bench" and d["exitCode"] == 0 and d["report"].endswith("primary-jit.json"), d
json.load(open(d["report"]))
PY
run 2 "--quiet with --json" "$T" gate "$W/runs" --quiet --json
finish
