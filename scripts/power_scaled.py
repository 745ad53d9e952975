#!/usr/bin/env python3
"""power_scaled.py - the time arm's power, estimated from recorded A/A attempts.

    scripts/power_scaled.py [--tandem build/tandem] [--factors 1.05,1.10,...] [--work DIR]
                            [--out FILE.md] ATTEMPT [ATTEMPT ...]

Each ATTEMPT is the folder of a `tandem attempt --baseline HEAD` run (an A/A: the current
runtime and its own commit as the baseline, in K layouts). For each factor f, every process
report of its runs/ is copied with the current runtime's rows made f times slower (per
sample: the timed nanoseconds minus the subtracted control, times f; the per-op
statistics recomputed, so the copy passes the gate's arithmetic checks), and the copy is
judged by `tandem gate` with the attempt's own configuration and without the instruction
arm: the time arm decides alone. Processes the attempt's sequential rule added are left out
(they were added for the rows borderline unscaled; the gate checks that record): the copy
is judged on the planned processes. A row is *found* at f when the baseline verdict names it a
regression decided by time. The output gives, per gated row and backend, how many attempts
found it at each f and the smallest f found in at least 19 of 20 (the rate issue 42 asks),
then per suite and backend the median of those smallest factors.

What this measures and what it does not: the noise is real (each attempt's own processes,
layouts and spreads), the slowdown is synthetic (uniform, in every process and sample of
the current side). A real code change also moves code, which this does not. The seeded
patch in tests/calibration/ measured with the time arm alone is `scripts/calibrate.sh
--only power`.

Exit: 0 done, 1 a gate run that failed or judged no baseline row (said), 2 usage.
"""
import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from report_scale import scale_row  # noqa: E402


