#!/bin/bash
# test_gate_project.sh TANDEM RUNS_ARCHIVE WORK: `tandem gate` reads the project's gate
# section (tandem.json; --project, or the nearest tandem.json upward) over its built-in
# defaults, and --config applies over that. On a copy of a published attempt's runs
# (subjects tandem, fcontext, callback), a project whose gate subject is callback with the
# peer fcontext and tandem as its lower bound:
#  - the summary, gate.md and the configuration line name callback against fcontext (never
#    against tandem, which is report-only);
#  - found from a subfolder without --project: the same summary, byte for byte;
#  - --config over the project: its subject and peers win;
#  - gatedSuites: only those suites are gated; the project's gate.config file applies under
#    the section (its thresholds, the section's subject);
#  - refused (exit 1, the file and the field named): an invalid gate.config, a project
#    whose suites leave nothing gated, an unknown peer;
#  - outside any project: Tandem's own tandem.json (tandem against fcontext).
set -uo pipefail
T=$1 ZIP=$2 W=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$W" && mkdir -p "$W/runs" "$W/P/sub/dir"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/tandem-gate-outside.XXXXXX")   # no tandem.json above it
trap 'rm -rf "$OUT"' EXIT
(cd "$W/runs" && unzip -q "$ZIP") || { echo "cannot unpack $ZIP"; exit 1; }
rm -rf "$W/runs/logs" "$W/runs/files.sha256"
P=$W/P
project() {  # project PY_EDIT: P/tandem.json, the callback project with the edit applied to d
  python3 - "$P/tandem.json" "$1" <<'PY'
import json, sys
t = "@tandem/players/"
d = {"tandemProject": 1, "name": "cb",
     "runtime": {"sources": "@tandem/runtime/src", "include": "@tandem/runtime/include"},
     "subjects": {n: {"folder": t + "subjects/" + n} for n in ("callback", "fcontext", "tandem")},
     "suites": {n: t + "suites/" + n for n in ("primary", "builderlifecycle", "throughput")},
     "gate": {"subject": "callback", "peers": ["fcontext"], "lowerBound": "tandem"}}
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
}
gate() {  # gate NAME ARGS...: run the gate into $W/NAME, output in $W/NAME.out; prints the exit code
  local name=$1; shift
  rm -rf "$W/$name"
  "$T" gate "$W/runs" --out "$W/$name" "$@" >"$W/$name.out" 2>&1
  echo $?
}
summary() {  # summary NAME PY_ASSERTS: python asserts over d (gate-summary.json) and md (gate.md)
  python3 - "$W/$1" "$2" <<'PY' || { fail "$1: the summary (see above)"; return 1; }
import json, sys
d = json.load(open(sys.argv[1] + "/gate-summary.json"))
md = open(sys.argv[1] + "/gate.md").read()
c = d["config"]
gated = lambda s: [x["gated"] for x in c["suites"] if x["name"] == s][0]
exec(sys.argv[2])
PY
}

project "pass"
rc=$(gate g --project "$P")
[ "$rc" = 0 ] || { fail "callback vs fcontext: exit $rc, expected 0 (PASS)"; cat "$W/g.out"; }
grep -qF "tandem gate: configuration: the built-in defaults, then $P/tandem.json (gate): subject callback against fcontext; report-only: tandem" \
  "$W/g.out" || fail "the configuration line: $(head -1 "$W/g.out")"
summary g '
assert d["subject"] == "callback", d["subject"]
assert c["peers"] == ["fcontext"] and c["reportOnlyPeers"] == ["tandem"], (c["peers"], c["reportOnlyPeers"])
assert c["unsupportedGatedRows"] == "na", c["unsupportedGatedRows"]
assert d["rows"] and {r["peer"] for r in d["rows"]} == {"fcontext"}, {r["peer"] for r in d["rows"]}
assert sum(r["kind"] == "gated" for r in d["rows"]) > 0
assert "Subject **callback** against its peers" in md and "Lower bounds (report-only, shown as the distance to the lower bound): tandem." in md
gated_md = md.split("## Gated rows")[1].split("\n## ")[0]
assert "| fcontext |" in gated_md and "| tandem |" not in gated_md, "gate.md: the gated rows"
'

