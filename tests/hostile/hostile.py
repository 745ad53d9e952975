#!/usr/bin/env python3
"""The adversarial suite of issue 18: hostile and careless input to every tool.

Usage: hostile.py --tandem TANDEM --player PLAYER --runs RUNS_ZIP --work DIR [--only REGEX]

The cases are a table (cases_gate.py, cases_files.py): each names its class, generates
its inputs in its own folder, runs one command and states the exit code, a regular
expression the output must match, optionally a time bound and further checks. Every case
also asserts that nothing outside its target changed: the sentinel tree (the places its
symbolic links point to) and its own folder, except the declared targets, are listed with
type, mode, size, link target and SHA-256 before and after the run. To extend the suite,
add a row to a table.

At the end it prints the count of inputs per class and the pass count, e.g.
"hostile: gate-numbers 9/9, ..., total 80/80"; exit 0 only when every case passed.
"""
import argparse
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases_files  # noqa: E402
import cases_gate  # noqa: E402
import cases_leftovers  # noqa: E402

TIMEOUT = 20  # a command still running after this is counted as blocked (exit 124)
# the classes of issue 18's list, in the order they are reported (a new class goes last)
CLASSES = ["baseline", "gate-numbers", "contradictory", "lying-reports", "build-staging", "fifo", "bombs",
           "attempt-folder", "smaller", "leftovers"]


