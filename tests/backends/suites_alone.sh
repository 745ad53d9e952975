#!/usr/bin/env bash
# Each suite compiles alone. The JIT player compiles only the suite it runs
# (TD_PLAYER_SUITES_CHOSEN, players/include/tandem_player.h "THE TU"), so a suite must not
# lean on what another suite or the runtime happened to include before it. For every
# subject and suite of the tree: clang -fsyntax-only -Werror=implicit-function-declaration
# on the subject's TU with that one suite chosen (tcc accepts some undeclared libc calls,
# memset among them, without a word), then the JIT player loads it and names only that
# suite in compiledSuites (exit 3 would be a compile error).
# usage: suites_alone.sh TANDEM CLANG WORKDIR
set -uo pipefail
tandem=$1 clang=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$tandem" stage --out "$work/s" >"$work/build.log" 2>&1 &&
    "$tandem" build --backend jit --staging "$work/s" --out "$work/p" >>"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
src=$work/p/src
inc=(-I"$src" -I"$src/runtime/include" -I"$src/runtime/port" -I"$src/runtime/src" -I"$src/players/include")
failed=0 n=0
for tu in "$src"/tandem-player-*.c; do
    subject=$(basename "$tu" .c)
    subject=${subject#tandem-player-}
    for dir in "$src"/players/suites/*/; do
        suite=$(basename "$dir")
        n=$((n + 1))
        if ! "$clang" -std=gnu11 -fsyntax-only -Werror=implicit-function-declaration "${inc[@]}" \
                -DTD_PLAYER_SUITES_CHOSEN -DTD_PLAYER_SUITE_"$suite" "$tu" >"$work/clang.log" 2>&1; then
            echo "FAIL $subject $suite: clang:"; cat "$work/clang.log"; failed=1; continue
        fi
        "$work/p/tandem-player" --backend jit --tu "$tu" --root "$src" --suite "$suite" --filter '(none)' \
            --quick --samples 1 --warmup 0 --timeout 120 --out "$work/report.json" >"$work/player.log" 2>&1
        rc=$?
        got=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["subjects"][0]["compiledSuites"]))' \
              "$work/report.json" 2>/dev/null)
        if [ $rc -eq 3 ] || [ "$got" != "$suite" ]; then
            echo "FAIL $subject $suite: player exit $rc, compiledSuites '$got'"; tail -20 "$work/player.log"; failed=1
        fi
        rm -f "$work/report.json"
    done
done
echo "suites alone: $n subject x suite pairs, $([ $failed = 0 ] && echo PASS || echo FAIL)"
exit $failed
