"""The baseline verdict over layouts (issue 42, items 2-3: load orders and seeded layouts), on the real runs of the
hotpaths-18 packet (tandem against tandem@6fe3228, one layout, 15 time "regressions" at
identical or fewer instructions under the one-layout rule) with one thing altered at a time.

Usage: test_gate_layout.py TANDEM PACKET WORK RUNS_ZIP   (PACKET: reports/2026-12-03-hotpaths-18; RUNS_ZIP:
its raw runs, tests/fixtures/raw/2026-12-03-hotpaths-18/runs.zip: a packet commits no raw run)"""
import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from report_scale import scale_row  # noqa: E402

T, PACKET, WORK, RUNS_ZIP = sys.argv[1:5]
BASE = "tandem@6fe3228"
ROW = "Completed get-result"  # primary: instructions identical in both revisions
failures = []


def runs(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    zipfile.ZipFile(RUNS_ZIP).extractall(os.path.join(d, "runs"))
    shutil.copytree(os.path.join(PACKET, "instructions"), os.path.join(d, "instructions"))
    return d


def each_report(d, fn, pattern="p*-r*.json"):
    for f in sorted(glob.glob(os.path.join(d, "runs", pattern))):
        doc = json.load(open(f))
        fn(doc)
        json.dump(doc, open(f, "w"), indent=1)


def second_layout(doc):
    """The r2 processes as --load-reverse writes them: the other load order. Swapping the two
    identical runtimes' entries stands for the placement effect changing sides."""
    doc["settings"]["loadOrder"] = "reverse"
    for e in doc["rows"]:
        if e["subject"] == "tandem":
            e["subject"] = BASE
        elif e["subject"] == BASE:
            e["subject"] = "tandem"


def slower(factor, row=ROW, subjects=("tandem",)):
    def fn(doc):
        for e in doc["rows"]:
            if e["subject"] in subjects and e["name"] == row and e.get("supported", True):
                scale_row(e, factor)
    return fn


def more_instructions(d, factor, row=ROW):
    for f in glob.glob(os.path.join(d, "instructions", "primary-*-instructions.json")):
        doc = json.load(open(f))
        for r in doc["rows"]:
            if r["name"] == row:
                r["subjects"]["tandem"]["irPerOp"] *= factor
        json.dump(doc, open(f, "w"))


def packet_config(**over):
    """The packet's own gate configuration, with every suite the gate knows now but the packet
    predates (cancellation) present and not gated: the packet has no process of it; over:
    top-level keys set (a file of their own)."""
    path = os.path.join(WORK, "packet-config" + "".join(f"-{k}" for k in sorted(over)) + ".json")
    conf = json.load(open(os.path.join(PACKET, "gate", "gate-config.json")))
    conf.update(over)
    now = json.loads(subprocess.run([T, "gate", "--print-config"], stdout=subprocess.PIPE,
                                    text=True, check=True).stdout)
    have = {s["name"] for s in conf["suites"]}
    for suite in now["suites"]:
        if suite["name"] not in have:
            suite["gated"] = False
            conf["suites"].append(suite)
    json.dump(conf, open(path, "w"), indent=1)
    return path


def gate(d, instructions=True, **over):
    cmd = [T, "gate", os.path.join(d, "runs"), "--config", packet_config(**over),
           "--out", os.path.join(d, "out")]
    if instructions:
        cmd += ["--instructions", os.path.join(d, "instructions")]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    s = os.path.join(d, "out", "gate-summary.json")
    b = json.load(open(s))["baseline"] if p.returncode != 1 and os.path.exists(s) else None
    if b:   # the exit carries both verdicts (gate_exit_code): 4 / 5 exactly on a regression
        peers = json.load(open(s))["verdict"]
        want = {"PASS": 0, "FAIL": 3}[peers] if b["verdict"] == "no regression" else {"PASS": 4, "FAIL": 5}[peers]
        expect(f"{os.path.basename(d)}: exit {p.returncode} for the peers {peers}, baseline {b['verdict']}",
               p.returncode == want, f"expected exit {want}")
    return p.returncode, p.stdout, b


def rows(b, row=ROW):
    return [r for r in b["rows"] if r["row"] == row and r["suite"] == "primary"]


def expect(name, cond, why):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + why))
    if not cond:
        failures.append(name)


# 1. the packet as published: one layout; every time "regression" ran the same or fewer
#    instructions: layout, never a regression (it said "regression", 15 rows)
d = runs("one-layout")
rc, out, b = gate(d)
expect("one-layout: no regression", b and b["verdict"] == "no regression" and b["counts"]["layout"] > 0,
       f"rc {rc}, baseline {b and b['verdict']} {b and b['counts']}\n{out}")