# the default rule: the nearest tandem.json from the current folder upward
(cd "$P/sub/dir" && "$T" gate "$W/runs" --out "$W/g-up" >"$W/g-up.out" 2>&1); rc=$?
[ "$rc" = 0 ] || { fail "found upward: exit $rc"; cat "$W/g-up.out"; }
cmp -s "$W/g/gate-summary.json" "$W/g-up/gate-summary.json" || fail "found upward: the summary differs from --project's"

# --config over the project's section
printf '{"subject": "fcontext", "peers": ["callback"], "reportOnlyPeers": []}\n' >"$W/swap.json"
rc=$(gate g-swap --project "$P" --config "$W/swap.json")
case $rc in 0|3) ;; *) fail "--config over the project: exit $rc"; cat "$W/g-swap.out" ;; esac
grep -qF "then $P/tandem.json (gate), then $W/swap.json: subject fcontext against callback" "$W/g-swap.out" ||
  fail "--config over the project: $(head -1 "$W/g-swap.out")"
summary g-swap '
assert d["subject"] == "fcontext" and c["peers"] == ["callback"] and c["reportOnlyPeers"] == [], c
assert {r["peer"] for r in d["rows"]} == {"callback"}
'

# gatedSuites, and the project's own gate.config under its section
project 'd["gate"]["gatedSuites"] = ["throughput"]; d["gate"]["config"] = "gate.json"'
printf '{"subject": "tandem", "thresholds": {"median": 0.5}}\n' >"$P/gate.json"
rc=$(gate g-thr --project "$P")
case $rc in 0|3) ;; *) fail "gatedSuites: exit $rc"; cat "$W/g-thr.out" ;; esac
summary g-thr '
assert d["subject"] == "callback", "the section is applied over its config file"
assert abs(c["thresholds"]["median"] - 0.5) < 1e-9, c["thresholds"]
assert gated("throughput") and not gated("primary") and not gated("builderlifecycle"), c["suites"]
kinds = {(r["suite"], r["kind"]) for r in d["rows"]}
assert ("throughput", "gated") in kinds and ("primary", "gated") not in kinds, kinds
'

# refusals: exit 1, nothing judged, the file and the field named
refuse() {  # refuse NAME PY_EDIT TEXT
  project "$2"
  rc=$(gate "$1" --project "$P")
  [ "$rc" = 1 ] || fail "$1: exit $rc, expected 1"
  grep -qF -- "$3" "$W/$1.out" || { fail "$1: output lacks '$3'"; cat "$W/$1.out"; }
  [ ! -e "$W/$1/gate-summary.json" ] || fail "$1: a summary was written"
}
printf '{"thresholds": {"median": "fast"}}\n' >"$P/bad.json"
refuse bad-config 'd["gate"]["config"] = "bad.json"' "$P/tandem.json: gate.config: the gate configuration $P/bad.json is refused"
refuse none-gated 'd["suites"] = {"whenany": "@tandem/players/suites/whenany"}' \
  "$P/tandem.json: gate.gatedSuites: none given, and none of the gate's gated suites (primary, builderlifecycle, throughput, cancellation) is among the project's suites"
refuse bad-peer 'd["gate"]["peers"] = ["ucontext"]' \
  "$P/tandem.json: gate.peers[0]: 'ucontext' is not one of the subjects other than gate.subject"

# outside any project: Tandem's own gate section (tandem against fcontext, callback the lower bound)
(cd "$OUT" && "$T" gate --print-config >"$W/own.json" 2>&1) || fail "--print-config outside a project"
python3 - "$W/own.json" <<'PY' || fail "outside a project: not Tandem's own gate section (see above)"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["subject"] == "tandem" and c["peers"] == ["fcontext"] and c["reportOnlyPeers"] == ["callback"], c
assert c["unsupportedGatedRows"] == "invalid", c["unsupportedGatedRows"]
PY
"$T" gate --help | grep -q -- "--project DIR" || fail "gate --help does not name --project"
"$T" gate --help | grep -q "nearest tandem.json" || fail "gate --help does not give the default rule"

[ $fails = 0 ] && echo "gate project: ok" && exit 0
echo "gate project: $fails failed"
exit 1
