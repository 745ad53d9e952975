"""The gate's cases: a copy of a real attempt's runs (the published default attempt of
2026-11-30, verdict FAIL) with one thing altered at a time. Every alteration must come out
INVALID (exit 1) with its own reason, never PASS; whatever it holds, the outputs the gate
writes stay valid (gate-summary.json is JSON, the SVG is XML, gate.md has one heading).

A row: gate(class, name, mutation, exit code, reason regex, ...). The mutation runs in the
copied runs folder with the helpers below (reps, save, entries, set_samples)."""
import glob
import json
import os
import shutil
import subprocess
import xml.dom.minidom
import zipfile

FAILROW = "Async method NextFrame get-result N=4096"  # a gated row that FAILs on the real runs
SAMPLE_KEYS = ("sampleRecords", "ns", "ops", "allocs", "allocBytes", "controlNs", "retained", "check")
CASES = []


# ---- helpers for mutations (cwd: the copied runs folder) ----
def reps():
    return [(f, json.load(open(f))) for f in sorted(glob.glob("p*.json"))]


def save(f, d, raw=None):
    """Write d as JSON; raw maps placeholder strings to literal JSON text (e.g. 1e999)."""
    t = json.dumps(d, indent=1)
    for k, v in (raw or {}).items():
        t = t.replace(json.dumps(k), v)
    open(f, "w").write(t)


def entries(d, subject=None, name=None):
    return [r for r in d["rows"] if (subject is None or r["subject"] == subject) and (name is None or r["name"] == name)]


def set_samples(e, key, value):
    for s in e.get("sampleRecords", []):
        s[key] = value
    if isinstance(e.get(key), list):
        e[key] = [value] * len(e[key])


def each_supported(subject, fn, raw=None):
    """Apply fn(row) to every supported row of subject in every report."""
    def m():
        for f, d in reps():
            for e in entries(d, subject):
                if e.get("supported", True):
                    fn(e)
            save(f, d, raw)
    return m


def first_report(fn):
    def m():
        f, d = reps()[0]
        fn(d)
        save(f, d)
    return m


# ---- fixture: the base runs and the configuration the attempt writes ----
def prepare(ctx, fixtures):
    if "runs" not in fixtures:
        return
    base = os.path.join(ctx.shared, "runs")
    os.makedirs(base)
    zipfile.ZipFile(ctx.runs_zip).extractall(base)
    shutil.rmtree(os.path.join(base, "logs"), ignore_errors=True)
    if os.path.exists(os.path.join(base, "files.sha256")):
        os.unlink(os.path.join(base, "files.sha256"))
    cfg = json.loads(subprocess.run([ctx.t, "gate", "--print-config"], check=True, stdout=subprocess.PIPE).stdout)
    cfg["expectedProcesses"] = 22  # built-in defaults, 22 processes, 8 samples (the attempt's)
    for s in cfg["suites"]:
        s["samples"] = 8
        if s["name"] == "cancellation":  # the packet predates the cancellation suite: no process of it
            s["gated"] = False
    json.dump(cfg, open(os.path.join(ctx.shared, "config.json"), "w"), indent=1)
    text = open(os.path.join(ctx.shared, "config.json")).read()
    assert '"median": 0.95' in text
    open(os.path.join(ctx.shared, "config-inf.json"), "w").write(text.replace('"median": 0.95', '"median": 1e999', 1))
    for name, path, value in (("worst0", ("thresholds", "worst"), 0), ("ppb1e10", ("processesPerBackend",), 1e10),
                              ("alpha-1", ("alpha",), -1)):
        c = json.loads(text)
        node = c
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
        json.dump(c, open(os.path.join(ctx.shared, f"config-{name}.json"), "w"))


def valid_outputs(out_dir):
    """The outputs, when written, are well-formed whatever the reports held."""
    why = []
    summary = os.path.join(out_dir, "gate-summary.json")
    if not os.path.exists(summary):
        return why
    try:
        json.load(open(summary, encoding="utf-8"))
    except Exception as x:
        why.append(f"gate-summary.json is not valid JSON ({x})")
    for svg in ("gate-chart.svg", "gate-chart-full.svg"):
        p = os.path.join(out_dir, svg)
        if os.path.exists(p):
            try:
                xml.dom.minidom.parse(p)
            except Exception as x:
                why.append(f"{svg} is not well-formed XML ({x})")
    md = open(os.path.join(out_dir, "gate.md"), encoding="utf-8", errors="replace").read().splitlines()
    if sum(1 for line in md if line.startswith("# ")) != 1:
        why.append("gate.md has more than one level-1 heading")
    return why