def fail_usage(msg):
    print(f"power_scaled.py: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_factors(text):
    out = []
    for t in text.split(","):
        try:
            f = float(t)
        except ValueError:
            fail_usage(f"--factors: '{t}' is not a number")
        if not math.isfinite(f) or not 1.0 <= f <= 4.0:
            fail_usage(f"--factors: {t} is outside 1.0..4.0")
        out.append(f)
    return sorted(set(out))


def scaled_copy(attempt, subject, f, dest):
    """The scaled runs in dest/runs and their configuration, dest/gate-config.json. True when
    every process of the attempt was kept (no sequential process left out)."""
    runs = os.path.join(attempt, "runs")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(runs, os.path.join(dest, "runs"), ignore=shutil.ignore_patterns("logs", "files.sha256", "*.zip"))
    q = os.path.join(attempt, "quiet-pregate.json")
    if os.path.isfile(q):
        shutil.copy(q, dest)
    cfg = json.load(open(os.path.join(attempt, "gate", "gate-config.json")))
    # The sequential rule's processes go: they were added for rows borderline at f = 1, and
    # the gate checks that record against the rows it sees (scaled, they may not be). Judged
    # on the planned processes only: less data than the attempt had, so the power is not
    # overstated.
    seq = os.path.join(dest, "runs", "sequential", "sequential.json")
    added = []
    if os.path.isfile(seq):
        added = [p for look in json.load(open(seq)).get("looks", []) for p in look.get("processes", [])]
        for p in added:
            for where in (os.path.join(dest, "runs", p), os.path.join(dest, "runs", "observations", p)):
                if os.path.isfile(where):
                    os.remove(where)
        shutil.rmtree(os.path.dirname(seq))
        cfg["expectedProcesses"] -= len(added)
    json.dump(cfg, open(os.path.join(dest, "gate-config.json"), "w"))
    for p in glob.glob(os.path.join(dest, "runs", "p*.json")):
        d = json.load(open(p))
        for r in d.get("rows", []):
            if r.get("subject") == subject and r.get("supported", True) and r.get("ns"):
                scale_row(r, f)
        json.dump(d, open(p, "w"))
    return not added


def judge(tandem, attempt, dest):
    cfg = os.path.join(dest, "gate-config.json")
    out = os.path.join(dest, "gate")
    p = subprocess.run([tandem, "gate", os.path.join(dest, "runs"), "--config", cfg, "--out", out, "--quiet"],
                       capture_output=True, text=True)
    try:
        s = json.load(open(os.path.join(out, "gate-summary.json")))
    except (OSError, ValueError) as e:
        raise RuntimeError(f"{attempt}: gate exit {p.returncode}, no summary ({e}): {p.stderr.strip()[-400:]}")
    b = s.get("baseline") or {}
    rows = b.get("rows") or []
    if not rows:
        raise RuntimeError(f"{attempt}: the gate judged no baseline row (exit {p.returncode}; invalid: "
                           f"{s.get('invalid')})")
    found = {(r["suite"], r["row"], r["backend"]) for r in rows
             if r.get("result") == "regression" and "time" in r.get("decidedBy", "")}
    results = {(r["suite"], r["row"], r["backend"]): r.get("result") for r in rows}
    medians = {(r["suite"], r["row"], r["backend"]): r.get("median") for r in rows}
    return found, results, medians, s.get("invalid") or []


def check_unscaled(attempt, results):
    """At f = 1 with every process kept, the copy must be judged as the attempt was (rows
    whose instructions were the same on both sides: the instruction arm had no say there):
    the script's own check that copying and re-judging changes nothing but the factor."""
    own = json.load(open(os.path.join(attempt, "gate", "gate-summary.json"))).get("baseline") or {}
    for r in own.get("rows") or []:
        k = (r["suite"], r["row"], r["backend"])
        if r.get("instructions", "same") == "same" and results.get(k) != r.get("result"):
            return f"{' / '.join(k)}: the attempt said '{r.get('result')}', the unscaled copy '{results.get(k)}'"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tandem", default="build/tandem")
    ap.add_argument("--factors", default="1.00,1.05,1.10,1.15,1.20,1.30,1.40,1.60")
    ap.add_argument("--work", default="build/power-scaled")
    ap.add_argument("--out", help="also write the Markdown here")
    ap.add_argument("attempts", nargs="+")
    a = ap.parse_args()
    factors = parse_factors(a.factors + ",1.0")   # f = 1 always: the reference of the checks
    if not (os.path.isfile(a.tandem) and os.access(a.tandem, os.X_OK)):
        fail_usage(f"--tandem {a.tandem}: not an executable file (make tool)")
    subject = None
    for att in a.attempts:
        cfg = os.path.join(att, "gate", "gate-config.json")
        if not os.path.isdir(os.path.join(att, "runs")) or not os.path.isfile(cfg):
            fail_usage(f"{att}: not an attempt folder (no runs/ or gate/gate-config.json)")
        s = json.load(open(cfg)).get("subject")
        if not isinstance(s, str) or not s:
            fail_usage(f"{cfg}: field 'subject': missing")
        if subject and s != subject:
            fail_usage(f"{cfg}: subject '{s}', the others' '{subject}'")
        subject = s
    found = {}   # (suite, row, backend) -> {f: count}
    seen = set()
    bad = 0
    for i, att in enumerate(a.attempts):
        unscaled = {}
        for f in factors:   # 1.0 first (sorted): the reference
            dest = os.path.join(a.work, f"{i + 1}-{f:.2f}")
            complete = scaled_copy(att, subject, f, dest)
            try:
                hit, rows, medians, invalid = judge(a.tandem, att, dest)
            except RuntimeError as e:
                print(f"power_scaled.py: {e}", file=sys.stderr)
                bad = 1
                continue
            if invalid:
                print(f"power_scaled.py: {att} x{f:.2f}: the gate says INVALID: {invalid[:2]}", file=sys.stderr)
                bad = 1
                continue
            if f == 1.0:
                unscaled = medians
            else:  # the script's check that the copy really is f times slower, row by row
                off = [k for k, m in medians.items() if isinstance(m, (int, float)) and isinstance(unscaled.get(k), (int, float))
                       and abs(m / (f * unscaled[k]) - 1) > 1e-3]
                if off or not unscaled:
                    print(f"power_scaled.py: {att} x{f:.2f}: " + (f"{' / '.join(off[0])}: median {medians[off[0]]}, "
                          f"expected {f:.2f} x {unscaled[off[0]]}" if off else "no unscaled reference"), file=sys.stderr)
                    bad = 1
                    continue
            if f == 1.0 and complete:
                why = check_unscaled(att, rows)
                if why:
                    print(f"power_scaled.py: {att}: the unscaled copy is not judged as the attempt was: {why}",
                          file=sys.stderr)
                    bad = 1
            seen |= set(rows)
            for k in rows:
                found.setdefault(k, {}).setdefault(f, 0)
                found[k][f] += k in hit
            shutil.rmtree(dest)
        print(f"power_scaled.py: attempt {i + 1} of {len(a.attempts)} judged at {len(factors)} factors",
              file=sys.stderr)
    n = len(a.attempts)
    need = math.ceil(0.95 * n)
    lines = [f"Time arm alone, {n} A/A attempts, the current side made f times slower "
             f"(`scripts/power_scaled.py`); found = baseline verdict 'regression' decided by time; "
             f"smallest f found in >= {need} of {n}.", "",
             "| suite | row | backend | " + " | ".join(f"x{f:.2f}" for f in factors) + " | smallest |",
             "| --- | --- | --- | " + " | ".join("---:" for _ in factors) + " | ---: |"]
    smallest = {}
    for k in sorted(seen):
        c = found.get(k, {})
        s = next((f for f in factors if c.get(f, 0) >= need), None)
        smallest[k] = s
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(str(c.get(f, 0)) for f in factors) +
                     f" | {'x%.2f' % s if s else f'> x{factors[-1]:.2f}'} |")
    lines += ["", "Per suite and backend (median of the rows' smallest f; rows not found at any f count as "
              "above the largest):", "", "| suite | backend | rows | median smallest f | rows found at <= x1.10 |",
              "| --- | --- | ---: | ---: | ---: |"]
    groups = {}
    for k, s in smallest.items():
        groups.setdefault((k[0], k[2]), []).append(s if s else float("inf"))
    for (suite, be), v in sorted(groups.items()):
        m = statistics.median(v)
        lines.append(f"| {suite} | {be} | {len(v)} | {'x%.2f' % m if math.isfinite(m) else '> x%.2f' % factors[-1]} | "
                     f"{sum(x <= 1.10 for x in v)} |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        open(a.out, "w").write(text)
    return bad


if __name__ == "__main__":
    sys.exit(main())
