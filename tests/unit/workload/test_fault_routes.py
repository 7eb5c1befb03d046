"""A fault set checked against the traffic that runs under it
(workload.faults.check_traffic): hand-worked on a k=4 fat-tree with both
uplinks of a0_0 and of a1_1 down, where the fabric stays connected but
pod 0 and pod 1 reach each other only through a valley, which the router
does not take. Only the pairs a job or a trace's coflow sends between are
asked, before a run writes anything; a run that still meets a flow
with no route ends with a line (the simulator) or keeps its path until
a link comes back (the controller)."""
import os

import pytest

from netsched import fluid, routing
from netsched import topology as topo
from netsched.errors import ConfigError, NetschedError
from netsched.pipeline import experiment, run
from netsched.sim.engine import Engine
from netsched.workload import faults as wf
from netsched.workload import taskgraph

FT = topo.fat_tree(4)
# both uplinks of a0_0 and of a1_1, down at once
VALLEY = [{'link': ['a0_0', 'c0'], 'at': 0.1, 'until': 0.5},
          {'link': ['a0_0', 'c1'], 'at': 0.1, 'until': 0.5},
          {'link': ['a1_1', 'c2'], 'at': 0.1, 'until': 0.5},
          {'link': ['a1_1', 'c3'], 'at': 0.1, 'until': 0.5}]
DOWN = frozenset({'a0_0-c0', 'a0_0-c1', 'a1_1-c2', 'a1_1-c3'})


def ring(jid, hosts):
    return {'id': jid, 'model': 'resnet50', 'pattern': 'ring',
            'workers': len(hosts), 'iterations': 1,
            'placement': list(hosts)}


def exp_with(faults=VALLEY, **kw):
    d = {'topology': 'fattree,4', 'backend': 'sim', 'policy': 'fair',
         'faults': faults}
    d.update(kw)
    return experiment.from_dict(d, 'exp.yaml')


def test_the_router_rule_by_hand():
    live = topo.without(FT, DOWN)
    # pod 0 climbs only through a0_1 to c2, c3, whose pod-1 switch a1_1
    # has lost them: to pod 1 it would go down into pod 2 or 3 and up
    for s, d in (('h0_0_0', 'h1_0_0'), ('h1_0_0', 'h0_0_0'),
                 ('h0_1_1', 'h1_1_0')):
        assert not routing.reaches(live, s, d)
    # pods 0 and 1 still reach pods 2 and 3, and inside themselves
    for s, d in (('h0_0_0', 'h2_0_0'), ('h1_0_0', 'h3_1_1'),
                 ('h0_0_0', 'h0_1_0'), ('h1_0_0', 'h1_1_0')):
        assert routing.reaches(live, s, d)
        assert routing.reaches(live, d, s)
    assert routing.reaches(FT, 'h0_0_0', 'h1_0_0')
    # the router agrees: no path where reaches says none
    ft = routing.FiveTuple(FT.nodes['h0_0_0']['ip'],
                           FT.nodes['h1_0_0']['ip'], 6, 1000, 80)
    with pytest.raises(ValueError, match='cannot reach'):
        routing.path(live, ft)


def test_a_job_across_the_valley_is_refused_with_its_name():
    exp = exp_with(jobs=[ring('near', ['h0_0_0', 'h0_1_0']),
                         ring('across', ['h0_0_1', 'h1_0_0'])])
    with pytest.raises(ConfigError) as e:
        taskgraph.build(exp)
    msg = str(e.value)
    assert msg.startswith('exp.yaml: faults[0]: with link a0_0-c0 down '
                          '(and the other faults of that moment), job '
                          'across sends from h0_0_1 to h1_0_0')
    assert 'valley-free' in msg and 'jobs[1].placement' in msg
    assert '\n' not in msg


def test_jobs_whose_hosts_stay_routable_are_accepted():
    # the same faults; no job sends between pod 0 and pod 1, though
    # those pairs have no route while they last. The ring "far" has
    # hosts in both pods, but its neighbours h0 -> h2 -> h1 -> h3 -> h0
    # never send from one to the other
    exp = exp_with(jobs=[ring('near', ['h0_0_0', 'h0_1_0']),
                         ring('far', ['h0_0_1', 'h2_0_0', 'h1_0_0',
                                      'h3_0_0'])])
    plan = taskgraph.build(exp)
    assert {(c.src, c.dst) for c in plan.conns if c.job == 'far'} == {
        ('h0_0_1', 'h2_0_0'), ('h2_0_0', 'h1_0_0'), ('h1_0_0', 'h3_0_0'),
        ('h3_0_0', 'h0_0_1')}
    run.check(exp)


