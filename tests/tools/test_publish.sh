#!/usr/bin/env bash
# scripts/publish-packet.sh on a synthetic attempt in a deep, oddly named folder (issue 18:
# published packets carry no machine paths): no trace of the attempt folder or of the
# repository root in any published file, runs.zip's contents included (redacted and packed
# again), placeholders in their place, files.sha256 verifies the published bytes, original-files.sha256 the
# originals in the attempt folder, the README says so once (also after a second run).
# Raw runs (issue 41): no raw file lands in the packet; runs.zip goes to the raw archive
# (--raw-to DIR, default $XDG_DATA_HOME/tandem/raw/<packet>), files.sha256 lists it and
# its files, and pack --check verifies them with --raw DIR and says so without.
# Then `tandem pack --redact` on its own: refusals.
. "$(dirname "$0")/common.sh"
SCRIPT=$(cd "$(dirname "$0")/../../scripts" && pwd)/publish-packet.sh
A="$W/deep/er/and/deeper/Odd \"dir\" ü\\x (copy) #1/attempts/attempt 2"
R="$W/elsewhere/my repo=é"
mkdir -p "$A" "$R"
python3 - "$A" "$R" <<'PY'
import json, os, sys
A, R = sys.argv[1], sys.argv[2]
def put(rel, obj):
    p = os.path.join(A, rel); os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        if isinstance(obj, str): f.write(obj)
        else: json.dump(obj, f, indent="\t", ensure_ascii=False); f.write("\n")
put("attempt-manifest.json", {"kind": "tandem-attempt", "folder": A, "arguments": ["tandem", "attempt", "--out", A],
    "players": [{"backend": "aot", "folder": A + "/players/aot"}], "stage": "done",
    "note": "ran from " + R + "/build/tandem on " + A, "ascii-escaped": A + "/x"})
put("quiet-pregate.json", {"status": "quiet", "otherCpuPercent": 1.5})
put("compile-check.json", {"backends": [{"backend": "aot", "players": A + "/players/aot"}], "passed": True})
put("staging/staging.json", {"kind": "tandem-staging", "sourceRoot": R, "files": [{"path": "runtime/src/a.c"}]})
put("staging/runtime/src/a.c", "int a;\n")
put("players/aot/binary-manifest-aot.json", {"staging": A + "/staging", A + "/players/aot/tandem.so": "key holding the path"})
put("players/aot/tandem.so", "\x7fELF not really\n")
put("smoke/smoke-aot.json", {"module": A + "/players/aot/tandem.so", "cases": 42})
put("gate/gate.md", "# Gate: FAIL\n\nRuns read from `" + A + "/runs` (root " + R + ").\n")
put("gate/gate-summary.json", {"verdict": "FAIL", "inputs": [{"path": "p01.json", "sha256": "0" * 64}]})
put("gate/gate-chart.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><text>ratio</text></svg>\n")
put("gate/gate-config.json", {"subject": "tandem"})
put("runs/p01-primary-aot-r1.json", {"modules": [A + "/players/aot/tandem.so"]})
# the JSON-escaped form only (\u escapes): cJSON reads it, a byte search would not
with open(os.path.join(A, "smoke/smoke-jit.json"), "w") as f:
    f.write(json.dumps({"tu": A + "/players/jit/src/t.c"}, ensure_ascii=True) + "\n")
