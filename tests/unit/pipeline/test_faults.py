"""Faults (link and switch failures) in an experiment: the checks, routing
around the links down, the controller's reroute, and the simulator's
hand-worked timeline."""
import json

import numpy as np
import pytest

from netsched import fluid, routing
from netsched import topology as topo
from netsched.control import openflow as of
from netsched.control.core import ControllerCore
from netsched.errors import ConfigError
from netsched.pipeline import experiment, metrics
from netsched.sim.engine import Engine
from netsched.sim.faults import schedule
from netsched.workload import faults as wf

MB = 2 ** 20
FT = topo.fat_tree(4)


def exp_with(faults, topology='fattree,4', **kw):
    d = {'topology': topology, 'backend': 'sim', 'policy': 'fair',
         'jobs': [{'id': 'j', 'model': 'resnet50', 'pattern': 'ring',
                   'workers': 2, 'iterations': 1}], 'faults': faults}
    d.update(kw)
    return experiment.from_dict(d, 'exp.yaml')


# --- the checks -------------------------------------------------------------

def test_a_link_and_a_switch_fault_parse_with_their_links():
    e = exp_with([{'link': ['e0_1', 'a0_0'], 'at': 1, 'until': 3},
                  {'switch': 'c0', 'at': 2}])
    link, sw = e.faults
    assert (link.kind, link.target, link.at_s, link.until_s) == \
        ('link', 'a0_0-e0_1', 1.0, 3.0)
    assert link.links == {'a0_0-e0_1'}
    assert sw.until_s is None
    assert sw.links == {'a0_0-c0', 'a1_0-c0', 'a2_0-c0', 'a3_0-c0'}


@pytest.mark.parametrize('faults, words', [
    ('down', 'non-empty list'),
    ([{'at': 1}], 'exactly one of link, switch'),
    ([{'link': ['e0_1', 'a0_0'], 'switch': 'c0', 'at': 1}], 'exactly one'),
    ([{'link': ['e0_1', 'a0_0']}], "missing key 'at'"),
    ([{'link': ['e0_1', 'a0_0'], 'at': -1}], 'at: must be a number'),
    ([{'link': ['e0_1', 'a0_0'], 'at': 2, 'until': 1}], 'until: must be after'),
    ([{'link': ['e0_1', 'a0_0'], 'at': 1, 'when': 2}], "unknown key 'when'"),
    ([{'link': ['e0_1', 'c0'], 'at': 1}], 'are not linked'),
    ([{'link': ['e0_1', 'x9'], 'at': 1}], "no node 'x9'"),
    ([{'link': ['h0_0_0', 'e0_0'], 'at': 1}], 'is a host'),
    ([{'link': 'e0_1-a0_0', 'at': 1}], 'list of two switch names'),
    ([{'switch': 'h0_0_0', 'at': 1}], 'not a packet switch'),
    ([{'switch': 'e0_0', 'at': 1}], 'h0_0_0, h0_0_1 could not reach'),
    ([{'switch': 'a0_0', 'at': 1, 'until': 3},
      {'link': ['a0_0', 'c1'], 'at': 2}], 'already holds it down'),
    # both of pod 0's aggregation switches at once cut the pod off
    ([{'switch': 'a0_0', 'at': 1, 'until': 3},
      {'switch': 'a0_1', 'at': 2}], 'and the other faults of that moment'),
])
def test_bad_faults_are_named(faults, words):
    with pytest.raises(ConfigError) as e:
        exp_with(faults)
    assert words in str(e.value) and 'faults' in str(e.value)


def test_faults_need_switch_links_and_a_packet_fabric():
    with pytest.raises(ConfigError, match='big switch'):
        exp_with([{'switch': 's', 'at': 1}], topology='bigswitch,2',
                 big_switch=True)
    with pytest.raises(ConfigError, match='hybrid fabric'):
        exp_with([{'link': ['l0', 'p0'], 'at': 1}], topology='hybrid,4,1')