def test_a_ps_job_and_a_tuning_group_are_named():
    exp = exp_with(jobs=[{'id': 'p', 'model': 'resnet50', 'pattern': 'ps',
                          'workers': 2, 'iterations': 1,
                          'placement': ['h0_0_0', 'h2_0_0', 'h1_1_1']}])
    with pytest.raises(ConfigError, match=r'job p sends from h0_0_0 to '
                       r'h1_1_1 .*jobs\[0\]\.placement'):
        taskgraph.build(exp)
    tune = {'id': 'tg', 'model': 'resnet50', 'pattern': 'ring',
            'workers': 2, 'configs': 2,
            'placement': [['h2_0_0', 'h2_0_1'], ['h0_0_0', 'h1_0_0']],
            'stages': [{'iterations': 1, 'keep': 0.5}, {'iterations': 1}]}
    with pytest.raises(ConfigError, match=r'configuration tg\.c1 of tuning '
                       r'group tg sends from h0_0_0 to h1_0_0 .*'
                       r'tuning\[0\]\.placement'):
        taskgraph.build(exp_with(tuning=[tune]))


def test_only_the_moment_that_strands_the_pair_is_named():
    # a0_0's uplinks go first; a1_1's only later: faults[2] is the one
    faults = [dict(f) for f in VALLEY]
    for f in faults[2:]:
        f['at'] = 0.3
    exp = exp_with(faults, jobs=[ring('across', ['h0_0_0', 'h1_0_0'])])
    with pytest.raises(ConfigError, match=r'faults\[2\]: with link '
                       r'a1_1-c2 down \(and the other'):
        taskgraph.build(exp)
    # apart in time, no moment has all four down
    for f in faults[2:]:
        f['at'], f['until'] = 0.6, 0.9
    taskgraph.build(exp_with(faults,
                             jobs=[ring('across', ['h0_0_0', 'h1_0_0'])]))


def trace_file(tmp_path, lines):
    p = tmp_path / 't.txt'
    p.write_text('16 %d\n%s\n' % (len(lines), '\n'.join(lines)))
    return str(p)


def test_a_trace_coflow_across_the_valley_names_the_coflow(tmp_path):
    # rack i on the i-th host: rack 0 h0_0_0, rack 1 h0_0_1, rack 4 h1_0_0
    path = trace_file(tmp_path, ['1 0 1 0 1 1:1.0', '2 10 1 0 1 4:1.0'])
    exp = exp_with(trace={'path': path})
    with pytest.raises(ConfigError, match=r'faults\[0\]: .*coflow 2 of '
                       r'trace t\.txt sends from h0_0_0 to h1_0_0 .*'
                       r'\(faults\[0\]\)$'):
        run.check(exp)                     # the simulator's: no plan
    with pytest.raises(ConfigError, match='coflow 2 of trace t.txt'):
        taskgraph.build(exp)               # the emulator's and ns-3's
    ok = exp_with(trace={'path': trace_file(tmp_path, ['1 0 1 0 1 1:1.0',
                                                       '2 10 1 0 1 8:1.0'])})
    run.check(ok)
    taskgraph.build(ok)


def test_a_refused_run_writes_nothing(tmp_path):
    exp = exp_with(jobs=[ring('across', ['h0_0_0', 'h1_0_0'])])
    out = str(tmp_path / 'out')
    with pytest.raises(ConfigError, match='job across'):
        run.execute(exp, out, say=lambda m: None)
    assert not os.path.exists(out)


def test_check_traffic_asks_only_the_pairs_given():
    faults = exp_with(jobs=[ring('a', ['h0_0_0', 'h0_0_1'])]).faults
    wf.check_traffic(faults, FT, [], 'x')
    wf.check_traffic(faults, FT, [('h0_0_0', 'h2_0_0', 'job a', None)], 'x')
    with pytest.raises(ConfigError, match=r'^x: faults\[0\]: .*job b sends '
                       r'from h1_0_0 to h0_0_0 .* or place it on other '
                       r'hosts \(jobs\[1\]\.placement\)$'):
        wf.check_traffic(faults, FT, [
            ('h0_0_0', 'h2_0_0', 'job a', None),
            ('h1_0_0', 'h0_0_0', 'job b', 'jobs[1].placement')], 'x')


class _Start:
    """A driver that starts one flow at t=0 or, with ``look``, first asks
    its path as PlanDriver does of a job's first sends when it arrives
    (outside add_flows)."""

    def __init__(self, src, dst, look=False):
        self.src, self.dst, self.look = src, dst, look

    def start(self, eng):
        if self.look:
            eng.net.path_id(self.src, self.dst, 1000, 80)
        eng.add_flows([self.src], [self.dst], [1e6],
                      eng.coflow('c', 0.0))


