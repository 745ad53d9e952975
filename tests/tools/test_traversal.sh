#!/usr/bin/env bash
# Hostile archives: '..', absolute paths, a symlink then a file through it, hard links,
# repeated entries: all refused, naming the entry, and nothing written outside the target.
. "$(dirname "$0")/common.sh"
OUTSIDE=$W/outside; mkdir -p "$OUTSIDE"
snapshot() { (cd "$W" && find . -path ./out -prune -o -print | sort); }
: >"$W/out"
for kind in dotdot abs symlink hardlink dup fileasdir; do
  rm -rf "$W/t" && mkdir -p "$W/t/target"
  "$H" evil "$kind" "$W/evil-$kind.tar" "$OUTSIDE/pwned.txt" || { fail "craft $kind"; continue; }
  before=$(snapshot)
  run 1 "extract $kind" "$T" pack --extract "$W/evil-$kind.tar" --out "$W/t/target"
  after=$(snapshot)
  [ "$before" = "$after" ] && pass || { fail "$kind: files appeared: $(diff <(echo "$before") <(echo "$after"))"; }
  [ -z "$(ls -A "$OUTSIDE")" ] && pass || fail "$kind: wrote outside the target"
  [ -z "$(ls -A "$W/t/target")" ] && pass || fail "$kind: partial extraction"
  run 1 "check $kind" "$T" pack --check "$W/evil-$kind.tar"
done
"$H" evil dotdot "$W/d.tar"; run 1 "dotdot named" "$T" pack --extract "$W/d.tar" --out "$W/t/target"
expect "../escaped.txt: refused: '..' path component" "dotdot entry named"
"$H" evil abs "$W/a.tar" "$OUTSIDE/pwned.txt"; run 1 "abs named" "$T" pack --extract "$W/a.tar" --out "$W/t/target"
expect "$OUTSIDE/pwned.txt: refused: absolute path" "absolute entry named"
"$H" evil symlink "$W/s.tar" "$OUTSIDE"; run 1 "symlink named" "$T" pack --extract "$W/s.tar" --out "$W/t/target"
expect "link: refused: symbolic link entry" "symlink entry named"
# A symlink already in the target folder: a file written through it is refused.
rm -rf "$W/t" && mkdir -p "$W/t/target" && ln -s "$OUTSIDE" "$W/t/target/sub"
mkdir -p "$W/mk/sub" && echo data >"$W/mk/sub/f.txt"
run 0 "pack for planted link" "$T" pack "$W/mk" --format tar.zst --out "$W/mk.tar.zst"
run 1 "write through existing symlink" "$T" pack --extract "$W/mk.tar.zst" --out "$W/t/target"
expect "would be written through the symbolic link" "planted link named"
[ -z "$(ls -A "$OUTSIDE")" ] && pass || fail "wrote through the planted link"
finish
