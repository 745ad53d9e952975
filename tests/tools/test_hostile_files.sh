#!/usr/bin/env bash
# Hostile and careless files (issue 18): a FIFO, a link or a folder where a file is
# expected is refused at once with a message naming it (never a hang: every run is under
# `timeout`); extraction bombs are refused quickly; SIGINT removes --check's temporary
# folder; `hash` escapes names as sha256sum does.
. "$(dirname "$0")/common.sh"
TO="timeout 10"
# fast RC NAME CMD...: like run, and 124 (timeout: it blocked) is reported as such
fast() {
  local want=$1 name=$2; shift 2
  $TO "$@" >"$W/out" 2>&1
  local rc=$?
  [ $rc = 124 ] && { fail "$name: blocked (killed after 10 s)"; return 1; }
  [ $rc = "$want" ] || { fail "$name: exit $rc, expected $want"; sed 's/^/    /' "$W/out"; return 1; }
  pass
}

# ---- a FIFO in each position ----
mkfifo "$W/fifo"
fast 1 "hash FIFO" "$T" hash "$W/fifo"
expect "$W/fifo: cannot read: not a regular file (a FIFO)" "hash names the FIFO"
fast 1 "pack --check FIFO archive" "$T" pack --check "$W/fifo"
expect "a FIFO" "pack --check names the FIFO"
fast 1 "pack --extract FIFO archive" "$T" pack --extract "$W/fifo" --out "$W/x1"
expect "a FIFO" "pack --extract names the FIFO"

S=$W/src; make_src "$S"
run 0 "stage" "$T" stage --root "$S" --out "$W/st"
cp -a "$W/st" "$W/st-fifo-json"; rm "$W/st-fifo-json/staging.json"; mkfifo "$W/st-fifo-json/staging.json"
# build verifies its staging first (--shell: any executable, the build stops before using it)
B="build --backend jit --shell /bin/true --staging"
fast 1 "build: staging.json is a FIFO" "$T" $B "$W/st-fifo-json" --out "$W/pl1"
expect "staging.json: cannot read: not a regular file (a FIFO)" "staging.json FIFO named"
cp -a "$W/st" "$W/st-fifo-src"; rm "$W/st-fifo-src/runtime/src/a.c"; mkfifo "$W/st-fifo-src/runtime/src/a.c"
fast 1 "build: a staged file is a FIFO" "$T" $B "$W/st-fifo-src" --out "$W/pl2"
expect "runtime/src/a.c (not a regular file (a FIFO))" "staged FIFO named"
cp -a "$W/st" "$W/st-link-json"; mv "$W/st-link-json/staging.json" "$W/st-link-json/real.json"
ln -s real.json "$W/st-link-json/staging.json"
fast 1 "build: staging.json is a link" "$T" $B "$W/st-link-json" --out "$W/pl3"
expect "staging.json: cannot read: refused: a symbolic link" "staging.json link named"
# edit a staged source, build: refused (before, the build went on and a later revert made
# verify and the reuse rule accept a player carrying the edit)
cp -a "$W/st" "$W/st-edit"; echo 'int td_evil(void) { return 6; }' >>"$W/st-edit/runtime/src/a.c"
fast 1 "build: an edited staged file" "$T" $B "$W/st-edit" --out "$W/pl4"
expect "refusing to build" "edited staging refused"
expect "runtime/src/a.c" "edited file named"
[ ! -e "$W/pl4/build-id-jit" ] && pass || fail "a player was built from an edited staging"

mkdir -p "$W/pk"; echo a >"$W/pk/a.txt"
run 0 "pack" "$T" pack "$W/pk" --out "$W/pk.zip"
rm "$W/pk/files.sha256"; mkfifo "$W/pk/files.sha256"
fast 1 "pack --check: files.sha256 is a FIFO" "$T" pack --check "$W/pk"
expect "files.sha256: cannot read: not a regular file (a FIFO)" "files.sha256 FIFO named"

# ---- an archive whose files.sha256 is a folder: refused, not "extracted, exit 0" ----
mkdir -p "$W/sumdir/files.sha256"; echo b >"$W/sumdir/b.txt"
python3 - "$W/sumdir.zip" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
z.writestr("b.txt", "b\n"); z.writestr("files.sha256/", ""); z.close()
PY
fast 1 "extract: files.sha256 is a folder" "$T" pack --extract "$W/sumdir.zip" --out "$W/x2"
expect "files.sha256: cannot read: not a regular file (a directory)" "folder files.sha256 named"