class _Log:
    def write(self, *a, **kw):
        pass


@pytest.mark.parametrize('look', [False, True])
def test_a_run_that_meets_no_route_ends_with_a_line(look):
    from netsched import policies
    net = fluid.Network(FT)
    net.set_down(DOWN)
    eng = Engine(net, policies.make('fair', {}), _Log())
    with pytest.raises(NetschedError, match=r'^at t=0\.000000 s: h0_0_0 '
                       r'cannot reach h1_0_0 with a0_0-c0, a0_0-c1, '
                       r'a1_1-c2, a1_1-c3 down: no route$'):
        eng.run(_Start('h0_0_0', 'h1_0_0', look))


def test_the_controller_keeps_a_stranded_connection_s_path():
    from netsched.control.demand import Demand
    net = fluid.Network(FT)
    d = Demand(FT, net)
    d.add_host('h0_0_0', [{'id': 0, 'sport': 1000, 'dport': 80,
                           'dst_ip': FT.nodes['h1_0_0']['ip']},
                          {'id': 1, 'sport': 1001, 'dport': 80,
                           'dst_ip': FT.nodes['h2_0_0']['ip']}], [])
    before = {k: c.path for k, c in d.conns.items()}
    net.set_down(DOWN)
    d.reroute()
    c0, c1 = d.conns[('h0_0_0', 0)], d.conns[('h0_0_0', 1)]
    assert c0.path == before[c0.key]
    assert c1.path == net.path_id('h0_0_0', 'h2_0_0', 1001, 80)


def test_no_route_is_its_own_error_and_only_it_is_caught():
    """routing.NoRoute names the two hosts; a ValueError of another kind
    (an address no host has: a bug, not a fault) is not taken for it by
    the engines, which pass it on with its traceback."""
    live = topo.without(FT, DOWN)
    ft = routing.FiveTuple(FT.nodes['h0_0_0']['ip'],
                           FT.nodes['h1_0_0']['ip'], 6, 1000, 80)
    with pytest.raises(routing.NoRoute) as e:
        routing.path(live, ft)
    assert (e.value.src, e.value.dst) == ('h0_0_0', 'h1_0_0')
    stray = ft._replace(dst='10.99.99.99')
    with pytest.raises(ValueError) as e:
        routing.path(FT, stray)
    assert not isinstance(e.value, routing.NoRoute)
    from types import SimpleNamespace
    from netsched.sim.engine import route_errors
    eng = SimpleNamespace(now=0.25, net=SimpleNamespace(down=DOWN))
    with pytest.raises(ValueError, match='no host has'):
        with route_errors(eng):
            routing.path(FT, stray)
    with pytest.raises(NetschedError, match=r'^at t=0\.250000 s: h0_0_0 '
                       r'cannot reach h1_0_0 with a0_0-c0, .* down'):
        with route_errors(eng):
            routing.path(live, ft)


class _Fab:
    """ns-3's fabric as Engine.reroute asks it: ``route`` raises
    ``error`` for the connection to h1_0_0."""

    def __init__(self, error):
        self.error = error

    def routed(self, *conn):
        return None

    def route(self, src, dst, sport, dport, live, circuits):
        if dst == 'h1_0_0':
            raise self.error
        return [(src, dst)]


def _ns3_engine(error):
    from types import SimpleNamespace
    from netsched.ns3.engine import Engine as Ns3Engine
    net = fluid.Network(FT)
    net.set_down(DOWN)
    eng = Ns3Engine.__new__(Ns3Engine)
    eng.fab, eng.net = _Fab(error), net
    eng.conns = {('h0_0_0', 1000, 'h1_0_0', 80): None,
                 ('h0_0_0', 1001, 'h2_0_0', 80): None}
    eng.control = SimpleNamespace(
        sched=SimpleNamespace(demand=SimpleNamespace(conns={})),
        rerouted=lambda: None)
    return eng


def test_ns3_strands_a_connection_with_no_route_and_nothing_else():
    """On ns-3 a connection the router leaves with no route keeps its
    route (counted stranded) until a link comes back; any other error
    of the routing is not counted as stranded but raised."""
    eng = _ns3_engine(routing.NoRoute('h0_0_0', 'h1_0_0'))
    assert eng.reroute() == (1, 1)
    eng = _ns3_engine(ValueError('no host has address 10.9.9.9'))
    with pytest.raises(ValueError, match='no host has'):
        eng.reroute()
