#!/usr/bin/env python3
"""check_report.py REPORT SUITE BACKEND SAMPLES: validity of one bench report (SUITES.md).
Complete and validated, the row set and gated rows of the suite for every subject,
sample counts, and the arithmetic of every row recomputed from its raw samples.
Long samples: every timed sample is at least 1 ms (MIN_SAMPLE_NS), with its segments and
units (repetitions) stated, and the clock figures (CLOCK_MONOTONIC, measured read cost and
granularity) present, each row's clockShare recomputed (segments x read cost / ns).
Timings are otherwise never judged."""
import json, sys

SUBJECTS = ["tandem", "callback", "fcontext", "ucontext"]
MIN_SAMPLE_NS = 1000000      # players/include/tandem_player.h TD_PLAYER_MIN_SAMPLE_NS
SHARE_TARGET = 0.01

def primary_rows():
    rows = {"Completed get-result": 1, "FromResult<int> get-result": 1,
            "Async method completed get-result": 1, "Async method completed<int> get-result": 1,
            "empty-loop control": 0}
    for flow in (0, 1):
        for wl in (["NextFrame"] if not flow else []) + ["Async method NextFrame", "Async method<int> NextFrame"]:
            for n in (128, 4096):
                for ph in ("scheduling", "get-result"):
                    rows["%s %s N=%d%s" % (wl, ph, n, " flow on" if flow else "")] = 0 if flow else 1
    return rows

def bl_rows():
    rows = {}
    for flow in ("off", "on"):
        for t in ("untyped", "typed"):
            for s in (1, 4):
                for n in (1, 128, 4096):
                    rows["Lifecycle %s suspensions=%d N=%d flow %s" % (t, s, n, flow)] = int(flow == "off" and n >= 128)
                    rows["Resumption %s suspensions=%d N=%d flow %s" % (t, s, n, flow)] = 0
    return rows

def cancel_rows():
    rows = {}
    for shape in ("side-by-side", "nested"):
        for t in ("untyped", "typed"):
            for n in (1, 100, 500, 4096):
                rows["Cancel %s %s N=%d" % (shape, t, n)] = int(n > 1)
                rows["Complete %s %s N=%d" % (shape, t, n)] = 0
    rows["Screen transition N=500 cancelling frame"] = 1
    rows["Race per frame leaf-wait loser"] = 0
    rows["Race per frame async-method loser"] = 0
    return rows

# cancellation: the Cancel and Race rows state their control (the same group completed
# normally; idle frames) beside their time, never subtracted, one per sample
STATED_CONTROL = {"cancellation": ("Cancel ", "Race ")}

EXPECTED = {
    "primary": (primary_rows(), 24, 16),
    "builderlifecycle": (bl_rows(), 48, 8),
    "throughput": ({"nextframe N=1024": 1, "nextframe N=4096": 1, "yield N=1024": 1, "yield N=4096": 1,
                    "nextframe typed N=1024": 1}, 5, 5),
    "whenany": ({"WhenAny %s inputs=%d" % (t, i): 0 for t in ("untyped", "typed") for i in (2, 16, 32)}, 6, 0),
    "buildercycle": ({"Cycle scheduling N=128": 0, "Cycle gate-completion N=128": 0,
                      "Cycle consumption N=128": 0}, 3, 0),
    "cancellation": (cancel_rows(), 35, 13),
}

errors = []
def err(msg):
    errors.append(msg)

def num(v, what):
    if isinstance(v, str):
        if not v.lstrip("-").isdigit():
            err("%s: %r is not an integer string" % (what, v))
            return 0
        if abs(int(v)) <= 2 ** 53:
            err("%s: %s written as a string below 2^53" % (what, v))
        return int(v)
    if not isinstance(v, (int, float)) or (isinstance(v, float) and v != int(v)):
        err("%s: %r is not an integer" % (what, v))
        return 0
    return int(v)

def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))

