#!/bin/bash
# test_cli.sh TANDEM PLAYER: the one command-line convention across the verbs: bad numbers
# refused with the option named (exit 2), --opt=value, `--`, unknown options, --help
# generated for every verb (exit 0, lists every option the verb accepts).
T=$1 PL=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# run WANT_RC TEXT ARGS...: exit code and a line of the output
run() {
  local want=$1 text=$2; shift 2
  "$@" >"$W/out" 2>&1
  local rc=$?
  [ $rc = "$want" ] || { fail "$*: exit $rc, expected $want"; sed 's/^/    /' "$W/out"; return; }
  grep -qF -- "$text" "$W/out" || { fail "$*: output lacks '$text'"; sed 's/^/    /' "$W/out"; }
}

# the issue's examples
run 2 "tandem attempt: --rounds: not a number: 'x'" "$T" attempt --rounds x
run 2 "tandem attempt: --samples: out of range: '-3'" "$T" attempt --samples=-3
run 2 "tandem attempt: --samples: expected an integer from 1 to 1000000" "$T" attempt --samples=-3
run 2 "tandem attempt: --rounds: not a number: '1x'" "$T" attempt --rounds 1x
run 2 "tandem attempt: unknown option '--bogus'" "$T" attempt --bogus
run 2 "tandem attempt: --quick: takes no value" "$T" attempt --quick=yes
run 2 "tandem bench: --samples: not a number: 'abc'" "$T" bench --suite primary --backend aot --samples abc
run 2 "tandem bench: --timeout: out of range: '0'" "$T" bench --suite primary --backend aot --timeout=0
run 2 "tandem hash: --threads: not a number: '3x'" "$T" hash --threads 3x /dev/null
run 2 "tandem build: --out: needs a value (DIR)" "$T" build --backend aot --out
run 2 "tandem inspect: --include: needs a value (DIR)" "$T" inspect -q -I
run 2 "tandem gate: unexpected argument 'b'" "$T" gate a b
run 2 "tandem demo: unexpected argument 'x'" "$T" demo x
run 2 "tandem verify: --staging: empty path" "$T" verify --staging=
run 2 "tandem smoke: unknown option '-z'" "$T" smoke -z
run 2 "tandem-player: --samples: not a number: '5x'" "$PL" --samples 5x --help
run 2 "tandem pack: --max-total: not an integer: '1e3'" "$T" pack --extract x.zip --out "$W/x" --max-total 1e3
run 2 "tandem pack: --max-ratio: out of range: '-5'" "$T" pack --check x.zip --max-ratio=-5
run 2 "tandem pack: unexpected argument 'b'" "$T" pack a b
run 2 "tandem pack: --out: empty path" "$T" pack "$W" --out=
run 2 "tandem stage: unknown option '--bogus'" "$T" stage --bogus
run 2 "tandem stage: --out: needs a value (DIR)" "$T" stage --out
# usage errors name the bad value and the nearest verb or option (issue 43, item 3)
run 2 "tandem: unknown verb 'atempt': did you mean attempt?" "$T" atempt
run 2 "tandem: unknown verb 'frobnicate'" "$T" frobnicate
run 2 "tandem attempt: unknown option '--rouns' (did you mean --rounds? tandem attempt --help" "$T" attempt --rouns 2
run 2 "tandem bench: --suite: 'nosuch' is not one of primary|" "$T" bench --suite nosuch --backend aot
run 2 "tandem bench: --backend: missing: one of aot|jit" "$T" bench --suite primary
run 2 "tandem bench: --backend: 'llvm' is not one of aot|jit" "$T" bench --suite primary --backend llvm
run 2 "tandem bench: --suite: 'primari' is not one of primary|" "$T" bench --suite primari --backend jit
run 2 "did you mean primary?" "$T" bench --suite primari --backend jit

# --opt=value and `--`: hash a file named like an option
printf 'x' >"$W/--help"
( cd "$W" && "$T" hash --threads=2 -- --help ) >"$W/h" 2>&1 || fail "hash --threads=2 -- --help: exit $?"
grep -q '^2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881  --help$' "$W/h" || fail "hash -- --help: $(cat "$W/h")"

# every verb's --help: exit 0, usage line first, every option of its table listed
for v in stage build verify pack hash inspect demo smoke gate bench attempt; do
  "$T" $v --help >"$W/help" 2>&1; rc=$?
  [ $rc = 0 ] || fail "tandem $v --help: exit $rc"
  head -1 "$W/help" | grep -q "^usage: tandem $v" || fail "tandem $v --help: first line $(head -1 "$W/help")"
  "$T" $v -h >"$W/h2" 2>&1 && cmp -s "$W/help" "$W/h2" || fail "tandem $v -h differs from --help"
done
# the generated help lists what is accepted: each option named in attempt's help is accepted
"$T" attempt --help | grep -oE '^  (-[a-zA-Z], )?--[a-z-]+' | sed 's/.*--//' | grep -vx help >"$W/opts"
[ "$(wc -l <"$W/opts")" -ge 13 ] || fail "attempt --help lists $(wc -l <"$W/opts") options"
# (two positionals after it: whatever the option takes, the parser stops at one of them, so
# nothing runs; a listed option must not be refused as unknown)
while read -r o; do
  timeout 10 "$T" attempt --"$o" 1 extra >"$W/o" 2>&1; rc=$?
  [ $rc = 2 ] || fail "attempt --$o 1 extra: exit $rc, expected 2"
  grep -q "unknown option '--$o'" "$W/o" && fail "attempt --help lists --$o, which is refused"
done <"$W/opts"

[ $fails = 0 ] && echo "cli: ok" && exit 0
echo "cli: $fails failure(s)"
exit 1
