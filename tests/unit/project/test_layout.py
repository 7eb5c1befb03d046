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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BACKENDS = ('netsched.emulator', 'netsched.sim', 'netsched.ns3')
# the pipeline above both backends (experiment spec, run dispatch,
# crosscheck, metrics, sweeps, statistics, figures, reports): it reaches
# the backends only through its dispatch module and child processes
PIPELINE = ('netsched.pipeline',)
DISPATCH = 'netsched.pipeline.run'
# the command line (the cli package, each of its modules) and the dispatch
UI = ('netsched.cli', DISPATCH)
# scale: auto runs the simulator and measures the emulator's datapath;
# an emulated run's packet forecast runs the simulator: the other
# pipeline modules that reach a backend
AUTOSCALE = 'netsched.pipeline.autoscale'
FORECAST = 'netsched.pipeline.forecast'
# the modules that draw: only they import matplotlib. report writes a
# run's or a sweep's figures; the computing modules (metrics,
# experiment, stats, sweep, crosscheck, fidelity, run, ...) reach it only
# inside the function that draws, so computing never loads matplotlib
PLOTTING = ('netsched.pipeline.plots', 'netsched.pipeline.sweep_plots',
            'netsched.pipeline.crosscheck_plots', 'netsched.pipeline.report')
COMPUTING = ('metrics', 'experiment', 'stats', 'sweep', 'crosscheck',
             'overrides', 'run', 'fidelity', 'forecast')
# which hosts each job gets: the task graph builds on it, not back
PLACEMENT = 'netsched.workload.placement'
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
        if name == PLACEMENT:
            bad |= {'netsched.workload.taskgraph',
                    'netsched.workload.parallelism'}
    elif name in (DISPATCH, AUTOSCALE, FORECAST):
        bad |= {'mininet', 'netsched.control'}
    elif under(name, PIPELINE):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS)
    elif not under(name, UI) and name not in ('netsched',
                                               'netsched.__main__'):
        bad |= {'mininet', 'netsched.control'} | set(BACKENDS) | set(UI)
    if not under(name, PIPELINE + UI + ('netsched.__main__',)):
        # nothing below the pipeline reaches up into it
        bad |= {m for m, _ in PACKAGE if under(m, PIPELINE)} - {
            'netsched.pipeline'}
    if name not in PLOTTING:
        # computing apart from drawing
        bad |= {'matplotlib', 'netsched.pipeline.plots',
                'netsched.pipeline.sweep_plots',
                'netsched.pipeline.crosscheck_plots'}
    return bad


# The package's layers, top first: a module imports only modules of the
# layers below its own, or of its own part (a name below: a package or a
# module) -- never up, never sideways into another part of its layer.
# Inside a part the imports only have to be free of cycles. The pipeline
# is laid out module by module: its commands' report above the figures,
# the studies and sweeps, one run, the metrics, the experiment file.
P = 'netsched.pipeline.'
LAYERS = (
    ('netsched.__main__',),
    (P + 'api',),                 # the Python API; its sweep runs the CLI's
    ('netsched.cli',),
    (P + 'report',),              # a folder's report.html, as the CLI asks
    (P + 'crosscheck_plots', P + 'sweep_plots'),
    (P + 'plots',),
    (P + 'reproduce', P + 'fidelity', P + 'cluster', P + 'tables'),
    (P + 'sweep', P + 'crosscheck'),
    (P + 'run',),                 # one run: the dispatch to a backend
    (P + 'forecast',),            # what an emulated run's packets cost
    (P + 'metrics', P + 'stats', P + 'export'),
    (P + 'experiment',),
    (P + 'knobs', P + 'autoscale'),
    (P + 'arms', P + 'checker', P + 'overrides', P + 'paths', P + 'progress',
     P + 'shapes', P + 'verdict'),
    ('netsched.pipeline',),
    ('netsched.emulator', 'netsched.ns3'),
    ('netsched.sim',),
    ('netsched.control', 'netsched.workload'),
    ('netsched.fluid', 'netsched.host', 'netsched.policies',
     'netsched.circuits', 'netsched.qos', 'netsched.events'),
    ('netsched.routing',),
    ('netsched.topology', 'netsched.spec'),
    ('netsched.errors',
     'netsched.build_kernels',    # setup.py's, at install: imports no netsched
     'netsched.kernels'),         # the built kernels' loader
    ('netsched',),
)


