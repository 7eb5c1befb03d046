"""Policies and circuit schedulers from outside the package: by module
path (``--policy package.module:ClassName``) and by entry point (a
package installed, here without pip: a module and a ``*.dist-info``
folder put on sys.path), run on the simulator with the behaviour they
define; the errors for what cannot be resolved; `netsched policies`;
and the worked example of docs/writing-a-policy.md, run as shipped."""
import json
import os
import sys
import textwrap

import numpy as np
import pytest

from netsched import circuits, cli, policies, spec
from netsched.errors import ConfigError
from netsched.policies import Snapshot
from netsched.pipeline import experiment, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
EXAMPLES = os.path.join(ROOT, 'docs', 'examples')
MB = 2 ** 20

MODULE = '''
"""Out-of-tree test policies."""
import numpy as np

from netsched.circuits import CircuitDecision, CircuitScheduler
from netsched.policies import Decision, Policy


class LargestFirst(Policy):
    """Largest coflow first (flip=1: smallest first)."""
    params = {'flip': 0}
    zero_ok = ('flip',)
    clairvoyant = True
    decides_on = 'coflows'

    def decide(self, snap):
        left = snap.coflow_port_bytes().sum(axis=1)
        key = left if self.flip else -left
        rank = np.empty(len(key), dtype=np.int64)
        rank[np.argsort(key, kind='stable')] = np.arange(len(key))
        return Decision(coflow_rank=rank)


class NotAPolicy:
    params = {}


class NoCircuits(CircuitScheduler):
    """Never a circuit, from outside."""
    static = True

    def decide(self, snap):
        return CircuitDecision(circuits=frozenset())
'''


