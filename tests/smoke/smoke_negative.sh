#!/usr/bin/env bash
# Negative smoke: a copy of the sources with one expectation of the runtime violated
# (end-of-frame rejection reports a user error instead of "not supported") must make
# exactly that case fail, with file:line, on both players, and the runner exit non-zero.
# usage: smoke_negative.sh TANDEM ROOT WORKDIR
set -uo pipefail
tandem=$1 root=$2 work=$3
rm -rf "$work" && mkdir -p "$work/broken"
cp -r "$root/runtime" "$root/players" "$work/broken/"
f="$work/broken/runtime/src/waits.c"
grep -q 'TD_ERR_NOT_SUPPORTED, "end of frame' "$f" || { echo "negative smoke: the line to break is gone from $f"; exit 1; }
sed -i 's/TD_ERR_NOT_SUPPORTED, "end of frame/TD_ERR_USER, "end of frame/' "$f"
"$tandem" smoke --staging "$work/broken" --out "$work/out" >"$work/log" 2>&1
rc=$?
cat "$work/log" | grep -v "TANDEM-CASE-START\|TANDEM-CASE-PASS"
[ $rc -ne 0 ] || { echo "negative smoke: expected a non-zero exit, got 0"; exit 1; }
fails=$(grep -E '^[0-9]+ ' "$work/log" | grep -c 'FAIL ')
[ "$fails" -eq 1 ] || { echo "negative smoke: expected exactly 1 failing case, got $fails"; exit 1; }
row=$(grep -E '^[0-9]+ ' "$work/log" | grep 'FAIL ')
echo "$row" | grep -q 'unsupported end-of-frame rejection' || { echo "negative smoke: wrong case failed: $row"; exit 1; }
n=$(echo "$row" | grep -oE 'FAIL players/suites/smoke/smoke_loop.c:[0-9]+' | wc -l)
[ "$n" -eq 2 ] || { echo "negative smoke: expected file:line on both players: $row"; exit 1; }
echo "negative smoke: exactly one case failed on both players, with file:line"
