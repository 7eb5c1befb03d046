"""The import rules the layout promises (docs/design.md, "Layout and
import rules"), checked over every import statement of the package, the
controller apps and the topology files -- including imports inside
functions."""
import ast
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BACKENDS = ('netsched.emulator', 'netsched.sim', 'netsched.ns3')
# the pipeline above both backends (experiment spec, run dispatch,
# crosscheck, metrics, sweeps, statistics, figures, reports): it reaches
# the backends only through its dispatch module and child processes
PIPELINE = ('netsched.pipeline',)
DISPATCH = 'netsched.pipeline.run'
UI = ('netsched.cli', DISPATCH)
# scale: auto runs the simulator and measures the emulator's datapath:
# the one other pipeline module that reaches both backends
AUTOSCALE = 'netsched.pipeline.autoscale'
# the modules that draw: only they import matplotlib. report writes a
# run's or a sweep's figures; the computing modules (metrics,
# experiment, stats, sweep, crosscheck, fidelity, run, ...) reach it only
# inside the function that draws, so computing never loads matplotlib
PLOTTING = ('netsched.pipeline.plots', 'netsched.pipeline.sweep_plots',
            'netsched.pipeline.report')
COMPUTING = ('metrics', 'experiment', 'stats', 'sweep', 'crosscheck',
             'overrides', 'run', 'fidelity')
# the pure part of it the experiment loader uses (--set)
OVERRIDES = 'netsched.pipeline.overrides'
FRAMEWORKS = ('ryu', 'os_ken', 'eventlet')
# what runs inside the emulated hosts on whatever Python they have: the
# standard library and itself only
HOST = ('netsched.host',)
NOT_IN_HOSTS = ('numpy', 'networkx', 'yaml', 'scipy', 'matplotlib')


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
        bad |= {'mininet', 'netsched.emulator', 'netsched.control',
                'netsched.ns3'} | set(UI)
    elif under(name, ('netsched.emulator',)):
        bad |= {'netsched.sim', 'netsched.ns3'} | set(UI)
    elif under(name, ('netsched.ns3',)):
        # the packet-level backend runs the simulator's plan executor
        # (sim.drivers) under the controller's scheduling core (control):
        # it reuses both, and knows nothing of Mininet or the emulator
        bad |= {'mininet', 'netsched.emulator'} | set(UI)
    elif under(name, HOST):
        # no numpy, no backend, no pipeline: nothing of netsched but itself
        bad |= {'mininet'} | set(NOT_IN_HOSTS) | set(BACKENDS) | set(UI) | {
            'netsched.control', 'netsched.pipeline'} | (
            {n for n, _ in PACKAGE if n.count('.') == 1} - set(HOST))
    elif under(name, ('netsched.workload',)):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS) | set(UI)
    elif name in (DISPATCH, AUTOSCALE):
        bad |= {'mininet', 'netsched.control'}
    elif under(name, PIPELINE):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS)
    elif name not in UI and name not in ('netsched', 'netsched.__main__'):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS) | set(UI)
    if not under(name, PIPELINE) and name not in UI + ('netsched.__main__',):
        # nothing below the pipeline reaches up into it
        bad |= {m for m, _ in PACKAGE if under(m, PIPELINE)} - {
            'netsched.pipeline'}
    if name not in PLOTTING:
        # computing apart from drawing
        bad |= {'matplotlib', 'netsched.pipeline.plots',
                'netsched.pipeline.sweep_plots'}
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


def test_host_modules_run_under_a_plain_interpreter():
    """Every module of the host package imports under an interpreter
    without site-packages (``-S``) and with numpy, networkx and yaml
    made unimportable, loading nothing of netsched outside the package;
    the agent starts as the emulator starts it (``-m``)."""
    host = [n for n, _ in PACKAGE if under(n, HOST)]
    assert {'netsched.host.agent', 'netsched.host.transport',
            'netsched.host.shifts', 'netsched.host.prophet'} <= set(host)
    env = {'PYTHONPATH': ROOT, 'PATH': os.environ.get('PATH', '')}
    plain = [sys.executable, '-S']
    # the interpreter is plain: numpy is not there to import
    r = subprocess.run(plain + ['-c', 'import numpy'], env=env, cwd='/',
                       capture_output=True, text=True)
    assert r.returncode != 0 and 'numpy' in r.stderr
    code = textwrap.dedent('''
        import importlib, sys
        class Refuse:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in %r:
                    raise ImportError('not in the hosts: ' + name)
        sys.meta_path.insert(0, Refuse())
        for m in %r:
            importlib.import_module(m)
        outside = sorted(m for m in sys.modules if m.startswith('netsched.')
                         and not m.startswith('netsched.host'))
        assert not outside, outside
        print('ok', len(%r))
        ''' % (NOT_IN_HOSTS, host, host))
    r = subprocess.run(plain + ['-c', code], env=env, cwd='/',
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith('ok'), r.stderr
    r = subprocess.run(plain + ['-m', 'netsched.host.agent', '--help'],
                       env=env, cwd='/', capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and '--socket' in r.stdout, r.stderr


def test_computing_loads_no_matplotlib():
    """Importing any pipeline module but the ones that draw loads no
    matplotlib, not even through another module (report imported at
    module level would): the figures are apart from what they show."""
    mods = [n for n, _ in PACKAGE if under(n, PIPELINE)
            and n not in PLOTTING]
    assert {'netsched.pipeline.' + m for m in COMPUTING} <= set(mods)
    code = textwrap.dedent('''
        import importlib, sys
        for m in %r:
            importlib.import_module(m)
            drawn = sorted(x for x in sys.modules
                           if x.split('.')[0] == 'matplotlib')
            assert not drawn, (m, drawn[:3])
        import netsched.pipeline.plots
        assert 'matplotlib' in sys.modules     # the check can see it
        print('ok')
        ''' % mods)
    r = subprocess.run([sys.executable, '-c', code], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stderr


def test_rules_catch_a_violation():
    """The checker itself: a policy importing the simulator is caught."""
    assert under('netsched.sim.engine', forbidden('netsched.policies.x'))
    assert under('ryu.base', forbidden('netsched.control.core'))
    # the core's managers, the scheduler's parts and the controller's
    # spec are of the pure core as the core is
    for m in ('adopt', 'links', 'manual', 'intake', 'pacing', 'outcome',
              'spec'):
        for bad in ('ryu.base', 'mininet.net', 'netsched.emulator.fabric',
                    'netsched.sim.engine', 'netsched.pipeline.experiment',
                    'netsched.cli'):
            assert under(bad, forbidden('netsched.control.' + m)), (m, bad)
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
    for bad in ('numpy', 'netsched.sim.drivers', 'netsched.emulator.agents',
                'netsched.control.core', 'netsched.pipeline.run',
                'netsched.workload.taskgraph', 'netsched.topology'):
        assert under(bad, forbidden('netsched.host.agent')), bad
    for ok in ('netsched.host.transport', 'socket', 'json'):
        assert not under(ok, forbidden('netsched.host.agent')), ok
    for m in COMPUTING:
        for bad in ('matplotlib.figure', 'netsched.pipeline.plots',
                    'netsched.pipeline.sweep_plots'):
            assert under(bad, forbidden('netsched.pipeline.' + m)), (m, bad)
    assert not under('matplotlib.figure',
                     forbidden('netsched.pipeline.sweep_plots'))
    assert not under('netsched.pipeline.plots',
                     forbidden('netsched.pipeline.report'))
