#!/usr/bin/env python3
"""sequential_sim.py - the false-PASS rate of the sequential rule (SEQUENTIAL.md), simulated.

A row whose true median ratio lies at its threshold or beyond it truly fails: how often does
the gate PASS it with the planned processes alone, and how often with the sequential rule
(batches of more processes while the row is borderline, gate_sequential.c)? Per-process
ratios are the true ratio times exp(e), e drawn from a noise model taken from the published
packets (reports/*/gate/gate-summary.json, every gated and sync row's per-process ratios):

  empirical  e resampled from the pooled residuals: each row's log ratios minus their mean,
             scaled by sqrt(n/(n-1)) (the residuals of n values around their own mean are
             that much narrower than the noise); heavy-tailed (busy hosts are in it)
  normal     e ~ N(0, s), s the median over rows of the rows' standard deviation of log ratios

The rule simulated is the gate's: a row is borderline when |median - threshold| <= median x
spread (or the same for the worst ratio), spread = worst/best - 1; with one process, when the
threshold lies within quickBand of the median. Look 0 is the planned processes; a borderline
row gets a batch, up to maxBatches; it is decided at its first look where it is not
borderline, on the processes so far, or on all of them when the batches are spent. PASS:
median <= median threshold and worst <= worst threshold. The process budget of an attempt
is shared by its rows: here every borderline row gets its batches (the rate without a budget
bounds the one with it: a row cut short is decided as at an earlier look, which the check
below covers too).

  python3 tools/gate/sequential_sim.py                       # the table in SEQUENTIAL.md
  python3 tools/gate/sequential_sim.py --check --trials 4000 # exit 1 when the bound fails

--check: for every row kind, model, start (3 processes, 1 process), and true ratio at or
beyond the threshold, the rule's false-PASS rate must not exceed the planned processes'
alone by more than 3 standard errors of the difference (the bound stated in SEQUENTIAL.md).
Seeded: the same arguments print the same numbers.
"""
import argparse
import glob
import json
import math
import os
import random
import statistics
import sys

KINDS = {"gated": (0.95, 1.00), "sync": (1.00, None)}   # thresholds: median, worst (gate_config.c)


def residuals(root):
    """Pooled residuals and the median per-row sd of the published rows' log ratios."""
    res, sds = [], []
    for f in sorted(glob.glob(os.path.join(root, "reports", "*", "gate", "gate-summary.json"))):
        for r in json.load(open(f))["rows"]:
            if r.get("kind") not in ("gated", "sync"):
                continue
            lr = [math.log(p["ratio"]) for p in r.get("processes", []) if p.get("ratio")]
            if len(lr) < 2:
                continue
            m, c = sum(lr) / len(lr), math.sqrt(len(lr) / (len(lr) - 1))
            res += [(x - m) * c for x in lr]
            sds.append(statistics.stdev(lr))
    if not res:
        sys.exit("sequential_sim.py: no gated row with two processes or more under %s/reports" % root)
    return res, statistics.median(sds), len(sds)


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def judge(v, tm, tw, band):
    """(pass, borderline) of one row's per-process ratios, as gate_sequential.c decides."""
    m, w, lo = median(v), max(v), min(v)
    spread = band if len(v) == 1 else (w / lo - 1 if lo > 0 else 0)
    border = abs(m - tm) <= m * spread or (tw is not None and abs(w - tw) <= w * spread)
    return m <= tm and (tw is None or w <= tw), border


def trial(draw, t, tm, tw, n0, batch, looks, band):
    """One row: (passed on the planned processes, passed by the rule, processes the rule used)."""
    v = [t * math.exp(draw()) for _ in range(n0)]
    p0, border = judge(v, tm, tw, band)
    p, k = p0, 0
    while border and k < looks:
        v += [t * math.exp(draw()) for _ in range(batch)]
        k += 1
        p, border = judge(v, tm, tw, band)
    return p0, p, len(v)


def rates(draw, t, tm, tw, n0, batch, looks, band, trials):
    fixed = seq = used = 0
    for _ in range(trials):
        a, b, n = trial(draw, t, tm, tw, n0, batch, looks, band)
        fixed += a
        seq += b
        used += n
    return fixed / trials, seq / trials, used / trials


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")), help="the source tree")
    ap.add_argument("--trials", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--max-batches", type=int, default=2)
    ap.add_argument("--quick-band", type=float, default=0.10)
    ap.add_argument("--check", action="store_true", help="exit 1 when the rule passes a failing row more often")
    o = ap.parse_args()
    res, sd, nrows = residuals(o.root)
    print("noise: %d residuals from %d published gated rows (sd %.4f, median row sd %.4f); %d trials, seed %d"
          % (len(res), nrows, statistics.pstdev(res), sd, o.trials, o.seed))
    print("rule: batches of %d, at most %d, quick band %.2f\n" % (o.batch, o.max_batches, o.quick_band))
    print("| model | row | start | true ratio / threshold | PASS, planned only | PASS, sequential | processes (mean) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    bad = 0
    for model in ("empirical", "normal"):
        for kind, (tm, tw) in KINDS.items():
            for n0 in (3, 1):
                for d in (-0.03, 0.0, 0.01, 0.02, 0.05):
                    rng = random.Random("%d/%s/%s/%d/%g" % (o.seed, model, kind, n0, d))
                    draw = (lambda: rng.choice(res)) if model == "empirical" else (lambda: rng.gauss(0, sd))
                    f, s, u = rates(draw, tm * (1 + d), tm, tw, n0, o.batch, o.max_batches, o.quick_band, o.trials)
                    # the two rates come from the same rows: the difference's error is at most that of two
                    # independent estimates
                    se = math.sqrt((f * (1 - f) + s * (1 - s)) / o.trials)
                    over = d >= 0 and s > f + 3 * se
                    bad += over
                    print("| %s | %s | %d | %+.0f%% | %.4f | %.4f | %.2f |%s" % (model, kind, n0, d * 100, f, s, u,
                          " **over the bound**" if over else ""))
    if o.check:
        print("\ncheck: %s" % ("ok: at and beyond the threshold the rule never passes more rows than the planned "
                               "processes alone" if not bad else "%d case(s) over the bound" % bad))
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
