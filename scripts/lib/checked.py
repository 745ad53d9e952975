"""checked.py - what the calibration scripts share for refusing input (issue 42: a tool
that judges evidence refuses what it cannot read, naming the file and the field)."""
import math
import sys


def refuser(prog):
    """refuse(msg): print 'PROG: msg' and exit 2 (usage, or an input that is not what it
    should be), as argparse does for its own refusals."""
    def refuse(msg):
        print(f"{prog}: {msg}", file=sys.stderr)
        sys.exit(2)
    return refuse


def positive(v):
    """A finite positive number (not a bool, which Python counts as an int)."""
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and v > 0


def json_object(path, refuse):
    """The JSON object in path, or refuse() naming the file and why."""
    import json
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as x:
        refuse(f"{path}: not JSON ({x})")
    if not isinstance(d, dict):
        refuse(f"{path}: not a JSON object")
    return d


def baseline_rows(attempt, refuse):
    """The rows of ATTEMPT/gate/gate-summary.json "baseline" (a list of objects), or refuse()."""
    import os
    path = os.path.join(attempt, "gate", "gate-summary.json")
    if not os.path.isfile(path):
        refuse(f"{path}: not a file (an attempt folder made with --baseline)")
    b = json_object(path, refuse).get("baseline")
    rows = b.get("rows") if isinstance(b, dict) else None
    if rows is None:
        refuse(f"{path}: no baseline.rows")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        refuse(f"{path}: baseline.rows is not a list of rows")
    return path, rows


def process_reports(folder, refuse):
    """The process reports (p*.json) of an attempt folder (its runs/) or of a folder of them,
    each checked: suite and backend strings, settings an object (absent: {}), rows a list of
    rows with a name and a subject, and a positive medianNsPerOp unless "supported": false.
    A list of (path, report); refuse() naming the file and the field otherwise."""
    import glob
    import os
    base = os.path.join(folder, "runs") if os.path.isdir(os.path.join(folder, "runs")) else folder
    files = sorted(glob.glob(os.path.join(base, "p*.json")))
    if not files:
        refuse(f"{folder}: no process reports (runs/p*.json or p*.json)")
    out = []
    for path in files:
        d = json_object(path, refuse)
        settings = d.setdefault("settings", {})
        if not isinstance(d.get("suite"), str) or not isinstance(d.get("backend"), str) \
                or not isinstance(settings, dict) or not isinstance(d.get("rows"), list):
            refuse(f"{path}: not a process report (suite, backend, settings and rows)")
        for r in d["rows"]:
            if not isinstance(r, dict) or not isinstance(r.get("subject"), str) or not isinstance(r.get("name"), str):
                refuse(f"{path}: a row without a subject and a name")
            m = r.get("medianNsPerOp")
            if r.get("supported") is not False and not positive(m):
                refuse(f"{path}: row '{r['name']}' subject '{r['subject']}': medianNsPerOp {m!r} "
                       "is not a positive number")
        out.append((path, d))
    return out
