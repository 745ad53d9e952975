#!/usr/bin/env python3
"""stale_table_coverage.py - every way to make a task has a row in the staleness table.

usage: stale_table_coverage.py SOURCE_DIR

A constructor is a function declared in runtime/include/tandem/*.h or detail/*.h (extern or static inline)
that returns a task by value: td_task, td_task_i64, or a struct or union of those headers
with a td_task / td_task_i64 member (none besides td_task_i64 today; a future "move result"
struct returned by value would count). Pointers are not tasks (td_runner *, td_stream *), nor
are function-pointer typedefs and vtable members (td_stream_producer_fn, td_await_fn,
td_stream_vtable.move_next): those are the user's or a stream kind's, and their tasks are
made by the constructors they are handed to (td_stream_move_next's rows drive them).

The rows are the STALE_ROW("name", ...) entries of players/suites/stale/*.h. Fails, naming
it, for a constructor without a row that is not in EXCLUDED below, and for a row or an
exclusion that names no declared constructor (a typo or a removed function).
"""
import glob
import os
import re
import sys

# Declared functions that return a task but are not ways to make one, each with the why.
EXCLUDED = {
    "td_task_of": "a view of an existing {source, token}: no source is made or driven",
    "td_task_i64_of": "the typed view of an existing task",
    "td_next_frame_fast_": "td_next_frame's inline fast path (the macro td_next_frame); its rows cover it",
    "td_yield_fast_": "td_yield's inline fast path (the macro td_yield); its rows cover it",
    "td_stream_base_begin_move": "for stream implementations: every move_next row goes through it",
    "td_stream_base_move_result": "for stream implementations: every move_next row goes through it",
    "td_stream_base_dispose_result": "for stream implementations: every dispose row goes through it",
}

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def task_types(text):
    """td_task, td_task_i64 and every struct/union typedef with a task member."""
    types = {"td_task", "td_task_i64"}
    changed = True
    while changed:
        changed = False
        for m in re.finditer(r"typedef\s+(?:struct|union)\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
            body, name = m.group(1), m.group(2)
            if name in types:
                continue
            if any(re.search(r"\b%s\s+\w+\s*[;\[]" % t, body) for t in types):
                types.add(name)
                changed = True
    return types


def constructors(src):
    text = ""
    for path in sorted(glob.glob(os.path.join(src, "runtime/include/tandem/*.h")) +
                       glob.glob(os.path.join(src, "runtime/include/tandem/detail/*.h"))):
        with open(path) as f:
            text += COMMENT.sub(" ", f.read()) + "\n"
    types = task_types(text)
    decl = re.compile(r"^[ \t]*(?:static\s+inline\s+|TD_INLINE\s+|extern\s+)?(%s)\s+\(?(\w+)\)?\s*\("
                      % "|".join(sorted(types, key=len, reverse=True)), re.M)
    return {m.group(2) for m in decl.finditer(text)}


def rows(src):
    names = {}
    for path in sorted(glob.glob(os.path.join(src, "players/suites/stale/*.h"))):
        with open(path) as f:
            for m in re.finditer(r'STALE_ROW\(\s*"(\w+)"', COMMENT.sub(" ", f.read())):
                names[m.group(1)] = names.get(m.group(1), 0) + 1
    return names


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    src = sys.argv[1]
    ctors, covered = constructors(src), rows(src)
    bad = 0
    for name in sorted(ctors - set(covered) - set(EXCLUDED)):
        print("FAIL: %s returns a task and has no row in players/suites/stale (add one, or an "
              "exclusion with its reason in %s)" % (name, os.path.basename(__file__)))
        bad = 1
    for name in sorted(set(covered) - ctors):
        print("FAIL: the row %s names no constructor declared in runtime/include/tandem" % name)
        bad = 1
    for name in sorted(set(EXCLUDED) - ctors):
        print("FAIL: the exclusion %s names no constructor declared in runtime/include/tandem" % name)
        bad = 1
    print("%d constructors, %d with rows (%d rows), %d excluded: %s"
          % (len(ctors), len(set(covered) & ctors), sum(covered.values()), len(set(EXCLUDED) & ctors),
             "FAIL" if bad else "PASS"))
    return bad


if __name__ == "__main__":
    sys.exit(main())
