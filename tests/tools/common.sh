# Shared helpers for the tools tests: source it after setting T (tandem) and H (tl_testtool).
set -uo pipefail
T=$1
H=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/tandem-tools-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
failures=0
passes=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { passes=$((passes + 1)); }
# run EXPECTED_RC NAME CMD...: run CMD, capture stdout+stderr in $W/out, check its exit code.
run() {
  local want=$1 name=$2; shift 2
  "$@" >"$W/out" 2>&1
  local rc=$?
  if [ "$rc" != "$want" ]; then fail "$name: exit $rc, expected $want"; sed 's/^/    /' "$W/out"; return 1; fi
  pass
}
# expect TEXT NAME: the last run's output contains TEXT (fixed string).
expect() {
  if grep -qF -- "$1" "$W/out"; then pass; else fail "$2: output lacks '$1'"; sed 's/^/    /' "$W/out"; fi
}
# flip_byte FILE [OFFSET]: invert one byte in place.
flip_byte() {
  python3 - "$1" "${2:-0}" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, 'rb').read()); b[off] ^= 0xFF; open(p, 'wb').write(b)
PY
}
finish() {
  echo "$passes passed, $failures failed"
  [ "$failures" = 0 ]
}
# make_src DIR: a small source tree shaped like the repository's staged folders.
make_src() {
  mkdir -p "$1/runtime/src" "$1/runtime/include/tandem" "$1/players/suites/smoke" "$1/players/subjects/callback"
  printf 'int td_a(void) { return 1; }\n' >"$1/runtime/src/a.c"
  printf '#pragma once\nint td_a(void);\n' >"$1/runtime/include/tandem/a.h"
  printf 'int smoke_case(void) { return 0; }\n' >"$1/players/suites/smoke/cases.c"
  printf 'int cb(void) { return 2; }\n' >"$1/players/subjects/callback/cb.c"
  head -c 300000 /dev/urandom >"$1/runtime/src/blob.bin"
}