def install(root, pkg, entry_points='', files=None, version='0.1'):
    """A package ``pkg`` (module ``mod``: MODULE, plus ``files``) and its
    dist-info (METADATA, entry_points.txt) under ``root``: what pip would
    leave in site-packages."""
    d = root / pkg
    d.mkdir(parents=True)
    (d / '__init__.py').write_text('')
    (d / 'mod.py').write_text(MODULE)
    for name, text in (files or {}).items():
        (d / name).write_text(textwrap.dedent(text))
    info = root / ('%s-%s.dist-info' % (pkg, version))
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: %s\n'
                                   'Version: %s\n' % (pkg, version))
    (info / 'entry_points.txt').write_text(textwrap.dedent(entry_points))
    return root


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Installs packages on sys.path for one test; their modules leave
    sys.modules after it, so that each test imports its own."""
    names = []

    def put(pkg, entry_points='', files=None):
        root = install(tmp_path / pkg, pkg, entry_points, files)
        monkeypatch.syspath_prepend(str(root))
        names.append(pkg)
        return root
    yield put
    for m in list(sys.modules):
        if m.split('.')[0] in names:
            del sys.modules[m]


def write_trace(tmp_path, lines, ports):
    p = tmp_path / 'trace.txt'
    p.write_text('%d %d\n' % (ports, len(lines)) + '\n'.join(lines) + '\n')
    return str(p)


def trace_exp(path, ports, policy='fair'):
    # every port 8 * 2^20 bit/s = 1 MB/s each way; the full rank order
    return {'topology': 'bigswitch,%d' % ports, 'big_switch': True,
            'backend': 'sim', 'link_bps': 8 * MB, 'queues': 'exact',
            'policy': policy, 'trace': {'path': path}}


def ccts(tmp_path, d, policy=None, tag='out'):
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'), policy=policy)
    _, s = run.execute(exp, str(tmp_path / tag), say=lambda m: None)
    return {c: r['cct_s'] for c, r in s['coflows'].items()}


# coflow 1: 1 MB, coflow 2: 2 MB, both port 0 -> port 1 at t = 0
ONE_PORT = ['1 0 1 0 1 1:1.0', '2 0 1 0 1 1:2.0']


def test_module_path_runs_on_the_simulator(tmp_path, plugin, capsys):
    plugin('plugmod')
    path = write_trace(tmp_path, ONE_PORT, 2)
    (tmp_path / 'exp.yaml').write_text(json.dumps(trace_exp(path, 2)))
    # through the command line, as a user runs it
    out = str(tmp_path / 'run')
    assert cli.main(['run', str(tmp_path / 'exp.yaml'), '--backend', 'sim',
                     '--policy', 'plugmod.mod:LargestFirst',
                     '--out', out]) == 0
    with open(os.path.join(out, 'summary.json')) as f:
        s = json.load(f)
    got = {c: r['cct_s'] for c, r in s['coflows'].items()}
    # largest first: 2 alone at 1 MB/s ends at 2 s, then 1 (1 MB) at 3 s
    assert got == pytest.approx({'2': 2.0, '1': 3.0}, abs=1e-5)
    assert s['policy'] == 'plugmod.mod:LargestFirst'
    # its parameter reaches it: smallest first, 1 at 1 s, 2 at 3 s
    got = ccts(tmp_path, trace_exp(path, 2),
               policy='plugmod.mod:LargestFirst:flip=1', tag='flip')
    assert got == pytest.approx({'1': 1.0, '2': 3.0}, abs=1e-5)


def test_entry_point_runs_on_the_simulator(tmp_path, plugin):
    plugin('plugep', '''
        [netsched.policies]
        largest-first = plugep.mod:LargestFirst
        [netsched.circuits]
        no-circuits = plugep.mod:NoCircuits
        ''')
    path = write_trace(tmp_path, ONE_PORT, 2)
    got = ccts(tmp_path, trace_exp(path, 2, policy='largest-first'))
    assert got == pytest.approx({'2': 2.0, '1': 3.0}, abs=1e-5)
    # made by its name with parameters, which are checked
    p = policies.make('largest-first', {'flip': 1})
    assert (p.name, p.flip) == ('largest-first', 1)
    sched = circuits.make('no-circuits')
    assert sched.name == 'no-circuits' and sched.static
    with pytest.raises(ConfigError, match='no parameter .zap'):
        policies.make('largest-first', {'zap': 1})


def test_the_controller_resolves_it_as_the_simulator_does(plugin):
    """The controller is made from the fabric description (the Ryu app's
    process): the same registry, so the same name reaches the same
    class, and its status names the policy as the experiment does."""
    from netsched import topology as topo
    from netsched.control.spec import ControllerSpec
    from netsched.control.core import ControllerCore
    plugin('plugctl', '[netsched.policies]\nbig = plugctl.mod:LargestFirst\n')
    for name in ('plugctl.mod:LargestFirst', 'big'):
        c = ControllerCore.from_description(ControllerSpec(
            topo.parse_spec('dumbbell,1'), 8, policy=name,
            policy_params={'flip': 1}, socket='/nonexistent.sock').to_dict())
        assert type(c.scheduler.policy).__name__ == 'LargestFirst'
        assert c.scheduler.policy.flip == 1
        assert c.handle({'op': 'status'}, 0.0).reply['policy'] == name


def test_a_module_in_the_start_directory(tmp_path, monkeypatch):
    """A module beside where netsched was started is found (sys.path's
    end), and a child told that directory (the emulator's controller,
    IMPORT_DIR_ENV) finds it too, wherever it runs."""
    d = tmp_path / 'start'
    d.mkdir()
    (d / 'plugstart.py').write_text(MODULE)
    monkeypatch.setattr(sys, 'path', list(sys.path))
    monkeypatch.delenv(spec.IMPORT_DIR_ENV, raising=False)
    monkeypatch.chdir(d)
    try:
        assert policies.make('plugstart:LargestFirst').name == \
            'plugstart:LargestFirst'
        assert sys.path[-1] == str(d)        # after what is installed
        del sys.modules['plugstart']
        sys.path.remove(str(d))
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv(spec.IMPORT_DIR_ENV, str(d))
        assert policies.make('plugstart:LargestFirst', {'flip': 1}).flip == 1
    finally:
        sys.modules.pop('plugstart', None)
    from netsched.emulator.controller import ryu_env
    assert ryu_env('/x.json')[spec.IMPORT_DIR_ENV] == str(d)
    monkeypatch.delenv(spec.IMPORT_DIR_ENV)
    assert ryu_env('/x.json')[spec.IMPORT_DIR_ENV] == str(tmp_path)


def test_parse_reads_the_class_as_part_of_the_name():
    assert policies.parse_spec('pkg.mod:Cls:flip=1:w=x') == \
        ('pkg.mod:Cls', {'flip': 1, 'w': 'x'})
    assert policies.parse_spec('mod:Cls') == ('mod:Cls', {})
    assert policies.parse_spec('geryon:classes=1') == ('geryon',
                                                       {'classes': 1})
    assert circuits.parse_spec('pkg.m:S:period_s=0.5') == \
        ('pkg.m:S', {'period_s': 0.5})
    with pytest.raises(ConfigError, match="key=value .* got 'x'"):
        policies.parse_spec('pkg.mod:Cls:x')


@pytest.mark.parametrize('name, match', [
    ('plugbad.nosuch:X', r"'plugbad.nosuch:X': no module named "
                         r"'plugbad.nosuch'"),
    ('plugnone.mod:X', r"no module named 'plugnone'"),
    ('plugbad.mod:Nope', r"'plugbad.mod:Nope': module plugbad.mod has no "
                         r"'Nope'"),
    ('plugbad.mod:NotAPolicy', r"plugbad.mod.NotAPolicy is not a subclass "
                               r"of netsched.policies.base.Policy"),
    ('plugbad.mod:NoCircuits', r"NoCircuits is not a subclass of "
                               r"netsched.policies.base.Policy"),
    ('plugbad.broken:X', r"importing plugbad.broken failed: ZeroDivision"
                         r"Error: division by zero \(.*broken.py, line 3\)"),
    ('plugbad.needs:X', r"importing plugbad.needs failed: ModuleNotFound"
                        r"Error: No module named 'plug_absent' "
                        r"\(.*needs.py, line 2\)"),
    ('plugbad.mod', r"unknown policy 'plugbad.mod': a module path names "
                    r"its class, plugbad.mod:ClassName"),
    ('sebf:fast', r"policy 'sebf' takes parameters as key=value after the "
                  r"name, got 'fast'"),
    ('nosuchpolicy', r"unknown policy 'nosuchpolicy' \(known: aalo, .*; or "
                     r"package.module:ClassName\)"),
])
def test_what_cannot_be_resolved_is_a_clear_error(plugin, name, match):
    plugin('plugbad', files={'broken.py': '"""Fails."""\n\nx = 1 / 0\n',
                             'needs.py': 'import os\nimport plug_absent\n'})
    with pytest.raises(ConfigError, match=match) as e:
        policies.make(name, where='--policy')
    assert str(e.value).startswith('--policy: ')


def test_the_command_line_says_it_without_a_traceback(tmp_path, plugin,
                                                      capsys):
    plugin('plugcli')
    path = write_trace(tmp_path, ONE_PORT, 2)
    (tmp_path / 'exp.yaml').write_text(json.dumps(trace_exp(path, 2)))
    for bad in ('plugcli.mod:Nope', 'plugcli.mod:NotAPolicy'):
        assert cli.main(['check', str(tmp_path / 'exp.yaml'),
                         '--policy', bad]) == 2
        err = capsys.readouterr().err
        assert 'Traceback' not in err and repr(bad) in err, err


def test_a_name_clash_with_a_built_in_names_both(plugin):
    plugin('plugclash', '[netsched.policies]\n'
                        'sebf = plugclash.mod:LargestFirst\n')
    for make in (lambda: policies.make('fair'),
                 lambda: policies.registry.catalogue()):
        with pytest.raises(ConfigError) as e:
            make()
        msg = str(e.value)
        assert "'sebf'" in msg and 'plugclash.mod:LargestFirst' in msg \
            and 'plugclash 0.1' in msg \
            and 'netsched.policies.varys.Sebf' in msg, msg


def test_two_packages_giving_one_name_names_both(plugin):
    plugin('plugtwo', '[netsched.circuits]\nmine = plugtwo.mod:NoCircuits\n')
    plugin('plugthree', '[netsched.circuits]\n'
                        'mine = plugthree.mod:NoCircuits\n')
    with pytest.raises(ConfigError, match='given by two entry points') as e:
        circuits.make('none')
    assert 'plugtwo.mod' in str(e.value) and 'plugthree.mod' in str(e.value)


def test_netsched_policies_lists_every_name(plugin, capsys):
    plugin('pluglist', '''
        [netsched.policies]
        largest-first = pluglist.mod:LargestFirst
        broken = pluglist.nosuch:X
        [netsched.circuits]
        no-circuits = pluglist.mod:NoCircuits
        ''')
    assert cli.main(['policies', '--json']) == 0
    d = json.loads(capsys.readouterr().out)
    pol = {p['name']: p for p in d['policies']}
    assert set(pol) == set(policies.REGISTRY) | {'largest-first', 'broken'}
    assert {c['name'] for c in d['circuits']} == \
        set(circuits.REGISTRY) | {'no-circuits'}
    lf = pol['largest-first']
    assert lf['origin'] == 'entry point pluglist.mod:LargestFirst'
    assert lf['params'] == {'flip': 0}
    assert lf['description'] == 'Largest coflow first (flip=1: smallest ' \
        'first)'
    # the notes follow the attributes: clairvoyant, decides on coflows,
    # no progress reports
    assert any('sends not yet started' in n for n in lf['backends']['emu'])
    assert any('when flows arrive or a coflow ends' in n
               for n in lf['backends']['sim'])
    assert any('no progress reports' in n for n in lf['backends']['emu'])
    assert not any('no progress reports' in n
                   for n in pol['aalo']['backends']['emu'])
    assert any('every 10 ms' in n for n in pol['aalo']['backends']['emu'])
    assert pol['fair']['backends']['sim'] == [
        'decides nothing: flows share links max-min fairly']
    assert pol['sebf']['params'] == {} and pol['aalo']['params'] == \
        policies.REGISTRY['aalo'].params
    # a package that fails to load is listed with its error, not fatal
    err = pol['broken']['error']
    assert "No module named 'pluglist.nosuch'" in err
    assert 'broken = pluglist.nosuch:X' in err and 'pluglist 0.1' in err
    # the text form
    assert cli.main(['policies']) == 0
    text = capsys.readouterr().out
    assert '  largest-first  [entry point pluglist.mod:LargestFirst]' in text
    assert '    parameters: flip=0' in text
    assert '  no-circuits  [entry point pluglist.mod:NoCircuits]' in text


def test_policies_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        cli.main(['policies', '--help'])
    assert 'Example: netsched policies --json' in capsys.readouterr().out


# --- the worked example of docs/writing-a-policy.md, as shipped ---------

# coflow 1 (A): racks 0 and 1 to racks 2 and 3, 2 MB per reducer split
# over the 2 mappers: 4 flows of 1 MB, 1 MB through each of ports 0, 1 up
# and 2, 3 down twice: 4 MB in all, its bottleneck 2 MB. Coflow 2 (B): one
# flow 0 -> 2 of 3 MB, its bottleneck 3 MB. Both at t = 0.
WIDE = ['1 0 2 0 1 2 2:2.0 3:2.0', '2 0 1 0 1 2:3.0']


def example(tmp_path, monkeypatch, params=''):
    monkeypatch.syspath_prepend(EXAMPLES)
    path = write_trace(tmp_path, WIDE, 4)
    return ccts(tmp_path, trace_exp(path, 4), policy='smallest_remaining:'
                'SmallestRemaining' + params, tag='ex' + params)


def test_the_guide_example_ranks_by_bytes_left(tmp_path, monkeypatch):
    try:
        got = example(tmp_path, monkeypatch)
        # B (3 MB left) before A (4 MB): B 0 -> 2 at 1 MB/s ends at 3 s;
        # meanwhile A's 1 -> 3 alone is free (1 MB by 1 s); from 3 s A's
        # other three share ports 0 up and 2 down at 0.5 MB/s: 2 s more
        assert got == pytest.approx({'2': 3.0, '1': 5.0}, abs=1e-5)
        # starve_s=1: at 1 s both are old, A (first by id) goes first: its
        # three flows left at 0.5 MB/s end at 3 s, B's 2 MB left at 5 s
        got = example(tmp_path, monkeypatch, ':starve_s=1')
        assert got == pytest.approx({'1': 3.0, '2': 5.0}, abs=1e-5)
    finally:
        sys.modules.pop('smallest_remaining', None)
    # not a policy the package has: SEBF (A's bottleneck 2 MB < B's 3 MB)
    # serves A first, its four flows at 0.5 MB/s to 2 s, then B to 5 s
    got = ccts(tmp_path, trace_exp(write_trace(tmp_path, WIDE, 4), 4,
                                   'sebf'), tag='sebf')
    assert got == pytest.approx({'1': 2.0, '2': 5.0}, abs=1e-5)


def load_example(monkeypatch):
    monkeypatch.syspath_prepend(EXAMPLES)
    sys.modules.pop('smallest_remaining', None)
    return policies.make('smallest_remaining:SmallestRemaining',
                         {'starve_s': 5.0})


def snapshot(t, arrival, flows, pending=()):
    """Coflows arriving at ``arrival``; ``flows`` and ``pending``:
    (coflow, link, bytes) on links of 1 B/s."""
    links = sorted({f[1] for f in list(flows) + list(pending)})

    def col(xs, i, kind=float):
        return np.array([x[i] for x in xs], kind)
    return Snapshot(
        t=t, queues=None, link_capacity=np.full(len(links), 8.0),
        path_links=np.array([[link] for link in links]),
        flow_path=col(flows, 1, np.int64), flow_coflow=col(flows, 0,
                                                           np.int64),
        flow_remaining=col(flows, 2), flow_sent=np.zeros(len(flows)),
        flow_rate=np.zeros(len(flows)),
        coflow_id=tuple('c%d' % i for i in range(len(arrival))),
        coflow_arrival=np.array(arrival, float),
        coflow_sent=np.zeros(len(arrival)),
        pending_path=col(pending, 1, np.int64),
        pending_coflow=col(pending, 0, np.int64),
        pending_bytes=col(pending, 2))


def test_the_guide_example_on_a_hand_made_snapshot(monkeypatch):
    try:
        p = load_example(monkeypatch)
        # at t = 6 with starve_s = 5: c0 (arrived 0) and c1 (arrived 1)
        # are old, oldest first; c2 (arrived 3) has 4 + 3 pending = 7 B
        # left, c3 (arrived 2) 6 B: c3 before c2
        s = snapshot(6.0, [0.0, 1.0, 3.0, 2.0],
                     [(0, 0, 100), (1, 1, 50), (2, 0, 4), (3, 1, 6)],
                     pending=[(2, 1, 3)])
        d = p.decide(s)
        assert d.coflow_rank.tolist() == [0, 1, 3, 2]
        # the next to come of age: c3 at 2 + 5 = 7 s (c2 at 8 s)
        assert d.recheck_at == 7.0
        # at t = 0 nobody is old: by bytes left, ties by arrival, then
        # by name
        s = snapshot(0.0, [0.0, 0.0], [(0, 0, 5), (1, 1, 5)])
        assert p.decide(s).coflow_rank.tolist() == [0, 1]
        s = snapshot(0.0, [1.0, 0.0], [(0, 0, 5), (1, 1, 5)])
        assert p.decide(s).coflow_rank.tolist() == [1, 0]
    finally:
        sys.modules.pop('smallest_remaining', None)


def test_the_guide_example_properties(monkeypatch):
    """On random snapshots: the ranks are a permutation, the snapshot
    is left as it was, and the old come first, oldest first."""
    try:
        p = load_example(monkeypatch)
        rng = np.random.default_rng(7)
        for _ in range(50):
            C = int(rng.integers(1, 8))
            flows = [(c, int(rng.integers(0, 3)), float(rng.integers(1, 9)))
                     for c in range(C)]
            s = snapshot(float(rng.uniform(0, 12)),
                         rng.uniform(0, 10, C).tolist(), flows)
            before = {k: np.array(v, copy=True) for k, v in vars(s).items()
                      if isinstance(v, np.ndarray)}
            rank = p.decide(s).coflow_rank
            assert sorted(rank.tolist()) == list(range(C))
            for k, v in before.items():
                assert np.array_equal(getattr(s, k), v), k
            old = s.t - s.coflow_arrival >= 5.0
            by_rank = np.argsort(rank)
            n = int(old.sum())
            assert old[by_rank[:n]].all()
            assert np.all(np.diff(s.coflow_arrival[by_rank[:n]]) >= 0)
    finally:
        sys.modules.pop('smallest_remaining', None)


def test_the_guide_shows_the_example_file_as_it_is():
    """The page quotes the example whole: the quote is the file."""
    with open(os.path.join(ROOT, 'docs', 'writing-a-policy.md')) as f:
        page = f.read()
    with open(os.path.join(EXAMPLES, 'smallest_remaining.py')) as f:
        code = f.read()
    assert '```python\n' + code + '```' in page