lay = [r for r in b["rows"] if r["result"] == "layout"] if b else []
expect("one-layout: layout rows decided by layout, instructions not grown",
       lay and all(r["decidedBy"] == "layout" and r["instructions"] != "regression" and r["layouts"] == 1 for r in lay),
       json.dumps(lay[:2]))
expect("one-layout: the time arm's reach is none (no row in two layouts), said in gate.md",
       b and b["timeReach"]["rows"] == 0 and b["timeReach"]["median"] is None
       and all(r["timeReach"] is None for r in b["rows"])
       and "time decides no row here" in open(os.path.join(d, "out", "gate.md")).read(),
       json.dumps(b and b["timeReach"]))

# 2. two layouts (the r2 processes reversed): still no regression; the spread is reported
d = runs("two-layouts")
each_report(d, second_layout, "p*-r2.json")
rc, out, b = gate(d)
expect("two-layouts: no regression", b and b["verdict"] == "no regression", f"{b and b['counts']}\n{out}")
expect("two-layouts: every gated row read over 2 layouts with its spread",
       b and all(r["layouts"] == 2 and r["layoutSpread"] is not None for r in b["rows"] if r["result"] != "NA"),
       "a row without 2 layouts")
md = open(os.path.join(d, "out", "gate.md")).read()
expect("two-layouts: gate.md says the layout spread and which arm decided", "layout spread" in md and "decided by" in md,
       "missing columns")