def test_faults_one_after_another_are_fine_and_their_timeline_is_ordered():
    e = exp_with([{'switch': 'a0_0', 'at': 1, 'until': 2},
                  {'switch': 'a0_1', 'at': 2, 'until': 3}])
    line = [(t, what, f.target) for t, what, f in wf.timeline(e.faults)]
    # the first switch is back before the second goes down at t=2
    assert line == [(1.0, 'down', 'a0_0'), (2.0, 'up', 'a0_0'),
                    (2.0, 'down', 'a0_1'), (3.0, 'up', 'a0_1')]
    assert wf.down_at(e.faults, 2.0) == topo.switch_links(FT, 'a0_1')
    assert wf.down_at(e.faults, 3.0) == frozenset()


# --- routing around links down ---------------------------------------------

def _valley_free(g, nodes):
    tier = [routing._tier(g, n) for n in nodes]
    top = tier.index(max(tier))
    return tier[:top + 1] == sorted(tier[:top + 1]) and \
        tier[top:] == sorted(tier[top:], reverse=True)


def test_routes_around_a_link_stay_valley_free_and_reach_everyone():
    live = topo.without(FT, {'a0_0-e0_1'})
    assert topo.base_of(live) is FT and topo.without(FT, set()) is FT
    # e0_1 climbs only through a0_1; a pod-1 edge switch climbs only
    # through a1_1 (whose cores still reach a0_1), and a1_0 has no route
    # to e0_1's hosts rather than one down and up again through pod 1
    assert routing.next_hops(live, 'e0_1', 'h1_0_0') == ['a0_1']
    assert routing.next_hops(live, 'e1_0', 'h0_1_0') == ['a1_1']
    assert routing.next_hops(live, 'a1_0', 'h0_1_0') == []
    assert routing.next_hops(live, 'a0_0', 'h0_0_0') == ['e0_0']
    hosts = topo.hosts(FT)
    for s in hosts:
        for d in hosts:
            if s != d:
                for sport in (1000, 1001, 1002, 1003):
                    p = routing.path(live, routing.FiveTuple(
                        FT.nodes[s]['ip'], FT.nodes[d]['ip'], 6, sport, 80))
                    assert _valley_free(FT, p[1:-1]), p
                    assert ('a0_0', 'e0_1') not in zip(p, p[1:])
    # the hash salts are the whole fabric's
    assert routing.salt(live, 'a0_0') == routing.salt(FT, 'a0_0') == 1


# --- the controller's reroute -------------------------------------------------

def _core():
    core = ControllerCore(FT, 8)
    programs = {}
    for s in topo.switches(FT):
        programs[s] = core.on_connect(FT.nodes[s]['dpid'])[1:]
    return core, programs


def _apply(rules, mods):
    """A switch's rules after mods (adds replace by table, priority and
    match; strict deletes remove)."""
    key = lambda m: (m.table, m.priority, m.match)    # noqa: E731
    have = {key(m): m for m in rules}
    for m in mods:
        if m.command == 'add':
            have[key(m)] = m
        else:
            have.pop(key(m))
    return set(have.values())


def _sets_used(rules):
    return {r.metadata[0] for r in rules if r.metadata}


