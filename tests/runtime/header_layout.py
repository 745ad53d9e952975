#!/usr/bin/env python3
"""header_layout.py RUNTIME_DIR: the runtime's layout rules that a grep can check (runtime/STYLE.md).

1. Every write of a source's word is in include/tandem/detail/word.h: no store or CAS of
   `->word` / `.word`, no assignment to it, anywhere else in the runtime's C (comments and
   static initialisers, `.word = ...` at the start of a designated initialiser line, aside).
2. The public headers (include/tandem/*.h) hold the API: no `_`-suffixed function-like macro or
   inline function (those live in include/tandem/detail/).
3. A detail header is included by exactly one public header and refuses a direct include
   (#error unless that header's guard is set).
Exit 0 when all hold; 1 with one line per breach (file:line: rule: text).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from c_text import blank  # noqa: E402  (comments and strings blanked, lines kept)

WORD_WRITE = re.compile(r'(store|cas|exchange|xchg|fetch)[a-z_0-9]*\s*\(\s*&[^,;]*\bword\b|(->|\.)word\s*([-+|&^]?=)(?!=)')
STATIC_INIT = re.compile(r'^\s*\.word\s*=')
PRIVATE_MACRO = re.compile(r'^\s*#\s*define\s+([A-Za-z0-9_]*_)\(')
PRIVATE_INLINE = re.compile(r'^\s*(static\s+inline|TD_INLINE)\b[^(]*\b([a-z0-9_]*_)\s*\(')

def main(root):
    breaches = []
    home = os.path.join(root, 'include', 'tandem', 'detail', 'word.h')
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(dirpath, name)
            if os.path.samefile(path, home):
                continue
            lines = blank(open(path, encoding='utf-8').read(), directives=False).split('\n')
            for n, line in enumerate(lines, 1):
                if WORD_WRITE.search(line) and not STATIC_INIT.match(line):
                    breaches.append(f'{path}:{n}: a write of the word outside detail/word.h: {line.strip()}')
    public = os.path.join(root, 'include', 'tandem')
    detail = os.path.join(public, 'detail')
    for name in sorted(os.listdir(public)):
        if not name.endswith('.h'):
            continue
        path = os.path.join(public, name)
        lines = blank(open(path, encoding='utf-8').read(), directives=False).split('\n')
        for n, line in enumerate(lines, 1):
            m = PRIVATE_MACRO.match(line) or PRIVATE_INLINE.match(line)
            if m:
                breaches.append(f'{path}:{n}: an internal (_-suffixed) definition in a public header (move it to detail/): {line.strip()}')
    for name in sorted(os.listdir(detail)):
        if not name.endswith('.h'):
            continue
        path = os.path.join(detail, name)
        text = open(path, encoding='utf-8').read()
        owners = [h for h in sorted(os.listdir(public)) if h.endswith('.h') and
                  f'#include "detail/{name}"' in open(os.path.join(public, h), encoding='utf-8').read()]
        if len(owners) != 1:
            breaches.append(f'{path}:1: included by {len(owners)} public headers ({", ".join(owners) or "none"}), not one')
            continue
        guard = 'TANDEM_' + owners[0][:-2].upper() + '_H'
        if not re.search(r'#ifndef\s+' + guard + r'\s*\n\s*#error', text):
            breaches.append(f'{path}:1: does not refuse a direct include (#ifndef {guard} / #error)')
    for b in breaches:
        print(b)
    print(f'header_layout: {len(breaches)} breach(es) in {root}')
    return 1 if breaches else 0

def self_test(root):
    """The check can fail: seeded breaches of each rule in a copy of the runtime are reported."""
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'runtime')
        shutil.copytree(root, copy)
        seeds = [('src/pool.c', 'static void seeded_(td_source *s) { s->word = 3u; }\n', 'a write of the word'),
                 ('src/task.c', 'static void seeded2_(td_source *s) { td_atomic_store_release_u32(&s->word, 0); }\n', 'a write of the word'),
                 ('include/tandem/timer.h', '#define TD_SEEDED_(x) (x)\n', 'an internal'),
                 ('include/tandem/detail/pool.h', '', 'does not refuse')]
        for rel, text, _ in seeds:
            path = os.path.join(copy, rel)
            if text:
                with open(path, 'a', encoding='utf-8') as f:
                    f.write(text)
            else:
                body = open(path, encoding='utf-8').read().replace('#error', '/* no error */')
                open(path, 'w', encoding='utf-8').write(body)
        import io
        import contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(copy)
        found = out.getvalue()
        missing = [what for rel, _, what in seeds if not any(rel in l and what in l for l in found.splitlines())]
        print(found, end='')
        if rc != 1 or missing:
            print(f'header_layout self-test: FAILED (rc {rc}; not reported: {missing})')
            return 1
        print('header_layout self-test: every seeded breach reported')
        return 0

if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--self-test' and os.path.isdir(sys.argv[2]):
        sys.exit(self_test(sys.argv[2]))
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print('usage: header_layout.py [--self-test] RUNTIME_DIR', file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
