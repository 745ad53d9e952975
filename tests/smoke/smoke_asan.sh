#!/usr/bin/env bash
# The AOT smoke under ASan+UBSan: the generated smoke TU compiled with clang and the
# sanitizers into a minimal host (asan_host.c), halting on the first report.
# usage: smoke_asan.sh TANDEM CLANG WORKDIR
set -euo pipefail
tandem=$1 clang=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
"$tandem" stage --out "$work/staging" >/dev/null
"$tandem" build --backend jit --out "$work/player" --staging "$work/staging" --subject tandem --suite smoke >/dev/null
src="$work/player/src"
"$clang" -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
  -I"$src" -I"$src/runtime/include" -I"$src/runtime/port" -I"$src/runtime/src" -I"$src/players/include" \
  -o "$work/smoke-asan" "$src/tandem-player-tandem.c" "$here/asan_host.c" -lpthread
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$work/smoke-asan" smoke
