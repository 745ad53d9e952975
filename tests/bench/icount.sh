#!/bin/sh
# icount.sh TANDEM BACKEND WORK PYTHON CHECKER: the instruction arm's determinism. Two
# `tandem bench --meter instructions` runs of one small row (throughput nextframe N=1024,
# quick: one cohort) for tandem and callback on the same build, then icount_check.py:
# same counts (within 0.1%), every instruction decoded, the meter's own cost the same for
# both subjects, the row's counts above the meter's. Also: the player refuses the meter
# outside valgrind (exit 2). The second run also sums each row's instructions by function
# (--functions): the checker holds those sums to the row's count, and --functions without the
# instruction meter is refused (exit 2).
set -e
tandem=$1 backend=$2 work=$3 py=$4 checker=$5
out="$work/icount-test-$backend"
rm -rf "$out"
mkdir -p "$out"
for run in 1 2; do
  functions=
  [ "$run" = 2 ] && functions="--functions 3"
  # shellcheck disable=SC2086
  "$tandem" bench --suite throughput --backend "$backend" --meter instructions --subject tandem \
    --subject callback --quick --filter "nextframe N=1024" --work "$work" --staging "$work/staging" \
    --out "$out/run$run.json" --timeout 240 $functions >"$out/run$run.txt"
done
"$py" "$checker" "$out/run1.json" "$out/run2.json" "$backend"
grep -q "^by function: " "$out/run2.txt" || { echo "FAIL: --functions printed no breakdown"; exit 1; }
if grep -q "^by function: " "$out/run1.txt"; then echo "FAIL: a breakdown printed without --functions"; exit 1; fi
status=0
"$tandem" bench --suite throughput --backend "$backend" --functions 3 --work "$work" --staging "$work/staging" \
  --out "$out/time.json" 2>"$out/functions-refused.txt" || status=$?
[ "$status" -eq 2 ] || { echo "FAIL: --functions without --meter instructions exited $status, expected 2"; exit 1; }
grep -q "needs --meter instructions" "$out/functions-refused.txt" || { echo "FAIL: no reason given"; exit 1; }
# Outside valgrind the meter must refuse (no silent zero counts).
if [ "$backend" = aot ]; then
  status=0
  "$work/aot/tandem-player" --backend aot --module "$work/aot/callback.so" --suite throughput --quick \
    --meter instructions --meter-out "$out/none" --out "$out/none.json" 2>"$out/refuse.txt" || status=$?
  [ "$status" -eq 2 ] || { echo "FAIL: --meter instructions outside valgrind exited $status, expected 2"; exit 1; }
  grep -q "under valgrind" "$out/refuse.txt" || { echo "FAIL: no reason given"; cat "$out/refuse.txt"; exit 1; }
fi
echo "icount $backend: deterministic"
