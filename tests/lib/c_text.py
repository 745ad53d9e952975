"""c_text.py - C source as text for the tests' greps: comments, strings and character
constants blanked in one pass (so "//" or "/*" inside a string is not taken for a comment,
nor a quote inside a comment for a string), every newline kept so line numbers stay true."""
import re

LEXEMES = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# A preprocessor directive with its continuation lines.
DIRECTIVE = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)


def _keep_lines(m):
    t = m.group(0)
    return '\n' * t.count('\n') if t[0] in '/#' else t[0] * 2


def blank(src, directives=True):
    """src with comments and strings emptied (a string becomes "" or ''), and with
    `directives` the preprocessor lines too; every newline kept."""
    src = LEXEMES.sub(_keep_lines, src)
    return DIRECTIVE.sub(_keep_lines, src) if directives else src
