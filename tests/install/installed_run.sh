#!/bin/bash
# installed_run.sh PREFIX USERDIR SOURCE_DIR hidden|reachable: a user's first session with an
# installed Tandem (test_install.sh runs it, usually with the source tree hidden): init, a
# quick attempt from inside the project, smoke from an empty folder. Results must land only
# under USERDIR (the project's .tandem/, the smoke's out/), never in PREFIX.
P=$1 U=$2 S=$3 mode=$4
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export HOME=$U/home PATH=$P/bin:$PATH
if [ "$mode" = hidden ] && [ -n "$(ls -A "$S")" ]; then fail "$S is still visible"; fi
touch "$U/start"
cd "$U" || exit 1
tandem init mylib >"$U/init.log" 2>&1 || { fail "tandem init"; cat "$U/init.log"; }
# every row of a fresh subject is NA: the verdict is INVALID (exit 1), with its report
(cd mylib && tandem attempt --quick) >"$U/attempt.log" 2>&1
rc=$?
[ $rc = 1 ] || { fail "tandem attempt --quick: exit $rc (expected 1: INVALID)"; tail -20 "$U/attempt.log"; }
grep -q "attempt: INVALID in" "$U/attempt.log" || { fail "attempt: no verdict line"; tail -5 "$U/attempt.log"; }
[ -f mylib/.tandem/attempts/attempt/gate/gate-summary.json ] || fail "no mylib/.tandem/attempts/attempt/gate/gate-summary.json"
[ "$(readlink mylib/.tandem/attempts/latest)" = attempt ] || fail "no mylib/.tandem/attempts/latest -> attempt"
(cd mylib && tandem clean --dry-run) 2>&1 | grep -q "^keep $U/mylib/.tandem/attempts/attempt$" || fail "tandem clean --dry-run"
mkdir -p s && (cd s && tandem smoke) >"$U/smoke.log" 2>&1 || { fail "tandem smoke"; tail -20 "$U/smoke.log"; }
for b in aot jit; do
  grep -q "^$b: 42/42 cases passed" "$U/smoke.log" || fail "smoke $b: not 42/42"
  [ -f "s/out/smoke/smoke-$b.json" ] || fail "no s/out/smoke/smoke-$b.json"
done
# the JUnit XML beside them (libxml2 links into the installed tool): 42 cases x 2 backends
[ "$(xmllint --xpath 'count(//testsuite/testcase)' s/out/smoke/smoke-junit.xml 2>/dev/null)" = 84 ] ||
  fail "s/out/smoke/smoke-junit.xml: not 84 testcases"
changed=$(find "$P" -newer "$U/start" | head -3)
[ -z "$changed" ] || fail "written into the prefix: $changed"
[ -e "$HOME/.cache/tandem" ] && fail "a project's results went to the cache, not the project"
exit $((fails > 0))
