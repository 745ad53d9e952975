#!/usr/bin/env python3
"""order_bias.py ATTEMPT [--process NAME] [--repeats N] [--rows TEXT] [--player PATH] [--shared-heap] [--heap-offsets LIST]

The position bias of an A/A attempt (issue 42), re-measured outside the attempt. It takes
one recorded process of a `tandem attempt --baseline` folder (runs/observations/NAME.json:
its exact tandem-player command line) and runs it N times as recorded ("as recorded": the
current runtime first on the command line, the baseline last) and with the two runtimes'
--module (AOT) or --tu (JIT) arguments swapped ("swapped": same command-line length, same
modules, same peers, the baseline first). It prints, per run and row, the current/baseline
ratio of median ns/op. If the ratio follows the module, the two copies differ; if it follows
the position, the measurement favours one position over the other.

The cause (issue 42): the subjects shared one heap, so where one subject's objects landed
depended on what the others had allocated before. --player runs another tandem-player (one
that has the options below) with the recorded arguments; --shared-heap passes the player's
--shared-heap (every subject on the main thread, one heap: the behaviour before the fix);
--heap-offsets 1,17,33,49 repeats everything with each --heap-offset (bytes allocated before
the subjects load, which moves every later heap object): with one heap the ratio follows
the offset, with a thread (an arena) per subject it does not.

The JIT's two rows (--process p05-primary-jit-r1 --rows "NextFrame scheduling") had a
cause of their own: the baseline's label "tandem@rev" is longer than "tandem", and tcc put
the unit's zero-initialised data right after it, so 8 bytes further; the ratio followed the
unit in both orders. Units generated since hold the label in an array of one size
(backends/common.c), and read ~1.00 there.

Default process: p02-builderlifecycle-aot-r1; default rows: those whose name holds
"suspensions=1 N=4096 flow off" (in every A/A run of 2026-12-06/07 the current copy was
slower there). Exit: 0, 1 when a player fails, 2 usage or a folder that is not an attempt's
process with one current and one baseline subject."""
import argparse, json, os, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checked import refuser  # noqa: E402


ap = argparse.ArgumentParser(usage=__doc__.split("\n")[0])
ap.add_argument("attempt")
ap.add_argument("--process", default="p02-builderlifecycle-aot-r1")
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--rows", default="suspensions=1 N=4096 flow off")
ap.add_argument("--player")
ap.add_argument("--shared-heap", action="store_true")
ap.add_argument("--heap-offsets", default="")
a = ap.parse_args()

refuse = refuser("order_bias.py")  # a bad argument or not an attempt's process: exit 2


if not 1 <= a.repeats <= 100:
    refuse(f"--repeats {a.repeats}: not in 1..100")
if a.player and not (os.path.isfile(a.player) and os.access(a.player, os.X_OK)):
    refuse(f"--player {a.player}: not an executable file")
offsets = []
for f in filter(None, a.heap_offsets.split(",")):
    if not f.isdigit() or not 0 <= int(f) <= 1048576:
        refuse(f"--heap-offsets: '{f}' is not a byte count in 0..1048576")
    offsets.append(int(f))
obs = os.path.join(a.attempt, "runs", "observations", a.process + ".json")
if not os.path.isfile(obs):
    refuse(f"{obs}: not a file (an attempt folder and one of its processes)")
try:
    args = json.load(open(obs))["tries"][0]["arguments"]
except (ValueError, KeyError, IndexError, TypeError) as x:
    refuse(f"{obs}: no tries[0].arguments ({x})")


def side_of(path, base_name):
    """current / baseline / None for a subject's --module or --tu path: AOT modules sit in a
    layout's current-aot/ and baseline-aot/ folders; the JIT's baseline unit under baseline/,
    and the current one beside the peers' units under the same file name."""
    if "/baseline-" in path or "/baseline/" in path:
        return "baseline"
    if "/current-" in path or (base_name and os.path.basename(path) == base_name):
        return "current"
    return None


mods = [i + 1 for i, v in enumerate(args) if v in ("--module", "--tu") and i + 1 < len(args)]
base = [i for i in mods if side_of(args[i], None) == "baseline"]
base_name = os.path.basename(args[base[0]]) if len(base) == 1 and "--tu" in args else None
cur = [i for i in mods if side_of(args[i], base_name) == "current"]
if len(cur) != 1 or len(base) != 1 or "--out" not in args:
    refuse(f"{obs}: not a process with one current and one baseline subject "
             "(--module of a layout build, or --tu)")
swapped = list(args)
swapped[cur[0]], swapped[base[0]] = args[base[0]], args[cur[0]]
out = os.path.join(tempfile.mkdtemp(prefix="order-bias."), "report.json")
args[args.index("--out") + 1] = swapped[swapped.index("--out") + 1] = out
if a.player:
    args[0] = swapped[0] = a.player
extra = ["--shared-heap"] if a.shared_heap else []


def ratios(cmd):
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        print(f"order_bias.py: the player failed (exit {p.returncode}): {p.stderr[-400:]}", file=sys.stderr)
        sys.exit(1)
    rep = json.load(open(out))
    side = {s["name"]: side_of(s["path"], base_name) for s in rep["subjects"]}
    rows = {}
    for r in rep["rows"]:
        if r["supported"] and a.rows in r["name"] and side.get(r["subject"]):
            rows.setdefault(r["name"], {})[side[r["subject"]]] = \
                statistics.median(s["ns"] / s["ops"] for s in r["sampleRecords"] if s["ops"])
    return {k: v["current"] / v["baseline"] for k, v in rows.items() if len(v) == 2}


for off in offsets or [None]:
    more = extra + (["--heap-offset", str(off)] if off is not None else [])
    for rep in range(1, a.repeats + 1):
        for tag, cmd in (("as recorded", args), ("swapped", swapped)):
            for row, r in sorted(ratios(cmd + more).items()):
                where = f"heap offset {off}\t" if off is not None else ""
                print(f"{where}{rep}\t{tag}\t{row}\tcurrent/baseline {r:.3f}", flush=True)
