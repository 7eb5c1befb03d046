"""Every public class and function of the controller -- the app and its
framework layer in controllers/, the pure core in netsched/control/ --
says why it is there: a docstring, found by walking each file's syntax
tree (methods of public classes included, names with a leading
underscore not)."""
import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
FOLDERS = ('controllers', os.path.join('netsched', 'control'))


def files():
    for folder in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
            for n in sorted(names):
                if n.endswith('.py'):
                    yield os.path.relpath(os.path.join(dirpath, n), ROOT)


def undocumented(source, where='<source>'):
    """Qualified names of the public classes, functions and methods of
    public classes in ``source`` that have no docstring."""
    out = []

    def walk(node, prefix):
        for n in ast.iter_child_nodes(node):
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                  ast.ClassDef)) or n.name.startswith('_'):
                continue
            if not (ast.get_docstring(n) or '').strip():
                out.append(prefix + n.name)
            if isinstance(n, ast.ClassDef):
                walk(n, prefix + n.name + '.')
    walk(ast.parse(source, where), '')
    return out


FILES = sorted(files())


@pytest.mark.parametrize('path', FILES)
def test_public_names_have_docstrings(path):
    with open(os.path.join(ROOT, path)) as f:
        missing = undocumented(f.read(), path)
    assert not missing, '%s: no docstring: %s' % (path, ', '.join(missing))


def test_both_places_are_walked():
    assert 'controllers/netsched_app.py' in FILES
    assert 'netsched/control/core.py' in FILES


def test_the_checker_finds_what_is_missing():
    src = ('class A:\n'
           '    """Why."""\n'
           '    def f(self):\n        pass\n'
           '    def _g(self):\n        pass\n'
           '    def __init__(self):\n        pass\n'
           'def h():\n    """Why."""\n    def inner():\n        pass\n'
           'class B:\n    x = 1\n'
           'def _private():\n    pass\n'
           'async def k():\n    """ """\n')
    assert undocumented(src) == ['A.f', 'B', 'k']