def test_a_port_down_reroutes_every_switch_by_the_least_change():
    core, programs = _core()
    a0 = FT.nodes['a0_0']['dpid']
    out = core.on_port_status(a0, topo.port(FT, 'a0_0', 'e0_1'), False, 1.0)
    live = topo.without(FT, {'a0_0-e0_1'})
    by_name = {topo.by_dpid(FT)[d]: m for d, m in out.mods.items()}
    for s, mods in by_name.items():
        now = _apply(programs[s], mods)
        want = set(of.route_rules(live, s))
        # the live routes, and nothing else but the ECMP rules of a set
        # no rule uses any more (left in place for when it returns)
        assert want <= now
        stale = now - want
        assert all(r.table == of.ECMP_TABLE for r in stale)
        assert not {r.match for r in stale} & {r.match for r in want}
        assert not _sets_used(now) - {dict(r.match)['metadata'][0]
                                      for r in now if r.table == 2}
    # e0_1 loses its only next-hop set: 14 remote hosts' IPv4 and ARP
    # rules now output to a0_1 (28 adds that replace them; the set's 36
    # ECMP rules stay); the other switches drop or narrow 2 destinations
    # (4 rules each)
    assert [m.command for m in by_name['e0_1']] == ['add'] * 28
    assert {len(m) for s, m in by_name.items() if s != 'e0_1'} == {4}
    assert out.log == [{'kind': 'reroute', 't': 1.0, 'link': 'a0_0-e0_1',
                        'up': False, 'links_down': ['a0_0-e0_1'],
                        'flow_mods': out.n_mods, 'applied_ms': None}]
    # the other end going down too changes nothing more
    e1 = FT.nodes['e0_1']['dpid']
    again = core.on_port_status(e1, topo.port(FT, 'e0_1', 'a0_0'), False, 1)
    assert again.mods == {} and again.log == []
    # a port of no link (LOCAL) is not a fault
    assert core.on_port_status(a0, 0xfffffffe, False, 1.0).log == []
    # back up (both ends): every switch holds the whole fabric's routes
    # again, exactly what it got when it connected; e0_1's set was still
    # there, so only its 28 rules change back
    core.on_port_status(a0, topo.port(FT, 'a0_0', 'e0_1'), True, 2.0)
    back = core.on_port_status(e1, topo.port(FT, 'e0_1', 'a0_0'), True, 2.0)
    assert back.log[0]['links_down'] == [] and back.log[0]['up']
    assert len(back.mods[e1]) == 28
    for d, mods in back.mods.items():
        s = topo.by_dpid(FT)[d]
        assert _apply(_apply(programs[s], out.mods[d]), mods) == \
            set(programs[s])


def test_a_switch_connecting_while_links_are_down_gets_the_live_routes():
    core, _ = _core()
    core.on_port_status(FT.nodes['a0_0']['dpid'],
                        topo.port(FT, 'a0_0', 'e0_1'), False, 1.0)
    e1 = FT.nodes['e0_1']['dpid']
    core.on_disconnect(e1)
    got = core.on_connect(e1)
    assert got[0] == of.delete_all()
    assert got[1:] == of.route_rules(topo.without(FT, {'a0_0-e0_1'}),
                                     'e0_1')


def test_new_ecmp_rules_go_before_the_rules_that_point_at_them():
    old = of.route_rules(topo.without(FT, {'a0_0-e0_1'}), 'e0_1')
    diff = of.rule_diff(old, of.route_rules(FT, 'e0_1'))
    # the set's rules were deleted here (no keep_unused_sets): 36 adds
    tables = [m.table for m in diff]
    # the restored set's rules first, then the forwarding rules using it
    assert tables == sorted(tables, reverse=True)
    assert all(m.command == 'add' for m in diff)


# --- the simulator ----------------------------------------------------------

class _Log:
    def __init__(self):
        self.events = []

    def write(self, t, ev, **kw):
        self.events.append(dict(kw, t=t, ev=ev))

    def write_raw(self, s):
        pass


def _leaf_spine_run(faults):
    g = topo.leaf_spine(2, 2, 2, link_bps=8 * MB)      # 1 MB/s links
    net = fluid.Network(g)
    from netsched import policies
    log = _Log()
    eng = Engine(net, policies.make('fair'), log, rel_tol=0)
    done = {}

    class Driver:
        def start(self, e):
            c = e.coflow('c', 0.0)
            # by the hash, source port 1000 of h0_0 -> h1_0 climbs to s0
            # and 1001 of h0_1 -> h1_1 to s1: 2 MB each, apart
            e.add_flows(['h0_0', 'h0_1'], ['h1_0', 'h1_1'],
                        np.array([2, 2]) * MB, c, sport=[1000, 1001],
                        dport=[5000, 5000])

        def on_flows_done(self, ids):
            for i in ids.tolist():
                done[i] = eng.now

    schedule(eng, faults)
    eng.run(Driver())
    return done, log.events, net


def test_the_simulator_routes_around_a_link_and_back():
    e = exp_with([{'link': ['l0', 's1'], 'at': 1, 'until': 2}],
                 topology='leafspine,2,2,2')
    done, events, net = _leaf_spine_run(e.faults)
    # 1 MB each by t=1; then both share l0->s0 at 0.5 MB/s: 0.5 MB each
    # by t=2; back apart at 1 MB/s, the last 0.5 MB takes 0.5 s
    assert done == {0: pytest.approx(2.5), 1: pytest.approx(2.5)}
    kinds = [(x['ev'], x.get('what'), x.get('flows_moved')) for x in events
             if x['ev'] in ('fault', 'reroute')]
    assert kinds == [('fault', 'down', None), ('reroute', None, 1),
                     ('fault', 'up', None), ('reroute', None, 1)]
    assert net.down == frozenset()