# ---- extraction limits ----
truncate -s 200G "$W/huge"
(cd "$W" && tar --sparse -cf - huge | zstd -q -19 >"$W/bomb.tar.zst") 2>/dev/null
rm -f "$W/huge"
bytes=$(stat -c %s "$W/bomb.tar.zst")
start=$(date +%s%N)
fast 1 "200 GiB sparse tar.zst bomb ($bytes bytes)" "$T" pack --check "$W/bomb.tar.zst"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
expect "refused: a sparse entry" "sparse bomb reason"
[ $ms -lt 1000 ] && pass || fail "sparse bomb took $ms ms (1 s allowed)"
echo "sparse bomb: $bytes bytes refused in $ms ms"
truncate -s 64M "$W/zeros"
(cd "$W" && tar -cf - zeros | zstd -q -19 >"$W/zeros.tar.zst"); rm -f "$W/zeros"
fast 1 "ratio bomb" "$T" pack --extract "$W/zeros.tar.zst" --out "$W/x3"
expect "more than the ratio limit" "ratio reason"
[ ! -e "$W/x3/zeros" ] || [ "$(stat -c %s "$W/x3/zeros")" -lt $((4 << 20)) ] && pass || fail "ratio bomb wrote on"
python3 - "$W/zeros.zip" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED)
z.writestr("z.bin", b"\0" * (8 << 20)); z.close()
PY
fast 1 "zip over --max-entry" "$T" pack --extract "$W/zeros.zip" --out "$W/x4" --max-entry 1048576
expect "larger than the per-entry limit" "per-entry reason"
fast 1 "zip over --max-total" "$T" pack --extract "$W/zeros.zip" --out "$W/x5" --max-total 4096 --max-ratio 1000000
expect "total limit" "total reason"
fast 2 "--max-total not a number" "$T" pack --extract "$W/zeros.zip" --out "$W/x6" --max-total 1e3
fast 2 "--max-ratio negative" "$T" pack --extract "$W/zeros.zip" --out "$W/x6" --max-ratio -5

# ---- SIGINT during --check removes the temporary folder ----
truncate -s 1G "$W/slow"
(cd "$W" && tar -cf - slow | zstd -q -1 >"$W/slow.tar.zst"); rm -f "$W/slow"
mkdir -p "$W/tmp"
TMPDIR=$W/tmp "$T" pack --check "$W/slow.tar.zst" --max-ratio 100000000 >"$W/out" 2>&1 &
pid=$!
for _ in $(seq 1 400); do [ -n "$(ls -A "$W/tmp")" ] && break; sleep 0.005; done
kill -INT $pid
wait $pid; rc=$?
[ $rc = 1 ] && pass || fail "SIGINT: exit $rc, expected 1"
expect "interrupted by signal 2" "SIGINT reported"
[ -z "$(ls -A "$W/tmp")" ] && pass || fail "SIGINT left $(ls "$W/tmp") behind"

# ---- hash escapes names as sha256sum does ----
nl="$W/$(printf 'a\nb')"; bs="$W/c\\d"; echo x >"$nl"; echo y >"$bs"
"$T" hash "$nl" "$bs" >"$W/ours"; sha256sum "$nl" "$bs" >"$W/theirs"
cmp -s "$W/ours" "$W/theirs" && pass || { fail "hash escaping differs from sha256sum"; diff "$W/ours" "$W/theirs"; }
run 2 "hash --threads 3x" "$T" hash --threads 3x "$bs"

# ---- numeric options of the player shell: refused, never a silent default or a run for ever ----
PL=$(dirname "$T")/tandem-player
if [ -x "$PL" ]; then
  for v in -1 99999999999 5x 0 ""; do
    fast 2 "tandem-player --samples '$v'" "$PL" --samples "$v" --help
    expect "--samples: expected an integer from 1 to 1000000" "player --samples '$v' reason"
  done
  fast 2 "tandem-player --timeout -5" "$PL" --timeout -5 --help
  fast 0 "tandem-player --samples 3" "$PL" --samples 3 --help
fi
finish
