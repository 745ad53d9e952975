#!/usr/bin/env python3
"""mutate.py - the mutation check of the correctness net (issue 40, item 4). Report-only.

Applies the seeded mutants of tests/mutation/mutants.txt to a scratch copy of the tree, one at
a time, builds what the killer tests need in the scratch build directory and runs them (the
ctest labels runtime, smoke, fuzz and stale by default, smoke_negative excluded), stopping at
the first failing test. A mutant is "killed" when a test fails (or times out), "survived" when
every killer passes, "did not compile" when a build it needs fails (not counted as a kill).
The table (id, kind, result, first killer, seconds) and the kill rate go to OUT/report.md and
to the standard output.

Nothing is written into the source tree: the copy, the build and the results live in OUT
(default: /tmp/tandem-mutate-<name of the checkout>). Results accumulate there: a rerun skips
a mutant already run against the same tree with the same definition, unless --force.

Stages, cheapest first, each built just before it runs (a mutant killed early costs no more):
clang tests, tcc tests, the remaining tests (smoke_full, fuzz, stale, scripts), the runtime's
ASan+UBSan tests, its TSan tests, then the sanitized tool runs (smoke_asan, smoke_leaks).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MUTANTS = os.path.join(REPO, "tests", "mutation", "mutants.txt")
MUTABLE_DIRS = ("runtime/src/", "runtime/include/", "runtime/port/")
# Files that do not change what the killers build or run: left out of the tree's digest, so
# that editing them (the mutants, this script, a report) keeps the results gathered so far.
DIGEST_SKIP = ("tests/mutation/", "scripts/mutate.py", "reports/")
STAGES = ("clang", "tcc", "other", "sanitize", "tsan", "sanitized-tools")


class MutateError(Exception):
    """A refusal: the message names the file or mutant and the reason."""


# ---- the mutants file ---------------------------------------------------------------------

def parse_mutants(path):
    """Read the mutants file. Format (see its header):
        @@ ID | kind | description
        file: runtime/src/x.c
        <<<
        old text (exact, one or more lines)
        ===
        new text
        >>>
    (one or more <<< === >>> hunks per mutant, all in its file)."""
    try:
        lines = open(path, encoding="utf-8").read().split("\n")
    except OSError as e:
        raise MutateError(f"{path}: cannot read the mutants file: {e.strerror}")
    mutants, cur, i = [], None, 0
    while i < len(lines):
        line, where = lines[i], f"{path}:{i + 1}"
        if line.startswith("@@ "):
            parts = [p.strip() for p in line[3:].split("|", 2)]
            if len(parts) != 3 or not all(parts):
                raise MutateError(f"{where}: expected '@@ ID | kind | description'")
            cur = {"id": parts[0], "kind": parts[1], "desc": parts[2], "file": None, "hunks": []}
            mutants.append(cur)
        elif line.startswith("file:"):
            if cur is None:
                raise MutateError(f"{where}: 'file:' before any '@@' mutant header")
            cur["file"] = line[5:].strip()
        elif line == "<<<":
            if cur is None:
                raise MutateError(f"{where}: a hunk before any '@@' mutant header")
            old, i = take_block(lines, i + 1, "===", path)
            new, i = take_block(lines, i + 1, ">>>", path)
            cur["hunks"].append((old, new))
        elif line.strip() and not line.startswith("#"):
            raise MutateError(f"{where}: unexpected line {line[:60]!r}")
        i += 1
    check_definitions(mutants, path)
    return mutants


def take_block(lines, i, end, path):
    start = i
    while i < len(lines) and lines[i] != end:
        i += 1
    if i == len(lines):
        raise MutateError(f"{path}:{start}: hunk not closed by '{end}'")
    return "\n".join(lines[start:i]), i


def check_definitions(mutants, path):
    seen = set()
    for m in mutants:
        name = f"{path}: mutant {m['id']}"
        if m["id"] in seen:
            raise MutateError(f"{name}: the id is used twice")
        seen.add(m["id"])
        if not m["file"]:
            raise MutateError(f"{name}: no 'file:' line")
        if not m["file"].startswith(MUTABLE_DIRS):
            raise MutateError(f"{name}: {m['file']} is not under {', '.join(MUTABLE_DIRS)}")
        if not m["hunks"]:
            raise MutateError(f"{name}: no <<< === >>> hunk")
        for old, new in m["hunks"]:
            if old == new or not old:
                raise MutateError(f"{name}: a hunk with empty old text or no change")
        m["digest"] = hashlib.sha256(json.dumps([m["file"], m["hunks"]]).encode()).hexdigest()[:16]


def mutated_text(m, root):
    """The mutant's file under root with every hunk applied; each old text must occur exactly
    once in the unmutated file."""
    path = os.path.join(root, m["file"])
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        raise MutateError(f"mutant {m['id']}: {m['file']}: {e.strerror}")
    for n, (old, new) in enumerate(m["hunks"], 1):
        count = text.count(old)
        if count != 1:
            raise MutateError(f"mutant {m['id']}: {m['file']}: hunk {n}'s old text occurs {count} "
                              f"times (must be exactly once): {old.strip()[:70]!r}")
        text = text.replace(old, new)
    return text


# ---- the scratch tree and build -----------------------------------------------------------

def repo_files():
    out = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, check=True).stdout
    return sorted(f for f in out.decode().split("\0") if f and os.path.isfile(os.path.join(REPO, f)))


def sync_tree(tree):
    """Copy the checkout (tracked and untracked, not ignored) into tree, rewriting only the
    files that differ (unchanged ones keep their mtimes, so the build stays incremental).
    Returns the digest of the tree (DIGEST_SKIP left out)."""
    files, digest = repo_files(), hashlib.sha256()
    wanted = set(files)
    for f in files:
        src, dst = os.path.join(REPO, f), os.path.join(tree, f)
        data = open(src, "rb").read()
        if not f.startswith(DIGEST_SKIP) and not f.endswith(".md"):
            digest.update(f.encode() + b"\0" + hashlib.sha256(data).digest())
        if not os.path.isfile(dst) or open(dst, "rb").read() != data:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as fh:
                fh.write(data)
            shutil.copymode(src, dst)
    for base, _, names in os.walk(tree):
        for name in names:
            rel = os.path.relpath(os.path.join(base, name), tree)
            if rel not in wanted:
                os.remove(os.path.join(base, name))
    return digest.hexdigest()[:16]


def kill_group(p):
    """End the child's process group (each child runs in its own: a hanging test's
    grandchildren go with it)."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def run_logged(cmd, log, cwd, timeout=None):
    """Run cmd (its own process group) appending its output to log; (rc, seconds, timed_out)."""
    t0 = time.time()
    with open(log, "a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n")
        fh.flush()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
            return rc, time.time() - t0, False
        except subprocess.TimeoutExpired:
            kill_group(p)
            return -9, time.time() - t0, True
        except BaseException:
            kill_group(p)
            raise


