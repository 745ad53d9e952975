#!/usr/bin/env python3
"""test_gate_sequential.py TANDEM ZIP WORK - the sequential rule in the gate (SEQUENTIAL.md).

On the 2026-11-30 default attempt's runs (3 processes per suite and backend), with one primary
AOT row made borderline (its tandem time x0.94 by report_scale.scale_row, as gate_compare does):
  next       `tandem gate --sequential-next` (what the attempt asks) lists that row's suite and
             backend, and only rows the gate marks borderline; with nothing added yet;
  decided    two processes added for it (look 1, in runs/sequential/sequential.json): the row is
             decided on its 5 processes (median of the 5), gate.md and gate-summary.json say so;
             a row of the same suite that was not borderline is decided on its 3 planned ones;
  budget     a third process in one look, a third look: INVALID (the rule's batch, maxBatches);
  no-reason  processes added to a suite and backend with no borderline row: INVALID;
  unlisted   an added report the record does not name: INVALID (process count);
  hostile    a clearly failing row of the same suite and backend, with added processes where it
             would pass: still FAIL, decided on its planned processes;
  quick      round 1 alone (one process per suite and backend): a row is borderline when its
             threshold lies within the quick band (10%) of its median, and only then.
"""
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from report_scale import scale_row  # noqa: E402

T, ZIP, W = sys.argv[1:4]
ROW = "Async method NextFrame scheduling N=128"     # made borderline
CLEAR = "Async method NextFrame scheduling N=4096"   # made clearly failing (hostile)
fails = []


def fail(msg):
    print("FAIL: " + msg)
    fails.append(msg)