def test_a_fault_for_good_and_one_after_the_run_ends():
    e = exp_with([{'link': ['l0', 's1'], 'at': 1}],
                 topology='leafspine,2,2,2')
    done, _, _ = _leaf_spine_run(e.faults)
    assert done == {0: pytest.approx(3.0), 1: pytest.approx(3.0)}
    # a fault due after the workload ended neither runs nor keeps it going
    e = exp_with([{'link': ['l0', 's1'], 'at': 5, 'until': 6}],
                 topology='leafspine,2,2,2')
    done, events, _ = _leaf_spine_run(e.faults)
    assert done == {0: pytest.approx(2.0), 1: pytest.approx(2.0)}
    assert not [x for x in events if x['ev'] == 'fault']


# --- what an outage cost each job ---------------------------------------------

def test_the_fault_summary_says_whom_an_outage_hurt():
    evs = [{'t': 0.0, 'ev': 'job_start', 'job': j} for j in 'ab']
    # a: iterations of 1 s, but 2 s over the outage (1.0-2.5)
    # b: iterations of 0.5 s throughout
    for i, end in enumerate([1.0, 3.0, 4.0]):
        evs.append({'t': end, 'ev': 'iter', 'job': 'a', 'worker': 0,
                    'iter': i, 'loss': None})
    for i in range(8):
        evs.append({'t': 0.5 * (i + 1), 'ev': 'iter', 'job': 'b',
                    'worker': 0, 'iter': i, 'loss': None})
    evs += [{'t': 1.0, 'ev': 'fault', 'what': 'down', 'kind': 'link',
             'target': 'x-y', 'links': ['x-y']},
            {'t': 1.1, 'ev': 'reroute', 'links_down': ['x-y'],
             'flow_mods': 4, 'applied_ms': 20.0},
            {'t': 2.5, 'ev': 'fault', 'what': 'up', 'kind': 'link',
             'target': 'x-y', 'links': ['x-y']},
            # applied late, it reached the log after the 'up': its time
            # puts it in the outage
            {'t': 1.4, 'ev': 'reroute', 'links_down': ['x-y'],
             'flow_mods': 2, 'applied_ms': 900.0},
            {'t': 2.6, 'ev': 'reroute', 'links_down': [], 'flow_mods': 4,
             'applied_ms': 10.0},
            {'t': 4.0, 'ev': 'job_end', 'job': 'a'},
            {'t': 4.0, 'ev': 'job_end', 'job': 'b'},
            {'t': 4.0, 'ev': 'run_end'}]
    (out,) = metrics.fault_summary(metrics.compute(evs))
    assert (out['down_s'], out['up_s']) == (1.0, 2.5)
    assert [r['applied_ms'] for r in out['reroutes']] == [20.0, 900.0, 10.0]
    # a's iteration 1 (1.0-3.0) overlaps: 2 s against the others' mean
    # 1 s -> 1 s extra, twice as slow: hurt
    a = out['jobs']['a']
    assert (a['iterations'], a['extra_s'], a['slowdown'], a['hurt']) == \
        (1, 1.0, 2.0, True)
    # b's iterations ending 1.5, 2.0 and 2.5 overlap (the one starting at
    # 2.5 does not), none slower
    b = out['jobs']['b']
    assert (b['iterations'], b['extra_s'], b['slowdown'], b['hurt']) == \
        (3, 0.0, 1.0, False)
    assert out['hurt'] == ['a']


# --- an agent killed ------------------------------------------------------

@pytest.mark.parametrize('faults, words', [
    ([{'agent': 'h0_0_0', 'at': 1, 'until': 2}], 'does not come back'),
    ([{'agent': 'e0_0', 'at': 1}], "no host 'e0_0'"),
    ([{'agent': 'h0_0_0', 'at': 1}, {'agent': 'h0_0_0', 'at': 2}],
     'killed twice'),
])
def test_bad_agent_faults_are_named(faults, words):
    with pytest.raises(ConfigError, match=words):
        exp_with(faults)


