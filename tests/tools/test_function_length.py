"""No C function under tools/ or players/ is longer than 150 lines (issue 41, item 5): a
longer one is cut into named phases, as tools/attempt/ is. Fails naming file:line, the
function and its length for every one over the limit.

A function's length counts the lines from its opening brace to its closing brace, both
included (as the scan the issue was measured with). Comments, strings, character constants
and preprocessor lines are blanked first, so a brace in any of them, or a macro body's
unbalanced braces, does not move the count; a signature may span any number of lines.

Usage: test_function_length.py [--limit N] ROOT...   scan the .c and .h files under ROOTs
       test_function_length.py --self-test           the scan on fixtures in a temp folder"""
import bisect
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from c_text import blank  # noqa: E402  (comments, strings and directives blanked)

LIMIT = 150

ATTRIBUTE = re.compile(r'__attribute__\s*\(\(.*?\)\)', re.S)


def function_name(head):
    """The name defined by the text before a top-level '{', or None when it opens no
    function (a struct, enum or union body, an initializer)."""
    head = ATTRIBUTE.sub(' ', head).rstrip()
    if '=' in head or not head.endswith(')'):
        return None
    depth = 0
    for i in range(len(head) - 1, -1, -1):   # the '(' of the parameter list
        depth += {')': 1, '(': -1}.get(head[i], 0)
        if depth == 0:
            m = re.search(r'(\w+)\s*$', head[:i])
            return (m.group(1), m.start(1)) if m else None
    return None


def scan_text(src):
    """[(first line, name, length)] of every function definition in C text src."""
    text = blank(src)
    newlines = [i for i, c in enumerate(text) if c == '\n']
    line_of = lambda pos: bisect.bisect_left(newlines, pos) + 1
    out, depth, head_start, cur = [], 0, 0, None
    for i, c in enumerate(text):
        if c == '{':
            if depth == 0:
                found = function_name(text[head_start:i])
                cur = (found[0], line_of(head_start + found[1]), line_of(i)) if found else None
            depth += 1
        elif c == '}':
            depth = max(depth - 1, 0)
            if depth == 0:
                if cur:
                    out.append((cur[1], cur[0], line_of(i) - cur[2] + 1))
                cur, head_start = None, i + 1
        elif c == ';' and depth == 0:
            head_start = i + 1
    return out


def scan(roots, limit):
    """['file:line: name: N lines (limit L)'] for every function over limit under roots."""
    found = []
    for root in roots:
        for dirpath, dirnames, files in os.walk(root):
            dirnames.sort()
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, errors='replace') as fh:
                    for line, name, n in scan_text(fh.read()):
                        if n > limit:
                            found.append((n, '%s:%d: %s: %d lines (limit %d)' % (path, line, name, n, limit)))
    return [msg for n, msg in sorted(found, key=lambda t: -t[0])]


def body(n):
    """A function body of exactly n lines, braces included."""
    return '{\n' + '    x++;\n' * (n - 2) + '}\n'


def self_test():
    """A 151-line function is reported, a 150-line one is not, whatever its shape."""
    fixture = (
        'static int x;\n'
        'int at_limit(void)\n' + body(150) +
        'int over_limit(void)\n' + body(151) +
        # the return type starts with const; the brace on the signature's line
        'static const char *const_ret(int a) ' + body(151) +
        # a signature over six lines
        'static int\nlong_sig(int a,\n int b,\n int c,\n int d,\n int e)\n' + body(151) +
        # braces inside strings, comments, character constants and a macro body
        '#define OPEN_ { \\\n    if (1) {\n'
        'int tricky(void)\n{\n    const char *s = "{ // not a comment {";\n'
        '    /* } */ char c = \'}\';\n' + '    x++;\n' * 147 + '}\n' +
        # an initializer and a struct of more than 150 lines are no functions
        'static const int table[] = {\n' + '    1,\n' * 200 + '};\n'
        'struct big {\n' + '    int f;\n' * 200 + '};\n'
        'int after(void) __attribute__((unused));\n'
        'static __attribute__((unused)) int after(void)\n' + body(10)
    )
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 'fixture.c'), 'w') as fh:
            fh.write(fixture)
        got = scan([d], LIMIT)
        lines = {name: (line, n) for line, name, n in scan_text(fixture)}
    want = {'over_limit': 151, 'const_ret': 151, 'long_sig': 151, 'tricky': 151}
    errors = []
    reported = {m.split(': ')[1]: m for m in got}
    for name, n in want.items():
        if name not in reported:
            errors.append('%s (%d lines) not reported' % (name, n))
        elif not reported[name].endswith(': %d lines (limit %d)' % (n, LIMIT)):
            errors.append('%s: wrong length: %s' % (name, reported[name]))
    for name in set(reported) - set(want):
        errors.append('reported wrongly: %s' % reported[name])
    if lines.get('at_limit', (0, 0))[1] != 150:
        errors.append('at_limit measured %s, not 150 lines' % (lines.get('at_limit'),))
    first = fixture.split('\n').index('int over_limit(void)') + 1
    if not any(m.startswith('%s:%d: over_limit:' % (os.path.join(d, 'fixture.c'), first)) for m in got):
        errors.append('over_limit not reported at line %d: %s' % (first, got))
    if lines.get('after', (0, 0))[1] != 10:
        errors.append('after (past a declaration with an attribute) measured %s' % (lines.get('after'),))
    for e in errors:
        print('self-test: ' + e)
    print('self-test: %s' % ('FAIL' if errors else 'ok: 151 lines reported, 150 not, in every shape'))
    return 1 if errors else 0


def main(argv):
    limit = LIMIT
    if argv[:1] == ['--self-test']:
        return self_test()
    if argv[:1] == ['--limit']:
        limit, argv = int(argv[1]), argv[2:]
    if not argv:
        print(__doc__)
        return 2
    over = scan(argv, limit)
    for msg in over:
        print(msg)
    if over:
        print('%d function(s) over %d lines: cut each into named phases (static functions named for '
              'what they do, a struct for the state they share), as tools/attempt/ is' % (len(over), limit))
        return 1
    print('no function over %d lines under %s' % (limit, ' '.join(argv)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