def configure(out, log):
    """Configure the scratch build, or configure it again: the test list globs the test
    sources, and a test added since the last run must be among the killers."""
    build = os.path.join(out, "build")
    rc, _, _ = run_logged(["cmake", "-S", os.path.join(out, "tree"), "-B", build,
                           "-G", "Unix Makefiles", "-DCMAKE_BUILD_TYPE=Release"], log, out)
    if rc != 0:
        raise MutateError(f"cmake configure of {out}/tree failed (log: {log})")
    return build


def make_targets(build):
    out = subprocess.run(["make", "help"], cwd=build, capture_output=True, text=True).stdout
    return {line[4:].strip() for line in out.splitlines() if line.startswith("... ")}


def stage_of(labels):
    """clang, tcc, sanitize (ASan+UBSan runtime tests), tsan; sanitized-tools for a sanitized
    test outside the runtime label (smoke_asan, smoke_leaks: minutes each, run last); other
    for the rest (smoke_full, fuzz, stale, scripts)."""
    for stage in ("clang", "tcc", "tsan"):
        if stage in labels:
            return stage
    if "sanitize" in labels:
        return "sanitize" if "runtime" in labels else "sanitized-tools"
    return "other"


def killer_tests(build, args):
    """The killer tests (ctest's json-v1): name, labels, stage and the targets they need."""
    cmd = ["ctest", "--show-only=json-v1", "-L", args.labels]
    if args.exclude:
        cmd += ["-E", args.exclude]
    data = json.loads(subprocess.run(cmd, cwd=build, capture_output=True, text=True, check=True).stdout)
    targets, tests = make_targets(build), []
    for t in data.get("tests", []):
        labels = []
        for prop in t.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value", [])
        stage = stage_of(labels)
        # The command's words name the targets (a test's executable, a script's tool); a test
        # whose executable is not built yet has no command in the listing: its own name then
        # (the runtime tests are named as their targets).
        need, unknown = set(), "command" not in t
        for word in t.get("command", [t["name"]]):
            base = os.path.basename(word)
            for cand in (base, base + "_build"):
                if cand in targets:
                    need.add(cand)
                    break
            else:
                if word.startswith(build + "/") and not os.path.isdir(word):
                    unknown = True       # a built file of no target known by name: build all
        tests.append({"name": t["name"], "labels": labels, "stage": stage,
                      "targets": sorted(need), "build_all": unknown and not need})
    if not tests:
        raise MutateError(f"no test carries a label matching {args.labels!r} in {build}")
    return tests