PY
run 0 "pack the synthetic runs" "$T" pack "$A/runs" --out "$A/runs.zip"
(cd "$A" && find . -type f ! -name files.sha256 -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum) >"$W/attempt.sums"
mv "$W/attempt.sums" "$A/files.sha256"
cp -r "$A" "$W/attempt-before"
P="$W/reports/2026-12-01-odd"
mkdir -p "$W/reports"
export TANDEM=$T XDG_DATA_HOME="$W/xdg"
RAW=$XDG_DATA_HOME/tandem/raw/2026-12-01-odd
run 0 "publish" bash "$SCRIPT" "$A" "$P"
expect "0 mismatch(es)" "publish verifies the packet"
expect "raw $RAW/runs.zip checked" "publish verifies the raw runs where it put them"
diff -r "$A" "$W/attempt-before" >/dev/null && pass || fail "publishing changed the attempt folder"
# no raw file in the packet: nothing over 64 KiB, no archive
big=$(find "$P" -type f \( -size +64k -o -name '*.zip' -o -name '*.tar*' \) -printf '%P\n')
[ -z "$big" ] && pass || fail "raw files in the packet: $big"
[ -f "$RAW/runs.zip" ] && pass || fail "runs.zip not in the default raw archive $RAW"
n=$(grep -c '  runs\.zip/' "$P/files.sha256")
[ "$n" = 2 ] && pass || fail "files.sha256 lists $n files of runs.zip, expected 2 (p01 and its files.sha256)"
grep -q '  runs\.zip$' "$P/files.sha256" && pass || fail "files.sha256 does not list runs.zip"
run 0 "pack --check without the raw runs" "$T" pack --check "$P"
expect "raw runs not present: runs.zip and its 2 members not verified" "absent raw runs said"
run 0 "pack --check with --raw" "$T" pack --check "$P" --raw "$RAW"
expect "0 mismatch(es)" "raw runs verified"

# no trace of either folder in any published file, nor in runs.zip's contents (raw bytes
# or JSON-escaped)
run 0 "extract the published runs.zip" "$T" pack --extract "$RAW/runs.zip" --out "$W/published-runs"
python3 - "$P" "$W/published-runs" "$A" "$R" >"$W/trace" 2>&1 <<'PY'
import json, os, sys
P, RUNS, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
forms = set()
for p in paths:
    for s in (p, json.dumps(p)[1:-1], json.dumps(p, ensure_ascii=False)[1:-1], os.path.basename(p), "Odd \"dir\" ü"):
        forms.add(s.encode())
    forms.add(json.dumps("Odd \"dir\" ü")[1:-1].encode())
bad = 0
for top in (P, RUNS):
    for d, _, fs in os.walk(top):
        for f in fs:
            rel = os.path.relpath(os.path.join(d, f), top)
            b = open(os.path.join(d, f), "rb").read()
            for s in forms:
                if s in b: print("trace of", s, "in", rel); bad = 1
sys.exit(bad)
PY
[ $? = 0 ] && pass || { fail "machine paths left in the packet"; cat "$W/trace"; }
grep -qF '"<attempt>/players/aot/tandem.so"' "$W/published-runs/p01-primary-aot-r1.json" && pass || fail "runs.zip's report not redacted"
grep -qF '"folder":	"<attempt>"' "$P/attempt-manifest.json" && pass || fail "attempt-manifest folder is not <attempt>"
grep -qF '"sourceRoot":	"<root>"' "$P/staging.json" && pass || fail "staging.json sourceRoot is not <root>"
grep -qF '"<attempt>/players/aot/tandem.so":' "$P/players/binary-manifest-aot.json" && pass || fail "a key holding the path not redacted"
grep -qF '"tu":	"<attempt>/players/jit/src/t.c"' "$P/smoke/smoke-jit.json" && pass || fail "a \\u-escaped path not redacted"
grep -qF 'Runs read from `<attempt>/runs` (root <root>).' "$P/gate/gate.md" && pass || fail "gate.md not redacted"
cmp -s "$A/gate/gate-chart.svg" "$P/gate/gate-chart.svg" && pass || fail "a file without paths was changed"
# redaction changed only the paths: every other value is the same
python3 - "$A" "$P" "$R" <<'PY' && pass || fail "redacted JSON differs from the original beyond the paths"
import json, sys
A, P, R = sys.argv[1:]
def sub(x):
    if isinstance(x, str): return x.replace(A, "<attempt>").replace(R, "<root>")
    if isinstance(x, list): return [sub(v) for v in x]
    if isinstance(x, dict): return {sub(k): sub(v) for k, v in x.items()}
    return x
for src, dst in [("attempt-manifest.json", "attempt-manifest.json"), ("staging/staging.json", "staging.json"),
                 ("players/aot/binary-manifest-aot.json", "players/binary-manifest-aot.json"),
                 ("compile-check.json", "compile-check.json"), ("smoke/smoke-jit.json", "smoke/smoke-jit.json")]:
    a, p = sub(json.load(open(A + "/" + src))), json.load(open(P + "/" + dst))
    if a != p: print(src, a, p); sys.exit(1)
