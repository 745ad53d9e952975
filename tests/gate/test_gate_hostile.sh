#!/bin/bash
# test_gate_hostile.sh TANDEM RUNS_ARCHIVE WORK [CASE...]: the gate on a copy of real attempt
# runs (the published default attempt, verdict FAIL) with one thing altered at a time.
# Every altered copy must come out INVALID (exit 1) with its own reason, never PASS; the
# outputs must stay valid (JSON, XML, no injected Markdown) and a FIFO must not block.
# Cases are the functions named case_*; with CASE arguments only those run.
set -uo pipefail
T=$1
ZIP=$2
W=$3
shift 3
fails=0
n=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

rm -rf "$W" && mkdir -p "$W/base"
(cd "$W/base" && unzip -q "$ZIP") || { echo "cannot unpack $ZIP"; exit 1; }
rm -rf "$W/base/logs" "$W/base/files.sha256"
# the configuration the attempt writes (built-in defaults, 22 processes, 8 samples)
"$T" gate --print-config | python3 -c '
import json, sys
c = json.load(sys.stdin)
c["expectedProcesses"] = 22
for s in c["suites"]: s["samples"] = 8
json.dump(c, open(sys.argv[1], "w"), indent=1)' "$W/config.json"

# mutate NAME PYTHON: copy the base runs to $W/NAME and run PYTHON there, with helpers:
#   reps() -> [(file, doc)], save(file, doc), entries(doc, subject=None, name=None)
mutate() {
  local name=$1 code=$2
  rm -rf "$W/$name" && cp -r "$W/base" "$W/$name"
  (cd "$W/$name" && python3 -c "$HELPERS
$code") || { fail "$name: mutation failed"; return 1; }
}
HELPERS='
import json, glob, sys
def reps():
    return [(f, json.load(open(f))) for f in sorted(glob.glob("p*.json"))]
def save(f, d, raw=None):
    t = json.dumps(d, indent=1)
    for k, v in (raw or {}).items(): t = t.replace(json.dumps(k), v)
    open(f, "w").write(t)
def entries(d, subject=None, name=None):
    return [r for r in d["rows"] if (subject is None or r["subject"] == subject) and (name is None or r["name"] == name)]
def set_samples(e, key, value):
    for s in e.get("sampleRecords", []): s[key] = value
    if isinstance(e.get(key), list): e[key] = [value] * len(e[key])
FAILROW = "Async method NextFrame get-result N=4096"   # a gated row that FAILs on the real runs
'

# gate NAME WANT_RC REASON_REGEX [extra gate args]
gate() {
  local name=$1 want=$2 reason=$3
  shift 3
  n=$((n + 1))
  local out="$W/$name.out"
  timeout 20 "$T" gate "$W/$name" --config "$W/config.json" --out "$W/$name-gate" "$@" >"$out" 2>&1
  local rc=$?
  [ $rc = "$want" ] || { fail "$name: exit $rc, expected $want"; grep -v "FAIL: " "$out" | head -5; return; }
  if [ -n "$reason" ]; then grep -Eq -- "$reason" "$out" || { fail "$name: no reason matching /$reason/"; grep -v "FAIL: " "$out" | head -5; }; fi
  if [ "$want" = 1 ] && grep -q "^gate: PASS" "$out"; then fail "$name: PASS printed"; fi
  valid_outputs "$name"
}

# the outputs, when written, are well-formed whatever the reports held
valid_outputs() {
  local d="$W/$1-gate"
  [ -f "$d/gate-summary.json" ] || return 0
  local why
  why=$(python3 -c '
import json, sys, xml.dom.minidom
try: json.load(open(sys.argv[1], encoding="utf-8"))
except Exception: print("gate-summary.json is not valid JSON")
try: xml.dom.minidom.parse(sys.argv[2])
except Exception: print("gate-chart.svg is not well-formed XML")' "$d/gate-summary.json" "$d/gate-chart.svg")
  [ -z "$why" ] || fail "$1: $why"
  [ "$(grep -c '^# ' "$d/gate.md")" = 1 ] || fail "$1: gate.md has more than one level-1 heading"
}

case_baseline() { mutate baseline "pass"; gate baseline 3 "^gate: FAIL \(46 gated rows"; }

# ---- numbers: finite, typed, in range ----
case_tandem_ns_zero() {
  mutate tandem_ns_zero '
for f, d in reps():
    for e in entries(d, "tandem"):
        if not e.get("supported", True): continue
        set_samples(e, "ns", 0)
        for k in ("nsPerOp", "medianNsPerOp"): e[k] = 0
    save(f, d)'
  gate tandem_ns_zero 1 "ns: 0 is out of range"
}
case_peer_ns_1e999() {
  mutate peer_ns_1e999 '
for f, d in reps():
    for e in entries(d, "fcontext"):
        if not e.get("supported", True): continue
        set_samples(e, "ns", "@INF@")
        for k in ("nsPerOp", "medianNsPerOp"): e[k] = "@INF@"
    save(f, d, {"@INF@": "1e999"})'
  gate peer_ns_1e999 1 "not a finite number"
}
case_ns_inf_string() {
  mutate ns_inf_string '
for f, d in reps():
    for e in entries(d, "fcontext"):
        if e.get("supported", True): set_samples(e, "ns", "inf")
    save(f, d)'
  gate ns_inf_string 1 "ns: not a decimal number"
}
case_ns_hex_string() {
  mutate ns_hex_string '
for f, d in reps():
    for e in entries(d, "fcontext"):
        if e.get("supported", True): set_samples(e, "ns", "0x10")
    save(f, d)'
  gate ns_hex_string 1 "ns: not a decimal number"
}
case_ns_negative() {
  mutate ns_negative '
for f, d in reps():
    for e in entries(d, "tandem"):
        if e.get("supported", True): set_samples(e, "ns", -5)
    save(f, d)'
  gate ns_negative 1 "ns: -5 is out of range"
}
case_ops_inf_string() {
  mutate ops_inf_string '
for f, d in reps():
    for e in entries(d, "fcontext"):
        if e.get("supported", True): set_samples(e, "ops", "inf")
    save(f, d)'
  gate ops_inf_string 1 "ops: not a decimal number"
}
case_ops_fraction() {
  mutate ops_fraction '
for f, d in reps():
    for e in entries(d, "fcontext"):
        if e.get("supported", True): set_samples(e, "ops", 0.5)
    save(f, d)'
  gate ops_fraction 1 "ops: 0.5 is out of range"
}
case_control_above_ns() {
  mutate control_above_ns '
for f, d in reps():
    for e in entries(d, "tandem"):
        if not e.get("supported", True): continue
        e["controlSubtracted"] = True
        for s in e["sampleRecords"]: s["controlNs"] = s["ns"] * 2
        e["controlNs"] = [s["controlNs"] for s in e["sampleRecords"]]
    save(f, d)'
  gate control_above_ns 1 "controlNs .* is not below the measurement ns"
}
case_stat_mistyped() {
  mutate stat_mistyped '
f, d = reps()[0]
entries(d, "tandem")[0]["nsPerOp"] = "fast"
save(f, d)'
  gate stat_mistyped 1 "nsPerOp: not a decimal number"
}

# ---- contradictory evidence ----
case_duplicate_row() {
  mutate duplicate_row '
for f, d in reps():
    e = entries(d, "tandem", FAILROW)
    if not e: continue
    fast = json.loads(json.dumps(e[0]))
    for s in fast["sampleRecords"]: s["ns"] = 1
    d["rows"].insert(0, fast)
    save(f, d)'
  gate duplicate_row 1 "duplicate row 'Async method NextFrame get-result N=4096' for subject 'tandem'"
}
case_one_process_ungated() {
  mutate one_process_ungated '
f, d = reps()[0]
for e in entries(d, None, FAILROW): e["gated"] = False
save(f, d)'
  gate one_process_ungated 1 "disagree about gating row"
}
case_all_processes_ungated() {
  mutate all_processes_ungated '
for f, d in reps():
    for e in entries(d, None, FAILROW): e["gated"] = False
    save(f, d)'
  gate all_processes_ungated 1 "report-only in the report but gated in the gate.s configuration"
}
case_one_process_unsupported() {
  mutate one_process_unsupported '
f, d = reps()[0]
for e in entries(d, "fcontext", FAILROW): e["supported"] = False
save(f, d)'
  gate one_process_unsupported 1 "disagree about row .* supported"
}
case_supported_mistyped() {
  mutate supported_mistyped '
f, d = reps()[0]
for e in entries(d, "fcontext", FAILROW): e["supported"] = "no"
save(f, d)'
  gate supported_mistyped 1 "supported: not a boolean"
}
case_empty_samples() {
  mutate empty_samples '
for f, d in reps():
    for e in entries(d, "tandem", FAILROW):
        for k in ("sampleRecords", "ns", "ops", "allocs", "allocBytes", "controlNs", "retained", "check"): e[k] = []
        e["sampleCount"] = 0
    save(f, d)'
  gate empty_samples 1 "empty samples array"
}
case_samples_negative() {
  mutate samples_negative '
for f, d in reps():
    d["samples"] = -1; d["settings"]["samples"] = -1
    save(f, d)'
  gate samples_negative 1 "samples: -1 is out of range"
}
case_samples_huge() {
  mutate samples_huge '
for f, d in reps():
    d["samples"] = 1e10; d["settings"]["samples"] = 1e10
    save(f, d)'
  gate samples_huge 1 "samples: 10000000000 is out of range"
}
case_sample_count_short() {
  mutate sample_count_short '
f, d = reps()[0]
for e in entries(d, "tandem", FAILROW) or entries(d, "tandem"):
    for k in ("sampleRecords", "ns", "ops", "allocs", "allocBytes", "controlNs", "retained", "check"): e[k] = e[k][:7]
    e["sampleCount"] = 7
save(f, d)'
  gate sample_count_short 1 "wrong sample count"
}
case_replayed_report() {
  mutate replayed_report '
import shutil
shutil.copy("p01-primary-aot-r1.json", "p12-primary-aot-r2.json")'
  gate replayed_report 1 "byte-identical reports"
}
case_replayed_samples() {
  mutate replayed_samples '
a = json.load(open("p01-primary-aot-r1.json"))
b = json.load(open("p12-primary-aot-r2.json"))
b["rows"] = a["rows"]
save("p12-primary-aot-r2.json", b)'
  gate replayed_samples 1 "identical samples for row"
}

# ---- reports that lie about themselves ----
case_newline_heading() {
  mutate newline_heading '
for f, d in reps():
    for e in entries(d, None, FAILROW): e["name"] = "x\n\n# Gate: PASS\n\n<b>&\u0001"
    save(f, d)'
  gate newline_heading 3 ""
  grep -q "^# Gate: PASS" "$W/newline_heading-gate/gate.md" && fail "newline_heading: heading injected into gate.md"
}
case_not_utf8() {
  mutate not_utf8 '
t = open("p01-primary-aot-r1.json", "rb").read().replace(FAILROW.encode(), b"bad \xff\xfe name", 1)
open("p01-primary-aot-r1.json", "wb").write(t)'
  gate not_utf8 1 "not valid UTF-8"
}
case_config_inf_threshold() {
  mutate config_inf_threshold "pass"
  python3 -c 'import sys; t=open(sys.argv[1]).read().replace("\"median\": 0.95", "\"median\": 1e999", 1); open(sys.argv[2],"w").write(t)' \
    "$W/config.json" "$W/config-inf.json"
  grep -q 1e999 "$W/config-inf.json" || fail "config_inf_threshold: no 1e999 written"
  n=$((n + 1))
  "$T" gate "$W/config_inf_threshold" --config "$W/config-inf.json" --out "$W/config_inf_threshold-gate" >"$W/c.out" 2>&1
  [ $? = 1 ] || fail "config_inf_threshold: exit code"
  grep -q "median: not a finite number" "$W/c.out" || fail "config_inf_threshold: reason"
  [ ! -e "$W/config_inf_threshold-gate/gate-summary.json" ] || fail "config_inf_threshold: a summary was written"
}
case_config_out_of_range() {
  for v in '"worst": 0' '"processesPerBackend": 1e10' '"alpha": -1'; do
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); k,v=sys.argv[3].split(": ")
if k.strip("\"") in ("worst",): c["thresholds"]["worst"]=float(v)
else: c[k.strip("\"")]=float(v)
json.dump(c, open(sys.argv[2],"w"))' "$W/config.json" "$W/config-bad.json" "$v"
    n=$((n + 1))
    "$T" gate "$W/base" --config "$W/config-bad.json" --out "$W/bad-gate" >"$W/c.out" 2>&1
    [ $? = 1 ] || fail "config $v: exit code"
    grep -q "out of range" "$W/c.out" || fail "config $v: reason"
  done
}
case_unwritable_out() {
  mutate unwritable_out "pass"
  n=$((n + 1))
  : >"$W/a-file"
  "$T" gate "$W/unwritable_out" --config "$W/config.json" --out "$W/a-file/sub" >"$W/u.out" 2>&1
  [ $? = 1 ] || fail "unwritable_out: exit code"
  grep -q "^gate: \(PASS\|FAIL\|INVALID\)" "$W/u.out" && fail "unwritable_out: a verdict was printed"
  grep -q "could not be written" "$W/u.out" || fail "unwritable_out: reason"
}

# ---- a FIFO where a file is expected: answered at once ----
case_fifo_report() {
  mutate fifo_report 'import os; os.unlink("p22-buildercycle-jit-default.json"); os.mkfifo("p22-buildercycle-jit-default.json")'
  gate fifo_report 1 "p22-buildercycle-jit-default.json: not a readable report: cannot read: not a regular file \(a FIFO\)"
}
case_fifo_pregate() {
  mutate fifo_pregate 'import os; os.mkfifo("quiet-pregate.json")'
  gate fifo_pregate 1 "quiet-pregate.json: cannot read: not a regular file \(a FIFO\)"
}
case_fifo_observation() {
  mutate fifo_observation 'import os, glob; f = sorted(glob.glob("observations/*.json"))[0]; os.unlink(f); os.mkfifo(f)'
  gate fifo_observation 1 "observations/.*: cannot read: not a regular file \(a FIFO\)"
}
case_fifo_config() {
  n=$((n + 1))
  mkfifo "$W/config.fifo"
  timeout 20 "$T" gate "$W/base" --config "$W/config.fifo" --out "$W/fifo-config-gate" >"$W/f.out" 2>&1
  [ $? = 1 ] || fail "fifo_config: exit code (124: it blocked)"
  grep -q "a FIFO" "$W/f.out" || fail "fifo_config: reason"
}
case_symlink_report() {
  mutate symlink_report 'import os; os.rename("p22-buildercycle-jit-default.json", "real.txt"); os.symlink("real.txt", "p22-buildercycle-jit-default.json")'
  gate symlink_report 1 "p22-buildercycle-jit-default.json: not a readable report: cannot read: refused: a symbolic link"
}

cases=("$@")
[ ${#cases[@]} = 0 ] && cases=($(declare -F | awk '$3 ~ /^case_/ { sub("case_", "", $3); print $3 }'))
for c in "${cases[@]}"; do "case_$c"; done
echo "hostile gate inputs: $n checked, $fails failed"
[ $fails = 0 ]
