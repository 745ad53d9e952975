#!/usr/bin/env bash
# hash: same digests as sha256sum, for empty, small, chunk-straddling and many files.
. "$(dirname "$0")/common.sh"
: >"$W/empty"; echo abc >"$W/small"; head -c $((3 * 1048576 + 17)) /dev/urandom >"$W/big"
for i in $(seq 1 40); do head -c $((i * 997)) /dev/urandom >"$W/m$i"; done
files=("$W/empty" "$W/small" "$W/big" "$W"/m*)
"$T" hash --bench "${files[@]}" >"$W/ours" 2>"$W/bench" && pass || fail "hash exit code"
sha256sum "${files[@]}" >"$W/theirs"
cmp "$W/ours" "$W/theirs" && pass || { fail "digests differ from sha256sum"; diff "$W/ours" "$W/theirs" | head; }
grep -q "MB/s" "$W/bench" && pass || fail "bench output"
run 1 "unreadable" "$T" hash "$W/nope"
expect "$W/nope: cannot read" "missing file named"
run 2 "usage" "$T" hash
finish
