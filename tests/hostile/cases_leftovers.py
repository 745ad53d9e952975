"""The leftovers of the hostile corpus (issue 43, item 8), class "leftovers":

- an attempt SIGKILLed while clang builds its AOT player leaves no process behind (every
  child has its own process group and PR_SET_PDEATHSIG, and clang runs under a guard that
  takes its children with it: common/tl_spawn.h), and no compiler temporary in the
  system's temporary folder (here the case's own `systmp`, not a target: a file left in it
  fails the case);
- `tandem pack` of a folder holding a 1 GiB sparse file, then the default `pack --check` of
  what it wrote: the check accepts it (runs of zeros are extracted as holes and do not count
  toward --max-ratio; tools/lib/tl_archive.h says why)."""
import os
import subprocess
import time

CASES = []
L = "leftovers"


def case(name, setup, rc, reason, **kw):
    CASES.append(dict(cls=L, name=name, setup=setup, rc=rc, reason=reason, needs=[], **kw))


def _mine(ctx):
    """Processes (not zombies) whose command line names the case's folder."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if ctx.dir in args and int(pid) != os.getpid():
            found.append(f"{pid}: {args[:160]}")
    return found


def _attempt(ctx):
    os.makedirs(ctx.p("systmp"))
    return [ctx.t, "attempt", "--quick", "--out", ctx.p("out")]


def _sigkill_during_clang(ctx, argv):
    """SIGKILL the attempt as soon as a clang of it runs; then nothing of it may be left."""
    env = dict(os.environ, TMPDIR=ctx.p("systmp"))
    start = time.monotonic()
    p = subprocess.Popen(argv, cwd=ctx.dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = []
    for _ in range(6000):  # 120 s at most: the attempt stages, then builds
        seen = [m for m in _mine(ctx) if "clang" in m and "tandem attempt" not in m]
        if seen or p.poll() is not None:
            break
        time.sleep(0.02)
    p.kill()
    out = p.communicate()[0].decode("utf-8", "replace")
    if not seen:
        return 1, out + "\nno clang of the attempt was seen running\n", time.monotonic() - start
    left = []
    for _ in range(50):  # the guard's death signal takes its group within milliseconds
        left = _mine(ctx)
        if not left:
            break
        time.sleep(0.1)
    for line in left:
        try:
            os.kill(int(line.split(":")[0]), 9)
        except OSError:
            pass
    said = f"SIGKILL while {seen[0].split(': ', 1)[1][:60]}...: " + \
        (f"left running: {left}" if left else "no process left")
    return (1 if left else 0), out + "\n" + said + "\n", time.monotonic() - start


case("sigkill-attempt-during-aot-build", _attempt, 0, r"no process left", runner=_sigkill_during_clang)


def _sparse_folder(ctx):
    os.makedirs(ctx.p("d"))
    os.makedirs(ctx.p("tmp"))
    ctx.write("d/a.txt", "small\n")
    subprocess.run(["truncate", "-s", "1G", ctx.p("d", "big")], check=True)
    return ["sh", "-c", f'"{ctx.t}" pack d --out d.tar.zst && "{ctx.t}" pack --check d.tar.zst']


def _longer(ctx, argv):
    """The round trip hashes 1 GiB twice: more than the suite's 20 s on a busy host."""
    return ctx.run(argv, env={"TMPDIR": ctx.p("tmp")}, timeout=120)


case("pack-round-trip-1GiB-sparse-file", _sparse_folder, 0, r"pack --check d\.tar\.zst: 2 files listed, 0 mismatch",
     targets=["d/files.sha256", "d.tar.zst"], runner=_longer)
