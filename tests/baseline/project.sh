#!/bin/sh
# A project outside Tandem's repository, against its own git history (issue 15): REV is a
# revision of the repository holding the project (here one folder below its top).
#  - tandem stage --project P --from-git REV: the project's folders from REV (not the dirty
#    working tree), Tandem's harness (@tandem/...) from Tandem's tree, the link libraries
#    from tandem.json; gitHead = REV;
#  - tandem bench --project P --baseline REV --meter instructions: REV's runtime (wheel.c
#    without the slowdown) as the subject wheel@<rev> beside the slowed working tree, on AOT
#    and JIT: REGRESSION, exit 3; the baseline staging holds REV's wheel.c and Tandem's port;
#  - tandem attempt --quick --instructions --baseline REV: the same regression is the
#    attempt's exit 4 or 5 (the peers PASS or FAIL), its last line and --json summary;
#  - refused, exit 1, the reason named: an unknown revision (bench, attempt: nothing created),
#    a project in no git repository (bench --baseline, stage --from-git), a runtime folder
#    outside the project's folder, a revision without the runtime's folder.
# usage: project.sh TANDEM EXAMPLE_DIR WORK
set -u
T=$1 EX=$2 W=$3
rm -rf "$W" && mkdir -p "$W"
fail=0
no() { echo "FAIL: $*"; fail=1; }
expect() { # NAME EXPECTED_EXIT TEXT COMMAND...
  name=$1 want=$2 text=$3
  shift 3
  "$@" >"$W/$name.out" 2>&1
  rc=$?
  if [ $rc -ne "$want" ]; then no "$name: exit $rc, expected $want"; tail -8 "$W/$name.out"; return 1; fi
  grep -qF -- "$text" "$W/$name.out" || { no "$name: no '$text' in:"; tail -8 "$W/$name.out"; return 1; }
  echo "ok: $name"
}
R=$W/repo P=$W/repo/wheel
mkdir -p "$R"
git -C "$R" init -q && git -C "$R" config user.name "baseline test" && git -C "$R" config user.email "baseline@test" ||
  { echo "FAIL: git init"; exit 1; }
echo "a repository that will hold a library" >"$R/README"
git -C "$R" add README && git -C "$R" commit -qm "no library yet"
empty=$(git -C "$R" rev-parse HEAD)
cp -r "$EX" "$P"
git -C "$R" add wheel && git -C "$R" commit -qm "the wheel"
fast=$(git -C "$R" rev-parse HEAD)
# the slowed wheel: volatile stores for every timer a tick fires
python3 - "$P/src/wheel.c" <<'PY' || { echo "FAIL: cannot slow wheel.c"; exit 1; }
import sys
p = sys.argv[1]; s = open(p).read()
old = "        fired++;\n"
if old not in s: sys.exit(1)
s = s.replace(old, old + "        { volatile uint32_t slow_ = 0; for (uint32_t k_ = 0; k_ < 4; k_++) slow_ = k_; (void)slow_; }\n", 1)
open(p, "w").write(s)
PY
git -C "$R" commit -qam "slowed wheel_tick"
printf '/* uncommitted */\n' >>"$P/src/wheel.c"
short=$(printf %.7s "$fast")

# --from-git: the project's folders at REV
expect stage 0 "staged" "$T" stage --project "$P" --from-git "$fast" --out "$W/st"
python3 - "$W/st" "$R" "$fast" "$EX/../.." <<'PY' || no "stage --from-git: the staging (see above)"
import hashlib, json, subprocess, sys
st, repo, rev, tandem = sys.argv[1:]
d = json.load(open(st + "/staging.json"))
assert d["gitHead"] == rev, d["gitHead"]
want = subprocess.run(["git", "-C", repo, "show", rev + ":wheel/src/wheel.c"], capture_output=True, check=True).stdout
assert open(st + "/runtime/src/wheel.c", "rb").read() == want, "runtime/src/wheel.c is not the revision's"
assert open(st + "/players/include/tandem_player.h", "rb").read() == open(tandem + "/players/include/tandem_player.h", "rb").read()
assert open(st + "/players/subjects/fcontext/link.libs").read() == "boost_context\n"
PY

# --baseline REV: the slowed working tree against REV, instructions (deterministic)
for be in aot jit; do
  expect "bench-$be" 3 "baseline verdict (throughput, $be): REGRESSION" "$T" bench --project "$P" --suite throughput \
    --backend $be --quick --meter instructions --work "$W/b" --baseline "$fast" &&
  grep -q "^  REGRESSION *nextframe N=1024" "$W/bench-$be.out" || no "bench-$be: row nextframe N=1024 not a regression"
  grep -qF "wheel@$short" "$W/bench-$be.out" || no "bench-$be: no subject wheel@$short"
done
python3 - "$W/b/baseline-$short" "$R" "$fast" "$EX/../.." "$P" <<'PY' || no "the baseline's staging (see above)"
import hashlib, json, subprocess, sys
b, repo, rev, tandem, proj = sys.argv[1:]
st = json.load(open(b + "/staging/staging.json"))
files = {f["path"]: f["sha256"] for f in st["files"]}
want = subprocess.run(["git", "-C", repo, "show", rev + ":wheel/src/wheel.c"], capture_output=True, check=True).stdout
assert st["gitHead"] == rev and files["runtime/src/wheel.c"] == hashlib.sha256(want).hexdigest(), "not REV's wheel.c"
port = open(tandem + "/runtime/port/td_port.h", "rb").read()
assert files["runtime/port/td_port.h"] == hashlib.sha256(port).hexdigest(), "not Tandem's port"
assert "players/subjects/wheel/wheel_subject.c" in files and "runtime/contract.json" in files, sorted(files)
j = json.load(open(b + "/baseline.json"))
assert j["subject"] == "wheel@" + rev[:7] and j["adapter"] == "current" and j["repository"] == proj, j
PY