# ---- building and running one stage -------------------------------------------------------

CTEST_LINE = re.compile(r"Test\s+#\d+:\s+(\S+)\s+\.*\s*(.*?)\s+([\d.]+) sec")
CTEST_START = re.compile(r"^\s*Start\s+\d+:\s+(\S+)")


def build_stage(build, tests, args, log, timeout):
    """Build what the stage's tests need; (ok, seconds)."""
    targets = sorted({t for test in tests for t in test["targets"]})
    if any(test["build_all"] for test in tests):
        targets = ["all"]
    if not targets:
        return True, 0.0
    rc, secs, timed_out = run_logged(["make", f"-j{args.jobs}", "--no-print-directory"] + targets,
                                     log, build, timeout)
    return rc == 0 and not timed_out, secs


def parse_ctest(output):
    """(first failing test, its status) from ctest's output, or (None, None); the tests that
    started without finishing; the tests passed."""
    started, finished, passed, first = [], set(), set(), (None, None)
    for line in output.splitlines():
        s = CTEST_START.search(line)
        if s:
            started.append(s.group(1))
            continue
        m = CTEST_LINE.search(line)
        if m:
            finished.add(m.group(1))
            status = m.group(2).replace("*", "").strip()
            if status == "Passed":
                passed.add(m.group(1))
            elif first[0] is None:
                first = (m.group(1), status)
    return first, [n for n in started if n not in finished], passed


