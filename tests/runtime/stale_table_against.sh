#!/usr/bin/env bash
# The staleness table against another revision's runtime, one row per process (an old
# runtime's first broken row may crash the rest): clang -O2, tcc and ASan+UBSan builds of
# tests/runtime/test_stale_table.c with REV's runtime/ (git archive). Report-only: prints
# one line per row that does not pass on every build, then the count.
# usage: stale_table_against.sh REV [WORKDIR]      (e.g. de9675c, the runtime before afdd410)
set -uo pipefail
rev=$1 work=${2:-/tmp/stale-against-$1}
repo=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work/old"
git -C "$repo" archive "$rev" runtime | tar -x -C "$work/old" || exit 1
inc=$work/old/runtime/include src=("$work"/old/runtime/src/*.c) test=$repo/tests/runtime/test_stale_table.c
clang -O2 -I"$inc" -o "$work/clang" "${src[@]}" "$test" -lpthread &&
tcc -I"$inc" -o "$work/tcc" "${src[@]}" "$test" -lpthread &&
clang -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
    -DTD_TEST_NO_ALLOC_COUNT -I"$inc" -o "$work/asan" "${src[@]}" "$test" -lpthread || exit 1
verdict() {   # the first wrong query of a build's run, or its crash
    local rc=$1 first
    first=$(grep -o -m1 ']: [a-z_ ()]*: expected' "$work/row.out" | sed 's/^]: //; s/: expected$//')
    if [ "$rc" = 0 ]; then echo pass; elif [ "$rc" -ge 128 ]; then echo "crash after '${first}'"; else echo "FAIL '${first}'"; fi
}
bad=0 n=0
while IFS= read -r row; do
    n=$((n + 1)) line=""
    for b in clang tcc; do
        TD_STALE_FILTER="$row" timeout 60 "$work/$b" >"$work/row.out" 2>&1
        line="$line  $b: $(verdict $?)"
    done
    if TD_STALE_FILTER="$row" ASAN_OPTIONS=detect_leaks=1 timeout 60 "$work/asan" >"$work/row.out" 2>&1; then
        line="$line  asan: pass"
    else
        line="$line  asan: $(grep -o -m1 'heap-use-after-free\|double-free\|SEGV\|LeakSanitizer\|runtime error' "$work/row.out" || echo FAIL)"
    fi
    case "$line" in *FAIL*|*crash*|*asan:\ [!p]*) bad=$((bad + 1)); echo "$row:$line" ;; esac
done < <(TD_STALE_LIST=1 "$work/clang")
echo "$bad of $n rows fail against $rev"
