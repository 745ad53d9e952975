#!/usr/bin/env python3
"""host_noise.py [--markdown] RUNS...

How much a host moves whole processes (issue 42): the time arm's band on the baseline
verdict is the larger of a row's process spread and the same code's layout spread, and each
side's layout medians come from different processes, so a host on which one process runs
everything slower than the next widens that band for every row. RUNS: attempt folders (their
runs/) or folders of process reports (p*.json, as a packet's runs.zip holds). Per suite,
retention, backend and subject: the processes, the median over rows of the spread of the row's
per-process median ns/op (highest / lowest - 1: for a subject built once, such as a peer or
the lower bound, that is the host's and the process's doing, not the code's), and the
median over rows and processes of the within-process coefficient of variation of the
samples. Prints one line a subject (--markdown: a table). Exit: 0, 2 usage or a report that
cannot be read (said)."""
import argparse, math, os, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checked import positive, process_reports, refuser  # noqa: E402


ap = argparse.ArgumentParser(usage=__doc__.split("\n")[0])
ap.add_argument("runs", nargs="+")
ap.add_argument("--markdown", action="store_true")
a = ap.parse_args()

refuse = refuser("host_noise.py")

# (suite, retention, backend, subject) -> row -> [per-process median ns/op]; and the samples' CVs
medians, cvs, procs = {}, {}, {}
for folder in a.runs:
    for path, d in process_reports(folder, refuse):
        suite, backend, rows = d["suite"], d["backend"], d["rows"]
        retention = d["settings"].get("retention", "matched")
        if not isinstance(retention, str):
            refuse(f"{path}: settings.retention is not a string")
        for r in rows:
            if r.get("supported") is False:
                continue
            m = r["medianNsPerOp"]
            key = (suite, retention, backend, r["subject"])
            medians.setdefault(key, {}).setdefault(r["name"], []).append(m)
            procs.setdefault(key, set()).add((folder, os.path.basename(path)))
            per_op = []
            for s in r.get("sampleRecords") or []:
                ns, ops, ctl = s.get("ns"), s.get("ops"), s.get("controlNs", 0)
                if not (positive(ns) and positive(ops)) or not (ctl == 0 or positive(ctl)):
                    refuse(f"{path}: row '{r['name']}' subject '{r['subject']}': a sample's ns / ops / "
                           "controlNs is not a positive number")
                per_op.append((ns - ctl) / ops)
            if len(per_op) >= 2 and statistics.mean(per_op) > 0:
                cvs.setdefault(key, []).append(statistics.pstdev(per_op) / statistics.mean(per_op))

if a.markdown:
    print("| suite | retention | backend | subject | processes | rows | spread across processes (median row) "
          "| sample CV (median) |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: |")
for key in sorted(medians):
    spreads = [max(v) / min(v) - 1 for v in medians[key].values() if len(v) >= 2]
    if not spreads:
        continue
    sp, cv = statistics.median(spreads), statistics.median(cvs.get(key, [math.nan]))
    suite, retention, backend, subject = key
    if a.markdown:
        print(f"| {suite} | {retention} | {backend} | {subject} | {len(procs[key])} | {len(spreads)} | {sp:.1%} | {cv:.1%} |")
    else:
        print(f"{suite:16s} {retention:8s} {backend:4s} {subject:16s} processes {len(procs[key]):3d} rows {len(spreads):3d}  "
              f"spread {sp:6.1%}  cv {cv:6.1%}")
