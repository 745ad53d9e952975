#!/bin/bash
# bare.sh TANDEM: `tandem inspect` with no argument stages the working tree, builds the AOT
# player of subject tandem (or reuses it), and checks runtime/contract.json on it, AOT and
# JIT: exit 0 with a PASS line and both reports; run again, the player is reused; an
# explicit --out still overrides.
T=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$T" inspect >"$W/1" 2>&1; rc=$?
[ $rc = 0 ] || { fail "bare inspect: exit $rc"; sed 's/^/    /' "$W/1"; }
grep -q '^inspect: PASS' "$W/1" || fail "bare inspect: no PASS line"
rep=$(sed -n 's/.*report: \([^,]*inspect.md\),.*/\1/p' "$W/1")
[ -f "$rep" ] || fail "bare inspect: no inspect.md ($rep)"
grep -q 'JIT' "$rep" || fail "bare inspect: the report has no JIT column"
"$T" inspect --out "$W/rep" -q >"$W/2" 2>&1; rc=$?
[ $rc = 0 ] || { fail "bare inspect again: exit $rc"; sed 's/^/    /' "$W/2"; }
grep -q 'reusing the AOT player' "$W/2" || fail "second bare inspect did not reuse the player: $(grep aot "$W/2")"
[ -f "$W/rep/inspect.json" ] || fail "--out was not honoured"
[ $fails = 0 ] && echo "inspect bare: ok" && exit 0
exit 1
