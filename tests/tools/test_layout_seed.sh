#!/usr/bin/env bash
# Layout seeds (issue 42, item 2) on the real runtime: tandem build --layout-seed records the
# seed (flags, build id, binary manifest), a build with the recorded seed reproduces the
# module, and the smoke suite passes on a seeded AOT module and on the JIT player re-laying
# its unit (tandem-player --layout-seed), whose bench report says the seed.
# Usage: test_layout_seed.sh TANDEM TL_TESTTOOL SOURCE_ROOT
. "$(dirname "$0")/common.sh"
SRC=$3
SEED=4503599627370497   # above 2^52: a JSON number still holds it exactly (seeds are < 2^53)
run 0 "stage" "$T" stage --project "$SRC" --out "$W/st"
build() { # build BACKEND OUT [SEED]
  "$T" build --backend "$1" --staging "$W/st" --out "$2" --subject tandem --suite smoke --suite primary \
    ${3:+--layout-seed "$3"}
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$1" "$2"; }
run 0 "aot default" build aot "$W/a0"
run 0 "aot seeded" build aot "$W/a1" "$SEED"
run 0 "aot seeded again" build aot "$W/a2" "$SEED"
[ "$(json "$W/a1/binary-manifest-aot.json" 'd["layoutSeed"]')" = "$SEED" ] && pass || fail "manifest layoutSeed"
[ "$(json "$W/a0/binary-manifest-aot.json" 'd["layoutSeed"]')" = "0" ] && pass || fail "default manifest layoutSeed 0"
grep -qF "layout-seed=$SEED" "$W/a1/binary-manifest-aot.json" && pass || fail "the seed is not in the flags"
[ "$(cat "$W/a0/build-id-aot")" != "$(cat "$W/a1/build-id-aot")" ] && pass || fail "a seeded build has the default's build id"
[ "$(sha "$W/a1/tandem.so")" = "$(sha "$W/a2/tandem.so")" ] && pass || fail "the recorded seed does not reproduce the module"
[ "$(sha "$W/a0/tandem.so")" != "$(sha "$W/a1/tandem.so")" ] && pass || fail "the seeded module is the default one"
run 0 "verify the seeded players" "$T" verify "$W/a1"
run 0 "smoke on the seeded AOT module" "$W/a1/tandem-player" --backend aot --module "$W/a1/tandem.so" --suite smoke \
  --out "$W/smoke-aot.json"
expect "TANDEM-PLAYER-RESULT: pass" "seeded AOT smoke"
run 0 "jit default" build jit "$W/j0"
J=("$W/j0/tandem-player" --backend jit --tu "$W/j0/src/tandem-player-tandem.c" --root "$W/j0/src")
run 0 "smoke on the JIT player, seeded" "${J[@]}" --suite smoke --layout-seed "$SEED" --out "$W/smoke-jit.json"
expect "TANDEM-PLAYER-RESULT: pass" "seeded JIT smoke"
run 0 "a bench suite on the JIT player, seeded" "${J[@]}" --suite primary --quick --samples 1 --warmup 0 \
  --layout-seed "$SEED" --out "$W/primary-jit.json"
[ "$(json "$W/primary-jit.json" 'd["settings"]["layoutSeed"]')" = "$SEED" ] && pass || fail "report settings.layoutSeed"
run 2 "a seed of 2^53 is refused" "${J[@]}" --suite smoke --layout-seed 9007199254740992 --out "$W/x.json"
finish
