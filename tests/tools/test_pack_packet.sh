#!/usr/bin/env bash
# pack --check on published packets whose raw runs are kept outside the repository
# (issue 41): the hotpaths-18 packet as committed, with its raw runs.zip (the fixture
# tests/fixtures/raw/2026-12-03-hotpaths-18/runs.zip, laid out as the raw archive is) and
# without; a raw file changed by one byte, a member missing or extra, a malformed line of
# files.sha256, a packet JSON that does not parse, packing again without the raw archive;
# then every committed packet: verified without its raw runs, no archive under reports/,
# and `tandem history` reads them all.
. "$(dirname "$0")/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NAME=2026-12-03-hotpaths-18
P=$ROOT/reports/$NAME FIX=$ROOT/tests/fixtures/raw/$NAME
sha() { sha256sum "$1" | cut -c1-64; }
listed() { grep "  $1\$" "$2" | cut -c1-64; }

run 0 "the packet with its raw runs" "$T" pack --check "$P" --raw "$FIX"
expect "raw $FIX/runs.zip checked (105 members listed)" "raw runs checked"
expect "132 files listed, 0 mismatch(es)" "every line verified"
run 0 "the packet without its raw runs: a notice, exit 0" "$T" pack --check "$P"
expect "raw runs not present: runs.zip and its 105 members not verified" "absent raw runs said"
expect "0 mismatch(es)" "the committed files verified"

# one byte of the raw archive changed: named, with both hashes
mkdir -p "$W/raw1" && cp "$FIX/runs.zip" "$W/raw1/runs.zip" && flip_byte "$W/raw1/runs.zip" 5000
run 1 "one byte of runs.zip changed" "$T" pack --check "$P" --raw "$W/raw1"
expect "changed: $W/raw1/runs.zip (expected sha256 $(listed runs.zip "$P/files.sha256"), found $(sha "$W/raw1/runs.zip"))" \
  "changed archive named with both hashes"

# one byte of one raw file changed, one removed, one added (the archive packed again)
"$T" pack --extract "$FIX/runs.zip" --out "$W/x" >/dev/null || fail "extract the fixture"
flip_byte "$W/x/p01-primary-aot-r1.json" 100
rm "$W/x/logs/p01-primary-aot-r1.try1.out" "$W/x/files.sha256"; echo extra >"$W/x/extra.txt"
mkdir -p "$W/raw2" && "$T" pack "$W/x" --out "$W/raw2/runs.zip" >/dev/null
run 1 "a raw file changed, one missing, one extra" "$T" pack --check "$P" --raw "$W/raw2"
expect "changed: $W/raw2/runs.zip/p01-primary-aot-r1.json (expected sha256 $(listed runs.zip/p01-primary-aot-r1.json "$P/files.sha256"), found $(sha "$W/x/p01-primary-aot-r1.json"))" \
  "changed raw file named with both hashes"
expect "missing: $W/raw2/runs.zip/logs/p01-primary-aot-r1.try1.out (expected sha256 $(listed runs.zip/logs/p01-primary-aot-r1.try1.out "$P/files.sha256"), not in the archive)" \
  "missing raw file named"
expect "extra: $W/raw2/runs.zip/extra.txt (sha256 $(sha "$W/x/extra.txt"), not listed)" "extra raw file named"
run 1 "--raw DIR without the archive" "$T" pack --check "$P" --raw "$W/empty"
expect "missing: $W/empty/runs.zip (raw archive not in --raw $W/empty" "absent --raw named"

# files.sha256 with a malformed line: which line, why
cp -r "$P" "$W/pk"
sed -i '3s/^\(.\{63\}\)./\1/' "$W/pk/files.sha256"
run 1 "a line with a short hash" "$T" pack --check "$W/pk" --raw "$FIX"
expect "$W/pk/files.sha256: line 3: expected \"<64 hex>  <path>\"" "malformed line named"
cp "$P/files.sha256" "$W/pk/files.sha256"
sed -i '40{h;d};41G' "$W/pk/files.sha256"
run 1 "lines out of order" "$T" pack --check "$W/pk"
expect "$W/pk/files.sha256: line 41:" "out-of-order line named"
expect "out of order (lines must be sorted by path)" "out-of-order reason"

# a packet's JSON must parse (history reads it), even with a matching hash
cp "$P/files.sha256" "$W/pk/files.sha256"
printf '{"kind": ' >"$W/pk/gate/gate-summary.json"
h=$(sha "$W/pk/gate/gate-summary.json")
sed -i "s|^[0-9a-f]\{64\}  gate/gate-summary.json\$|$h  gate/gate-summary.json|" "$W/pk/files.sha256"
run 1 "gate-summary.json not JSON" "$T" pack --check "$W/pk"
expect "invalid: $W/pk/gate/gate-summary.json (not JSON (above))" "unparseable packet JSON named"

# packing the packet again: the raw lines are written again from the archive, or refused
cp "$P/gate/gate-summary.json" "$W/pk/gate/gate-summary.json"
run 1 "pack without the raw archive" "$T" pack "$W/pk" --out "$W/pk.zip"
expect "lists the raw archive 'runs.zip' and its members: give it with --raw-archive FILE" "refusal says why"
run 0 "pack with it" "$T" pack "$W/pk" --raw-archive "$FIX/runs.zip" --out "$W/pk.zip"
cmp "$P/files.sha256" "$W/pk/files.sha256" && pass || fail "files.sha256 written again differs from the committed one"
cp "$FIX/runs.zip" "$W/pk/runs.zip"
run 1 "a raw archive inside the packed folder" "$T" pack "$W/pk" --raw-archive "$FIX/runs.zip" --out "$W/pk.zip"
expect "a raw archive is kept outside the packed folder" "inside refused"
run 0 "the raw archive in the packet folder is checked there" "$T" pack --check "$W/pk"
expect "raw $W/pk/runs.zip checked" "raw runs in the folder checked"
run 0 "the packet's archive checked with --raw" "$T" pack --check "$W/pk.zip" --raw "$FIX"
expect "0 mismatch(es)" "archive of the packet verified"
run 2 "--raw without --check" "$T" pack "$W/pk" --raw "$FIX"

# every committed packet: no archive in reports/, each verifies without its raw runs
zips=$(cd "$ROOT" && git ls-files reports | grep -E '\.(zip|tar\.zst)$')
[ -z "$zips" ] && pass || fail "archives committed under reports/: $zips"
n=0
for sums in "$ROOT"/reports/*/files.sha256; do
  d=$(dirname "$sums"); n=$((n + 1))
  run 0 "pack --check ${d#"$ROOT/"}" "$T" pack --check "$d" && expect "0 mismatch(es)" "${d#"$ROOT/"} verified"
  grep -q '  runs\.zip/' "$sums" && pass || fail "${d#"$ROOT/"}: files.sha256 lists no raw runs"
done
[ "$n" -ge 24 ] && pass || fail "only $n packets with files.sha256"
run 0 "tandem history over the committed packets" "$T" history "$ROOT/reports" --repo "$ROOT"
expect "tandem history: $n packet(s) in commit order" "every packet read"
grep -q MALFORMED "$W/out" && fail "a malformed packet: $(grep MALFORMED "$W/out")" || pass
finish
