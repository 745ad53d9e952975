#!/usr/bin/env bash
# Issue 18, the smaller holes: non-ASCII names in zip (with the UTF-8 flag) and tar.zst,
# round trip and --check; a name that is not UTF-8 refused. (`pack --out` through a symlink
# and a staged top-level staging.json are cases of the hostile suite, tests/hostile/.)
. "$(dirname "$0")/common.sh"

# --- UTF-8 names, both formats ------------------------------------------------------------
D=$W/u8; mkdir -p "$D/sous-dossier" "$D/日本"
printf 'café\n' >"$D/café-ü.txt"; printf '{"k":1}\n' >"$D/日本/データ.json"; printf 'x\n' >"$D/sous-dossier/ÿ €.md"
for fmt in zip tar.zst; do
  run 0 "pack non-ASCII names ($fmt)" "$T" pack "$D" --out "$W/u8.$fmt"
  run 0 "check non-ASCII names ($fmt)" "$T" pack --check "$W/u8.$fmt"
  expect "3 files listed, 0 mismatch(es)" "check non-ASCII names ($fmt)"
  run 0 "extract non-ASCII names ($fmt)" "$T" pack --extract "$W/u8.$fmt" --out "$W/x-$fmt"
  for f in "café-ü.txt" "日本/データ.json" "sous-dossier/ÿ €.md"; do
    cmp -s "$D/$f" "$W/x-$fmt/$f" && pass || fail "$fmt: '$f' did not come back byte-identical under its name"
  done
done
# zip: each non-ASCII name carries the UTF-8 flag (general purpose bit 11), names are UTF-8
python3 - "$W/u8.zip" >"$W/zipflags" 2>&1 <<'PY'
import sys, zipfile
bad = 0
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    ascii_name = all(ord(c) < 128 for c in i.filename)
    if not ascii_name and not (i.flag_bits & 0x800):
        print("no UTF-8 flag:", i.filename); bad = 1
names = sorted(i.filename for i in zipfile.ZipFile(sys.argv[1]).infolist())
if names != sorted(["café-ü.txt", "files.sha256", "sous-dossier/ÿ €.md", "日本/データ.json"]):
    print("names:", names); bad = 1
sys.exit(bad)
PY
[ $? = 0 ] && pass || { fail "zip UTF-8 flag or names"; cat "$W/zipflags"; }
# tar.zst: GNU tar lists the same UTF-8 names
zstd -dc "$W/u8.tar.zst" 2>/dev/null | LC_ALL=C.UTF-8 tar -tf - >"$W/tarnames" 2>&1
grep -qx "日本/データ.json" "$W/tarnames" && grep -qx "café-ü.txt" "$W/tarnames" && pass ||
  { fail "tar.zst names as GNU tar reads them"; cat "$W/tarnames"; }
# a name that is not valid UTF-8 is refused, naming the file
B=$W/badname; mkdir -p "$B"; printf 'x' >"$B/$(printf 'bad\xffname.txt')"
run 1 "pack a name that is not UTF-8" "$T" pack "$B" --out "$W/bad.zip"
expect "not valid UTF-8" "pack a name that is not UTF-8"
[ ! -e "$W/bad.zip" ] && pass || fail "an archive was written for a name that is not UTF-8"

finish
