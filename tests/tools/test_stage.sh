#!/usr/bin/env bash
# stage: byte-identical copy, staging.json, differences applied, refusals named.
. "$(dirname "$0")/common.sh"
S=$W/src; make_src "$S"

run 0 "stage fresh" "$T" stage --root "$S" --out "$W/st"
expect "staged 5 files" "stage fresh"
diff -r "$S/runtime" "$W/st/runtime" >/dev/null && pass || fail "staged copy differs from the sources"
python3 - "$W/st/staging.json" "$S" <<'PY' && pass || fail "staging.json content"
import json, sys, hashlib
d = json.load(open(sys.argv[1]))
assert d["schemaVersion"] == 1 and d["fileCount"] == 5 and d["gitHead"] is None and d["dirty"] is False
lines = ""
for f in d["files"]:
    data = open(sys.argv[2] + "/" + f["path"], "rb").read()
    assert f["sha256"] == hashlib.sha256(data).hexdigest() and f["bytes"] == len(data), f
    lines += f'{f["sha256"]}  {f["path"]}\n'
assert [f["path"] for f in d["files"]] == sorted(f["path"] for f in d["files"])
assert d["stagingHash"] == hashlib.sha256(lines.encode()).hexdigest()
PY
h1=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["stagingHash"])' "$W/st/staging.json")

run 0 "verify clean staging" "$T" verify --staging "$W/st"
# Tamper with the staging: one flipped byte, one deleted file, one added file.
flip_byte "$W/st/runtime/src/a.c" 3
rm "$W/st/players/subjects/callback/cb.c"
echo extra >"$W/st/runtime/src/extra.c"
run 1 "verify tampered staging" "$T" verify --staging "$W/st"
expect "changed: $W/st/runtime/src/a.c" "tampered staged source named"
expect "missing: $W/st/players/subjects/callback/cb.c" "deleted staged source named"
expect "extra: $W/st/runtime/src/extra.c" "added staged file named"
run 1 "stage --dry-run reports" "$T" stage --root "$S" --out "$W/st" --dry-run
expect "different: runtime/src/a.c" "dry-run different"
expect "missing: players/subjects/callback/cb.c" "dry-run missing"
expect "extra: runtime/src/extra.c" "dry-run extra"
run 0 "restage applies the differences" "$T" stage --root "$S" --out "$W/st"
expect "1 different, 1 missing, 1 extra applied" "restage summary"
run 0 "verify after restage" "$T" verify --staging "$W/st"
[ -e "$W/st/runtime/src/extra.c" ] && fail "extra file not removed" || pass
h2=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["stagingHash"])' "$W/st/staging.json")
[ "$h1" = "$h2" ] && pass || fail "stagingHash changed after restoring ($h1 vs $h2)"
# A source change shows as different and changes the stagingHash.
echo '/* edit */' >>"$S/runtime/src/a.c"
run 0 "stage a source edit" "$T" stage --root "$S" --out "$W/st"
expect "different: runtime/src/a.c" "source edit reported"
run 0 "explicit path" "$T" stage --root "$S" --out "$W/st2" runtime/src
expect "staged 2 files" "explicit path count"

# Refusals, each naming the path.
run 1 "dotdot path" "$T" stage --root "$S" --out "$W/r1" ../etc
expect "'..' path component" "dotdot refused"
run 1 "absolute outside" "$T" stage --root "$S" --out "$W/r1" /etc
expect "/etc: refused: path escapes the root" "absolute refused"
ln -s /etc/hostname "$S/runtime/src/out_link.c"
run 1 "symlink outside" "$T" stage --root "$S" --out "$W/r2"
expect "$S/runtime/src/out_link.c: refused: symbolic link points outside the root" "outside symlink named"
rm "$S/runtime/src/out_link.c"
ln -s a.c "$S/runtime/src/in_link.c"
run 0 "symlink inside is staged as a file" "$T" stage --root "$S" --out "$W/r3"
cmp "$S/runtime/src/a.c" "$W/r3/runtime/src/in_link.c" && [ ! -L "$W/r3/runtime/src/in_link.c" ] && pass || fail "inside symlink copy"
rm "$S/runtime/src/in_link.c"
mkfifo "$S/runtime/src/fifo"
run 1 "fifo refused" "$T" stage --root "$S" --out "$W/r4"
expect "$S/runtime/src/fifo: refused: not a regular file" "fifo named"
rm "$S/runtime/src/fifo"
mkdir -p "$W/notstaging"; echo keep >"$W/notstaging/precious"
run 1 "non-staging out folder" "$T" stage --root "$S" --out "$W/notstaging"
expect "holds no staging.json" "out folder refusal"
[ -f "$W/notstaging/precious" ] && pass || fail "unrelated file removed"
run 2 "usage" "$T" stage --bogus
run 0 "help" "$T" stage --help
expect "usage: tandem stage" "help text"
finish