def ctest_run(build, names, args, log, timeout):
    """ctest over the named tests, stopping at the first failure: (first failing test, its
    status, tests passed, tests started and unfinished, timed out, exit code)."""
    pattern = "|".join(re.escape(n) for n in names)
    cmd = ["ctest", "-R", f"^({pattern})$", f"-j{args.jobs}", "--stop-on-failure",
           "--output-on-failure", "--output-log", log + ".ctest"]
    p = subprocess.Popen(cmd, cwd=build, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        output, _ = p.communicate(timeout=max(timeout, 1))
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(p)
        output, _ = p.communicate()
        timed_out = True
    except BaseException:
        kill_group(p)
        raise
    with open(log, "a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{output}")
    (first, status), running, passed = parse_ctest(output)
    return first, status, passed, running, timed_out, p.returncode


def run_stage(build, tests, args, log, timeout):
    """Run the stage's tests, stopping at the first failure, which is confirmed by running
    that test again alone: a test that then passes failed by chance (a flaky test, the
    machine's load), is noted and the stage goes on with the tests not yet passed. Returns
    (verdict, test, detail, flaky tests): verdict 'pass', 'killed' or 'timeout'."""
    deadline, flaky = time.time() + timeout, []
    todo = [t["name"] for t in tests]
    while todo:
        first, status, passed, running, timed_out, rc = ctest_run(build, todo, args, log, deadline - time.time())
        if timed_out:
            return "timeout", (running or ["?"])[0], f"mutant budget of {args.timeout} s spent", flaky
        if first is None:
            if rc != 0:
                return "killed", "?", f"ctest exited {rc} (see {log})", flaky
            return "pass", None, None, flaky
        if "Timeout" in status:
            return "timeout", first, status, flaky
        again = ctest_run(build, [first], args, log, deadline - time.time())
        if again[0] is not None or again[4]:
            return "killed", first, status, flaky
        flaky.append(first)
        todo = [n for n in todo if n not in passed and n != first]
    return "pass", None, None, flaky


def run_killers(build, tests, args, log):
    """Every stage in order until a test fails. Returns the result's fields."""
    t0, build_secs, flaky = time.time(), 0.0, []

    def result(res, test, detail):
        return {"result": res, "test": test, "detail": detail, "flaky": flaky,
                "build_seconds": round(build_secs, 1)}

    for stage in STAGES:
        group = [t for t in tests if t["stage"] == stage]
        if not group:
            continue
        left = args.timeout - (time.time() - t0)
        ok, secs = build_stage(build, group, args, log, max(left, 1) + args.build_timeout)
        build_secs += secs
        if not ok:
            return result("did not compile", f"({stage} build)", f"see {log}")
        left = args.timeout - (time.time() - t0 - build_secs)
        if left <= 0:
            return result("killed (timeout)", f"({stage} stage not reached)",
                          f"mutant budget of {args.timeout} s spent")
        verdict, test, detail, stage_flaky = run_stage(build, group, args, log, left)
        flaky += stage_flaky
        if verdict != "pass":
            return result("killed (timeout)" if verdict == "timeout" else "killed", test, detail)
    return result("survived", "", "")


# ---- the run -------------------------------------------------------------------------------

class Scratch:
    """The scratch tree: at most one file differs from the checkout at a time (the mutant's),
    restored when the next mutant is in another file, at the end, and on an interruption."""

    def __init__(self, out):
        self.tree = os.path.join(out, "tree")
        self.dirty = None

    def apply(self, m, text):
        if self.dirty and self.dirty != m["file"]:
            self.restore()
        with open(os.path.join(self.tree, m["file"]), "w", encoding="utf-8") as fh:
            fh.write(text)
        self.dirty = m["file"]

    def restore(self):
        if self.dirty:
            shutil.copyfile(os.path.join(REPO, self.dirty), os.path.join(self.tree, self.dirty))
            self.dirty = None


def baseline(out, build, tests, tree_digest, args):
    """The killers must pass on the unmutated tree (else every kill would be meaningless);
    checked once per tree digest."""
    path = os.path.join(out, "baseline.json")
    if os.path.isfile(path) and not args.force:
        old = json.load(open(path))
        if old.get("tree") == tree_digest and old.get("tests") == sorted(t["name"] for t in tests):
            return old
    log = os.path.join(out, "logs", "baseline.log")
    if os.path.exists(log):
        os.remove(log)
    print(f"baseline: building and running {len(tests)} killer tests on the unmutated tree "
          f"(log: {log})", flush=True)
    t0 = time.time()
    for stage in STAGES:
        group = [t for t in tests if t["stage"] == stage]
        if not group:
            continue
        ok, _ = build_stage(build, group, args, log, None)
        if not ok:
            raise MutateError(f"baseline: the {stage} build fails on the unmutated tree (log: {log})")
        verdict, test, detail, flaky = run_stage(build, group, args, log, 3600)
        if flaky:
            print(f"baseline: {', '.join(flaky)} failed once and passed again alone (flaky)", flush=True)
        if verdict != "pass":
            raise MutateError(f"baseline: {test} fails on the unmutated tree ({detail}; log: {log}); "
                              "the net must pass before mutants can be judged")
    result = {"tree": tree_digest, "tests": sorted(t["name"] for t in tests),
              "seconds": round(time.time() - t0, 1)}
    json.dump(result, open(path, "w"), indent=1)
    return result


def run_mutant(m, text, scratch, build, tests, tree_digest, args, out):
    log = os.path.join(out, "logs", f"{m['id']}.log")
    if os.path.exists(log):
        os.remove(log)
    scratch.apply(m, text)
    t0 = time.time()
    r = run_killers(build, tests, args, log)
    r.update({"id": m["id"], "kind": m["kind"], "file": m["file"], "desc": m["desc"],
              "digest": m["digest"], "tree": tree_digest, "seconds": round(time.time() - t0, 1),
              "log": log})
    json.dump(r, open(os.path.join(out, "results", f"{m['id']}.json"), "w"), indent=1)
    return r


def load_result(out, m, tree_digest):
    path = os.path.join(out, "results", f"{m['id']}.json")
    if not os.path.isfile(path):
        return None
    r = json.load(open(path))
    return r if r.get("digest") == m["digest"] and r.get("tree") == tree_digest else None


def report(mutants, out, tree_digest, base):
    rows, counts = [], {"killed": 0, "survived": 0, "did not compile": 0, "not run": 0}
    total = 0.0
    for m in mutants:
        r = load_result(out, m, tree_digest)
        if r is None:
            counts["not run"] += 1
            rows.append(f"| {m['id']} | {m['kind']} | {m['file']} | not run | | |")
            continue
        key = "killed" if r["result"].startswith("killed") else r["result"]
        counts[key] += 1
        total += r["seconds"]
        how = r["test"] + (f" ({r['detail']})" if r["detail"] and key == "killed" else "")
        if r.get("flaky"):
            how += f"; failed once, passed again alone: {', '.join(r['flaky'])}"
        rows.append(f"| {m['id']} | {m['kind']} | {m['file']} | {r['result']} | {how} | {r['seconds']:.0f} |")
    judged = counts["killed"] + counts["survived"]
    issue = [load_result(out, m, tree_digest) for m in mutants if m["kind"].startswith("issue-")]
    issue_killed = sum(1 for r in issue if r and r["result"].startswith("killed"))
    rate = f"{100.0 * counts['killed'] / judged:.1f}%" if judged else "n/a"
    lines = ["# Mutation check of the net", "",
             f"Tree {tree_digest}; baseline (unmutated) run {base.get('seconds', 0):.0f} s; "
             f"mutants run {total:.0f} s in all.", "",
             f"Kill rate: {counts['killed']}/{judged} = {rate} (killed {counts['killed']}, survived "
             f"{counts['survived']}, did not compile {counts['did not compile']}, not run {counts['not run']})",
             f"The issue's kinds (issue-N): {issue_killed}/{len(issue)} killed.",
             "", "| id | kind | file | result | first killer | seconds |", "|---|---|---|---|---|---|"] + rows
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(text)
    return text


def parse_args(argv):
    default_out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tandem-mutate-" + os.path.basename(REPO))
    ap = argparse.ArgumentParser(
        prog="scripts/mutate.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Example: scripts/mutate.py --only M01,M02 --jobs 2   (then read OUT/report.md)")
    ap.add_argument("--list", action="store_true", help="list the mutants (id, kind, file, description) and exit")
    ap.add_argument("--check", action="store_true",
                    help="check that every mutant applies (each old text exactly once) and exit")
    ap.add_argument("--only", metavar="ID[,ID]", help="run only these mutants")
    ap.add_argument("--out", metavar="DIR", default=default_out,
                    help=f"scratch tree, build, logs, results and report.md (default {default_out})")
    ap.add_argument("--jobs", metavar="N", type=int, default=2, help="make and ctest parallelism (default 2)")
    ap.add_argument("--timeout", metavar="S", type=int, default=600,
                    help="per-mutant budget for its tests, builds excluded (default 600); a mutant that "
                         "spends it, or trips a test's own ctest TIMEOUT, is 'killed (timeout)'")
    ap.add_argument("--build-timeout", metavar="S", type=int, default=1800,
                    help="extra allowance per stage build (default 1800)")
    ap.add_argument("--force", action="store_true", help="rerun mutants that have a result already")
    ap.add_argument("--mutants", metavar="FILE", default=DEFAULT_MUTANTS, help="the mutants file")
    ap.add_argument("--labels", metavar="REGEX", default="runtime|smoke|fuzz|stale",
                    help="ctest label regex of the killer tests (default 'runtime|smoke|fuzz|stale')")
    ap.add_argument("--exclude", metavar="REGEX", default="smoke_negative",
                    help="ctest name regex of tests left out (default 'smoke_negative'; '' for none)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    return args


def select(mutants, only):
    if not only:
        return mutants
    ids = [i.strip() for i in only.split(",") if i.strip()]
    known = {m["id"] for m in mutants}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise MutateError(f"--only: no mutant named {', '.join(unknown)} in the mutants file")
    return [m for m in mutants if m["id"] in ids]


def main(argv):
    args = parse_args(argv)
    mutants = parse_mutants(args.mutants)
    texts = {m["id"]: mutated_text(m, REPO) for m in mutants}    # refuses a bad hunk up front
    if args.list:
        for m in mutants:
            print(f"{m['id']:<5} {m['kind']:<22} {m['file']:<32} {m['desc']}")
        return 0
    if args.check:
        print(f"{len(mutants)} mutants, each applies exactly once ({args.mutants})")
        return 0
    chosen = select(mutants, args.only)
    out = os.path.abspath(args.out)
    if out == REPO or out.startswith(REPO + os.sep):
        raise MutateError(f"--out {out}: inside the checkout; a run writes nothing into the source tree")
    for d in ("tree", "logs", "results"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    tree_digest = sync_tree(os.path.join(out, "tree"))
    build = configure(out, os.path.join(out, "logs", "configure.log"))
    tests = killer_tests(build, args)
    base = baseline(out, build, tests, tree_digest, args)
    scratch = Scratch(out)
    t0 = time.time()
    try:
        for n, m in enumerate(chosen, 1):
            if not args.force and load_result(out, m, tree_digest):
                print(f"[{n}/{len(chosen)}] {m['id']}: done already (--force reruns it)", flush=True)
                continue
            print(f"[{n}/{len(chosen)}] {m['id']} ({m['kind']}, {m['file']}): ", end="", flush=True)
            r = run_mutant(m, texts[m["id"]], scratch, build, tests, tree_digest, args, out)
            print(f"{r['result']} {r['test']} {r['seconds']:.0f} s", flush=True)
    finally:
        scratch.restore()
    print(f"this run: {time.time() - t0:.0f} s\n")
    print(report(mutants, out, tree_digest, base), end="")
    print(f"\n(written to {os.path.join(out, 'report.md')})")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)     # a background run ignores SIGINT
    try:
        sys.exit(main(sys.argv[1:]))
    except MutateError as e:
        print(f"mutate.py: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("mutate.py: interrupted (the scratch tree was restored; rerun to resume)", file=sys.stderr)
        sys.exit(130)
