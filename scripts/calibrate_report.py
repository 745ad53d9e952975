"""calibrate_report.py RESULTS README COMMIT - the calibration packet's README from its
results.tsv (scripts/calibrate.sh): per part and mode, the runs recorded for COMMIT, how
many passed, against the issue-42 criteria, and how long they took. Only counts what was
run: a part with no run says so and gives the command."""
import csv
import os
import platform
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checked import refuser  # noqa: E402


FIELDS = ["part", "mode", "run", "pass", "seconds", "verdict", "detail", "busy", "commit", "started", "folder", "peers"]
OLD_FIELDS = FIELDS[:-1]  # a results.tsv from before the peers field (calibrate.sh adds it)

refuse = refuser("calibrate_report.py")  # bad arguments or not calibrate.sh's results.tsv: exit 2


def read_results(path, commit):
    """The rows of COMMIT, each field checked: a figure of the packet is counted from them."""
    if not os.path.isfile(path):
        refuse(f"{path}: not a file (calibrate.sh's results.tsv)")
    with open(path, newline="") as f:
        lines = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not lines or lines[0] not in (FIELDS, OLD_FIELDS):
        refuse(f"{path} line 1: the header is not {' '.join(FIELDS)}")
    fields = lines[0]
    rows = []
    for n, cells in enumerate(lines[1:], start=2):
        if len(cells) != len(fields):
            refuse(f"{path} line {n}: {len(cells)} fields, not {len(fields)}")
        r = dict(zip(fields, cells))
        r.setdefault("peers", "-")
        checks = [("part", re.fullmatch(r"aa|aa-time|regression|improvement|stability|power-[1-9][0-9]*", r["part"])),
                  ("mode", r["mode"] in ("default", "quick")),
                  ("run", r["run"].isdigit() and int(r["run"]) >= 1),
                  ("pass", r["pass"] in ("0", "1")),
                  ("seconds", r["seconds"].isdigit()),
                  ("busy", r["busy"].isdigit() or r["busy"] == "-"),
                  ("commit", re.fullmatch(r"[0-9a-f]{7,40}", r["commit"])),
                  ("peers", r["peers"] in ("0", "1", "-"))]
        for field, ok in checks:
            if not ok:
                refuse(f"{path} line {n}: field '{field}': {r[field]!r} is not valid")
        if r["commit"] == commit:
            rows.append(r)
    return rows


if len(sys.argv) != 4:
    refuse("usage: calibrate_report.py RESULTS README COMMIT")
results, readme, commit = sys.argv[1:4]
if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
    refuse(f"COMMIT '{commit}' is not an abbreviated git hash")
rows = read_results(results, commit)
PARTS = [("aa", "A/A: the same commit as its own baseline, verdict 'no regression' (from the exit code too, "
               "0 or 3, where the commit has gate_exit_code)", 20, 19),
         ("aa-time", "A/A of the time arm alone (no --instructions; default mode: with one layout time decides "
                     "nothing): its false-alarm rate, as aa", 20, 19),
         ("regression", "seeded regression (tests/calibration/regression.patch): 'regression' naming "
                        "throughput / nextframe N=1024 on every backend, no row named without more instructions", 20, 19),
         ("improvement", "seeded improvement (the patch reverted): that row 'improved', verdict 'no regression'", 20, 19),
         ("stability", "peer stability pairs (scripts/stability.sh): no flip outside borderline rows, same verdict",
          10, 9)]
out = [f"# Calibration of the verdicts at {commit}", "",
       "Written by `scripts/calibrate.sh` from `results.tsv` (one line a run; the script resumes where it",
       "stopped). Every figure below is counted from that file; nothing else is claimed.", "",
       "| part | mode | runs | passed | rate | issue 42 asks | met | seconds (mean / total) | busy processes |",
       "| --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: |"]