reach = sorted(r["timeReach"] for r in b["rows"] if r["timeReach"] is not None) if b else []
judged = [r for r in b["rows"] if r["layouts"] == 2 and r["time"] not in ("NA", "busy")] if b else []
mid = (reach[len(reach) // 2] + reach[(len(reach) - 1) // 2]) / 2 if reach else None
expect("two-layouts: each row's time reach is max(1.02, 1 + its band), the band at least the same code's spread",
       judged and len(reach) == len(judged)
       and all(r["timeReach"] >= max(1.02, 1 + r["sameCodeLayoutSpread"]) - 1e-6 for r in judged),
       json.dumps([(r["row"], r["timeReach"], r["sameCodeLayoutSpread"]) for r in judged][:4]))
expect("two-layouts: the summary's reach is the rows' median and range, and gate.md says it",
       b and reach and b["timeReach"]["rows"] == len(reach) and abs(b["timeReach"]["median"] - mid) < 1e-5
       and b["timeReach"]["lowest"] == reach[0] and b["timeReach"]["highest"] == reach[-1]
       and f"grow beyond x{b['timeReach']['median']:.2f} in every layout" in md,
       json.dumps(b and b["timeReach"]))

# 3. a real time regression (+25% on one row, every process, both layouts), identical
#    instructions: regression, decided by time; with no instruction arm as well
d = runs("slower")
each_report(d, second_layout, "p*-r2.json")
each_report(d, slower(1.25))
for arm in (True, False):
    rc, out, b = gate(d, instructions=arm)
    r = rows(b) if b else []
    expect(f"slower (instructions arm {arm}): regression decided by time",
           b and b["verdict"] == "regression" and r and all(x["result"] == "regression" and x["decidedBy"] == "time"
                                                            for x in r),
           f"{b and b['counts']} {json.dumps(r)[:600]}")
    expect(f"slower (instructions arm {arm}): every layout beyond the row's time reach",
           r and all(x["layoutMedianLow"] > x["timeReach"] for x in r), json.dumps(r)[:400])

# 3b. the same +25% measured in one layout only (every process in the same layout, as a
#     --quick attempt's one round), no instruction arm: one layout gives no spread between
#     layouts to exceed, so time cannot tell code from placement: layout, never a regression
d = runs("slower-one-layout")
each_report(d, slower(1.25))
rc, out, b = gate(d, instructions=False)
r = rows(b) if b else []
expect("slower in one layout, no instruction arm: layout, not a regression",
       b and b["verdict"] == "no regression" and r and all(x["result"] == "layout" and x["layouts"] == 1 for x in r),
       f"{b and b['counts']} {json.dumps(r)[:600]}")

# 4. instructions +3% on one row, time unchanged: regression decided by instructions
d = runs("instructions")
each_report(d, second_layout, "p*-r2.json")
more_instructions(d, 1.03)
rc, out, b = gate(d)
r = rows(b) if b else []
expect("instructions +3%: regression decided by instructions",
       b and b["verdict"] == "regression" and r and all(x["result"] == "regression" and "instructions" in x["decidedBy"]
                                                        for x in r),
       json.dumps(r)[:600])
expect("instructions +3%: only that row", b and all(x["row"] == ROW for x in b["regressions"]),
       json.dumps([x["row"] for x in b["regressions"]]) if b else "")

# 5. the same +25%, every process observed busy: the time arm cannot decide ("busy"), never
#    a regression; instructions unchanged decide the row
d = runs("slower-busy")
each_report(d, second_layout, "p*-r2.json")
each_report(d, slower(1.25))
for f in glob.glob(os.path.join(d, "runs", "observations", "*.json")):
    o = json.load(open(f))
    o["noise"]["status"], o["noise"]["otherCpuPercent"] = "busy", 120.0
    json.dump(o, open(f, "w"))
rc, out, b = gate(d)
r = rows(b) if b else []
expect("slower on busy processes: busy, not a regression",
       b and b["verdict"] == "no regression" and b["counts"]["busy"] >= len(r) and r
       and all(x["result"] == "busy" and x["decidedBy"] == "busy host" for x in r),
       f"{b and b['counts']} {json.dumps(r)[:600]}")

# 6. a load order that is neither: the report is refused
d = runs("bad-order")
each_report(d, lambda doc: doc["settings"].__setitem__("loadOrder", "sideways"), "p01-*.json")
rc, out, b = gate(d)
expect("loadOrder sideways: INVALID", rc == 1 and "loadOrder" in out, f"rc {rc}\n{out[-400:]}")

# 7. seeded layouts (tandem attempt --layouts 2): r2 runs both sides built with a layout seed.
#    The current runtime 30% slower in every process: a regression while the same code
#    times alike in both layouts (the packet's own spread between them is up to 9% a side
#    on AOT, 17% both sides combined); layout when the seeded layout alone moves the same
#    code by more (both sides 35% slower in r2, the ratio unchanged: 1.15x and 1.6x are
#    within both sides' spreads combined); a regression again when the change is beyond it
#    (2.5x).
def seeded(doc):
    """An r2 process of a seeded layout: its own AOT build (build id), its seed in the report."""
    second_layout(doc)
    doc["settings"]["layoutSeed"] = 4503599627370497
    doc["buildId"] = "0" * 63 + "7"


for factor, code, want in ((1.30, 1.0, "regression"), (1.15, 1.35, "layout"), (1.60, 1.35, "layout"), (2.5, 1.35, "regression")):
    d = runs(f"seeded-{factor}-{code}")
    each_report(d, seeded, "p*-r2.json")
    each_report(d, slower(code, subjects=("tandem", BASE)), "p*-r2.json")
    each_report(d, slower(factor))
    rc, out, b = gate(d, instructions=False)
    r = rows(b) if b else []
    expect(f"seeded layouts, current x{factor}, same code x{code} in one layout: {want}",
           b and r and all(x["result"] == want and x["layouts"] == 2 and x["sameCodeLayoutSpread"] is not None
                           and (want != "layout" or x["sameCodeLayoutSpread"] >= x["layoutMedianLow"] - 1) for x in r),
           f"{b and b['counts']} {[(x['backend'], x['result'], x['layoutMedianLow'], x['sameCodeLayoutSpread']) for x in r]}")
md = open(os.path.join(d, "out", "gate.md")).read()
expect("seeded layouts: gate.md has the same code's layout spread beside the ratio", "same code's layout spread" in md,
       "missing column")

# 8. a layout seed that is not an integer: the report is refused; two builds in one layout
#    seed are still mixed builds
d = runs("mixed-in-seed")
each_report(d, lambda doc: doc.__setitem__("buildId", "0" * 63 + "8"), "p01-*.json")
rc, out, b = gate(d)
expect("two build ids in one layout seed: INVALID", rc == 1 and "mixed build id" in out, f"rc {rc}\n{out[-400:]}")
d = runs("bad-seed")
each_report(d, lambda doc: doc["settings"].__setitem__("layoutSeed", -3), "p01-*.json")
rc, out, b = gate(d)
expect("layoutSeed -3: INVALID", rc == 1 and "layoutSeed" in out, f"rc {rc}\n{out[-400:]}")

# 9. the instruction arm asked for (--instructions) but one summary missing, as when the arm
#    fails part way (a busy host once failed it under callgrind, 2026-12-07): the rows without
#    counts would be judged by time alone, which cannot see a small change, so the baseline is
#    "not judged" (exit 1), never "no regression"; a regression either arm finds still stands
def judge_raw(d):
    p = subprocess.run([T, "gate", os.path.join(d, "runs"), "--config", packet_config(), "--out",
                        os.path.join(d, "out"), "--instructions", os.path.join(d, "instructions")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    s = os.path.join(d, "out", "gate-summary.json")
    return p.returncode, p.stdout, json.load(open(s)) if os.path.exists(s) else None


d = runs("instructions-missing")
each_report(d, second_layout, "p*-r2.json")
os.remove(os.path.join(d, "instructions", "throughput-jit-instructions.json"))
rc, out, summ = judge_raw(d)
b = summ and summ["baseline"]
miss = [r for r in b["rows"] if r["instructions"] == "missing"] if b else []
expect("one instruction summary missing: not judged, exit 1",
       rc == 1 and b and b["verdict"] == "not judged" and b["counts"]["instructionsMissing"] == len(miss) > 0,
       f"rc {rc}, {b and b['verdict']} {b and b['counts']}\n{out[-600:]}")
expect("one instruction summary missing: exactly the throughput jit rows lack counts",
       miss and all(r["suite"] == "throughput" and r["backend"] == "jit" for r in miss), json.dumps(miss[:2]))
md = open(os.path.join(d, "out", "gate.md")).read() if b else ""
expect("one instruction summary missing: gate.md says not judged and names the first row",
       "## Against the baseline revision: not judged" in md and "throughput / " in md, md[:300])
d = runs("instructions-missing-regression")
each_report(d, second_layout, "p*-r2.json")
os.remove(os.path.join(d, "instructions", "throughput-jit-instructions.json"))
more_instructions(d, 1.03)
rc, out, summ = judge_raw(d)
b = summ and summ["baseline"]
expect("one summary missing, +3% instructions on a counted row: still a regression (exit 4 or 5)",
       rc in (4, 5) and b and b["verdict"] == "regression", f"rc {rc}, {b and b['verdict']}\n{out[-400:]}")

# 10. a host that moves whole processes: every subject of the seeded layout's processes 1.6x
#     slower (the second host of the calibration packet moved processes by tens of percent).
#     Each side's own time then spreads 60% between layouts, so a real 1.3x reads "layout";
#     measured against the subjects built once in each process ("baselineSameCodeSpread":
#     "peers"), the movement cancels and 1.3x is a regression, while the same code (1.0x) is
#     not one either way.
def host_moves(factor):
    def fn(doc):
        for e in doc["rows"]:
            if e.get("supported", True):
                scale_row(e, factor)
    return fn


spreads = {}
for factor, spread, want, moved in ((1.30, "own", "layout", 1.6), (1.30, "peers", "regression", 1.6),
                                    (1.0, "own", "no regression", 1.6), (1.0, "peers", "no regression", 1.6),
                                    (1.0, "peers", "no regression", 1.0)):
    d = runs(f"host-moves-{moved}-{factor}-{spread}")
    each_report(d, seeded, "p*-r2.json")
    each_report(d, host_moves(moved), "p*-r2.json")
    each_report(d, slower(factor))
    rc, out, b = gate(d, instructions=False, baselineSameCodeSpread=spread)
    r = rows(b) if b else []
    expect(f"a host that moves the seeded layout's processes x{moved}, current x{factor}, spread of {spread} time: {want}",
           b and r and b["sameCodeSpread"] == spread and all(x["result"] == want and x["layouts"] == 2
                                                             and x["sameCodeSpreadOf"] == spread for x in r),
           f"{b and b['counts']} {[(x['backend'], x['result'], x['layoutMedianLow'], x['sameCodeLayoutSpread']) for x in r]}")
    if b and factor == 1.0:
        spreads[(spread, moved)] = {(x["suite"], x["row"], x["backend"]): x["sameCodeLayoutSpread"] for x in b["rows"]
                                    if x["sameCodeLayoutSpread"] is not None}
# against the peers the host's movement cancels exactly: every row's same-code spread is the
# one measured without it; by each side's own time it is not
still, moved = spreads.get(("peers", 1.0), {}), spreads.get(("peers", 1.6), {})
expect("against the peers, a host moving a layout's processes x1.6 leaves every row's same-code spread as it was",
       still and still.keys() == moved.keys() and all(abs(still[k] - moved[k]) < 1e-5 for k in still),
       json.dumps([(k, still[k], moved.get(k)) for k in still if abs(still[k] - moved.get(k, 9)) >= 1e-5][:3]))
own = spreads.get(("own", 1.6), {})
expect("by each side's own time the same movement widens the same-code spread beyond 50% on every row",
       own and all(v > 0.5 for v in own.values()), json.dumps(sorted(own.values())[:3]))
md = open(os.path.join(d, "out", "gate.md")).read()
expect("peers: gate.md says the spread is measured against the subjects built once",
       "baselineSameCodeSpread \"peers\"" in md, "missing")
d = runs("spread-nearby")
rc, out, b = gate(d, baselineSameCodeSpread="nearby")
expect("baselineSameCodeSpread 'nearby': refused, the field named", rc == 1 and "baselineSameCodeSpread" in out,
       f"rc {rc}\n{out[-400:]}")

print(f"gate layout: {'FAIL ' + ', '.join(failures) if failures else 'all passed'}")
sys.exit(1 if failures else 0)
