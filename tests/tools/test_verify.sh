#!/usr/bin/env bash
# Binary manifests (tl_manifest_write), verify and the reuse rule: every tamper detected
# and the file named.
. "$(dirname "$0")/common.sh"
S=$W/src; make_src "$S"
run 0 "stage" "$T" stage --root "$S" --out "$W/st"
P=$W/players; mkdir -p "$P/aot/lib" "$P/jit"
head -c 200000 /dev/urandom >"$P/aot/module.so"; echo ir >"$P/aot/module.ll"; echo x >"$P/aot/lib/extra.so"
head -c 5000 /dev/urandom >"$P/jit/host"
run 0 "manifest aot" "$H" manifest "$P/aot" aot "$W/st" "clang 14.0.6" "-O2 -fPIC" module.so module.ll "$P/aot/lib/extra.so"
id1=$(sed -n 's/^buildId //p' "$W/out")
run 0 "manifest aot again" "$H" manifest "$P/aot" aot "$W/st" "clang 14.0.6" "-O2 -fPIC" module.so module.ll lib/extra.so
id2=$(sed -n 's/^buildId //p' "$W/out")
[ -n "$id1" ] && [ "$id1" = "$id2" ] && pass || fail "buildId not content-derived ($id1 vs $id2)"
run 0 "manifest aot other flags" "$H" manifest "$W/tmpflags" aot "$W/st" "clang 14.0.6" "-O3" 2>/dev/null
id3=$(sed -n 's/^buildId //p' "$W/out"); rm -rf "$W/tmpflags"
[ "$id3" != "$id1" ] && pass || fail "buildId ignores flags"
run 0 "manifest jit" "$H" manifest "$P/jit" jit "$W/st" "tcc 0.9.27" "" host
run 1 "manifest refuses a path outside" "$H" manifest "$P/jit" jit "$W/st" "tcc" "" /etc/hostname
expect "/etc/hostname: refused: not inside the player folder" "outside file named"
run 1 "manifest refuses dotdot" "$H" manifest "$P/jit" jit "$W/st" "tcc" "" ../aot/module.so
run 0 "verify clean (subfolders)" "$T" verify "$P"
expect "2 manifest(s), 0 mismatch(es)" "verify summary"
run 0 "verify clean (one player)" "$T" verify "$P/aot"
run 0 "reusable" "$H" reusable "$P" "$W/st"
expect "reusable: 2 manifest(s)" "reuse summary"
run 0 "verify --players-from" "$T" verify --players-from "$P" --staging "$W/st"

cp -a "$P" "$W/pristine"; cp -a "$W/st" "$W/st-pristine"
restore() { rm -rf "$P" "$W/st"; cp -a "$W/pristine" "$P"; cp -a "$W/st-pristine" "$W/st"; }

flip_byte "$P/aot/module.so" 1000
run 1 "flipped module byte" "$T" verify "$P"
expect "changed: $P/aot/module.so" "flipped module named"
run 1 "not reusable after module flip" "$H" reusable "$P" "$W/st"
expect "$P/aot/module.so" "reuse names the module"
restore
flip_byte "$P/jit/host" 0
run 1 "flipped player byte" "$T" verify "$P"
expect "changed: $P/jit/host" "flipped player named"
restore
rm "$P/aot/module.ll"
run 1 "deleted binary" "$T" verify "$P"
expect "missing: $P/aot/module.ll" "deleted file named"
restore
echo new >"$P/aot/unlisted.o"
run 1 "added binary" "$T" verify "$P"
expect "extra: $P/aot/unlisted.o" "added file named"
restore
flip_byte "$W/st/runtime/src/a.c" 0
run 1 "flipped staged source" "$T" verify "$P"
expect "changed: $W/st/runtime/src/a.c" "staged source named"
run 1 "not reusable after staged flip" "$H" reusable "$P" "$W/st"
restore
# Manifest tamper: edit a recorded hash (the file then mismatches) and the flags (buildId).
python3 - "$P/aot/binary-manifest-aot.json" <<'PY'
import sys; p = sys.argv[1]; s = open(p).read()
i = s.index('"sha256":') + len('"sha256":\t"'); c = 'a' if s[i] != 'a' else 'b'
open(p, 'w').write(s[:i] + c + s[i + 1:])
PY
run 1 "manifest hash edited" "$T" verify "$P"
expect "changed: $P/aot/" "file of the edited hash named"
restore
sed -i 's/-O2 -fPIC/-O3 -fPIC/' "$P/aot/binary-manifest-aot.json"
run 1 "manifest flags edited" "$T" verify "$P"
expect "$P/aot/binary-manifest-aot.json: buildId: does not match" "manifest named with field"
restore
flip_byte "$P/jit/binary-manifest-jit.json" 0
run 1 "manifest byte flipped" "$T" verify "$P"
expect "$P/jit/binary-manifest-jit.json" "flipped manifest named"
restore
# Reuse across a new staging: identical sources reuse; a changed source does not.
run 0 "stage again elsewhere" "$T" stage --root "$S" --out "$W/st-new"
run 0 "reusable with identical new staging" "$H" reusable "$P" "$W/st-new"
echo '/* change */' >>"$S/runtime/src/a.c"
run 0 "stage changed" "$T" stage --root "$S" --out "$W/st-new"
run 1 "not reusable with changed staging" "$H" reusable "$P" "$W/st-new"
expect "stagingHash" "reuse says why"
run 1 "verify --staging override" "$T" verify "$P" --staging "$W/st-new"
expect "staged sources are not the ones this player was built from" "verify with override"
# The players' shell: reused only while it is the shell a build would copy now ($TANDEM_PLAYER
# here); a shell rebuilt since makes them stale, and the reason names both.
Q=$W/shellp; mkdir -p "$Q/jit"
head -c 3000 /dev/urandom >"$W/shell"; chmod +x "$W/shell"; cp "$W/shell" "$Q/jit/tandem-player"
run 0 "manifest with a shell" "$H" manifest "$Q/jit" jit "$W/st" "tcc 0.9.27" "" tandem-player
TANDEM_PLAYER=$W/shell run 0 "reusable with the same shell" "$H" reusable "$Q" "$W/st"
expect "their shell is this toolchain's" "reuse summary names the shell"
echo rebuilt >>"$W/shell"
TANDEM_PLAYER=$W/shell run 1 "not reusable with a rebuilt shell" "$H" reusable "$Q" "$W/st"
expect "$Q/jit/tandem-player differs from the player shell a build copies now ($W/shell" "stale shell named"
TANDEM_PLAYER=$W/none run 1 "not reusable without a shell to compare" "$H" reusable "$Q" "$W/st"
expect "no player shell to compare" "missing shell named"
run 1 "no manifests" "$T" verify "$W/st"
expect "no binary-manifest-*.json" "no manifest named"
run 2 "usage" "$T" verify
finish
