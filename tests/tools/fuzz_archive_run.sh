#!/usr/bin/env bash
# fuzz_archive_run.sh FUZZER TANDEM: a bounded libFuzzer run of the archive reader
# (tests/tools/fuzz_archive.c), seeded with small archives generated here: the packets
# `tandem pack` writes (zip, tar.zst), and hostile ones (a name with "..", an absolute
# name, a symlink, a sparse entry, a repeated name, a file used as a folder).
set -euo pipefail
fuzz=$1 T=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tl-fuzz-archive-run.XXXXXX"); trap 'rm -rf "$work"' EXIT
seeds=$work/seeds; mkdir -p "$seeds" "$work/src/sub"
printf 'a\n' >"$work/src/a.txt"; printf '{"k": 1}\n' >"$work/src/sub/b.json"; printf 'é\n' >"$work/src/sub/café.md"
"$T" pack "$work/src" --out "$seeds/packet.zip" >/dev/null
"$T" pack "$work/src" --out "$seeds/packet.tar.zst" >/dev/null
python3 - "$seeds" <<'PY'
import io, sys, tarfile, zipfile
d = sys.argv[1]
def tar(name, members):
    with tarfile.open(f"{d}/{name}", "w", format=tarfile.GNU_FORMAT) as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
def reg(n, data=b"x\n"):
    i = tarfile.TarInfo(n); i.size = len(data); return (i, data)
def link(n, target, kind=tarfile.SYMTYPE):
    i = tarfile.TarInfo(n); i.type = kind; i.linkname = target; return (i, None)
tar("dotdot.tar", [reg("../escape.txt")])
tar("absolute.tar", [reg("/tmp/abs.txt")])
tar("symlink.tar", [link("l", "/etc"), reg("l/passwd")])
tar("hardlink.tar", [reg("a"), link("b", "a", tarfile.LNKTYPE)])
tar("repeat.tar", [reg("a"), reg("a", b"y\n")])
tar("file-as-dir.tar", [reg("a"), reg("a/b")])
z = zipfile.ZipFile(f"{d}/dotdot.zip", "w", zipfile.ZIP_DEFLATED)
z.writestr("../escape.txt", "x"); z.writestr("ok/files.sha256", "0" * 64 + "  ok\n"); z.close()
z = zipfile.ZipFile(f"{d}/zeros.zip", "w", zipfile.ZIP_DEFLATED)
z.writestr("z.bin", b"\0" * (1 << 20)); z.close()
PY
truncate -s 1G "$work/sparse"
(cd "$work" && tar --sparse -cf - sparse | zstd -q -19 >"$seeds/sparse.tar.zst")
rm -f "$work/sparse"
ls -l "$seeds" | awk 'NR > 1 { printf "seed %s: %s bytes\n", $9, $5 }'
mkdir -p "$work/corpus" "$work/tmp"
# TMPDIR: the target's own temporary folder goes here, and the check below sees it removed
TMPDIR=$work/tmp "$fuzz" -runs=20000 -max_len=16384 -timeout=10 -rss_limit_mb=2048 -max_total_time=30 \
  "$work/corpus" "$seeds" 2>&1 | tail -n 4
left=$(ls -A "$work/tmp")
[ -z "$left" ] || { echo "the fuzz target left its temporary folder: $left"; exit 1; }
echo "fuzz_archive: bounded run finished, temporary folder removed"
