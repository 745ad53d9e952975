#!/usr/bin/env python3
"""icount_check.py RUN1 RUN2 [BACKEND]: two instruction summaries of the same build must agree.

Fails (exit 1, naming the row and subject) when a row or subject is missing from either,
a count differs by more than 0.1%, an instruction could not be decoded, the meter's own
per-segment cost differs between subjects, or a row's count is not above what its
segments alone cost (the meter measured nothing but itself).
RUN1 has no breakdown by function and RUN2 has one (--functions) for every row and subject:
entries with instructions, most first, adding up to the row's count exactly, and (but in the
meter's own row) most of the row's instructions in functions of the subject's own code named
by their symbols (its module on AOT, the JIT's code placed from the tcc object on JIT).
"""
import json, sys

FIELDS = ("ir", "locked", "calls", "indirectCalls")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    if d.get("kind") != "instructions" or not isinstance(d.get("rows"), list):
        fail("%s: not an instruction summary" % path)
    return d


def check_functions(name, s, m, backend):
    fns = m.get("functions")
    if not isinstance(fns, list) or not fns:
        fail("%s / %s: no breakdown by function with --functions" % (name, s))
    irs = [f.get("ir") for f in fns]
    if any(not isinstance(x, (int, float)) or x <= 0 for x in irs):
        fail("%s / %s: a function without instructions in the breakdown: %s" % (name, s, fns))
    if irs != sorted(irs, reverse=True):
        fail("%s / %s: the breakdown is not most-first" % (name, s))
    if sum(irs) != m["ir"]:
        fail("%s / %s: the functions add up to %d, the row counts %d" % (name, s, sum(irs), m["ir"]))
    module = s + ".so" if backend == "aot" else "jit"
    named = sum(f["ir"] for f in fns if f.get("object") == module and not f["function"].startswith("0x")
                and not f["function"].startswith("("))
    if name != "(meter) empty segment" and named * 2 <= m["ir"]:
        fail("%s / %s: only %d of %d instructions in named functions of %s: %s" % (name, s, named, m["ir"], module, fns))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        sys.exit(2)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    backend = sys.argv[3] if len(sys.argv) == 4 else None
    if a["subjects"] != b["subjects"] or len(a["subjects"]) < 2:
        fail("subjects differ or fewer than two: %s / %s" % (a["subjects"], b["subjects"]))
    rows_a = {r["name"]: r for r in a["rows"]}
    rows_b = {r["name"]: r for r in b["rows"]}
    if set(rows_a) != set(rows_b) or len(rows_a) < 2:
        fail("row sets differ: %s / %s" % (sorted(rows_a), sorted(rows_b)))
    cal = "(meter) empty segment"
    if cal not in rows_a:
        fail("no calibration row")
    per_seg = {}
    for s in a["subjects"]:
        m = rows_a[cal]["subjects"].get(s)
        if not m or m["segments"] <= 0:
            fail("calibration: %s has no segments" % s)
        per_seg[s] = m["ir"] / m["segments"]
        if m["indirectCalls"] < m["segments"]:
            fail("calibration %s: %d indirect calls over %d segments; the harness calls the host's meter_off "
                 "through a pointer once per segment" % (s, m["indirectCalls"], m["segments"]))
    if len(set(per_seg.values())) != 1:
        fail("the meter's cost per segment differs between subjects: %s" % per_seg)
    for name, ra in rows_a.items():
        for s in a["subjects"]:
            ma, mb = ra["subjects"].get(s), rows_b[name]["subjects"].get(s)
            if not ma or not mb:
                fail("%s / %s: not measured in both runs" % (name, s))
            for k in FIELDS:
                x, y = ma[k], mb[k]
                if abs(x - y) > 0.001 * max(x, y):
                    fail("%s / %s: %s %s vs %s (more than 0.1%% apart)" % (name, s, k, x, y))
            if "functions" in ma:
                fail("%s / %s: a breakdown by function in the run without --functions" % (name, s))
            if backend:
                check_functions(name, s, mb, backend)
            if ma["undecoded"] or mb["undecoded"]:
                fail("%s / %s: %d instructions not decoded" % (name, s, ma["undecoded"]))
            if name != cal and ma["ir"] <= ma["segments"] * per_seg[s]:
                fail("%s / %s: %d instructions over %d segments: no more than the meter itself" %
                     (name, s, ma["ir"], ma["segments"]))
            print("%-30s %-10s %10.2f ins/op %6.3f locked/op %6.3f indirect/op %6.3f calls/op" %
                  (name, s, ma["irPerOp"], ma["lockedPerOp"], ma["indirectCallsPerOp"], ma["callsPerOp"]))
    print("ok: two runs agree")


if __name__ == "__main__":
    main()
