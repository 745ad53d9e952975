#!/usr/bin/env bash
# The staleness table (players/suites/stale, issue 40) on both players: `tandem smoke` on a
# project of its own whose smoke suite is the stale suite (Tandem's runtime, subject and
# suite by @tandem paths), so the players are built from a fresh staging exactly as the
# smoke suite's are. Tandem's tandem.json does not list the suite: its bench, gate and
# attempt verbs measure every suite it lists but smoke and demo.
# usage: stale_players.sh TANDEM WORKDIR
set -euo pipefail
tandem=$1 work=$2
rm -rf "$work"
mkdir -p "$work/project"
cat >"$work/project/tandem.json" <<'JSON'
{"tandemProject": 1, "name": "stale",
 "runtime": {"sources": "@tandem/runtime/src", "include": "@tandem/runtime/include", "port": "@tandem/runtime/port"},
 "subjects": {"tandem": {"folder": "@tandem/players/subjects/tandem"}},
 "suites": {"stale": "@tandem/players/suites/stale"}, "smoke": "stale",
 "gate": {"subject": "tandem"}}
JSON
rc=0
"$tandem" smoke --project "$work/project" --out "$work/out" >"$work/smoke.log" 2>&1 || rc=$?
grep -v "TANDEM-CASE-START\|TANDEM-CASE-PASS" "$work/smoke.log" | grep -v "^[0-9]* .* pass *pass *$" || true
for b in aot jit; do
  python3 - "$work/out/smoke-$b.json" "$b" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cases = d.get("cases", [])
bad = [c["name"] for c in cases if not c.get("passed")]
print("stale suite on %s: %d/%d cases passed, expected %s" % (sys.argv[2], len(cases) - len(bad), len(cases),
      d.get("expectedCaseCount")))
assert cases and len(cases) == d.get("expectedCaseCount"), "case count"
assert not bad and d.get("passed"), "failed: %s" % bad[:10]
PY
done
exit $rc
