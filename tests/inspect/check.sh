#!/bin/sh
# check.sh - run `tandem inspect` and check its exit code and report.
# usage: check.sh TANDEM OUTDIR EXPECTED_RC [PATTERN ...] -- [inspect arguments]
#   PATTERN      an extended regex that must match a line of OUTDIR/inspect.md (the
#                side-by-side table has one line per rule: function | rule | arg | AOT | JIT |
#                AOT evidence | JIT evidence)
#   json:PATTERN must match a line of OUTDIR/inspect.json
#   err:PATTERN  must match the verb's stderr
#   !PATTERN     must match no line of inspect.md
# Fails (exit 1) with the reason and the report when anything differs.
set -u
tandem=$1 out=$2 want=$3
shift 3
pats=""
n=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  n=$((n + 1)); eval "pat_$n=\$1"; shift
done
[ $# -gt 0 ] && shift
rm -rf "$out"; mkdir -p "$out"
"$tandem" inspect --out "$out" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt"
rc=$?
fail() {
  echo "FAIL: $*"
  echo "--- stdout"; cat "$out/stdout.txt"; echo "--- stderr"; cat "$out/stderr.txt"
  [ -f "$out/inspect.md" ] && { echo "--- inspect.md"; sed -n '1,/^## Evidence/p' "$out/inspect.md"; }
  exit 1
}
[ "$rc" = "$want" ] || fail "exit code $rc, expected $want"
i=1
while [ $i -le $n ]; do
  eval "p=\$pat_$i"
  case $p in
    json:*) grep -Eq -- "${p#json:}" "$out/inspect.json" 2>/dev/null || fail "inspect.json has no line matching: ${p#json:}";;
    err:*)  grep -Eq -- "${p#err:}" "$out/stderr.txt" || fail "stderr has no line matching: ${p#err:}";;
    !*)     ! grep -Eq -- "${p#!}" "$out/inspect.md" || fail "inspect.md has a line matching: ${p#!}";;
    *)      grep -Eq -- "$p" "$out/inspect.md" 2>/dev/null || fail "inspect.md has no line matching: $p";;
  esac
  i=$((i + 1))
done
echo "ok: exit $rc, $n pattern(s) matched"
