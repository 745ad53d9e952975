#!/usr/bin/env python3
"""aa_bias.py [--rows TEXT] [--markdown] ATTEMPT...

A systematic bias of the baseline comparison, over A/A attempts (issue 42): the same code on
both sides, so each gated row's current/baseline median ratio should scatter around 1.00.
Per row x backend of the attempts' gate/gate-summary.json "baseline" rows: the runs that
have it, the geometric mean of the ratio, how many runs read above 1.00, and t, the mean of
the log ratios over its standard error. A bias has |t| large and one sign in (nearly) every
run; noise does not. Prints the rows sorted by t (--rows: only those whose name holds TEXT;
--markdown: a table). Exit: 0, 2 usage or an attempt that cannot be read (said)."""
import argparse, math, os, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checked import baseline_rows, positive, refuser  # noqa: E402


ap = argparse.ArgumentParser(usage=__doc__.split("\n")[0])
ap.add_argument("attempts", nargs="+")
ap.add_argument("--rows", default="")
ap.add_argument("--markdown", action="store_true")
a = ap.parse_args()

refuse = refuser("aa_bias.py")  # an attempt that cannot be read: exit 2, as for usage


logs = {}
for folder in a.attempts:
    path, rows = baseline_rows(folder, refuse)
    for r in rows:
        m = r.get("median")
        if m is None:
            continue          # a row without a time ratio (NA, busy)
        if not positive(m):
            refuse(f"{path}: row '{r.get('row')}': median {m!r} is not a positive number")
        for field in ("suite", "row", "backend"):
            if not isinstance(r.get(field), str):
                refuse(f"{path}: a baseline row's '{field}' is {r.get(field)!r}, not a name")
        if a.rows in r["row"]:
            logs.setdefault((r["suite"], r["row"], r["backend"]), []).append(math.log(m))

out = []
for (suite, row, backend), v in logs.items():
    if len(v) < 2:
        continue
    sd = statistics.stdev(v)
    t = statistics.mean(v) / (sd / math.sqrt(len(v))) if sd > 0 else 0.0
    out.append((t, suite, row, backend, math.exp(statistics.mean(v)), sum(x > 0 for x in v), len(v)))
out.sort()
if a.markdown:
    print("| row | backend | runs | geometric mean | runs above 1.00 | t |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
for t, suite, row, backend, gm, above, n in out:
    if a.markdown:
        print(f"| {suite} / {row} | {backend} | {n} | {gm:.3f} | {above}/{n} | {t:.1f} |")
    else:
        print(f"t {t:6.1f}  gm {gm:.3f}  above 1.00 {above}/{n}  {suite} / {row} [{backend}]")
print(f"{len(out)} row(s) x backend over {len(a.attempts)} attempt(s)", file=sys.stderr)
