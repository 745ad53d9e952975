#!/bin/sh
# A deliberately slowed runtime is caught as a regression on both backends, by instructions.
# usage: slowed.sh TANDEM SRC_ROOT WORK
set -u
T=$1 SRC=$2 W=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/clone.sh"
rm -rf "$W" && mkdir -p "$W"
td_clone "$SRC" "$W/clone"
fast=$base
# the slowed copy: volatile stores on every entry the frame drain takes (the hot path of the
# throughput rows), right after it takes the entry; else at the drain's start
python3 - "$W/clone/runtime/src/loop.c" <<'PY' || { echo "FAIL: cannot slow runtime/src/loop.c"; exit 1; }
import sys
p = sys.argv[1]; s = open(p).read()
slow = "{ volatile uint32_t td_slow_ = 0; for (uint32_t s_ = 0; s_ < 4; s_++) td_slow_ = s_; (void)td_slow_; }\n"
entry = "        loop_entry *e = &items[i];\n"
if entry in s:
    s = s.replace(entry, entry + "        " + slow, 1)
else:
    head = "static void loop_run_timing(td_loop *loop, uint32_t t, uint32_t frame)\n{\n"
    if head not in s: sys.exit(1)
    s = s.replace(head, head + "    for (int r_ = 0; r_ < 64; r_++) " + slow, 1)
open(p, "w").write(s)
PY
git -C "$W/clone" commit -qam "slowed frame drain (baseline test)"
slow=$(git -C "$W/clone" rev-parse HEAD)
fail=0
run() { # LABEL STAGING_REV BASELINE_REV EXPECTED_EXIT
  st=$W/staging-$1
  "$T" stage --root "$W/clone" --from-git "$2" --out "$st" >/dev/null || { echo "FAIL: stage $2"; exit 1; }
  for be in aot jit; do
    td_player "$T" $be "$st" "$W/work-$1/$be"
    out=$W/$1-$be.out
    "$T" bench --suite throughput --backend $be --quick --meter instructions --filter "N=1024" \
      --staging "$st" --work "$W/work-$1" --baseline "$3" >"$out" 2>&1
    rc=$?
    sed -n '/^baseline tandem/,$p' "$out"
    if [ $rc -ne "$4" ]; then echo "FAIL: $1 $be: exit $rc, expected $4"; tail -20 "$out"; fail=1; fi
    short=$(printf %.7s "$3")
    grep -q "tandem@$short" "$out" || { echo "FAIL: $1 $be: no subject tandem@$short"; fail=1; }
    case $1 in
      slowed)
        grep -q "^baseline verdict (throughput, $be): REGRESSION" "$out" || { echo "FAIL: slowed $be: no REGRESSION verdict"; fail=1; }
        grep -q "^  REGRESSION *nextframe N=1024" "$out" || { echo "FAIL: slowed $be: row nextframe N=1024 not named"; fail=1; } ;;
      fast)
        grep -q "^baseline verdict (throughput, $be): no regression" "$out" || { echo "FAIL: fast $be: not 'no regression'"; fail=1; }
        grep -q "^  improved *nextframe N=1024" "$out" || { echo "FAIL: fast $be: nextframe N=1024 not improved"; fail=1; } ;;
    esac
  done
}
run slowed "$slow" "$fast" 3
run fast "$fast" "$slow" 0
# the baseline's staging hashes REV's runtime: the slowed loop.c is in the fast run's baseline
b=$(ls -d "$W"/work-fast/baseline-*)
python3 - "$b/staging/staging.json" "$W/clone" "$slow" <<'PY' || fail=1
import json, subprocess, sys, hashlib
st = json.load(open(sys.argv[1]))
want = subprocess.run(["git", "-C", sys.argv[2], "show", sys.argv[3] + ":runtime/src/loop.c"], capture_output=True).stdout
got = [f for f in st["files"] if f["path"] == "runtime/src/loop.c"]
ok = st["gitHead"] == sys.argv[3] and got and got[0]["sha256"] == hashlib.sha256(want).hexdigest()
print("baseline staging: gitHead and runtime/src/loop.c hash", "match" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
[ $fail -eq 0 ] && echo "PASS: slowed runtime caught on aot and jit; the reverse improved" || exit 1
