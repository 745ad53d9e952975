#!/usr/bin/env python3
"""spread_against_peers.py ATTEMPT...

A question for the baseline verdict's time arm (issue 42), asked of attempt folders made
with --baseline; the gate's rule is not changed by it. The time arm's band holds the same
code's layout spread: per side, its highest layout median ns/op over its lowest, each layout
measured in other processes. A host that moves whole processes (scripts/host_noise.py) puts
that movement in the band too, though the ratio current/baseline, taken within each process,
does not feel it. Measured against the subjects built once that share each process (the
peers and the lower bound: their geometric mean of median ns/op), each side's layout medians
lose the process's movement and keep the placement's.

Per attempt it re-applies the time arm's test to the gated rows of matched retention
(processes observed busy left out; every layout's median ratio > 1.02 and > 1 + the band, no
process below 1.00; the band the larger of the ratio's spread over the processes and the two
sides' combined spread, (1 + a)(1 + b) - 1) twice: with the spread of each side's own time,
as the gate does, and with its time against the peers. It prints how many rows each finds
(on an A/A, each is a false alarm) and the rows found the second way. Its first count
reproduces the gate's regressions by time from per-process medians (within the rounding of
the gate's own ratios). With --json it prints instead one JSON object: per attempt, the rows
(suite, row, backend) each way found ("own", "peers") and how many were judged ("rows");
scripts/calibrate.sh records from it how the candidate rule judged each run.
Exit: 0, 2 usage or an attempt that cannot be read (said)."""
import argparse, collections, json, math, os, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checked import baseline_rows, json_object, process_reports, refuser  # noqa: E402


ap = argparse.ArgumentParser(usage=__doc__.split("\n")[0])
ap.add_argument("--json", action="store_true", help="one JSON object: the rows found each way, per attempt")
ap.add_argument("attempts", nargs="+")
a = ap.parse_args()

refuse = refuser("spread_against_peers.py")


def load(path):
    return json_object(path, refuse)


def gated_rows(att):
    return {(r.get("suite"), r.get("row"), r.get("backend")) for r in baseline_rows(att, refuse)[1]}


def processes(att, gated):
    """(suite, row, backend) -> [(layout, ratio, current, baseline, peers)] over quiet processes."""
    out = collections.defaultdict(list)
    for path, d in process_reports(os.path.join(att, "runs"), refuse):
        s, rows = d["settings"], d["rows"]
        if s.get("retention") != "matched":
            continue
        obs = os.path.join(att, "runs", "observations", os.path.basename(path))
        if os.path.isfile(obs) and (load(obs).get("noise") or {}).get("status") == "busy":
            continue
        layout = (s.get("layoutSeed"), s.get("loadOrder"))
        by = collections.defaultdict(dict)
        for r in rows:
            if r.get("supported") is not False:
                by[r["name"]][r["subject"]] = r["medianNsPerOp"]
        for name, subj in by.items():
            key = (d.get("suite"), name, d.get("backend"))
            base = [k for k in subj if k.startswith("tandem@")]
            peers = [v for k, v in subj.items() if k != "tandem" and not k.startswith("tandem@")]
            if key not in gated or "tandem" not in subj or len(base) != 1 or not peers:
                continue
            ref = math.exp(sum(map(math.log, peers)) / len(peers))
            out[key].append((layout, subj["tandem"] / subj[base[0]], subj["tandem"], subj[base[0]], ref))
    return out


def found(ps, against_peers):
    lays = collections.defaultdict(list)
    for p in ps:
        lays[p[0]].append(p)
    if len(lays) < 2:
        return None
    medians = [statistics.median(p[1] for p in v) for v in lays.values()]

    def side_spread(i):
        vals = [statistics.median(p[i] / p[4] if against_peers else p[i] for p in v) for v in lays.values()]
        return max(vals) / min(vals) - 1

    ratios = [p[1] for p in ps]
    band = max(max(ratios) / min(ratios) - 1, (1 + side_spread(2)) * (1 + side_spread(3)) - 1)
    return (min(medians), 1 + band) if min(medians) > max(1.02, 1 + band) and min(ratios) > 1.0 else None


report = {}
for att in a.attempts:
    data = processes(att, gated_rows(att))
    own = [k for k, ps in sorted(data.items()) if found(ps, False)]
    peer = [(k, found(ps, True)) for k, ps in sorted(data.items()) if found(ps, True)]
    report[att] = {"rows": len(data), "own": [list(k) for k in own], "peers": [list(k) for k, _ in peer]}
    if a.json:
        continue
    print(f"{att}: {len(data)} row(s) x backend; regressions by time: {len(own)} with each side's own time "
          f"(the gate's rule), {len(peer)} with its time against the peers")
    for (suite, row, backend), (lo, band) in peer:
        print(f"    {suite} / {row} [{backend}]: lowest layout {lo:.3f} > 1 + band {band:.3f}")
if a.json:
    print(json.dumps(report, indent=1))