def gate(cls, name, mutation, rc, reason, config="config.json", extra=(), check=None, out="out", within=None,
         pre=None):
    """A case running the gate on a mutated copy of the runs (pre(ctx): more input)."""
    def setup(ctx):
        if pre:
            pre(ctx)
        runs = ctx.p("runs")
        shutil.copytree(os.path.join(ctx.shared, "runs"), runs, symlinks=True)
        if mutation:
            here = os.getcwd()
            os.chdir(runs)
            try:
                mutation()
            finally:
                os.chdir(here)
        cfg = config(ctx) if callable(config) else os.path.join(ctx.shared, config)
        return [ctx.t, "gate", runs, "--config", cfg, "--out", ctx.p(out), *extra]

    def checks(ctx, got, text):
        why = valid_outputs(ctx.p("out"))
        if got == 1 and "\ngate: PASS" in "\n" + text:
            why.append("INVALID input, yet 'gate: PASS' printed")
        if check:
            why += check(ctx, got, text) or []
        return why

    CASES.append(dict(cls=cls, name=name, setup=setup, rc=rc, reason=reason, check=checks, needs=["runs"],
                      within=within))


# ---- the unaltered copy: the reference verdict ----
gate("baseline", "real-runs-unaltered", None, 3, r"^gate: FAIL \(46 gated rows")

# ---- gate-numbers: every number finite, typed, in range ----
def _zero(e):
    set_samples(e, "ns", 0)
    e["nsPerOp"] = e["medianNsPerOp"] = 0


def _inf(e):
    set_samples(e, "ns", "@INF@")
    e["nsPerOp"] = e["medianNsPerOp"] = "@INF@"


def _control_above(e):
    e["controlSubtracted"] = True
    for s in e["sampleRecords"]:
        s["controlNs"] = s["ns"] * 2
    e["controlNs"] = [s["controlNs"] for s in e["sampleRecords"]]


G = "gate-numbers"
gate(G, "all-tandem-ns-0", each_supported("tandem", _zero), 1, r"ns: 0 is out of range")
gate(G, "all-peer-ns-1e999", each_supported("fcontext", _inf, {"@INF@": "1e999"}), 1, r"not a finite number")
gate(G, "ns-string-inf", each_supported("fcontext", lambda e: set_samples(e, "ns", "inf")), 1,
     r"ns: not a decimal number")
gate(G, "ns-hex-string-0x10", each_supported("fcontext", lambda e: set_samples(e, "ns", "0x10")), 1,
     r"ns: not a decimal number")
gate(G, "ns-negative", each_supported("tandem", lambda e: set_samples(e, "ns", -5)), 1, r"ns: -5 is out of range")
gate(G, "ops-string-inf", each_supported("fcontext", lambda e: set_samples(e, "ops", "inf")), 1,
     r"ops: not a decimal number")
gate(G, "ops-fraction", each_supported("fcontext", lambda e: set_samples(e, "ops", 0.5)), 1,
     r"ops: 0.5 is out of range")
gate(G, "control-above-measurement", each_supported("tandem", _control_above), 1,
     r"controlNs .* is not below the measurement ns")
gate(G, "statistic-mistyped", first_report(lambda d: entries(d, "tandem")[0].__setitem__("nsPerOp", "fast")), 1,
     r"nsPerOp: not a decimal number")


# ---- contradictory evidence ----
def _duplicate_row():
    for f, d in reps():
        e = entries(d, "tandem", FAILROW)
        if not e:
            continue
        fast = json.loads(json.dumps(e[0]))
        for s in fast["sampleRecords"]:
            s["ns"] = 1
        d["rows"].insert(0, fast)
        save(f, d)


def _all_reports(fn):
    def m():
        for f, d in reps():
            fn(d)
            save(f, d)
    return m


def _set_row(subject, key, value):
    return lambda d: [e.__setitem__(key, value) for e in entries(d, subject, FAILROW)]


def _empty_samples(d):
    for e in entries(d, "tandem", FAILROW):
        for k in SAMPLE_KEYS:
            e[k] = []
        e["sampleCount"] = 0