def edges(name, path):
    """The package's modules that module ``name`` imports (inside
    functions too): ``from . import x`` names the module x, not the
    package around it."""
    known = {n for n, _ in PACKAGE}
    pkg = name if path.endswith('__init__.py') else name.rpartition('.')[0]

    def module(m):
        while m and m not in known:
            m = m.rpartition('.')[0]
        return m
    out = set()
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Import):
            out.update(module(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split('.')
                base = base[:len(base) - node.level + 1]
                mod = '.'.join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.update(mod + '.' + a.name if mod + '.' + a.name in known
                       else module(mod) for a in node.names)
    out.discard('')
    out.discard(name)
    return out


def part(name):
    """(layer number, part) of a module: the longest name of LAYERS it
    is or lies under."""
    best = None
    for i, layer in enumerate(LAYERS):
        for p in layer:
            if under(name, (p,)) and (best is None or len(p) > len(best[1])):
                best = i, p
    return best


GRAPH = {n: edges(n, p) for n, p in PACKAGE}


def test_every_module_has_its_layer():
    """A new top-level module or pipeline module is given its layer."""
    for n in GRAPH:
        assert part(n)[1] != 'netsched' or n == 'netsched', n
        if under(n, PIPELINE):
            assert part(n)[1] != 'netsched.pipeline' or \
                n == 'netsched.pipeline', n


def test_imports_go_down_the_layers():
    up = []
    for a, bs in sorted(GRAPH.items()):
        i, pa = part(a)
        for b in sorted(bs):
            j, pb = part(b)
            if pa != pb and j <= i:
                up.append('%s -> %s (%s)' % (
                    a, b, 'sideways' if i == j else 'up'))
    assert not up, '\n'.join(up)


def test_no_import_cycles():
    """Over every module of the package, function-local imports
    included."""
    g = GRAPH
    state, cycle = {}, []

    def visit(a, path):
        state[a] = 1
        for b in sorted(g[a]):
            if state.get(b) == 1:
                cycle.append(path[path.index(b):] + [b])
            elif b not in state:
                visit(b, path + [b])
        state[a] = 2
    for a in sorted(g):
        if a not in state:
            visit(a, [a])
    assert not cycle, ' -> '.join(cycle[0])


def test_no_private_names_across_the_pipeline():
    """A pipeline module uses no underscore name of another module: what
    is shared is public."""
    bad = []
    for name, path in PACKAGE:
        if not under(name, PIPELINE):
            continue
        tree = ast.parse(open(path).read(), path)
        bound = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    private = a.name.startswith('_') and \
                        not a.name.startswith('__')
                    if private and isinstance(node, ast.ImportFrom):
                        bad.append('%s: %s.%s' % (name, node.module, a.name))
                    bound.add((a.asname or a.name).split('.')[0])
        bad += ['%s:%d: %s.%s' % (name, node.lineno, node.value.id, node.attr)
                for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound and node.attr.startswith('_')
                and not node.attr.startswith('__')]
    assert not bad, bad


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
                    'netsched.pipeline.sweep_plots',
                    'netsched.pipeline.crosscheck_plots'):
            assert under(bad, forbidden('netsched.pipeline.' + m)), (m, bad)
    assert not under('matplotlib.figure',
                     forbidden('netsched.pipeline.sweep_plots'))
    assert not under('netsched.pipeline.plots',
                     forbidden('netsched.pipeline.report'))
    assert under('netsched.workload.taskgraph', forbidden(PLACEMENT))
    assert not under(PLACEMENT, forbidden('netsched.workload.taskgraph'))
    # every module of the cli package is the command line's
    assert not under('netsched.emulator.fabric',
                     forbidden('netsched.cli.fabric'))
    assert under('netsched.cli.common',
                 forbidden('netsched.workload.taskgraph'))
    # the layers: up, sideways and a cycle are seen
    assert part('netsched.pipeline.metrics.logread')[1] == P + 'metrics'
    assert part('netsched.sim.engine') < part('netsched.fluid')
    assert part('netsched.pipeline.run')[0] < part(P + 'experiment')[0]
    assert part('netsched.emulator.runner')[0] == part('netsched.ns3.x')[0]
