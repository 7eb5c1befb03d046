"""The import rules the layout promises (README, "Layout"), checked over
every import statement of the package, the controller apps and the
topology files -- including imports inside functions."""
import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BACKENDS = ('netsched.emulator', 'netsched.sim')
# the pipeline above both backends (experiment spec, run dispatch,
# crosscheck, metrics, sweeps, statistics, figures, reports): it reaches
# the backends only through its dispatch module and child processes
PIPELINE = ('netsched.pipeline',)
DISPATCH = 'netsched.pipeline.run'
UI = ('netsched.cli', DISPATCH)
# the pure part of it the experiment loader uses (--set)
OVERRIDES = 'netsched.pipeline.overrides'
FRAMEWORKS = ('ryu', 'os_ken', 'eventlet')


def modules(folder):
    """(module name, path) of every .py file under folder."""
    for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
        for f in sorted(files):
            if not f.endswith('.py'):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, '.')
            if rel.endswith('.__init__'):
                rel = rel[:-len('.__init__')]
            yield rel, path


def imports(name, path):
    """Absolute names of everything a module imports."""
    pkg = name if path.endswith('__init__.py') else name.rpartition('.')[0]
    out = set()
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split('.')
                base = base[:len(base) - node.level + 1]
                mod = '.'.join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.add(mod)
            out.update(mod + '.' + a.name for a in node.names)
    return out


def under(mod, prefixes):
    return any(mod == p or mod.startswith(p + '.') for p in prefixes)


PACKAGE = sorted(modules('netsched'))


def forbidden(name):
    """What module ``name`` of the package must not import."""
    bad = set(FRAMEWORKS) | {'controllers', 'experiments', 'workloads',
                             'topologies'}
    if under(name, ('netsched.policies',)):
        bad |= {'mininet', 'netsched.control', 'netsched.workload',
                'netsched.fluid', 'netsched.routing', 'netsched.topology',
                'netsched.events'} | set(BACKENDS) | set(UI)
    elif under(name, ('netsched.circuits',)):
        # pure like the policies: numpy, networkx, netsched.errors,
        # netsched.spec (the NAME:key=value parser the policies share) and
        # itself; nothing else of netsched (not even the policies)
        bad |= {'mininet'} | ({n for n, _ in PACKAGE if n.count('.') == 1}
                              - {'netsched.errors', 'netsched.spec',
                                 'netsched.circuits'})
    elif under(name, ('netsched.control',)):
        bad |= {'mininet'} | set(BACKENDS) | set(UI)
    elif under(name, ('netsched.sim',)):
        bad |= {'mininet', 'netsched.emulator', 'netsched.control'} | set(UI)
    elif under(name, ('netsched.emulator',)):
        bad |= {'netsched.sim'} | set(UI)
    elif under(name, ('netsched.workload',)):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS) | set(UI)
    elif name == DISPATCH:
        bad |= {'mininet', 'netsched.control'}
    elif under(name, PIPELINE):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS)
    elif name not in UI and name not in ('netsched', 'netsched.__main__'):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS) | set(UI)
    if not under(name, PIPELINE) and name not in UI + ('netsched.__main__',):
        # nothing below the pipeline reaches up into it
        bad |= {m for m, _ in PACKAGE if under(m, PIPELINE)} - {
            'netsched.pipeline'}
    return bad


@pytest.mark.parametrize('name, path', PACKAGE, ids=[n for n, _ in PACKAGE])
def test_package_imports_run_one_way(name, path):
    bad = forbidden(name)
    found = sorted(m for m in imports(name, path) if under(m, bad))
    assert not found, '%s imports %s' % (name, ', '.join(found))


def test_ryu_only_in_controllers():
    for folder in ('controllers', 'topologies'):
        for name, path in modules(folder):
            for m in imports(name, path):
                if m != 'netsched' and under(m, ('netsched',)):
                    assert under(m, ('netsched.control', 'netsched.topology',
                                     'netsched.errors',
                                     'netsched.emulator.mininet_adapter')), \
                        '%s imports %s' % (name, m)


def test_overrides_stay_pure():
    """The experiment loader imports pipeline.overrides: it may reach only
    the errors and the policy registry, or it would pull the pipeline
    (and a cycle through the dispatch) under the loader."""
    path = os.path.join(ROOT, *OVERRIDES.split('.')) + '.py'
    mine = {m for m in imports(OVERRIDES, path) if under(m, ('netsched',))
            and m != 'netsched'}          # 'from .. import x' names it
    assert all(under(m, ('netsched.errors', 'netsched.policies'))
               for m in mine), mine


def test_few_modules_at_the_top():
    """The top level holds the fabric model and the entry points; each
    other part has its folder."""
    top = [n for n, _ in PACKAGE if n.count('.') == 1
           and not os.path.isdir(os.path.join(ROOT, *n.split('.')))]
    assert len(top) <= 9, top


def test_rules_catch_a_violation():
    """The checker itself: a policy importing the simulator is caught."""
    assert under('netsched.sim.engine', forbidden('netsched.policies.x'))
    assert under('ryu.base', forbidden('netsched.control.core'))
    assert not under('numpy', forbidden('netsched.policies.x'))
    for bad in ('netsched.sim.engine', 'netsched.emulator.fabric',
                'netsched.control.core', 'netsched.policies.base',
                'netsched.topology', 'mininet.net'):
        assert under(bad, forbidden('netsched.circuits.matching')), bad
    for ok in ('numpy', 'networkx', 'netsched.errors',
               'netsched.circuits.base'):
        assert not under(ok, forbidden('netsched.circuits.osdl')), ok
    assert under('netsched.sim.runner', forbidden('netsched.pipeline.sweep'))
    assert under('netsched.sim.runner',
                 forbidden('netsched.pipeline.crosscheck'))
    assert not under('netsched.sim.runner', forbidden(DISPATCH))
    assert under('netsched.pipeline.experiment',
                 forbidden('netsched.sim.engine'))
    assert under('netsched.pipeline.experiment',
                 forbidden('netsched.policies.x'))
