#!/bin/bash
# test_clean.sh TANDEM: `tandem clean` on a project's attempts folder (issue 43, item 2):
# keeps the newest N finished attempts, removes older ones and interrupted ones (their
# process gone), keeps an attempt under way (its pid a running tandem) and anything that is
# not an attempt, removes nothing with --dry-run, and takes the `latest` link with its
# attempt. Fabricated attempt folders (no measurement): a second.
T=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d "${TMPDIR:-/tmp}/tandem-clean-test.XXXXXX")
cp /bin/sleep "$W/tandem-busy"   # a process whose name is a tandem's: an attempt under way
"$W/tandem-busy" 60 & busy=$!
trap 'kill $busy 2>/dev/null; rm -rf "$W"' EXIT
cd "$W" && "$T" init p >/dev/null || { echo "FAIL: init"; exit 1; }
A=$W/p/.tandem/attempts
mk() {  # mk NAME STAGE PID AGE_MINUTES
  mkdir -p "$A/$1"
  printf '{"schemaVersion":1,"kind":"tandem-attempt","stage":"%s","pid":%s}\n' "$2" "$3" >"$A/$1/attempt-manifest.json"
  touch -d "-$4 minutes" "$A/$1/attempt-manifest.json"
}
mk a1 done 1 30; mk a2 done 1 20; mk a3 done 1 10; mk i1 processes 999999 25; mk r1 processes $busy 5
mkdir -p "$A/junk" && ln -s a3 "$A/latest"
left() { (cd "$A" && ls | tr '\n' ' '); }

"$T" clean --project p --keep 2 --dry-run >"$W/out" 2>&1 || fail "--dry-run: exit $?"
grep -q "would remove $A/a1 (older than the newest kept)" "$W/out" || fail "--dry-run: a1 not named"
grep -q "would remove $A/i1 (interrupted)" "$W/out" || fail "--dry-run: i1 not named"
grep -q "keep $A/r1 (under way)" "$W/out" || fail "--dry-run: r1 not kept as under way"
grep -q "junk: not an attempt, left alone" "$W/out" || fail "--dry-run: junk not named"
[ "$(left)" = "a1 a2 a3 i1 junk latest r1 " ] || fail "--dry-run removed something: $(left)"

(cd p && "$T" clean --keep 2) >"$W/out" 2>&1 || fail "clean --keep 2: exit $?"
[ "$(left)" = "a2 a3 junk latest r1 " ] || { fail "clean --keep 2 left: $(left)"; cat "$W/out"; }
"$T" clean --project p --keep 0 >"$W/out" 2>&1 || fail "clean --keep 0: exit $?"
[ "$(left)" = "junk r1 " ] || { fail "clean --keep 0 left: $(left) (latest goes with a3)"; cat "$W/out"; }
"$T" clean --project p --keep x >"$W/out" 2>&1; [ $? = 2 ] || fail "--keep x: not a usage error"
[ $fails = 0 ] && echo "test_clean: PASS" || echo "test_clean: $fails failed"
[ $fails = 0 ]
