#!/usr/bin/env bash
# The smoke suite on both players with assertions on (label debug): a copy of runtime/ and
# players/ whose port header defines TD_DEBUG first, so the players' single-unit builds (AOT
# clang, JIT libtcc) check every write of a word against the state table (detail/word.h) and
# every TD_ASSERT. The AOT module must carry the table's report (its message string), so a
# build that lost the define fails here instead of passing as a release build.
# usage: smoke_debug.sh TANDEM ROOT WORKDIR
set -euo pipefail
tandem=$1 root=$2 work=$3
rm -rf "$work"
mkdir -p "$work/staging"
cp -r "$root/runtime" "$root/players" "$work/staging/"
port="$work/staging/runtime/port/td_port.h"
{ printf '#ifndef TD_DEBUG\n#define TD_DEBUG 1   /* smoke_debug.sh: assertions on */\n#endif\n'; cat "$root/runtime/port/td_port.h"; } >"$port"
"$tandem" smoke --staging "$work/staging" --out "$work/out" >"$work/log" 2>&1 || {
    grep -v "TANDEM-CASE-START\|TANDEM-CASE-PASS" "$work/log" | tail -40
    exit 1
}
grep -v "TANDEM-CASE-START\|TANDEM-CASE-PASS" "$work/log" | tail -4
test -s "$work/out/smoke-aot.json" && test -s "$work/out/smoke-jit.json"
module=$(find "$work" -name '*.so' -path '*aot*' | head -1)
if [ -z "$module" ] || ! grep -q "illegal word transition" "$module"; then
    echo "smoke_debug: the AOT module ($module) has no state-table report: TD_DEBUG did not reach the build"
    exit 1
fi
echo "smoke_debug: both players ran the 42 cases with TD_DEBUG ($module checked)"