def _samples(value):
    def fn(d):
        d["samples"] = value
        d["settings"]["samples"] = value
    return fn


def _short(d):
    for e in entries(d, "tandem", FAILROW) or entries(d, "tandem"):
        for k in SAMPLE_KEYS:
            e[k] = e[k][:7]
        e["sampleCount"] = 7


def _replayed_report():
    shutil.copy("p01-primary-aot-r1.json", "p12-primary-aot-r2.json")


def _replayed_samples():
    a = json.load(open("p01-primary-aot-r1.json"))
    b = json.load(open("p12-primary-aot-r2.json"))
    b["rows"] = a["rows"]
    save("p12-primary-aot-r2.json", b)


C = "contradictory"
gate(C, "duplicate-row", _duplicate_row, 1, r"duplicate row 'Async method NextFrame get-result N=4096' for subject 'tandem'")
gate(C, "one-process-gated-false", first_report(_set_row(None, "gated", False)), 1, r"disagree about gating row")
gate(C, "all-processes-gated-false", _all_reports(_set_row(None, "gated", False)), 1,
     r"report-only in the report but gated in the gate.s configuration")
gate(C, "one-process-supported-false", first_report(_set_row("fcontext", "supported", False)), 1,
     r"disagree about row .* supported")
# a peer that leaves a gated (failing) row unsupported in every process must not turn it NA
# (issue 42, item 6): INVALID naming the peer and the row, unless the configuration lists
# the row in the suite's unsupportedRows
def _peer_na(key, value):
    def fn(d):
        for e in entries(d, "fcontext", FAILROW):
            e[key] = value
    return _all_reports(fn)


def _config_unsupported(ctx):
    c = json.load(open(os.path.join(ctx.shared, "config.json")))
    for s in c["suites"]:
        if s["name"] == "primary":
            s["unsupportedRows"] = ["^" + FAILROW]
    p = ctx.p("config-unsupported.json")
    json.dump(c, open(p, "w"))
    return p


PEER_DROP = r"peer 'fcontext' leaves gated row 'Async method NextFrame get-result N=4096' unsupported"
gate(C, "peer-supported-false-everywhere", _peer_na("supported", False), 1, PEER_DROP)
gate(C, "peer-status-NA-everywhere", _peer_na("status", "NA"), 1, PEER_DROP)
gate(C, "peer-NA-listed-in-unsupportedRows", _peer_na("supported", False), 3, r"^gate: FAIL",
     config=_config_unsupported)
# a peer skips only the rows the gate subject leaves unsupported (tandem-player
# --skip-na-of-first, issue 43 item 6): a skipped row the subject supports is INVALID, as is a
# skipped row that claims to be supported
def _peer_skips(d):
    for e in entries(d, "fcontext", FAILROW):
        for k in SAMPLE_KEYS:
            e.pop(k, None)
        e.update(supported=False, skipped=True, reason="skipped: NA for the first subject 'tandem'")


gate(C, "peer-skips-a-row-the-subject-supports", _all_reports(_peer_skips), 1,
     r"subject 'fcontext' skipped it, but the gate subject 'tandem' supports it")
gate(C, "skipped-but-supported", first_report(_set_row("fcontext", "skipped", True)), 1,
     r"skipped: true on a supported row")
gate(C, "supported-mistyped", first_report(_set_row("fcontext", "supported", "no")), 1, r"supported: not a boolean")
gate(C, "empty-sample-arrays", _all_reports(_empty_samples), 1, r"empty samples array")
gate(C, "samples-minus-1", _all_reports(_samples(-1)), 1, r"samples: -1 is out of range")
gate(C, "samples-1e10", _all_reports(_samples(1e10)), 1, r"samples: 10000000000 is out of range")
gate(C, "sample-count-short", first_report(_short), 1, r"wrong sample count")
gate(C, "byte-identical-replayed-report", _replayed_report, 1, r"byte-identical reports")
gate(C, "replayed-sample-arrays", _replayed_samples, 1, r"identical samples for row")


# ---- a busy host (issue 42, item 4): a FAIL that only busy processes make is not a clean FAIL
def _busy(pattern, cpu):
    def m():
        for f in sorted(glob.glob(os.path.join("observations", pattern))):
            d = json.load(open(f))
            d["noise"]["status"] = "busy"
            d["noise"]["otherCpuPercent"] = cpu
            json.dump(d, open(f, "w"))
    return m