missing = []
for part, what, want, need in PARTS:
    for mode in ("default", "quick"):
        rs = [r for r in rows if r["part"] == part and r["mode"] == mode]
        if part == "aa-time" and (mode == "quick" or not rs):
            continue  # default mode only, and run on request (--only aa-time)
        if not rs:
            out.append(f"| {part} | {mode} | 0 | - | - | >= {need}/{want} | not run | - | - |")
            missing.append((part, mode))
            continue
        n, ok = len(rs), sum(r["pass"] == "1" for r in rs)
        secs = [int(r["seconds"]) for r in rs]
        busy = sum(int(r["busy"]) for r in rs if r["busy"].isdigit())
        met = "yes" if n >= want and ok >= need * n / want else "no" if n >= want or n - ok > want - need \
            else f"not yet ({n} of {want} runs)"   # more failures than the criterion allows: decided
        out.append(f"| {part} | {mode} | {n} | {ok} | {ok / n:.2f} | >= {need}/{want} | {met} | "
                   f"{sum(secs) / max(len(secs), 1):.0f} / {sum(secs)} | {busy} |")
out += ["", "Parts:", ""] + [f"- **{p}**: {w}." for p, w, _, _ in PARTS]
# the time arm's power: per size of the seeded cost, how often the time arm alone found it
sizes = sorted({int(r["part"][6:]) for r in rows if r["part"].startswith("power-") and r["part"][6:].isdigit()})
out += ["", "The time arm's power (part power: the seeded regression's 2 volatile stores made 2 x S, no",
        "`--instructions`, default mode; detected = throughput / nextframe N=1024 'regression' decided by time",
        "on every backend):", ""]
if sizes:
    out += ["| size S (stores) | runs | detected | rate | found in >= 19 of 20 |", "| ---: | ---: | ---: | ---: | --- |"]
    found, open_sizes = None, False
    for s in sizes:
        rs = [r for r in rows if r["part"] == f"power-{s}"]
        n, ok = len(rs), sum(r["pass"] == "1" for r in rs)
        # a size missed more than once can no longer be found in 19 of 20: decided early
        state = "yes" if n >= 20 and ok >= 19 * n / 20 else f"no ({n - ok} missed)" if n >= 20 or n - ok > 1 \
            else f"not yet ({n} of 20 runs)"
        out.append(f"| {s} ({2 * s}) | {n} | {ok} | {ok / n:.2f} | {state} |")
        if found is None and state == "yes":
            found = s
        open_sizes |= state.startswith("not yet")
    said = found if found else "none yet (a size not decided)" if open_sizes else "none of the sizes run"
    out += ["", f"Smallest size found in >= 19 of 20 runs: {said}.", ""]
else:
    out += ["- not run (`scripts/calibrate.sh --only power`).", ""]
    missing.append(("power", "default"))
# the rule "baselineSameCodeSpread": "peers" (the default since b66bfaa), judged on the same runs: field peers
cand = [r for r in rows if r["peers"] != "-"]
if cand:
    out += ["The same runs judged again with the same code's layout spread measured against the subjects",
            "built once in the same processes (`\"baselineSameCodeSpread\": \"peers\"`, the gate's default since",
            "b66bfaa; before it, each side's own time), into each attempt's gate-peers/ (field peers):", "",
            "| part | runs judged | passed (A/A: no regression; power: detected) | rate | issue 42 asks |",
            "| --- | ---: | ---: | ---: | --- |"]
    for part in ["aa", "aa-time"] + [f"power-{s}" for s in sizes]:
        rs = [r for r in cand if r["part"] == part]
        if rs:
            n, ok = len(rs), sum(r["peers"] == "1" for r in rs)
            out.append(f"| {part} | {n} | {ok} | {ok / n:.2f} | >= 19/20 |")
    out.append("")
if rows:
    out += [f"Runs recorded from {min(r['started'] for r in rows)} to {max(r['started'] for r in rows)} on "
            f"{platform.node() or 'this host'} ({os.cpu_count()} CPUs). Failed runs:", ""]
    bad = [r for r in rows if r["pass"] != "1" and not r["part"].startswith("power-")]  # a miss is a rate there
    out += [f"- {r['part']} {r['mode']} run {r['run']}: {r['verdict']}: {r['detail']} ({r['folder']})" for r in bad] or ["- none"]
    out.append("")
if missing:
    out += ["To complete the packet (about 20 x 4-8 minutes per part and mode on 2 cores; resumable):", "",
            "```sh", "scripts/calibrate.sh " + os.path.dirname(readme), "```", ""]
out += ["Each run's attempt folder is named in results.tsv (under the build folder, not in this packet)."]
open(readme, "w").write("\n".join(out) + "\n")
