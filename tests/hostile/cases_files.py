"""The file and command-line cases: build trusting its staging, FIFOs where a file is
expected, extraction bombs, the attempt folder, and the smaller holes of issue 18.

A row: case(class, name, setup, exit code, reason regex, targets=[...], within=seconds,
check=fn, env=fn). setup(ctx) writes the inputs into ctx.dir and returns the command;
targets are the paths (relative to the case folder) the command may change, default
["out"]; everything else in the case folder and the sentinel must stay as it was."""
import bz2
import os
import shutil
import signal
import struct
import subprocess
import threading
import time
import zipfile
import zlib

CASES = []


def case(cls, name, setup, rc, reason, needs=(), **kw):
    CASES.append(dict(cls=cls, name=name, setup=setup, rc=rc, reason=reason, needs=list(needs), **kw))


# ---- fixtures, built once: a staging, the bombs ----
def make_src(root):
    """A small source tree shaped like the repository's staged folders."""
    files = {
        "runtime/src/a.c": "int td_a(void) { return 1; }\n",
        "runtime/src/b.c": "int td_b(void) { return 2; }\n",
        "runtime/include/tandem/a.h": "#pragma once\nint td_a(void);\n",
        "players/suites/smoke/cases.c": "int smoke_case(void) { return 0; }\n",
        "players/subjects/callback/cb.c": "int cb(void) { return 2; }\n",
    }
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        open(os.path.join(root, rel), "w").write(text)


def zip_raw(path, name, method, data, crc, usize):
    """A one-entry zip written by hand, so the declared size can lie."""
    n = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 46, 0, method, 0, 0x21, crc, len(data), usize, len(n), 0) + n
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 46, 46, 0, method, 0, 0x21, crc, len(data), usize,
                          len(n), 0, 0, 0, 0, 0, 0) + n
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    with open(path, "wb") as f:
        f.write(local + data + central + end)