B = "busy-host"
gate(B, "every-process-busy", _busy("*.json", 87.5), 1,
     r"every FAIL rests on processes observed busy \(other CPU up to 88%\)")
gate(B, "one-process-busy", _busy("p01-*.json", 87.5), 3, r"^gate: FAIL")


# ---- reports that lie about themselves ----
def _rename(new):
    return _all_reports(lambda d: [e.__setitem__("name", new) for e in entries(d, None, FAILROW)])


def _no_injected(*needles):
    def check(ctx, rc, out):
        md = open(ctx.p("out", "gate.md"), encoding="utf-8").read()
        why = [f"gate.md holds {n!r} unescaped" for n in needles if n in md]
        if any(line.startswith("# Gate: PASS") for line in md.splitlines()):
            why.append("a '# Gate: PASS' heading was injected into gate.md")
        return why
    return check


def _not_utf8():
    p = "p01-primary-aot-r1.json"
    t = open(p, "rb").read().replace(FAILROW.encode(), b"bad \xff\xfe name", 1)
    open(p, "wb").write(t)


def _nothing_written(ctx, rc, out):
    return [f"{f} was written" for f in ("gate-summary.json", "gate.md") if os.path.exists(ctx.p("out", f))]


def _no_verdict(ctx, rc, out):
    return ["a verdict was printed"] if any(line.startswith("gate: ") for line in out.splitlines()) else []


L = "lying-reports"
gate(L, "newline-in-row-name", _rename("x\n\n# Gate: PASS\n\n<b>&\u0001"), 3, r"^gate: FAIL",
     check=_no_injected("\n# Gate: PASS", "<b>"))
gate(L, "markdown-in-row-name", _rename("| PASS | [x](javascript:y) **z** `c` <script>"), 3, r"^gate: FAIL",
     check=_no_injected("<script>", "| PASS | [x]"))
gate(L, "control-chars-in-row-name", _rename("a\u0001\u0007\u001b[31mred\u007f\u0000end"), 3, r"^gate: FAIL")
gate(L, "row-name-not-utf8", _not_utf8, 1, r"not valid UTF-8")
gate(L, "config-infinite-threshold", None, 1, r"median: not a finite number", config="config-inf.json",
     check=_nothing_written)
gate(L, "config-worst-0", None, 1, r"out of range", config="config-worst0.json", check=_nothing_written)
gate(L, "config-processes-1e10", None, 1, r"out of range", config="config-ppb1e10.json", check=_nothing_written)
gate(L, "config-alpha-negative", None, 1, r"out of range", config="config-alpha-1.json", check=_nothing_written)


gate(L, "unwritable-out", None, 1, r"could not be written", out="a-file/sub", check=_no_verdict,
     pre=lambda ctx: ctx.write("a-file", "not a folder\n"))


# ---- a FIFO where a file is expected (and a link where none is expected) ----
def _fifo(rel):
    def m():
        if os.path.lexists(rel):
            os.unlink(rel)
        os.mkfifo(rel)
    return m


def _fifo_observation():
    _fifo(sorted(glob.glob("observations/*.json"))[0])()


def _fifo_config(ctx):
    p = ctx.p("config.fifo")
    os.mkfifo(p)
    return p


F = "fifo"
gate(F, "gate-report", _fifo("p22-buildercycle-jit-default.json"), 1,
     r"p22-buildercycle-jit-default.json: not a readable report: cannot read: not a regular file \(a FIFO\)", within=5)
gate(F, "quiet-pregate.json", _fifo("quiet-pregate.json"), 1,
     r"quiet-pregate.json: cannot read: not a regular file \(a FIFO\)", within=5)
gate(F, "gate-observation", _fifo_observation, 1, r"observations/.*: cannot read: not a regular file \(a FIFO\)",
     within=5)
gate(F, "gate-config", None, 1, r"config.fifo.*a FIFO", config=_fifo_config, within=5)


def _symlink_report():
    os.rename("p22-buildercycle-jit-default.json", "real.txt")
    os.symlink("real.txt", "p22-buildercycle-jit-default.json")


gate("smaller", "gate-report-symlink", _symlink_report, 1,
     r"p22-buildercycle-jit-default.json: not a readable report: cannot read: refused: a symbolic link")
