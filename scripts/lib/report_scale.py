"""report_scale.py - a subject's row in a process report made f times slower, as a valid report.

Used by scripts/power_scaled.py (the time arm's power) and by the gate's tests
(test_gate_layout.py, test_gate_compare.sh, test_gate_sequential.py in tests/gate), which all need the same
thing: a recorded row changed by a known factor that still passes the gate's arithmetic
checks (gate_report.c recomputes the per-op statistics from the samples and refuses a row
whose stated ones disagree).

Per sample, the timed nanoseconds minus the subtracted idle control are scaled; the control
itself is not (it measures the frame loop, not the subject), so the per-op time of every
sample is exactly f times what it was, up to rounding to whole nanoseconds.
"""
import statistics


def scale_row(row, f):
    """row (one entry of a report's "rows") f times slower per op, in place; its stated
    statistics (nsPerOp, medianNsPerOp, meanNsPerOp, minSampleNs and the per-sample records)
    recomputed from the scaled samples."""
    sub = bool(row.get("controlSubtracted"))
    ctl = row.get("controlNs") or [0] * len(row["ns"])
    row["ns"] = [round(c + f * (ns - c)) if sub else round(f * ns) for ns, c in zip(row["ns"], ctl)]
    for s, v in zip(row.get("sampleRecords", []), row["ns"]):
        s["ns"] = v
        if "nsPerOp" in s:
            s["nsPerOp"] = (v - (s.get("controlNs", 0) if sub else 0)) / s["ops"]
    per = [(ns - (c if sub else 0)) / o for ns, c, o in zip(row["ns"], ctl, row["ops"])]
    total = (sum(row["ns"]) - (sum(ctl) if sub else 0)) / sum(row["ops"])
    old = row["nsPerOp"]
    # nsPerOp states one of the total, the mean or the median (gate_report.c): keep which
    cands = {"total": total, "mean": statistics.mean(per), "median": statistics.median(per)}
    row["nsPerOp"] = min(cands.values(), key=lambda v: abs(v / f - old)) if old else total
    row["medianNsPerOp"] = cands["median"]
    if "meanNsPerOp" in row:
        row["meanNsPerOp"] = cands["mean"]
    if "minSampleNs" in row:
        row["minSampleNs"] = min(row["ns"])
