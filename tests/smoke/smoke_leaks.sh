#!/usr/bin/env bash
# The 42 smoke cases on both players under valgrind memcheck: nothing definitely or
# indirectly lost at exit (pooled objects included: td_runtime_shutdown frees every pool,
# the runner pools of methods used without explicit registration too), no memory error.
# usage: smoke_leaks.sh TANDEM WORKDIR
set -uo pipefail
tandem=$1 work=$2
command -v valgrind >/dev/null || { echo "smoke leaks: valgrind is not installed (scripts/deps.sh installs it)"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
"$tandem" smoke --out "$work/smoke" >"$work/smoke.log" 2>&1 || { tail -5 "$work/smoke.log"; echo "smoke leaks: tandem smoke failed"; exit 1; }
p="$work/smoke"
vg=(valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --error-exitcode=9)
fail=0
"${vg[@]}" "$p/aot/tandem-player" --backend aot --module "$p/aot/tandem.so" --suite smoke --out "$work/aot.json" >"$work/aot.log" 2>&1 || fail=1
"${vg[@]}" "$p/jit/tandem-player" --backend jit --tu "$p/jit/src/tandem-player-tandem.c" --root "$p/jit/src" --suite smoke --out "$work/jit.json" >"$work/jit.log" 2>&1 || fail=1
for b in aot jit; do
  grep -E "definitely lost|indirectly lost|ERROR SUMMARY" "$work/$b.log" | sed "s/^/$b: /"
done
[ $fail -eq 0 ] || { echo "smoke leaks: memcheck reported errors or leaks (see $work/aot.log, $work/jit.log)"; exit 1; }
echo "smoke leaks: both players clean"
