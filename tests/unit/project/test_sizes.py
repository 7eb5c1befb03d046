"""The size limits the structure keeps: no module over 800 lines, no
class over 300 lines or 25 methods unless it says why (a comment just
above it, or its docstring, with "on purpose")."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
SOURCES = sorted(p for d in ('netsched', 'controllers')
                 for p in (ROOT / d).rglob('*.py'))
MODULE_LINES, CLASS_LINES, CLASS_METHODS = 800, 300, 25


def says_why(lines, node):
    """Whether the class gives its reason for its size: "on purpose" in
    the comment lines right above it or in its docstring."""
    above = []
    i = node.lineno - 2 - len(node.decorator_list)
    while i >= 0 and lines[i].lstrip().startswith('#'):
        above.append(lines[i])
        i -= 1
    return 'on purpose' in ' '.join(above + [ast.get_docstring(node) or ''])


def oversized(path):
    """[(what, size)] over the limits in one source file."""
    text = path.read_text()
    lines = text.split('\n')
    out = []
    if len(lines) - 1 > MODULE_LINES:
        out.append(('module', len(lines) - 1))
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ClassDef):
            continue
        size = node.end_lineno - node.lineno + 1
        methods = sum(isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef))
                      for x in node.body)
        if (size > CLASS_LINES or methods > CLASS_METHODS) \
                and not says_why(lines, node):
            out.append(('class %s' % node.name, (size, methods)))
    return out


@pytest.mark.parametrize('path', SOURCES,
                         ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_within_the_size_limits(path):
    assert oversized(path) == []


def test_the_limits_catch_a_big_class(tmp_path):
    body = ''.join('    def m%d(self):\n        return %d\n\n' % (i, i)
                   for i in range(30))
    plain = tmp_path / 'plain.py'
    plain.write_text('class Big:\n' + body)
    assert oversized(plain) == [('class Big', (90, 30))]
    excused = tmp_path / 'excused.py'
    excused.write_text('# one handler per event, on purpose\nclass Big:\n'
                       + body)
    assert oversized(excused) == []
    long = tmp_path / 'long.py'
    long.write_text('x = 1\n' * 801)
    assert oversized(long) == [('module', 801)]