def prepare(ctx, fixtures):
    sh = ctx.shared
    if "staging" in fixtures:
        make_src(os.path.join(sh, "src"))
        subprocess.run([ctx.t, "stage", "--root", os.path.join(sh, "src"), "--out", os.path.join(sh, "st")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if "bombs" in fixtures:
        # the 2 GiB of bzip2 take ~10 s of CPU: made in a thread (bz2 releases the GIL) while
        # the other cases run; the bomb cases wait for it (bombs_ready)
        global _bomb_thread
        _bomb_thread = threading.Thread(target=_make_bombs, args=(sh,))
        _bomb_thread.start()


_bomb_thread = None


def bombs_ready():
    if _bomb_thread:
        _bomb_thread.join()


def _make_bombs(sh):
    # 200 GiB of holes: GNU tar's sparse map, zstd: ~150 bytes
    subprocess.run(["truncate", "-s", "200G", os.path.join(sh, "huge")], check=True)
    subprocess.run("tar --sparse -cf - huge | zstd -q -19 > sparse-bomb.tar.zst", shell=True, cwd=sh, check=True)
    subprocess.run("tar --sparse --format=posix -cf - huge | zstd -q -19 > sparse-bomb-pax.tar.zst", shell=True,
                   cwd=sh, check=True)
    os.unlink(os.path.join(sh, "huge"))
    # 64 MiB of one repeated line in a tar.zst (ratio ~ 30000:1); not zeros, which are
    # extracted as holes and do not count toward the ratio (cases_leftovers.py)
    subprocess.run("yes tandem | head -c 64M > text && tar -cf - text | zstd -q -19 > ratio-bomb.tar.zst && rm text",
                   shell=True, cwd=sh, check=True)
    # 2047 MiB of zeros, bzip2 in a zip: ~1.7 KB. Once honest, once declaring 1000 bytes.
    size, chunk = 2047 << 20, b"\0" * (1 << 20)
    comp, crc = bz2.BZ2Compressor(9), 0
    parts = []
    for _ in range(size >> 20):
        parts.append(comp.compress(chunk))
        crc = zlib.crc32(chunk, crc)
    data = b"".join(parts) + comp.flush()
    zip_raw(os.path.join(sh, "zip-bomb.zip"), "z.bin", 12, data, crc, size)
    zip_raw(os.path.join(sh, "zip-bomb-lying.zip"), "z.bin", 12, data, crc, 1000)
    z = zipfile.ZipFile(os.path.join(sh, "zeros8m.zip"), "w", zipfile.ZIP_DEFLATED)
    z.writestr("z.bin", b"\0" * (8 << 20))
    z.close()
    for f in ("sparse-bomb.tar.zst", "sparse-bomb-pax.tar.zst", "ratio-bomb.tar.zst", "zip-bomb.zip", "zeros8m.zip"):
        print(f"fixture {f}: {os.path.getsize(os.path.join(sh, f))} bytes")


def shared(ctx, name):
    return os.path.join(ctx.shared, name)


def tmpdir_env(ctx):
    """TMPDIR inside the case folder (not a target): a temporary folder left is a change."""
    os.makedirs(ctx.p("tmp"), exist_ok=True)
    return {"TMPDIR": ctx.p("tmp")}


# ---- build trusts its staging: a staging that no longer matches staging.json is refused ----
def build_case(name, mutate, reason):
    def setup(ctx):
        st = ctx.p("st")
        shutil.copytree(shared(ctx, "st"), st, symlinks=True)
        mutate(st)
        # --shell: any executable; the build stops before using it
        return [ctx.t, "build", "--backend", "jit", "--shell", "/bin/true", "--staging", st, "--out", ctx.p("out")]

    def no_player(ctx, rc, out):
        built = [f for f in os.listdir(ctx.p("out"))] if os.path.isdir(ctx.p("out")) else []
        return [f"the refused build wrote {built}"] if built else []

    case("build-staging", name, setup, 1, reason, needs=["staging"], check=no_player)


def _append(rel, text):
    def m(st):
        with open(os.path.join(st, rel), "a") as f:
            f.write(text)
    return m


def _edit_json(fn):
    def m(st):
        import json
        p = os.path.join(st, "staging.json")
        d = json.load(open(p))
        fn(d)
        json.dump(d, open(p, "w"))
    return m


def _replace_by_link(rel, target):
    def m(st):
        p = os.path.join(st, rel)
        os.rename(p, p + ".real")
        os.symlink(target(p), p)
    return m


B = "build-staging"
build_case("edited-staged-source", _append("runtime/src/a.c", "int td_evil(void) { return 6; }\n"),
           r"(?s)changed: \S*runtime/src/a\.c.*refusing to build")
build_case("added-staged-file", lambda st: open(os.path.join(st, "runtime/src/c.c"), "w").write("int c;\n"),
           r"(?s)extra: \S*runtime/src/c\.c.*refusing to build")
build_case("removed-staged-file", lambda st: os.unlink(os.path.join(st, "runtime/src/b.c")),
           r"(?s)missing: \S*runtime/src/b\.c.*refusing to build")
build_case("staging.json-file-hash-edited", _edit_json(lambda d: d["files"][0].__setitem__("sha256", "0" * 64)),
           r"(?s)stagingHash: does not match files.*refusing to build")
build_case("staging.json-staging-hash-edited", _edit_json(lambda d: d.__setitem__("stagingHash", "1" * 64)),
           r"(?s)stagingHash: does not match files.*refusing to build")
build_case("staged-source-is-a-symlink", _replace_by_link("runtime/src/a.c", lambda p: p + ".real"),
           r"(?s)runtime/src/a\.c: refused: (a )?symbolic link.*refusing to build")
build_case("staging.json-is-a-symlink", _replace_by_link("staging.json", lambda p: "staging.json.real"),
           r"staging.json: cannot read: refused: a symbolic link")

# ---- a FIFO where a file is expected: answered at once (the gate's positions: cases_gate) ----
F = "fifo"


def _fifo_in_staging(rel):
    def m(st):
        os.unlink(os.path.join(st, rel))
        os.mkfifo(os.path.join(st, rel))
    return m


def fifo_build(name, rel, reason):
    def setup(ctx):
        st = ctx.p("st")
        shutil.copytree(shared(ctx, "st"), st, symlinks=True)
        _fifo_in_staging(rel)(st)
        return [ctx.t, "build", "--backend", "jit", "--shell", "/bin/true", "--staging", st, "--out", ctx.p("out")]
    case(F, name, setup, 1, reason, needs=["staging"], within=3)


fifo_build("build-staging.json", "staging.json", r"staging.json: cannot read: not a regular file \(a FIFO\)")
fifo_build("build-listed-staged-file", "runtime/src/a.c", r"runtime/src/a.c \(not a regular file \(a FIFO\)\)")


def _verify_fifo(ctx):
    st = ctx.p("st")
    shutil.copytree(shared(ctx, "st"), st, symlinks=True)
    _fifo_in_staging("runtime/src/b.c")(st)
    return [ctx.t, "verify", "--staging", st]


case(F, "verify-listed-staged-file", _verify_fifo, 1, r"runtime/src/b.c \(not a regular file \(a FIFO\)\)",
     needs=["staging"], within=3)
case(F, "hash-argument", lambda ctx: [ctx.t, "hash", ctx.fifo("in.fifo")], 1,
     r"in.fifo: cannot read: not a regular file \(a FIFO\)", within=3)
case(F, "pack-check-archive", lambda ctx: [ctx.t, "pack", "--check", ctx.fifo("p.zip")], 1,
     r"p.zip.*a FIFO", within=3)
case(F, "pack-extract-archive", lambda ctx: [ctx.t, "pack", "--extract", ctx.fifo("p.tar.zst"), "--out", ctx.p("out")],
     1, r"p.tar.zst.*a FIFO", within=3)


def _sums_fifo(ctx):
    ctx.write("pk/a.txt", "a\n")
    subprocess.run([ctx.t, "pack", ctx.p("pk"), "--out", ctx.p("pk.zip")], check=True, stdout=subprocess.DEVNULL)
    ctx.fifo("pk/files.sha256")
    return [ctx.t, "pack", "--check", ctx.p("pk")]


case(F, "pack-check-files.sha256", _sums_fifo, 1, r"files.sha256: cannot read: not a regular file \(a FIFO\)",
     within=3)


def _stage_fifo(ctx):
    make_src(ctx.p("src"))
    ctx.fifo("src/runtime/src/a.c")
    return [ctx.t, "stage", "--root", ctx.p("src"), "--out", ctx.p("out")]


case(F, "stage-source-file", _stage_fifo, 1, r"runtime/src/a.c: refused: not a regular file", within=3)

# ---- extraction bombs and limits ----
X = "bombs"


def _copy_in(name):
    def setup_path(ctx):
        shutil.copy(shared(ctx, name), ctx.p(name))
        return ctx.p(name)
    return setup_path


def bomb(name, archive, argv_tail, rc, reason, within=None, extract=False):
    def setup(ctx):
        bombs_ready()
        a = _copy_in(archive)(ctx)
        if extract:
            return [ctx.t, "pack", "--extract", a, "--out", ctx.p("out"), *argv_tail]
        return [ctx.t, "pack", "--check", a, *argv_tail]

    def small_out(ctx, rc_, out):
        big = []
        for base, _, files in os.walk(ctx.p("out")):
            big += [f for f in files if os.path.getsize(os.path.join(base, f)) > (8 << 20)]
        return [f"wrote on: {big}"] if big else []

    case(X, name, setup, rc, reason, needs=["bombs"], within=within, env=tmpdir_env, check=small_out)


bomb("sparse-tar.zst-200GiB-check", "sparse-bomb.tar.zst", [], 1, r"refused: a sparse entry", within=1)
bomb("sparse-tar.zst-200GiB-extract", "sparse-bomb.tar.zst", [], 1, r"refused: a sparse entry", within=1, extract=True)
bomb("sparse-pax-tar.zst-200GiB-check", "sparse-bomb-pax.tar.zst", [], 1, r"refused: a sparse entry", within=1)
bomb("zip-bzip2-2GiB-check", "zip-bomb.zip", [], 1, r"larger than the per-entry limit", within=2)
bomb("zip-bzip2-2GiB-declared-1000-bytes", "zip-bomb-lying.zip", [], 1, r"z.bin: write failed: Too much data", within=2,
     extract=True)
bomb("tar.zst-64MiB-text-ratio", "ratio-bomb.tar.zst", [], 1, r"more than the ratio limit", within=5, extract=True)
bomb("zip-over-max-entry", "zeros8m.zip", ["--max-entry", "1048576"], 1, r"larger than the per-entry limit",
     extract=True)
bomb("zip-over-max-total", "zeros8m.zip", ["--max-total", "4096", "--max-ratio", "1000000"], 1, r"total limit",
     extract=True)
bomb("max-total-not-an-integer", "zeros8m.zip", ["--max-total", "1e3"], 2, r"--max-total", extract=True)
bomb("max-ratio-negative", "zeros8m.zip", ["--max-ratio", "-5"], 2, r"--max-ratio", extract=True)


def _sigint_runner(ctx, argv):
    """SIGINT as soon as --check's temporary folder appears: exit 1, the folder removed."""
    env = dict(os.environ, TMPDIR=ctx.p("tmp"))
    start = time.monotonic()
    p = subprocess.Popen(argv, cwd=ctx.dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for _ in range(2000):
        if os.listdir(ctx.p("tmp")) or p.poll() is not None:
            break
        time.sleep(0.005)
    time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return 124, out.decode("utf-8", "replace"), time.monotonic() - start
    return p.returncode, out.decode("utf-8", "replace"), time.monotonic() - start


def _slow_archive(ctx):
    os.makedirs(ctx.p("tmp"))
    subprocess.run(["truncate", "-s", "1G", ctx.p("slow")], check=True)
    subprocess.run("tar -cf - slow | zstd -q -1 > slow.tar.zst && rm slow", shell=True, cwd=ctx.dir, check=True)
    return [ctx.t, "pack", "--check", ctx.p("slow.tar.zst"), "--max-ratio", "100000000"]


case(X, "sigint-removes-temporary-folder", _slow_archive, 1, r"interrupted by signal 2", runner=_sigint_runner)

# ---- the attempt folder: refused before anything is written, nothing written through links ----
A = "attempt-folder"


def attempt(name, prep, args, rc, reason):
    def setup(ctx):
        prep(ctx)
        return [ctx.t, "attempt", "--quick", *args(ctx)]
    case(A, name, setup, rc, reason, targets=[])


def _out_holding(kind):
    def prep(ctx):
        os.makedirs(ctx.p("o"))
        if kind == "symlink":
            os.symlink(os.path.join(ctx.sentinel, "target"), ctx.p("o", "x"))
        elif kind == "dangling":
            os.symlink(os.path.join(ctx.sentinel, "missing"), ctx.p("o", "x"))
        elif kind == "file":
            ctx.write("o/x", "")
        elif kind == "folder":
            os.makedirs(ctx.p("o", "x"))
        elif kind == "fifo":
            os.mkfifo(ctx.p("o", "x"))
    return prep


for kind in ("symlink", "dangling", "file", "folder", "fifo"):
    attempt(f"out-holding-only-a-{kind}", _out_holding(kind), lambda ctx: ["--out", ctx.p("o")], 1,
            r"--out: is not empty \(it holds 'x'\)")
attempt("out-is-a-symlink-to-an-empty-folder", lambda ctx: os.symlink(os.path.join(ctx.sentinel, "target"), ctx.p("o")),
        lambda ctx: ["--out", ctx.p("o")], 1, r"symbolic link")
attempt("out-is-a-file", lambda ctx: ctx.write("o", "x\n"), lambda ctx: ["--out", ctx.p("o")], 1,
        r"--out: exists and is not a folder")
NEW = lambda ctx: ["--out", ctx.p("o")]  # noqa: E731
nothing = lambda ctx: None  # noqa: E731
for name, args, reason in (
        ("report-only-/../../../../x", ["--report-only", "/../../../../x"], r"--report-only: '/../../../../x'"),
        ("report-only-dotdot", ["--report-only", "whenany,.."], r"--report-only: '\.\.'"),
        ("label-dotdot-slash", ["--label", "../x"], r"--label: '\.\./x'"),
        ("label-newline", ["--label", "a\nb"], r"--label:"),
        ("label-space", ["--label", "a b"], r"--label: 'a b' holds a character"),
        ("subjects-slash", ["--subjects", "tandem,a/b"], r"--subjects: 'a/b'"),
        ("subjects-repeated", ["--subjects", "tandem,tandem"], r"listed twice"),
        ("subjects-empty-name", ["--subjects", "tandem,,fcontext"], r"empty name")):
    attempt(name, nothing, (lambda a: lambda ctx: ["--out", ctx.p("o"), *a])(args), 2, reason)
# no --out: the label alone names the folder; refused before any default folder is made
attempt("label-dotdot-without-out", nothing, lambda ctx: ["--label", "../x"], 2, r"--label: '\.\./x'")

# ---- the smaller ones ----
S = "smaller"


def _packed(ctx):
    ctx.write("packed/a.txt", "1\n")
    os.makedirs(ctx.p("packed/sub"))
    os.symlink(ctx.p("packed"), ctx.p("into-packed"))
    os.symlink(ctx.p("packed/sub"), ctx.p("into-sub"))
    os.makedirs(ctx.p("xdir"))


def pack_case(name, argv, rc, reason):
    def setup(ctx):
        _packed(ctx)
        return [ctx.t, "pack", *[ctx.p(a) if a.startswith(("packed", "into", "missing", "x")) else a for a in argv]]
    case(S, name, setup, rc, reason, targets=["x.zip"])


pack_case("pack-out-through-symlink-to-packed-folder", ["packed", "--out", "into-packed/x.zip"], 2,
          r"must not be inside the packed folder")
pack_case("pack-out-through-symlink-to-subfolder", ["packed", "--out", "into-sub/x.tar.zst"], 2,
          r"must not be inside the packed folder")
pack_case("pack-dir-through-symlink-out-inside", ["into-packed", "--out", "packed/y.zip"], 2,
          r"must not be inside the packed folder")
pack_case("pack-out-is-a-folder", ["packed", "--out", "xdir"], 1, r"is a folder")
pack_case("pack-out-in-a-missing-folder", ["packed", "--out", "missing/x.zip"], 1, r"cannot resolve its folder")


def _sums_folder(ctx):
    z = zipfile.ZipFile(ctx.p("sumdir.zip"), "w")
    z.writestr("b.txt", "b\n")
    z.writestr("files.sha256/", "")
    z.close()
    return [ctx.t, "pack", "--extract", ctx.p("sumdir.zip"), "--out", ctx.p("out")]


case(S, "files.sha256-is-a-folder", _sums_folder, 1, r"files.sha256: cannot read: not a regular file \(a directory\)")


def hash_like_sha256sum(name, filename):
    def setup(ctx):
        ctx.write(filename, "x\n")
        return [ctx.t, "hash", ctx.p(filename)]

    def same(ctx, rc, out):
        theirs = subprocess.run(["sha256sum", ctx.p(filename)], stdout=subprocess.PIPE).stdout.decode()
        return [] if out == theirs else [f"hash printed {out!r}, sha256sum {theirs!r}"]
    case(S, name, setup, 0, r"^\\[0-9a-f]{64}  ", targets=[], check=same)


hash_like_sha256sum("hash-name-with-newline", "a\nb")
hash_like_sha256sum("hash-name-with-backslash", "c\\d")
hash_like_sha256sum("hash-name-with-both", "e\\\nf")
case(S, "hash-threads-3x", lambda ctx: [ctx.t, "hash", "--threads", "3x", ctx.write("f", "x")], 2, r"--threads",
     targets=[])


def _stage_top_json(ctx):
    ctx.write("src/staging.json", '{"mine":true}\n')
    ctx.write("src/a.c", "int a;\n")
    return [ctx.t, "stage", "--root", ctx.p("src"), "--out", ctx.p("out"), "staging.json", "a.c"]


case(S, "stage-top-level-staging.json", _stage_top_json, 1, r"staging.json: refused",
     check=lambda ctx, rc, out: ["a staging was written"] if os.path.exists(ctx.p("out", "staging.json")) else [])

for v in ("-1", "99999999999", "abc", "0", "", "5x"):
    case(S, f"player-samples-{v or 'empty'}", (lambda v: lambda ctx: [ctx.pl, "--samples", v, "--help"])(v), 2,
         r"--samples: expected an integer from 1 to 1000000", targets=[], within=3)
case(S, "player-timeout--5", lambda ctx: [ctx.pl, "--timeout", "-5", "--help"], 2, r"--timeout", targets=[], within=3)
for name, args, reason in (("samples--1", ["--samples", "-1"], r"--samples: expected an integer"),
                           ("rounds-1e99", ["--rounds", "1e99"], r"--rounds: expected an integer"),
                           ("timeout-inf", ["--timeout", "inf"], r"--timeout: expected a number")):
    case(S, f"attempt-{name}", (lambda a: lambda ctx: [ctx.t, "attempt", "--quick", "--out", ctx.p("o"), *a])(args),
         2, reason, targets=[])

# controls beside the refusals: the same verbs on sound input still work
case(S, "player-samples-3-accepted", lambda ctx: [ctx.pl, "--samples", "3", "--help"], 0, r"--samples", targets=[],
     within=3)


def _pack_beside(ctx):
    _packed(ctx)
    return [ctx.t, "pack", ctx.p("packed"), "--out", ctx.p("packed.zip")]


case(S, "pack-out-beside-the-folder-accepted", _pack_beside, 0, r"", targets=["packed.zip", "packed/files.sha256"])


def _stage_nested_json(ctx):
    ctx.write("src/nested/staging.json", '{"mine":true}\n')
    ctx.write("src/a.c", "int a;\n")
    return [ctx.t, "stage", "--root", ctx.p("src"), "--out", ctx.p("out"), "nested", "a.c"]


def _nested_kept(ctx, rc, out):
    why = []
    if open(ctx.p("out", "nested", "staging.json")).read() != '{"mine":true}\n':
        why.append("nested staging.json not staged byte-identically")
    if '"tandem-staging"' not in open(ctx.p("out", "staging.json")).read():
        why.append("the staging's own staging.json was not written")
    return why


case(S, "stage-nested-staging.json-accepted", _stage_nested_json, 0, r"", check=_nested_kept)


# a codegen contract naming a function the code does not have (a rename left its rules
# behind): `tandem inspect` refuses it, naming the contract, the field and the name, and
# judges no rule (no report is written)
INSPECT_FX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "inspect", "fixtures")


def _contract_unknown_fn(ctx):
    with open(os.path.join(INSPECT_FX, "contract.json")) as f:
        text = f.read()
    ctx.write("contract.json", text.replace('"fx_yield":', '"fx_yield_invented":', 1))
    return [ctx.t, "inspect", "--contract", ctx.p("contract.json"), "--tu", os.path.join(INSPECT_FX, "clean.c"),
            "--out", ctx.p("out"), "--no-jit"]


case(S, "inspect-contract-names-an-invented-function", _contract_unknown_fn, 1,
     r"contract.json: field 'functions.fx_yield_invented': no function fx_yield_invented in the code inspected",
     check=lambda ctx, rc, out: ["a report was written"] if os.path.exists(ctx.p("out", "inspect.md")) else [])