def unpack(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    zipfile.ZipFile(ZIP).extractall(d)
    shutil.rmtree(os.path.join(d, "logs"), ignore_errors=True)
    os.remove(os.path.join(d, "files.sha256"))


def config(path, expected, per_backend=3):
    c = json.loads(subprocess.run([T, "gate", "--print-config"], capture_output=True, text=True, check=True).stdout)
    c["expectedProcesses"] = expected
    c["processesPerBackend"] = per_backend
    for s in c["suites"]:  # the packet predates the cancellation suite
        if s["name"] == "cancellation":
            s["gated"] = False
        s["samples"] = 8
    json.dump(c, open(path, "w"), indent=1)
    return path


def scale(path, factors, jitter=1.0):
    """Every entry x jitter (a new process never repeats another's samples), tandem's rows in
    `factors` x their factor."""
    d = json.load(open(path))
    for r in d["rows"]:
        if not r.get("supported", True) or not r.get("ns"):
            continue
        f = jitter * (factors.get(r["name"], 1.0) if r["subject"] == "tandem" else 1.0)
        if f != 1.0:
            scale_row(r, f)
    json.dump(d, open(path, "w"), indent=1)


def add(runs, src, name, factors, jitter):
    shutil.copy(os.path.join(runs, src), os.path.join(runs, name))
    scale(os.path.join(runs, name), factors, jitter)
    return name


def record(runs, looks):
    os.makedirs(os.path.join(runs, "sequential"), exist_ok=True)
    rec = {"schemaVersion": 1, "kind": "tandem-sequential",
           "looks": [{"look": i + 1, "processes": p} for i, p in enumerate(looks)]}
    json.dump(rec, open(os.path.join(runs, "sequential", "sequential.json"), "w"), indent=1)


def gate(runs, cfg, out):
    p = subprocess.run([T, "gate", runs, "--config", cfg, "--out", out], capture_output=True, text=True)
    try:
        return p.returncode, json.load(open(os.path.join(out, "gate-summary.json")))
    except OSError:
        return p.returncode, {}


def next_rows(runs, cfg):
    p = subprocess.run([T, "gate", runs, "--config", cfg, "--sequential-next"], capture_output=True, text=True)
    return p.returncode, [tuple(l.split("\t")) for l in p.stdout.splitlines()], p.stderr


def line(summary, row, backend="aot", suite="primary"):
    for r in summary.get("rows", []):
        if r["suite"] == suite and r["row"] == row and r["backend"] == backend and r["kind"] != "report-only":
            return r
    return None


def invalid_has(summary, text):
    return any(text in s for s in summary.get("invalid", []))


shutil.rmtree(W, ignore_errors=True)
os.makedirs(W)
base = os.path.join(W, "base")
unpack(base)
scale(os.path.join(base, "p01-primary-aot-r1.json"), {ROW: 0.94})
scale(os.path.join(base, "p12-primary-aot-r2.json"), {ROW: 0.94})
scale(os.path.join(base, "p14-primary-aot-r3.json"), {ROW: 0.94})
cfg22 = config(os.path.join(W, "config22.json"), 22)

# next: the borderline row's suite and backend, and only borderline rows
rc, rows, err = next_rows(base, cfg22)
rc0, s0 = gate(base, cfg22, os.path.join(W, "out-base"))
if rc != 0:
    fail("--sequential-next: exit %d: %s" % (rc, err))
border = {(r["suite"], r["backend"], r["row"], r["peer"]) for r in s0.get("rows", []) if r.get("borderline")}
listed = {(r[0], r[1], r[2], r[3]) for r in rows}
if ("primary", "aot", ROW, "fcontext") not in listed:
    fail("the borderline row is not asked for: %s" % sorted(listed))
if listed != border:
    fail("asked for rows that are not borderline or left borderline ones out: %s vs %s" % (sorted(listed ^ border), ""))
if "sequential" in s0:
    fail("no record, yet the summary has a sequential section")

# decided: two processes for primary aot at look 1, the row decided on all five
dec = os.path.join(W, "decided")
shutil.copytree(base, dec)
added = [add(dec, "p01-primary-aot-r1.json", "p23-primary-aot-s1.json", {ROW: 0.93}, 1.001),
         add(dec, "p12-primary-aot-r2.json", "p24-primary-aot-s1.json", {ROW: 0.93}, 1.002)]
record(dec, [added])
cfg24 = config(os.path.join(W, "config24.json"), 24)
rc, s = gate(dec, cfg24, os.path.join(W, "out-decided"))
L = line(s, ROW)
if s.get("invalid"):
    fail("decided: INVALID: %s" % s.get("invalid"))
if not L or L.get("processesDecided") != 5 or L.get("sequentialAdded") != 2:
    fail("decided: the borderline row: %s" % (L and {k: L.get(k) for k in ("processesDecided", "sequentialAdded")}))
elif abs(statistics.median([p["ratio"] for p in L["processes"]]) - L["median"]) > 1e-6 or len(L["processes"]) != 5:
    fail("decided: the median is not over the five processes: %s" % L)
for r in s.get("rows", []):
    if r["kind"] == "report-only" or r["row"] == ROW and r["backend"] == "aot" and r["suite"] == "primary":
        continue
    if r.get("processesDecided") != 3 or r.get("sequentialAdded") != 0:
        before = line(s0, r["row"], r["backend"], r["suite"])
        if before and before.get("borderline") and r["suite"] == "primary" and r["backend"] == "aot":
            continue   # borderline too: its suite and backend got the same processes
        fail("decided: row %s / %s [%s] not borderline, yet decided on %s processes (+%s)"
             % (r["suite"], r["row"], r["backend"], r.get("processesDecided"), r.get("sequentialAdded")))
        break
md = open(os.path.join(W, "out-decided", "gate.md")).read()
if "## Sequential rule" not in md or "(5 processes, 2 added by the sequential rule" not in md:
    fail("decided: gate.md does not say what the sequential rule added")
if s.get("sequential", {}).get("processesAdded") != 2:
    fail("decided: gate-summary.json sequential: %s" % s.get("sequential"))

# budget: a third process in one look; a third look
over = os.path.join(W, "over-batch")
shutil.copytree(dec, over)
record(over, [added + [add(over, "p14-primary-aot-r3.json", "p25-primary-aot-s1.json", {ROW: 0.93}, 1.003)]])
rc, s = gate(over, config(os.path.join(W, "config25.json"), 25), os.path.join(W, "out-over-batch"))
if rc != 1 or not invalid_has(s, "look 1 has 3 process(es)"):
    fail("a look over the batch: exit %d, %s" % (rc, s.get("invalid")))
looks = os.path.join(W, "over-looks")
shutil.copytree(dec, looks)
extra = [[add(looks, "p14-primary-aot-r3.json", "p%02d-primary-aot-s%d.json" % (25 + k, k + 2), {ROW: 0.93},
              1.004 + k / 1000)] for k in range(2)]
record(looks, [added] + extra)
rc, s = gate(looks, config(os.path.join(W, "config26.json"), 26), os.path.join(W, "out-over-looks"))
if rc != 1 or not invalid_has(s, "3 looks, the rule allows 2"):
    fail("three looks: exit %d, %s" % (rc, s.get("invalid")))

# no-reason: processes for a suite and backend with no borderline row
quiet = [(r["suite"], r["backend"]) for r in s0.get("rows", []) if r["kind"] != "report-only"]
quiet = [g for g in dict.fromkeys(quiet) if not any((g[0], g[1]) == (b[0], b[1]) for b in border)]
if not quiet:
    fail("the fixture has no suite and backend without a borderline row")
else:
    su, be = quiet[0]
    nr = os.path.join(W, "no-reason")
    shutil.copytree(base, nr)
    src = sorted(os.path.basename(f) for f in glob.glob(os.path.join(nr, "p*-%s-%s-r*.json" % (su, be))))
    nadd = [add(nr, src[0], "p23-%s-%s-s1.json" % (su, be), {}, 0.97)]
    record(nr, [nadd])
    rc, s = gate(nr, config(os.path.join(W, "config23.json"), 23), os.path.join(W, "out-no-reason"))
    if rc != 1 or not invalid_has(s, "none of its gated rows was borderline"):
        fail("processes for %s %s with no borderline row: exit %d, %s" % (su, be, rc, s.get("invalid")))

# unlisted: an added report the record does not name
ul = os.path.join(W, "unlisted")
shutil.copytree(dec, ul)
record(ul, [added[:1]])
rc, s = gate(ul, cfg24, os.path.join(W, "out-unlisted"))
if rc != 1 or not invalid_has(s, "process count"):
    fail("an unlisted added report: exit %d, %s" % (rc, s.get("invalid")))

# hostile: a clearly failing row of the same suite and backend stays FAIL on its planned processes
ho = os.path.join(W, "hostile")
shutil.copytree(base, ho)
for f in ("p01-primary-aot-r1.json", "p12-primary-aot-r2.json", "p14-primary-aot-r3.json"):
    scale(os.path.join(ho, f), {CLEAR: 3.0})
hadd = [add(ho, "p01-primary-aot-r1.json", "p23-primary-aot-s1.json", {ROW: 0.93, CLEAR: 0.1}, 1.001),
        add(ho, "p12-primary-aot-r2.json", "p24-primary-aot-s1.json", {ROW: 0.93, CLEAR: 0.1}, 1.002)]
record(ho, [hadd])
rc, s = gate(ho, cfg24, os.path.join(W, "out-hostile"))
C = line(s, CLEAR)
if s.get("invalid") or not C or C["result"] != "FAIL" or C.get("processesDecided") != 3 or C.get("sequentialAdded"):
    fail("hostile: the clearly failing row: %s, invalid %s" % (C and {k: C.get(k) for k in ("result", "median", "processesDecided", "sequentialAdded")}, s.get("invalid")))
if rc != 3:
    fail("hostile: exit %d, expected 3 (FAIL)" % rc)

# quick: one process per suite and backend, the fixed band
qk = os.path.join(W, "quick")
shutil.copytree(base, qk)
for f in glob.glob(os.path.join(qk, "p*-r[23].json")):
    os.remove(f)
cfg10 = config(os.path.join(W, "config10.json"), 10, 1)
rc, rows, err = next_rows(qk, cfg10)
rc2, s = gate(qk, cfg10, os.path.join(W, "out-quick"))
want = set()
for r in s.get("rows", []):
    if r["kind"] == "report-only" or r["result"] == "NA":
        continue
    m, w = r["median"], r["worst"]
    tw = r.get("thresholdWorst")
    if abs(m - r["thresholdMedian"]) <= m * 0.10 or (tw is not None and abs(w - tw) <= w * 0.10):
        want.add((r["suite"], r["backend"], r["row"], r["peer"]))
got = {(r[0], r[1], r[2], r[3]) for r in rows}
if rc != 0 or got != want or not want:
    fail("quick: asked for %d rows, %d within the band (exit %d %s): %s" % (len(got), len(want), rc, err, sorted(got ^ want)[:4]))

print("ok" if not fails else "%d failure(s)" % len(fails))
sys.exit(1 if fails else 0)
