#!/usr/bin/env python3
"""test_calibration_scripts.py SCRIPTS WORK - the calibration packet's scripts (issue 42):
calibrate_report.py counts results.tsv as the packet claims and refuses a file that is not
calibrate.sh's; aa_bias.py computes its bias statistics and refuses an unreadable attempt;
host_noise.py measures how much whole processes move and refuses what it cannot read;
order_bias.py and calibrate.sh refuse bad input with exit 2 before running anything."""
import json
import math
import os
import shutil
import subprocess
import sys

scripts, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
HEADER = "part\tmode\trun\tpass\tseconds\tverdict\tdetail\tbusy\tcommit\tstarted\tfolder\n"


def check(what, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def run(*argv):
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def line(part, mode, k, ok, commit="abc1234", secs=100, busy=0, verdict="no regression"):
    return f"{part}\t{mode}\t{k}\t{ok}\t{secs}\t{verdict}\tdetail {k}\t{busy}\t{commit}\t2026-12-07T15:00:{k:02d}Z\t/f/{part}-{k}\n"


def report(text, commit="abc1234"):
    tsv, md = os.path.join(work, "results.tsv"), os.path.join(work, "README.md")
    open(tsv, "w").write(text)
    if os.path.exists(md):
        os.remove(md)
    rc, out, err = run(sys.executable, os.path.join(scripts, "calibrate_report.py"), tsv, md, commit)
    return rc, (open(md).read() if os.path.exists(md) else ""), err


def table_row(md, part, mode):
    return next((l for l in md.splitlines() if l.startswith(f"| {part} | {mode} |")), "")


# --- calibrate_report.py: the counts -------------------------------------------------------
rows = HEADER
rows += "".join(line("aa", "default", k, 0 if k == 7 else 1) for k in range(1, 21))    # 19 of 20
rows += "".join(line("aa", "quick", k, 1) for k in range(1, 19))                       # 18 runs
rows += "".join(line("regression", "default", k, 0 if k in (3, 9) else 1) for k in range(1, 21))
rows += "".join(line("power-16", "default", k, 0 if k == 5 else 1) for k in range(1, 21))  # 19/20
rows += "".join(line("power-8", "default", k, k % 2) for k in range(1, 21))                # 10/20
rows += "".join(line("aa", "default", k, 0, commit="def5678") for k in range(1, 21))       # another commit
rc, md, err = report(rows)
check("calibrate_report: a well-formed results.tsv is read (exit 0)", rc == 0, err)
r = table_row(md, "aa", "default")
check("calibrate_report: 19 of 20 A/A runs is 'met' (>= 19/20)", "| 20 | 19 | 0.95 |" in r and "| yes |" in r, r)
r = table_row(md, "aa", "quick")
check("calibrate_report: 18 runs is 'not yet (18 of 20 runs)'", "| 18 | 18 |" in r and "not yet (18 of 20 runs)" in r, r)
r = table_row(md, "regression", "default")
check("calibrate_report: 18 of 20 is not met ('no')", "| 20 | 18 | 0.90 |" in r and "| no |" in r, r)
check("calibrate_report: only the commit's own runs are counted (another commit's 20 failures are not)",
      "/f/aa-7)" in md and md.count("- aa default run") == 1, md)
check("calibrate_report: a part without runs says 'not run' and gives the command",
      "| not run |" in table_row(md, "stability", "default") and "scripts/calibrate.sh" in md, md)
check("calibrate_report: the power table counts each size, and a power miss is not a failed run",
      "| 16 (32) | 20 | 19 | 0.95 | yes |" in md and "| 8 (16) | 20 | 10 | 0.50 | no (10 missed) |" in md
      and "power-16 default run" not in md, md)
check("calibrate_report: the smallest size found in >= 19 of 20 is 16 (8 was found in 10)",
      "Smallest size found in >= 19 of 20 runs: 16." in md, md)
check("calibrate_report: seconds are summed (20 x 100 s)", "100 / 2000" in table_row(md, "aa", "default"))

rows = HEADER + "".join(line("aa", "default", k, 0 if k in (2, 5) else 1) for k in range(1, 9))  # 2 failed of 8
rows += "".join(line("aa", "quick", k, 0 if k == 3 else 1) for k in range(1, 9))                # 1 failed of 8
rows += "".join(line("power-64", "default", k, 0 if k in (1, 7) else 1) for k in range(1, 9))
rows += "".join(line("power-4", "default", k, 1) for k in range(1, 4))
rc, md, err = report(rows)
check("calibrate_report: 2 failures in 8 of 20 runs already decide 'no'; 1 failure is 'not yet'",
      "| no |" in table_row(md, "aa", "default") and "not yet (8 of 20 runs)" in table_row(md, "aa", "quick"), md)
check("calibrate_report: a power size missed twice is 'no', one missed never is 'not yet', and the smallest is open",
      "| 64 (128) | 8 | 6 | 0.75 | no (2 missed) |" in md and "| 4 (8) | 3 | 3 | 1.00 | not yet (3 of 20 runs) |" in md
      and "Smallest size found in >= 19 of 20 runs: none yet (a size not decided)." in md, md)
rows = HEADER + "".join(line("power-16", "default", k, 0) for k in range(1, 4))
rc, md, err = report(rows)
check("calibrate_report: every size decided and none found says so",
      "Smallest size found in >= 19 of 20 runs: none of the sizes run." in md, md)

# the peers field (calibrate.sh's second judgement, "baselineSameCodeSpread": "peers"): counted apart
PEERS_HEADER = HEADER.rstrip("\n") + "\tpeers\n"
rows = PEERS_HEADER + "".join(line("aa", "default", k, 1).rstrip("\n") + f"\t{0 if k == 4 else 1}\n" for k in range(1, 6))
rows += "".join(line("aa", "default", k, 1).rstrip("\n") + "\t-\n" for k in range(6, 9))     # not judged
rows += "".join(line("power-16", "default", k, 0).rstrip("\n") + f"\t{int(k < 3)}\n" for k in range(1, 4))
rc, md, err = report(rows)
check("calibrate_report: the peers rule's table counts only runs with a peers field (A/A 4 of 5, power 2 of 3)",
      rc == 0 and "| aa | 5 | 4 | 0.80 | >= 19/20 |" in md and "| power-16 | 3 | 2 | 0.67 | >= 19/20 |" in md
      and "| 8 | 8 |" in table_row(md, "aa", "default"), f"exit {rc}: {err}{md}")
rows = PEERS_HEADER + "".join(line("aa-time", "default", k, 1).rstrip("\n") + "\t1\n" for k in range(1, 4))
rc, md, err = report(rows)
check("calibrate_report: aa-time (the time arm's A/A) is counted in default mode only, both ways",
      rc == 0 and "| 3 | 3 | 1.00 |" in table_row(md, "aa-time", "default") and not table_row(md, "aa-time", "quick")
      and "| aa-time | 3 | 3 | 1.00 | >= 19/20 |" in md, f"exit {rc}: {err}{md}")
rc, md, err = report(HEADER + line("aa", "default", 1, 1))
check("calibrate_report: aa-time not run is not listed (run on request), nor a missing part",
      rc == 0 and not table_row(md, "aa-time", "default") and "| not run |" in table_row(md, "aa", "quick"), md)
check("calibrate_report: a results.tsv without the peers field has no table of the peers rule",
      rc == 0 and "gate-peers/" not in md, md)

# --- calibrate_report.py: refusals (exit 2, the file, the line and the field) ----------------
for what, text, needle in [
        ("a header that is not calibrate.sh's", "part\tmode\n" + line("aa", "default", 1, 1), "line 1"),
        ("pass 'yes'", HEADER + line("aa", "default", 1, "yes"), "line 2: field 'pass'"),
        ("seconds '-5'", HEADER + line("aa", "default", 1, 1, secs=-5), "line 2: field 'seconds'"),
        ("an unknown part", HEADER + line("aa", "default", 1, 1) + line("nonsense", "default", 1, 1),
         "line 3: field 'part'"),
        ("a mode that is neither", HEADER + line("aa", "fast", 1, 1), "field 'mode'"),
        ("busy 'many'", HEADER + line("aa", "default", 1, 1, busy="many"), "field 'busy'"),
        ("a short line", HEADER + "aa\tdefault\t1\n", "line 2: 3 fields"),
        ("power-0", HEADER + line("power-0", "default", 1, 1), "field 'part'"),
        ("peers 'yes'", PEERS_HEADER + line("aa", "default", 1, 1).rstrip("\n") + "\tyes\n", "line 2: field 'peers'"),
        ("a line without its peers field", PEERS_HEADER + line("aa", "default", 1, 1), "line 2: 11 fields, not 12")]:
    rc, md, err = report(text)
    check(f"calibrate_report refuses {what} (exit 2, '{needle}', nothing written)",
          rc == 2 and needle in err and "results.tsv" in err and md == "", f"exit {rc}: {err}")
rc, _, err = run(sys.executable, os.path.join(scripts, "calibrate_report.py"), os.path.join(work, "none.tsv"),
                 os.path.join(work, "x.md"), "abc1234")
check("calibrate_report refuses a results file that is not there (exit 2, named)",
      rc == 2 and "none.tsv" in err, f"exit {rc}: {err}")
rc, _, err = report(HEADER, commit="HEAD;rm")
check("calibrate_report refuses a commit that is not a hash (exit 2)", rc == 2 and "COMMIT" in err, err)

# --- aa_bias.py: the statistics over attempts, and refusals ------------------------------------
ratios = [1.10, 1.05, 1.20, 1.00]       # the current side slower: one sign, a bias
attempts = []
for k, m in enumerate(ratios):
    d = os.path.join(work, f"attempt-{k}")
    os.makedirs(os.path.join(d, "gate"))
    rows = [{"suite": "primary", "row": "NextFrame scheduling N=128", "backend": "jit", "median": m},
            {"suite": "primary", "row": "NextFrame scheduling N=128", "backend": "aot", "median": None}]
    json.dump({"baseline": {"rows": rows}}, open(os.path.join(d, "gate", "gate-summary.json"), "w"))
    attempts.append(d)
rc, out, err = run(sys.executable, os.path.join(scripts, "aa_bias.py"), *attempts)
logs = [math.log(m) for m in ratios]
mean = sum(logs) / len(logs)
sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
want = f"t {mean / (sd / 2):6.1f}  gm {math.exp(mean):.3f}  above 1.00 3/4"
check("aa_bias: geometric mean, runs above 1.00 and t of a row's ratios (a row without a ratio left out)",
      rc == 0 and want in out and "[aot]" not in out, f"want '{want}', exit {rc}: {out}{err}")
bad = os.path.join(work, "attempt-bad")
os.makedirs(os.path.join(bad, "gate"))
for what, doc, needle in [
        ("a negative median", {"baseline": {"rows": [{"suite": "s", "row": "r", "backend": "aot", "median": -1}]}},
         "not a positive number"),
        ("a median of true", {"baseline": {"rows": [{"suite": "s", "row": "r", "backend": "aot", "median": True}]}},
         "not a positive number"),
        ("a row without a name", {"baseline": {"rows": [{"suite": "s", "backend": "aot", "median": 1.0}]}},
         "'row'"),
        ("rows that are not a list", {"baseline": {"rows": {"a": 1}}}, "not a list"),
        ("a summary without a baseline", {"verdict": "PASS"}, "no baseline.rows")]:
    json.dump(doc, open(os.path.join(bad, "gate", "gate-summary.json"), "w"))
    rc, out, err = run(sys.executable, os.path.join(scripts, "aa_bias.py"), attempts[0], bad)
    check(f"aa_bias refuses {what} (exit 2, the file named)", rc == 2 and needle in err and bad in err,
          f"exit {rc}: {err}")
rc, _, err = run(sys.executable, os.path.join(scripts, "aa_bias.py"), os.path.join(work, "nothing"))
check("aa_bias refuses a folder that is not an attempt (exit 2)", rc == 2 and "not a file" in err, err)

# --- order_bias.py: refusals before any player runs -------------------------------------------
ob = os.path.join(scripts, "order_bias.py")
rc, _, err = run(sys.executable, ob, os.path.join(work, "nothing"))
check("order_bias refuses a folder that is not an attempt (exit 2)", rc == 2 and "not a file" in err, err)
rc, _, err = run(sys.executable, ob, attempts[0], "--repeats", "0")
check("order_bias refuses --repeats 0 (exit 2)", rc == 2 and "--repeats" in err, err)
obs = os.path.join(attempts[0], "runs", "observations")
os.makedirs(obs)
json.dump({"tries": [{"arguments": ["tandem-player", "--module", "/x/current-aot/tandem.so", "--out", "r.json"]}]},
          open(os.path.join(obs, "p02-builderlifecycle-aot-r1.json"), "w"))
rc, _, err = run(sys.executable, ob, attempts[0])
check("order_bias refuses a process without a baseline subject (exit 2)",
      rc == 2 and "one current and one baseline" in err, err)
rc, _, err = run(sys.executable, ob, attempts[0], "--heap-offsets", "1,x")
check("order_bias refuses a heap offset that is not a byte count (exit 2)", rc == 2 and "'x'" in err, err)

# --- host_noise.py: the spread of whole processes, and refusals ---------------------------------
hn = os.path.join(scripts, "host_noise.py")
runs = os.path.join(work, "noise", "runs")
os.makedirs(runs)


def process_report(name, medians, samples=((100, 10), (120, 10)), retention="matched", **over):
    rows = [{"subject": s, "name": "nextframe N=1024", "supported": True, "medianNsPerOp": m,
             "sampleRecords": [{"ns": ns, "ops": ops, "controlNs": 0} for ns, ops in samples]}
            for s, m in medians.items()]
    doc = {"suite": "throughput", "backend": "aot", "settings": {"retention": retention}, "rows": rows}
    doc.update(over)
    json.dump(doc, open(os.path.join(runs, name), "w"))


process_report("p03-throughput-aot-r1.json", {"callback": 2.0, "tandem": 5.0})
process_report("p14-throughput-aot-r2.json", {"callback": 3.0, "tandem": 5.5})
process_report("p33-throughput-aot-default.json", {"callback": 9.0}, retention="default")
rc, out, err = run(sys.executable, hn, os.path.join(work, "noise"))
lines = {tuple(l.split()[:4]): l for l in out.splitlines()}
cb, td = lines.get(("throughput", "matched", "aot", "callback"), ""), lines.get(("throughput", "matched", "aot", "tandem"), "")
check("host_noise: a subject's spread across processes (3.0 / 2.0 - 1 = 50%), per retention; sample CV 9.1%",
      rc == 0 and "processes   2" in cb and "spread  50.0%" in cb and "cv   9.1%" in cb and "spread  10.0%" in td
      and not any(k[1] == "default" for k in lines), f"exit {rc}: {out}{err}")
for what, over, needle in [("a median of 0", {"rows": [{"subject": "x", "name": "r", "medianNsPerOp": 0}]},
                            "medianNsPerOp"),
                           ("a report without a suite", {"suite": None}, "not a process report"),
                           ("a sample of ops 0", {"rows": [{"subject": "x", "name": "r", "medianNsPerOp": 1.0,
                                                            "sampleRecords": [{"ns": 5, "ops": 0}]}]}, "a sample")]:
    process_report("p99-throughput-aot-r9.json", {"callback": 1.0}, **over)
    rc, out, err = run(sys.executable, hn, os.path.join(work, "noise"))
    check(f"host_noise refuses {what} (exit 2, the file named)", rc == 2 and needle in err and "p99-" in err,
          f"exit {rc}: {err}")
os.remove(os.path.join(runs, "p99-throughput-aot-r9.json"))
rc, _, err = run(sys.executable, hn, os.path.join(work, "nothing-here"))
check("host_noise refuses a folder without process reports (exit 2)", rc == 2 and "no process reports" in err, err)

# --- calibrate.sh: its arguments, refused before it builds or runs anything --------------------
cal = os.path.join(scripts, "calibrate.sh")
for argv, needle in [(["--power-sizes", "0"], "'0'"), (["--power-sizes", "65"], "over 64"),
                     (["--runs", "x"], "count"), (["--bogus"], "unknown option"), (["--runs"], "needs a value")]:
    rc, _, err = run("bash", cal, *argv)
    check(f"calibrate.sh refuses {' '.join(argv)} (exit 2)", rc == 2 and needle in err, f"exit {rc}: {err}")
rc, out, _ = run("bash", cal, "--help")
check("calibrate.sh --help prints its usage (exit 0)", rc == 0 and "--power-sizes" in out)

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
