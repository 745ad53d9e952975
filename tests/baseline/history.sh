#!/bin/sh
# `tandem history` over synthetic packets: the expected table in commit order (not folder
# order), instructions per op where published, malformed packets named and skipped.
# usage: history.sh TANDEM WORK
set -u
T=$1 W=$2
rm -rf "$W" && mkdir -p "$W/repo" "$W/reports"
git -C "$W/repo" init -q && git -C "$W/repo" config user.name t && git -C "$W/repo" config user.email t@t
echo 1 >"$W/repo/f" && git -C "$W/repo" add f && git -C "$W/repo" commit -qm one
c1=$(git -C "$W/repo" rev-parse HEAD)
echo 2 >"$W/repo/f" && git -C "$W/repo" commit -qam two
c2=$(git -C "$W/repo" rev-parse HEAD)
python3 - "$W/reports" "$c1" "$c2" <<'PY'
import json, os, sys
R, c1, c2 = sys.argv[1:4]
def row(backend, median, kind="gated", r="nextframe N=1024"):
    return {"suite": "throughput", "retention": "matched", "row": r, "peer": "fcontext", "backend": backend,
            "kind": kind, "median": median, "worst": median, "result": "PASS"}
def packet(name, commit, rows, verdict="PASS", baseline=None, summary=None):
    d = os.path.join(R, name); os.makedirs(os.path.join(d, "gate"))
    s = {"kind": "tandem-gate-summary", "verdict": verdict, "subject": "tandem", "rows": rows}
    if baseline: s["baseline"] = {"verdict": baseline}
    with open(os.path.join(d, "gate", "gate-summary.json"), "w") as f: f.write(summary if summary is not None else json.dumps(s))
    json.dump({"kind": "tandem-attempt", "gitHead": commit}, open(os.path.join(d, "attempt-manifest.json"), "w"))
    return d
# folder order is the reverse of commit order on purpose
d = packet("a-later", c2, [row("aot", 0.9), row("jit", 1.1), row("aot", 5.0, "report-only", "yield N=1024")],
           baseline="no regression")
os.makedirs(os.path.join(d, "instructions"))
json.dump({"kind": "instructions", "suite": "throughput", "backend": "aot", "subjects": ["tandem", "fcontext"],
           "rows": [{"name": "nextframe N=1024", "subjects": {"tandem": {"irPerOp": 100.5}, "fcontext": None}}]},
          open(os.path.join(d, "instructions", "throughput-aot-instructions.json"), "w"))
packet("b-earlier", c1, [row("aot", 1.2), row("jit", 1.3)], verdict="FAIL")
packet("c-badnumber", c1, [row("aot", "x")])
packet("d-notjson", c1, [], summary="{ not json")
packet("f-unknown-commit", "0" * 40, [row("aot", 1.0)])
e = packet("e-link", c1, [row("aot", 1.0)])
os.remove(os.path.join(e, "gate", "gate-summary.json"))
os.symlink(os.path.join(R, "a-later", "gate", "gate-summary.json"), os.path.join(e, "gate", "gate-summary.json"))
os.makedirs(os.path.join(R, "notes"))  # not a packet: no files, not mentioned
PY
fail=0
"$T" history "$W/reports" --repo "$W/repo" --out "$W/out" --markdown >"$W/md" 2>"$W/err"
rc=$?
cat "$W/md" "$W/err"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; fail=1; }
s1=$(printf %.7s "$c1") s2=$(printf %.7s "$c2")
expect() { grep -qxF -- "$1" "$W/$2" || { echo "FAIL: missing line in $2: $1"; fail=1; }; }
expect "| 1 | b-earlier | $s1 | FAIL | - |" md
expect "| 2 | a-later | $s2 | PASS | no regression |" md
expect "| row | backend | peer | 1: $s1 | 2: $s2 |" md
expect "| nextframe N=1024 | aot | fcontext | 1.200 | 0.900 (100.5) |" md
expect "| nextframe N=1024 | jit | fcontext | 1.300 | 1.100 |" md
grep -q "yield N=1024" "$W/md" && { echo "FAIL: a report-only row is in the history"; fail=1; }
grep -q "notes" "$W/md" "$W/err" && { echo "FAIL: a folder without packet files was reported"; fail=1; }
for p in "c-badnumber: malformed packet, skipped: gate/gate-summary.json: rows\[0\]" \
         "d-notjson: malformed packet, skipped: .*not a JSON object" \
         "e-link: malformed packet, skipped: .*symbolic link" \
         "f-unknown-commit: malformed packet, skipped: commit 000000000000 is not in the repository"; do
  grep -q -- "$p" "$W/err" || { echo "FAIL: not skipped with its reason: $p"; fail=1; }
done
[ "$(grep -c '^- ' "$W/md")" -eq 4 ] || { echo "FAIL: the Skipped list does not hold the 4 malformed packets"; fail=1; }
grep -q "<polyline" "$W/out/history-throughput.svg" && cmp -s "$W/md" "$W/out/history.md" || { echo "FAIL: --out files"; fail=1; }
# the SVG: well-formed, a panel per row with its labelled 1.0 line
xmllint --noout "$W/out/history-throughput.svg" && grep -q '>1.00</text>' "$W/out/history-throughput.svg" &&
  grep -q '>nextframe N=1024</text>' "$W/out/history-throughput.svg" || { echo "FAIL: the SVG panels"; fail=1; }
# the terminal view (issue 43, item 4): within 100 columns, one line per row and backend with
# its last ratio, no Markdown or HTML escapes
"$T" history "$W/reports" --repo "$W/repo" >"$W/txt" 2>/dev/null || { echo "FAIL: terminal view: exit $?"; fail=1; }
cat "$W/txt"
python3 - "$W/txt" <<'PY' || { echo "FAIL: terminal view (see above)"; fail=1; }
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert all(len(l) <= 100 for l in lines), max(lines, key=len)
assert not any("&lt;" in l or "&gt;" in l or l.startswith("|") for l in lines), "Markdown or HTML escapes"
rows = [l for l in lines if l.startswith("throughput / nextframe N=1024")]
assert len(rows) == 2 and rows[0].split()[6:8] == ["aot", "0.900"] and rows[1].split()[6:8] == ["jit", "1.100"], rows
PY
# nothing readable: exit 1
mkdir -p "$W/empty/x" && "$T" history "$W/empty" --repo "$W/repo" >/dev/null 2>&1 && { echo "FAIL: no packet, exit 0"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: history table in commit order, malformed packets skipped" || exit 1
