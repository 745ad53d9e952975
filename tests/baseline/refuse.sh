#!/bin/sh
# A baseline that does not exist, or whose runtime does not build, is refused: exit 1, why.
# usage: refuse.sh TANDEM SRC_ROOT WORK
set -u
T=$1 SRC=$2 W=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/clone.sh"
rm -rf "$W" && mkdir -p "$W"
td_clone "$SRC" "$W/clone"
fail=0
expect() { # NAME EXPECTED_EXIT PATTERN COMMAND...
  name=$1 want=$2 pat=$3
  shift 3
  "$@" >"$W/$name.out" 2>&1
  rc=$?
  if [ $rc -ne "$want" ]; then echo "FAIL: $name: exit $rc, expected $want"; tail -5 "$W/$name.out"; fail=1; return; fi
  grep -q -- "$pat" "$W/$name.out" || { echo "FAIL: $name: no '$pat' in:"; tail -5 "$W/$name.out"; fail=1; return; }
  echo "ok: $name: $(grep -m1 -- "$pat" "$W/$name.out")"
}
"$T" stage --root "$W/clone" --out "$W/staging" >/dev/null || { echo "FAIL: stage"; exit 1; }
td_player "$T" aot "$W/staging" "$W/work/aot"
expect unknown 1 "is not a commit" "$T" bench --suite throughput --backend aot --quick --staging "$W/staging" \
  --work "$W/work" --baseline 0123456789abcdef0123
expect option 1 "not a revision name" "$T" bench --suite throughput --backend aot --quick --staging "$W/staging" \
  --work "$W/work" --baseline "-x y"
expect attempt 1 "is not a commit" "$T" attempt --quick --out "$W/attempt" --baseline no-such-branch-17
[ -e "$W/attempt" ] && { echo "FAIL: attempt created its folder before refusing"; fail=1; }
# a revision whose runtime does not compile: the compiler's first error is named
printf '#error "baseline test: this runtime does not build"\n' >>"$W/clone/runtime/src/loop.c"
git -C "$W/clone" commit -qam "unbuildable runtime (baseline test)"
broken=$(git -C "$W/clone" rev-parse HEAD)
expect broken 1 "loop.c.*error.*does not build" "$T" bench --suite throughput --backend aot --quick \
  --staging "$W/staging" --work "$W/work" --baseline "$broken"
grep -q "cannot be built as a subject" "$W/broken.out" || { echo "FAIL: broken: no plain refusal"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: unknown and unbuildable baselines refused" || exit 1