class Ctx:
    """What a case sees: the tools, its own folder, the shared sentinel and fixtures."""

    def __init__(self, args, work):
        self.t = os.path.abspath(args.tandem)
        self.pl = os.path.abspath(args.player)
        self.runs_zip = os.path.abspath(args.runs)
        self.work = work
        self.sentinel = os.path.join(work, "sentinel")
        self.shared = os.path.join(work, "shared")  # fixtures built once (runs copy, bombs)
        self.dir = None  # the case's folder, set per case

    def p(self, *parts):
        """A path inside the case's folder."""
        return os.path.join(self.dir, *parts)

    def write(self, rel, data, mode=None):
        path = self.p(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        if mode is not None:
            os.chmod(path, mode)
        return path

    def fifo(self, rel):
        path = self.p(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        os.mkfifo(path)
        return path

    def run(self, argv, env=None, timeout=TIMEOUT):
        """Run argv in the case folder; (exit code, stdout+stderr, seconds)."""
        e = dict(os.environ)
        e.update(env or {})
        start = time.monotonic()
        try:
            r = subprocess.run(argv, cwd=self.dir, env=e, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout)
            rc, out = r.returncode, r.stdout
        except subprocess.TimeoutExpired as x:
            rc, out = 124, (x.stdout or b"") + b"\n[blocked: killed after %d s]\n" % timeout
        return rc, out.decode("utf-8", "replace"), time.monotonic() - start


def snapshot(root, skip):
    """Every entry under root (not following links) except the paths in skip and below:
    relative path -> (type, mode, size, link target or SHA-256). FIFOs are not opened."""
    listing = {}
    if not os.path.lexists(root):
        return listing
    for base, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = os.path.join(base, name)
            if any(path == s or path.startswith(s + os.sep) for s in skip):
                if name in dirs:
                    dirs.remove(name)
                continue
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            if stat.S_ISLNK(st.st_mode):
                listing[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                listing[rel] = ("file", oct(st.st_mode), st.st_size, h.hexdigest())
            else:
                listing[rel] = (stat.S_IFMT(st.st_mode), oct(st.st_mode))
    return listing


def diff(before, after):
    out = []
    for k in sorted(set(before) | set(after)):
        if before.get(k) != after.get(k):
            what = "added" if k not in before else "removed" if k not in after else "changed"
            out.append(f"{what}: {k}")
    return out


def make_sentinel(path):
    """A small tree the cases' symbolic links point into: any write through them shows."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.join(path, "target"))
    os.makedirs(os.path.join(path, "keep", "sub"))
    with open(os.path.join(path, "keep", "a.txt"), "w") as f:
        f.write("sentinel\n")
    with open(os.path.join(path, "keep", "sub", "b.json"), "w") as f:
        f.write('{"sentinel": true}\n')


def run_case(ctx, c):
    """Run one case; a list of failure reasons (empty: passed) and a one-line summary."""
    ctx.dir = os.path.join(ctx.work, "cases", c["cls"], c["name"])
    shutil.rmtree(ctx.dir, ignore_errors=True)
    os.makedirs(ctx.dir)
    try:
        argv = c["setup"](ctx)
    except Exception as x:  # a broken generator is the suite's failure, said plainly
        return [f"generating the input failed: {x!r}"], 0.0, ""
    env = c["env"](ctx) if callable(c.get("env")) else c.get("env")
    targets = [ctx.p(t) for t in c.get("targets", ["out"])]
    before = (snapshot(ctx.sentinel, []), snapshot(ctx.dir, targets))
    if "runner" in c:
        rc, out, secs = c["runner"](ctx, argv)
    else:
        rc, out, secs = ctx.run(argv, env=env)
    after = (snapshot(ctx.sentinel, []), snapshot(ctx.dir, targets))
    why = []
    if rc == 124:
        why.append(f"blocked (no answer within {TIMEOUT} s)")
    elif rc != c["rc"]:
        why.append(f"exit {rc}, expected {c['rc']}")
    if c.get("reason") and not re.search(c["reason"], out, re.M):
        why.append(f"no reason matching /{c['reason']}/")
    if c.get("within") and secs > c["within"]:
        why.append(f"took {secs:.2f} s, {c['within']} s allowed")
    why += [f"sentinel {d}" for d in diff(before[0], after[0])]
    why += [f"outside the target {d}" for d in diff(before[1], after[1])]
    if "check" in c:
        why += c["check"](ctx, rc, out) or []
    if why:
        tail = "\n".join("      " + line for line in out.strip().splitlines()[-8:])
        why.append("output (last lines):\n" + tail)
    # the line that gave the reason, for the log (quotable evidence of each answer)
    m = re.search(c["reason"], out, re.M) if c.get("reason") else None
    said = out[out.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0] if m else ""
    return why, secs, said.replace(ctx.dir + "/", "")[:140]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--player", required=True)
    ap.add_argument("--runs", required=True, help="runs.zip of a real attempt (the gate's cases)")
    ap.add_argument("--work", required=True, help="work folder (emptied first)")
    ap.add_argument("--only", default="", help="run only the cases whose class/name matches this regex")
    ap.add_argument("--keep", action="store_true", help="keep the work folder of passed cases")
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ctx = Ctx(args, work)
    make_sentinel(ctx.sentinel)
    os.makedirs(ctx.shared)
    cases = cases_gate.CASES + cases_files.CASES + cases_leftovers.CASES
    cases.sort(key=lambda c: CLASSES.index(c["cls"]) if c["cls"] in CLASSES else len(CLASSES))
    names = [f"{c['cls']}/{c['name']}" for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"hostile: case names repeated: {sorted(dup)}")
    cases = [c for c, n in zip(cases, names) if re.search(args.only, n)]
    fixtures = set(f for c in cases for f in c.get("needs", []))
    cases_gate.prepare(ctx, fixtures)
    cases_files.prepare(ctx, fixtures)
    order, total, passed = [], {}, {}
    for c in cases:
        if c["cls"] not in total:
            order.append(c["cls"])
        total[c["cls"]] = total.get(c["cls"], 0) + 1
        why, secs, said = run_case(ctx, c)
        label = f"{c['cls']}/{c['name']}"
        if why:
            print(f"FAIL {label} ({secs:.2f} s)")
            for w in why:
                print("    " + w)
        else:
            passed[c["cls"]] = passed.get(c["cls"], 0) + 1
            print(f"ok   {label} (exit {c['rc']}, {secs:.2f} s)" + (f": {said}" if said else ""))
            if not args.keep:
                shutil.rmtree(ctx.dir, ignore_errors=True)
        sys.stdout.flush()
    n, ok = sum(total.values()), sum(passed.values())
    print("hostile: " + ", ".join(f"{k} {passed.get(k, 0)}/{total[k]}" for k in order) + f", total {ok}/{n}")
    sys.exit(0 if ok == n and n > 0 else 1)


if __name__ == "__main__":
    main()