PY
# the two lists: published bytes (files.sha256) and originals (original-files.sha256)
(cd "$P" && sha256sum -c --quiet --ignore-missing files.sha256) && pass || fail "files.sha256 does not verify the published bytes"
(cd "$RAW" && grep '  runs\.zip$' "$P/files.sha256" | sha256sum -c --quiet) && pass || fail "files.sha256 does not verify runs.zip"
grep -q '  original-files.sha256$' "$P/files.sha256" && pass || fail "files.sha256 does not cover original-files.sha256"
(cd "$A" && sha256sum -c --quiet "$P/original-files.sha256") && pass || fail "original-files.sha256 does not verify the originals"
n=$(wc -l <"$P/original-files.sha256")
[ "$n" = 13 ] && pass || fail "original-files.sha256 lists $n files, expected 11, runs.zip and runs/p01-primary-aot-r1.json"
missing=$(grep -vxFf "$A/files.sha256" "$P/original-files.sha256")
[ -z "$missing" ] && pass || fail "original lines not in the attempt's files.sha256: $missing"
run 0 "pack --check the packet" "$T" pack --check "$P"
grep -qF '`<attempt>`' "$P/README.md" && pass || fail "README does not say how paths were replaced"
# again (after the README was edited by hand): one section, still verified
printf '\nA hand-written line.\n' >>"$P/README.md"
run 0 "publish again" bash "$SCRIPT" "$A" "$P"
[ "$(grep -c '^## Machine paths' "$P/README.md")" = 1 ] && pass || fail "README has the section more than once"
grep -q 'A hand-written line.' "$P/README.md" && pass || fail "the hand-written README text was lost"
run 0 "pack --check after the second publish" "$T" pack --check "$P" --raw "$RAW"
expect "0 mismatch(es)" "second publish verified with its raw runs"
run 1 "a packet inside the attempt folder" bash "$SCRIPT" "$A" "$A/packet"
# --raw-to: the raw runs where it says, never inside the packet
run 0 "publish --raw-to" bash "$SCRIPT" --raw-to "$W/raw-elsewhere" "$A" "$W/reports/2026-12-01-odd2"
[ -f "$W/raw-elsewhere/runs.zip" ] && [ ! -e "$W/reports/2026-12-01-odd2/runs.zip" ] && pass || fail "--raw-to not honoured"
run 1 "--raw-to inside the packet" bash "$SCRIPT" --raw-to "$P/raw" "$A" "$P"
expect "must be outside the packet" "--raw-to inside the packet named"
run 2 "--raw-to without a folder" bash "$SCRIPT" --raw-to

# tandem pack --redact on its own
X=$W/redact; mkdir -p "$X"
printf 'held %s here\n' "$A" >"$X/notes.dat"
run 1 "a file of a kind that is not redacted still holds the path" "$T" pack --redact "$X" --path "$A=<attempt>"
expect "notes.dat: refused: still holds the path" "unredactable file named"
rm "$X/notes.dat"; printf '{"a": "%s/x", ' "$R" >"$X/broken.json"
run 1 "invalid JSON refused" "$T" pack --redact "$X" --path "$R=<root>"
expect "broken.json: refused: not valid JSON" "invalid JSON named"
rm "$X/broken.json"; printf '{"a": "/elsewhere%s"}\n' "$R" >"$X/inside.json"
run 1 "a path inside a longer one refused" "$T" pack --redact "$X" --path "$R=<root>"
rm "$X/inside.json"; printf '{"a": "%s"}\n' "$R" >"$X/ok.json"
run 2 "relative --path" "$T" pack --redact "$X" --path "rel/dir=<root>"
run 2 "--path /" "$T" pack --redact "$X" --path "/=<root>"
run 2 "bad placeholder" "$T" pack --redact "$X" --path "$R=<Root 1>"
run 2 "--redact without --path" "$T" pack --redact "$X"
run 0 "redact ok" "$T" pack --redact "$X" --path "$R=<root>"
grep -qxF '{"a": "<root>"}' "$X/ok.json" || grep -qF '"a":	"<root>"' "$X/ok.json" && pass || fail "ok.json not redacted"
finish
