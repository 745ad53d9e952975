#!/usr/bin/env bash
# pack: files.sha256, reproducible archives, --check on folders and archives.
. "$(dirname "$0")/common.sh"
D=$W/run; mkdir -p "$D/procs/p1" "$D/gate"
echo '{"a":1}' >"$D/procs/p1/report.json"; echo '# gate' >"$D/gate/gate.md"
head -c 100000 /dev/urandom >"$D/procs/p1/samples.bin"; printf '#!/bin/sh\n' >"$D/run.sh"; chmod 755 "$D/run.sh"
for fmt in zip tar.zst; do
  run 0 "pack $fmt" "$T" pack "$D" --format "$fmt" --out "$W/a1.$fmt"
  sleep 1; touch "$D/gate/gate.md"   # a new mtime must not change the archive
  run 0 "pack $fmt again" "$T" pack "$D" --format "$fmt" --out "$W/a2.$fmt"
  cmp "$W/a1.$fmt" "$W/a2.$fmt" && pass || fail "two $fmt packs differ"
  run 0 "check $fmt" "$T" pack --check "$W/a1.$fmt"
  expect "4 files listed, 0 mismatch(es)" "check $fmt summary"
done
(cd "$D" && sha256sum gate/gate.md procs/p1/report.json procs/p1/samples.bin run.sh) >"$W/expected.sums"
cmp "$W/expected.sums" "$D/files.sha256" && pass || fail "files.sha256 content (sorted, sha256sum format)"
zstd -dc "$W/a1.tar.zst" | tar tvf - >"$W/listing" 2>&1
grep -q 'rwxr-xr-x 0/0 .* run.sh' "$W/listing" && grep -q 'rw-r--r-- 0/0 .* gate/gate.md' "$W/listing" && pass || { fail "tar entry metadata"; cat "$W/listing"; }
run 0 "check folder" "$T" pack --check "$D"
run 0 "extract" "$T" pack --extract "$W/a1.zip" --out "$W/x"
expect "0 mismatch(es)" "extract checks files.sha256"
diff -r "$D" "$W/x" >/dev/null && pass || fail "extracted tree differs"
# Tamper with the folder: flip, delete, add.
flip_byte "$D/procs/p1/samples.bin" 10; rm "$D/gate/gate.md"; echo new >"$D/procs/new.txt"
run 1 "check tampered folder" "$T" pack --check "$D"
expect "changed: $D/procs/p1/samples.bin" "flipped file named"
expect "missing: $D/gate/gate.md" "deleted file named"
expect "extra: $D/procs/new.txt" "added file named"
# Tamper with files.sha256 inside an archive's extraction.
flip_byte "$W/x/files.sha256" 0
run 1 "broken files.sha256" "$T" pack --check "$W/x"
expect "$W/x/files.sha256: line 1: not a SHA-256" "files.sha256 line named"
# A corrupted archive is refused.
cp "$W/a1.tar.zst" "$W/bad.tar.zst"; flip_byte "$W/bad.tar.zst" 200
run 1 "corrupt archive" "$T" pack --check "$W/bad.tar.zst"
ln -s /etc/hostname "$D/link"
run 1 "symlink refused when packing" "$T" pack "$D" --out "$W/a3.zip"
expect "$D/link: refused: symbolic link" "symlink named"
rm "$D/link"
run 2 "out inside the folder" "$T" pack "$D" --out "$D/self.zip"
run 2 "bad format" "$T" pack "$D" --format rar
run 2 "usage" "$T" pack
finish