def test_an_agent_fault_needs_jobs_not_a_trace(tmp_path):
    p = tmp_path / 't.txt'
    p.write_text('2 1\n1 0 1 0 1 1:1.0\n')
    with pytest.raises(ConfigError, match="trace's coflows are not jobs"):
        exp_with([{'agent': 'h0_0_0', 'at': 1}], jobs=[],
                 trace={'path': str(p)})


def _two_jobs(tmp_path, faults):
    d = {'topology': 'fattree,4', 'backend': 'sim', 'policy': 'fair',
         'jobs': [{'id': 'crossing', 'model': 'resnet50', 'pattern': 'ring',
                   'workers': 4, 'iterations': 10,
                   'placement': ['h0_1_0', 'h2_0_0', 'h0_1_1', 'h3_0_0']},
                  {'id': 'apart', 'model': 'resnet50', 'pattern': 'ring',
                   'workers': 2, 'iterations': 10,
                   'placement': ['h3_1_0', 'h3_1_1']}]}
    if faults:
        d['faults'] = faults
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'))
    from netsched.pipeline import run
    out = tmp_path / ('out-%d' % len(faults or ()))
    _, s = run.execute(exp, str(out), say=lambda m: None)
    return s, [json.loads(x) for x in open(out / 'events.jsonl')]


def test_the_simulator_fails_the_jobs_of_a_killed_agent(tmp_path):
    base, _ = _two_jobs(tmp_path, None)
    s, events = _two_jobs(tmp_path, [{'agent': 'h2_0_0', 'at': 0.5}])
    failed = [e for e in events if e['ev'] == 'job_failed']
    assert [(e['job'], e['t']) for e in failed] == [('crossing', 0.5)]
    assert failed[0]['reason'] == 'the agent on h2_0_0 was killed at 0.500 s'
    # crossing stops where it was: its iterations before 0.5 s only, no
    # flow of it after, and it is in none of the totals
    c = s['jobs']['crossing']
    assert c['failed'] == failed[0]['reason'] and c['jct_s'] is None
    assert 0 < c['iterations'] < 10
    ends = [e['t'] for e in events if e['ev'] == 'iter'
            and e['job'] == 'crossing']
    assert max(ends) <= 0.5
    assert not [e for e in events if e['ev'] == 'flow' and e['t'] > 0.5
                and e['coflow'].startswith('crossing/')]
    # apart shares no link with it: exactly as without the fault
    assert s['jobs']['apart'] == base['jobs']['apart']
    assert s['totals']['avg_jct_s'] == s['jobs']['apart']['jct_s']
    assert (s['totals']['jobs_done'], s['totals']['jobs_failed']) == (1, 1)
    assert 'jobs_failed' not in base['totals']


def test_an_agent_killed_after_its_jobs_ended_fails_nothing(tmp_path):
    base, _ = _two_jobs(tmp_path, None)
    s, events = _two_jobs(tmp_path, [{'agent': 'h3_1_0', 'at': 50.0}])
    assert not [e for e in events if e['ev'] in ('job_failed', 'fault')]
    assert s['jobs'] == base['jobs']


# --- the controller killed and started again ---------------------------

@pytest.mark.parametrize('faults, words', [
    ([{'controller': 'restart', 'at': 1}], 'until: missing'),
    ([{'controller': 'stop', 'at': 1, 'until': 2}], "one fault of the "
     "controller is 'restart'"),
    ([{'controller': 'restart', 'at': 1, 'until': 3},
      {'controller': 'restart', 'at': 2, 'until': 4}], 'already down'),
])
def test_bad_controller_faults_are_named(faults, words):
    with pytest.raises(ConfigError, match=words):
        exp_with(faults)