# attempt --baseline REV: the same regression, decided by the instruction arm, is the
# attempt's own exit (4 with the peers PASS, 5 with them FAIL), on its last line and in its
# --json summary; the peers' INVALID for a busy host alone stays 1 (tests/lib/busy_invalid.py)
"$T" attempt --project "$P" --quick --instructions --baseline "$fast" --json --out "$W/att-reg" \
  >"$W/att-reg.json" 2>"$W/att-reg.out"
rc=$?
busy=$(python3 "$(dirname "$0")/../lib/busy_invalid.py" "$W/att-reg")
if [ $rc = 1 ] && [ "$busy" = True ]; then
  echo "skipped: attempt-regression: the host was busy (the peers INVALID), no exit to check"
elif [ $rc != 4 ] && [ $rc != 5 ]; then
  no "attempt-regression: exit $rc, expected 4 or 5 (a baseline regression)"; tail -8 "$W/att-reg.out"
else
  python3 - "$W/att-reg" "$W/att-reg.json" "$rc" <<'PY2' || no "attempt-regression: the exit's evidence (see above)"
import json, sys
a, js, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(js))
assert s["exitCode"] == rc and s["baselineVerdict"] == "regression", s
peers = json.load(open(a + "/gate/gate-summary.json"))["verdict"]
assert (peers, rc) in (("PASS", 4), ("FAIL", 5)), (peers, rc)
names = {(r["suite"], r["row"], r["backend"]) for r in json.load(open(a + "/gate/gate-summary.json"))["baseline"]["regressions"]}
assert {("throughput", "nextframe N=1024", be) for be in ("aot", "jit")} <= names, names
assert json.load(open(a + "/attempt-manifest.json"))["baselineVerdict"] == "regression"
PY2
  grep -q "^attempt: \(PASS\|FAIL\) in [0-9]* s; baseline wheel@$short: regression; exit $rc; report " "$W/att-reg.out" ||
    { no "attempt-regression: no last line with both verdicts and the exit"; tail -3 "$W/att-reg.out"; }
  # one round (--quick): the line says the time arm decided nothing (gate_baseline.c reach_of)
  grep -q "^attempt: baseline wheel@$short: regression (one layout: time decides no row here, instructions only)$" "$W/att-reg.out" ||
    { no "attempt-regression: the baseline line does not say the time arm's reach"; grep "^attempt: baseline" "$W/att-reg.out"; }
  echo "ok: attempt-regression (exit $rc)"
fi

# refusals
expect unknown 1 "revision 'no-such-rev' is not a commit in this repository" "$T" bench --project "$P" \
  --suite throughput --backend aot --quick --work "$W/b" --baseline no-such-rev
expect attempt-unknown 1 "is not a commit" "$T" attempt --project "$P" --quick --out "$W/att" --baseline no-such-rev
[ -e "$W/att" ] && no "attempt created its folder before refusing"
N=$(mktemp -d "${TMPDIR:-/tmp}/tandem-nogit.XXXXXX")   # WORK is in Tandem's checkout: this is not
trap 'rm -rf "$N"' EXIT
if git -C "$N" rev-parse --git-dir >/dev/null 2>&1; then
  echo "skipped: $N is inside a git repository, no project outside one to test"
else
  cp -r "$EX" "$N/wheel"
  expect nogit-bench 1 "not inside a git repository: a baseline revision is a commit of the repository holding the project" \
    "$T" bench --project "$N/wheel" --suite throughput --backend aot --quick --work "$W/b3" --baseline HEAD
  expect nogit-stage 1 "'HEAD' is not a commit of the git repository holding this folder" \
    "$T" stage --project "$N/wheel" --from-git HEAD --out "$W/st3"
fi
python3 - "$P/tandem.json" "$W/outside.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["runtime"] = {"sources": "@tandem/runtime/src", "include": "@tandem/runtime/include"}
d["subjects"]["wheel"]["folder"] = "@tandem/players/subjects/callback"
json.dump(d, open(sys.argv[2], "w"))
PY
mkdir -p "$R/outside" && cp "$W/outside.json" "$R/outside/tandem.json"
expect outside 1 "runtime.sources: " "$T" bench --project "$R/outside" --suite throughput --backend aot --quick \
  --work "$W/b4" --baseline "$fast" &&
grep -q "is not inside the project's folder $R/outside: a baseline revision takes the runtime from" "$W/outside.out" ||
  no "outside: the reason"
expect before 1 "revision $empty has no src/ (runtime.sources in $P/tandem.json) to build" "$T" bench --project "$P" \
  --suite throughput --backend aot --quick --work "$W/b" --baseline "$empty"
expect before-stage 1 "$P/tandem.json: players/subjects/wheel: bench/wheel is not in revision $empty" "$T" stage \
  --project "$P" --from-git "$empty" --out "$W/st5"
[ $fail -eq 0 ] && echo "PASS: a project's own history: --from-git and --baseline, refusals named" || exit 1