def main():
    path, suite, backend, samples = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    d = json.load(open(path))
    for k in ("schemaVersion", "suite", "backend", "buildId", "subjects", "completed", "failure", "settings",
              "environment", "rows"):
        if k not in d:
            err("missing %s" % k)
    if errors:
        return
    if d["suite"] != suite or d["backend"] != backend:
        err("suite/backend %s/%s, expected %s/%s" % (d["suite"], d["backend"], suite, backend))
    if d["completed"] is not True or d["failure"] is not None:
        err("not completed: %s" % json.dumps(d["failure"]))
    if not d["buildId"] or d["buildId"].startswith("unverified"):
        err("build id %r" % d["buildId"])
    for k in ("retention", "flow"):
        if k not in d["settings"]:
            err("settings.%s missing" % k)
    for k in ("host", "cpu", "compiler", "optimisationFlags"):
        if k not in d["environment"]:
            err("environment.%s missing" % k)
    clock = d.get("clock")
    cost = None
    if not isinstance(clock, dict):
        err("no clock object")
    else:
        if clock.get("name") != "CLOCK_MONOTONIC":
            err("clock.name %r" % clock.get("name"))
        for k in ("readCostNs", "granularityNs", "emptySegmentNs"):
            v = clock.get(k)
            if not isinstance(v, (int, float)) or not v > 0:
                err("clock.%s %r is not a positive number" % (k, v))
        if clock.get("minSampleTargetNs") != MIN_SAMPLE_NS or clock.get("samplesUnderTarget") != 0:
            err("clock: target %r, %r samples under it" % (clock.get("minSampleTargetNs"), clock.get("samplesUnderTarget")))
        cost = clock.get("readCostNs")
    names = [s["name"] for s in d["subjects"]]
    if sorted(names) != sorted(SUBJECTS):
        err("subjects %s" % names)
    want, nmetrics, ngated = EXPECTED[suite]
    if sum(1 for v in want if not v.startswith("empty-loop")) != nmetrics or sum(want.values()) != ngated:
        err("checker table inconsistent")
    for subj in SUBJECTS:
        rows = {r["name"]: r for r in d["rows"] if r["subject"] == subj}
        if set(rows) != set(want):
            err("%s: rows differ: missing %s, extra %s" % (subj, sorted(set(want) - set(rows)),
                                                            sorted(set(rows) - set(want))))
        supported = 0
        for name, r in rows.items():
            what = "%s/%s" % (subj, name)
            if not r["supported"]:
                if not r.get("reason"):
                    err("%s: NA without a reason" % what)
                continue
            supported += 1
            if name in want and bool(r["gated"]) != bool(want[name]):
                err("%s: gated %s, expected %s" % (what, r["gated"], bool(want[name])))
            ns = [num(v, what + " ns") for v in r["ns"]]
            ops = [num(v, what + " ops") for v in r["ops"]]
            allocs = [num(v, what + " allocs") for v in r["allocs"]]
            bts = [num(v, what + " allocBytes") for v in r["allocBytes"]]
            ctrl = [num(v, what + " controlNs") for v in r["controlNs"]]
            ret = [num(v, what + " retained") for v in r["retained"]]
            if not (len(ns) == len(ops) == len(allocs) == len(bts) == len(ctrl) == len(ret) == samples
                    == r["sampleCount"]):
                err("%s: %d samples, expected %d" % (what, len(ns), samples))
                continue
            if any(o <= 0 for o in ops) or any(t <= 0 for t in ns):
                err("%s: a sample with no ops or no time" % what)
                continue
            sub = r["controlSubtracted"]
            if name.startswith(STATED_CONTROL.get(suite, ())) and (sub or any(x <= 0 for x in ctrl)):
                err("%s: controlSubtracted %s, controlNs %s: a stated, unsubtracted control expected" % (what, sub, ctrl))
            c = [x if sub else 0 for x in ctrl]
            mean = (sum(ns) - sum(c)) / sum(ops)
            per = sorted((ns[i] - c[i]) / ops[i] for i in range(samples))
            med = per[samples // 2] if samples % 2 else (per[samples // 2 - 1] + per[samples // 2]) / 2
            if not close(mean, r["nsPerOp"]):
                err("%s: nsPerOp %s, samples give %s" % (what, r["nsPerOp"], mean))
            if not close(med, r["medianNsPerOp"]):
                err("%s: medianNsPerOp %s, samples give %s" % (what, r["medianNsPerOp"], med))
            if not close(sum(allocs) / sum(ops), r["allocsPerOp"]):
                err("%s: allocsPerOp %s" % (what, r["allocsPerOp"]))
            if not close(sum(bts) / sum(ops), r["allocBytesPerOp"]):
                err("%s: allocBytesPerOp %s" % (what, r["allocBytesPerOp"]))
            if num(r["retainedBytes"], what) != max(ret):
                err("%s: retainedBytes %s, worst sample %s" % (what, r["retainedBytes"], max(ret)))
            if r["opsPerSample"] != min(ops):
                err("%s: opsPerSample %s, smallest sample %s" % (what, r["opsPerSample"], min(ops)))
            # long samples: each sample >= 1 ms, its segments and units stated
            short = [t for t in ns if t < MIN_SAMPLE_NS]
            if short:
                err("%s: %d sample(s) under 1 ms (shortest %d ns)" % (what, len(short), min(short)))
            if num(r.get("minSampleNs", -1), what + " minSampleNs") != min(ns):
                err("%s: minSampleNs %s, samples give %s" % (what, r.get("minSampleNs"), min(ns)))
            segs = [num(v, what + " segments") for v in r.get("segments", [])]
            units = [num(v, what + " units") for v in r.get("units", [])]
            if len(segs) != samples or len(units) != samples:
                err("%s: %d segments, %d units, expected %d of each" % (what, len(segs), len(units), samples))
                continue
            if any(u < 1 for u in units) or any(s < u for s, u in zip(segs, units)):
                err("%s: units %s, segments %s: every unit times at least one segment" % (what, units, segs))
            recs = r.get("sampleRecords", [])
            if [x.get("segments") for x in recs] != segs or [x.get("units") for x in recs] != units:
                err("%s: sampleRecords' segments/units differ from the arrays" % what)
            if cost:
                shares = [s * cost / t for s, t in zip(segs, ns)]
                got = r.get("clockShares", [])
                if len(got) != samples or not all(close(a, b) for a, b in zip(shares, got)):
                    err("%s: clockShares %s, samples give %s" % (what, got, shares))
                share = max(shares)
                if not close(share, r.get("clockShare", -1)):
                    err("%s: clockShare %s, samples give %s" % (what, r.get("clockShare"), share))
                if r.get("clockShareOver") is not (share > SHARE_TARGET):
                    err("%s: clockShareOver %s with share %.4f" % (what, r.get("clockShareOver"), share))
        if subj in ("tandem", "callback") and supported != len(want):
            err("%s: %d of %d rows supported" % (subj, supported, len(want)))

if __name__ == "__main__":
    main()
    if errors:
        for e in errors[:30]:
            print("check_report: " + e, file=sys.stderr)
        print("check_report: %s INVALID (%d problems)" % (sys.argv[1], len(errors)))
        sys.exit(1)
    print("check_report: %s valid" % sys.argv[1])
