#!/bin/bash
# project.sh TANDEM EXAMPLE: a bare `tandem inspect --project DIR` inspects the project's
# runtime with its own contract (tandem.json runtime.contract) on the AOT player of its gate
# subject, not Tandem's runtime on subject tandem:
#  - examples/timerwheel (contract.json): the player of subject wheel, every rule of the
#    wheel's contract PASS on both backends, exit 0, in its own work folder;
#  - a copy whose wheel_add allocates: that rule FAILs on AOT and JIT, exit 3;
#  - a copy that names no contract: refused before anything is staged, saying so (the
#    file and the field), exit 1; with --contract FILE it is inspected;
#  - --project with --tu: usage, exit 2.
T=$1 EX=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d "${TMPDIR:-/tmp}/tandem-inspect-project.XXXXXX")
works=()
cleanup() { rm -rf "$W"; for w in "${works[@]}"; do rm -rf "$w"; done; rmdir "$EX/.tandem" 2>/dev/null; true; }
trap cleanup EXIT
# the work folder a run used (WORK/staging is named on its first line), removed at the end
work_of() { sed -n 's/^tandem inspect: staging the project .* into \(.*\)\/staging$/\1/p' "$1"; }

"$T" inspect --project "$EX" >"$W/ex" 2>&1; rc=$?
works+=("$(work_of "$W/ex")")   # the example's own .tandem/inspect: not left in the source tree
[ $rc = 0 ] || { fail "timerwheel: exit $rc, expected 0"; sed 's/^/    /' "$W/ex"; }
grep -qE "^tandem inspect: (building the AOT player of subject wheel|reusing the AOT player)" "$W/ex" ||
  fail "timerwheel: not the player of subject wheel"
grep -q "^inspect: PASS (9 rules, 1 must-inline sites satisfied on AOT)" "$W/ex" || fail "timerwheel: no PASS line"
for fn in wheel_add wheel_tick wheel_next_due; do
  grep -qE "^pass +pass +$fn " "$W/ex" || fail "timerwheel: $fn not checked on both backends"
done
grep -q "td_task_get" "$W/ex" && fail "timerwheel: Tandem's contract was checked"
grep -qE "^AOT +JIT +function +rule" "$W/ex" || fail "timerwheel: no column header (which column is AOT, which JIT)"
# --json: stdout is the summary object alone (the same work folder, its players reused)
"$T" inspect --project "$EX" --json >"$W/json" 2>/dev/null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verb"] == "inspect" and d["verdict"] == "PASS" and d["exitCode"] == 0 and d["rules"] == 9, d' "$W/json" ||
  fail "timerwheel: inspect --json: $(head -c 300 "$W/json")"
case $(work_of "$W/ex") in "$EX"/.tandem/inspect) ;; *) fail "timerwheel: work folder $(work_of "$W/ex")" ;; esac

# a rule the library breaks: an allocation on wheel_add
cp -r "$EX" "$W/alloc"
python3 - "$W/alloc/src/wheel.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("#include <stddef.h>\n", "#include <stddef.h>\n#include <stdlib.h>\n\nvoid *wheel_spare;\n", 1)
s = s.replace("    if (delay < 1 || delay >= WHEEL_SLOTS) return -1;\n",
              "    if (delay < 1 || delay >= WHEEL_SLOTS) return -1;\n    if (!wheel_spare) wheel_spare = malloc(64);\n", 1)
open(p, "w").write(s)
PY
"$T" inspect --project "$W/alloc" >"$W/alloc.out" 2>&1; rc=$?
works+=("$(work_of "$W/alloc.out")")
[ $rc = 3 ] || { fail "allocating wheel_add: exit $rc, expected 3"; sed 's/^/    /' "$W/alloc.out"; }
grep -qE "^fail +fail +wheel_add +no_call" "$W/alloc.out" || fail "allocating wheel_add: no_call did not fail on both"
grep -qE "^pass +pass +wheel_tick +no_call" "$W/alloc.out" || fail "allocating wheel_add: wheel_tick failed too"
md=$(sed -n 's/.*report: \([^,]*inspect.md\),.*/\1/p' "$W/alloc.out")
grep -q "^| wheel_add | no_call |.*forbidden call: wheel_add: .*@malloc.*forbidden call: wheel_add+0x[0-9a-f]*: \`call malloc\`" "$md" ||
  fail "allocating wheel_add: the report ($md) does not name the call on both backends"

# no contract: said so, nothing staged
cp -r "$EX" "$W/none"
python3 - "$W/none/tandem.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["runtime"]["contract"]
json.dump(d, open(sys.argv[1], "w"))
PY
"$T" inspect --project "$W/none" >"$W/none.out" 2>&1; rc=$?
[ $rc = 1 ] || fail "no contract: exit $rc, expected 1"
grep -qF "$W/none/tandem.json: runtime.contract: the project names no codegen contract, so a bare \`tandem inspect\` has nothing to check" \
  "$W/none.out" || { fail "no contract: the message"; sed 's/^/    /' "$W/none.out"; }
grep -q "staging\|PASS" "$W/none.out" && fail "no contract: staged or passed anyway"
# ... and --contract names one
"$T" inspect --project "$W/none" --contract "$EX/contract.json" >"$W/given.out" 2>&1; rc=$?
works+=("$(work_of "$W/given.out")")
[ $rc = 0 ] || { fail "no contract, --contract given: exit $rc"; sed 's/^/    /' "$W/given.out"; }

"$T" inspect --project "$EX" --tu "$EX/src/wheel.c" --contract "$EX/contract.json" >"$W/usage" 2>&1; rc=$?
[ $rc = 2 ] || fail "--project with --tu: exit $rc, expected 2"
grep -q -- "--project is for a bare run" "$W/usage" || fail "--project with --tu: the message"
"$T" inspect --help | grep -q -- "--project DIR" || fail "inspect --help does not name --project"

[ $fails = 0 ] && echo "inspect project: ok" && exit 0
echo "inspect project: $fails failed"
exit 1