def test_the_simulator_holds_the_last_decision_while_the_controller_is_down():
    # a 3 MB flow from h0_0 starts alone at 0; a 1 MB one from h0_1 joins
    # at 1 s on the same leaf uplink (one spine: the only path)
    from netsched import policies
    g = topo.leaf_spine(2, 1, 2, link_bps=8 * MB)    # 1 MB/s links
    net = fluid.Network(g)
    keys = {}

    def run(faults):
        log = _Log()
        eng = Engine(net, policies.make('sebf'), log, queues=8, rel_tol=0)
        done = {}

        class Driver:
            def start(self, e):
                c0 = e.coflow('big', 0.0)
                e.add_flows(['h0_0'], ['h1_0'], np.array([3 * MB]), c0,
                            sport=[1000], dport=[5000])
                e.at(1.0, self.second)

            def second(self):
                c1 = eng.coflow('small', eng.now)
                eng.add_flows(['h0_1'], ['h1_1'], np.array([1 * MB]), c1,
                              sport=[1000], dport=[5000])
                keys[bool(faults)] = eng.table.a_key.tolist()

            def on_flows_done(self, ids):
                for i in ids.tolist():
                    done[i] = eng.now
        schedule(eng, faults)
        eng.run(Driver())
        return done
    # with the controller: at 1 s SEBF puts the 1 MB coflow before the
    # big one's 2 MB left: it ends at 2 s, the big one at 2 + 2 = 4 s
    assert run(()) == {1: pytest.approx(2.0), 0: pytest.approx(4.0)}
    # down from 0.5 s to 5 s: the big one keeps the top class it got
    # alone at 0 s, the new flow goes in the top class too (key 0): they
    # share, 0.5 MB/s each: the small one ends at 3 s, the big one has
    # 1 MB left then, alone: 4 s
    e = exp_with([{'controller': 'restart', 'at': 0.5, 'until': 5}],
                 topology='leafspine,2,1,2')
    assert run(e.faults) == {1: pytest.approx(3.0), 0: pytest.approx(4.0)}
    assert keys[True] == [0, 0]


# --- which side a stall is on (issue 27, item 6) ----------------------------

def test_the_longest_gap_says_which_side_each_transfer_was_on():
    wrote = {}

    def flow(i, start, end, last_write=None, first=None):
        e = {'t': end, 'ev': 'flow', 'id': i, 'coflow': 'c', 'src': 'a',
             'dst': 'b', 'bytes': 1, 'start': start}
        if first is not None:
            e['first_read'] = first
        if last_write is not None:
            wrote[str(i)] = last_write
        return e
    evs = [flow(0, 0.0, 0.1, 0.05, 0.02),
           # nothing ends from 0.1 to 0.6 while 1 to 4 are in flight
           flow(1, 0.05, 0.6, 0.58, 0.06),     # ends the gap
           flow(2, 0.2, 0.7, 0.65, 0.21),      # last byte written at 0.65
           flow(3, 0.3, 0.8, 0.31, 0.62),      # written, first read 0.62
           flow(4, 0.35, 0.9, 0.36, 0.40)]     # read from 0.40 on
    # the senders' last writes come at the end, with each agent's bye
    evs += [{'t': 0.9, 'ev': 'writes', 'host': 'a', 'wrote': wrote},
            {'t': 0.9, 'ev': 'run_end'}]
    gap = metrics.longest_gap(metrics.compute(evs))
    # ends at 0.1, 0.6, 0.7, 0.8, 0.9: the longest wait is 0.1 -> 0.6
    assert (gap['from_s'], gap['to_s']) == (0.1, 0.6)
    assert gap['gap_s'] == pytest.approx(0.5)
    sides = {t['id']: t['side'] for t in gap['transfers']}
    # 1 ends the gap (not listed); 2 was still being written at 0.6, 3
    # was written but its first bytes were read only after, 4 was being
    # read
    assert sides == {2: 'writing', 3: 'in the network', 4: 'reading'}
    # without the writes (an agent lost before its bye) the sender still
    # writing 2 is not seen: its first bytes were read, so 'reading'
    m = metrics.compute(evs[:5] + evs[-1:])
    assert m['sides'][2] == (None, 0.21)
    assert {t['id']: t['side'] for t in metrics.longest_gap(m)[
        'transfers']}[2] == 'reading'
    # the simulator's flows carry no sides: no gap in its summary
    plain = [dict(e) for e in evs if e['ev'] != 'writes']
    for e in plain:
        e.pop('first_read', None)
    assert metrics.compute(plain)['sides'] == {}
