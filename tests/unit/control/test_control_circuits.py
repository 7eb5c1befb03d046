"""The controller's circuit steps on a hybrid fabric (issue 13), driven
without Ryu: the decided circuits become exactly the planes' rules, the
ToRs are routed over a circuit only after the plane has it (barriers
confirm each step), and removed from it before the plane drops it."""
import pytest

from netsched import circuits, policies
from netsched import topology as topo
from netsched.control import openflow as of
from netsched.control.core import ControllerCore

G = topo.hybrid(4, 1, circuits=1, reconfig_ms=10)
DPID = {n: G.nodes[n]['dpid'] for n in topo.switches(G)}


def core(scheduler, policy='fair'):
    c = ControllerCore(G, 8, policies.make(policy), scale=500.0,
                       circuits=scheduler)
    for d in DPID.values():
        c.on_connect(d)
        c.on_ready(d)
    return c


def plane_rules(mods):
    return sorted((dict(m.match)['in_port'], m.actions[0][1], m.command)
                  if m.actions else (dict(m.match)['in_port'], None,
                                     m.command)
                  for m in mods.get(DPID['o0'], []))


def test_a_plane_gets_only_its_circuits_and_tors_follow_after():
    c = core(circuits.make('static', {'pairs': [['t0', 't1']]}))
    # the plane's program at connection: nothing but a clean slate
    assert c.on_connect(DPID['o0']) == [of.delete_all()]
    c.on_ready(DPID['o0'])
    out = c.step(0.0)                   # decided; the blackout begins
    assert out.mods == {} and out.token is None
    assert [r['kind'] for r in out.log] == ['circuit_decision']
    assert out.log[0]['circuits'] == [['o0', 't0', 't1']]
    assert c.step(0.005).mods == {}      # still dark
    out = c.step(0.010)                 # the plane joins t0's and t1's ports
    assert set(out.mods) == {DPID['o0']}
    assert plane_rules(out.mods) == [(1, 2, 'add'), (2, 1, 'add')]
    assert out.token is not None
    # until confirmed, the ToRs do not send over it
    assert c.step(0.011).mods == {}
    out = c.on_confirmed(out.token, 0.012)
    assert set(out.mods) == {DPID['t0'], DPID['t1']}
    to_rack1 = [m for m in out.mods[DPID['t0']]
                if dict(m.match).get('ipv4_dst') == G.nodes['h1_0']['ip']]
    assert to_rack1[0].actions == (('output', topo.port(G, 't0', 'o0')),)
    # rack 2 is untouched (still over the packet core)
    assert not [m for m in out.mods[DPID['t0']]
                if dict(m.match).get('ipv4_dst') == G.nodes['h2_0']['ip']]
    assert [r['step'] for r in out.log] == ['route']
    assert c.on_confirmed(out.token, 0.013).mods == {}
    # a switch that reconnects gets the circuits' state
    assert plane_rules({DPID['o0']: c.on_connect(DPID['o0'])[1:]}) == [
        (1, 2, 'add'), (2, 1, 'add')]
    prog = c.on_connect(DPID['t1'])
    assert any(dict(m.match).get('ipv4_dst') == G.nodes['h0_0']['ip']
               and m.actions == (('output', topo.port(G, 't1', 'o0')),)
               for m in prog)


def test_a_swap_routes_away_before_the_plane_drops_the_circuit():
    s = circuits.make('static', {'pairs': [['t0', 't1']]})
    c = core(s)
    c.step(0.0)
    t = c.on_confirmed(c.step(0.01).token, 0.011).token
    c.on_confirmed(t, 0.012)
    s.pairs = (('t0', 't2'),)            # a new wish at the next decision
    c.circuits.next_at, c.circuits.jobs_seen = 1.0, None
    out = c.step(1.0)
    assert [r['kind'] for r in out.log] == ['circuit_decision', 'circuits']
    assert out.log[1]['step'] == 'route'     # ToRs leave t0-t1 first
    assert DPID['o0'] not in out.mods
    out = c.on_confirmed(out.token, 1.001)
    assert plane_rules(out.mods) == [(1, None, 'delete_strict'),
                                     (2, None, 'delete_strict')]
    out = c.on_confirmed(out.token, 1.002)   # dark for 10 ms
    assert out.mods == {}
    assert c.step(1.005).mods == {}
    out = c.step(1.012)
    assert plane_rules(out.mods) == [(1, 3, 'add'), (3, 1, 'add')]
    kinds = [r['step'] for r in out.log]
    assert kinds == ['add']


def test_the_decided_circuits_are_a_valid_configuration_or_refused():
    class Bad(circuits.CircuitScheduler):
        name = 'bad'
        decides_on = 'jobs'

        def decide(self, snap):
            return circuits.CircuitDecision(frozenset({(0, 0, 1),
                                                       (0, 1, 2)}))
    c = core(Bad())
    with pytest.raises(ValueError, match='two'):
        c.step(0.0)


def test_none_decides_nothing():
    c = core(circuits.make('none'))
    for t in (0.0, 1.0, 5.0):
        out = c.step(t)
        assert out.mods == {} and out.log == []


def test_circuits_asked_for_by_hand_go_through_the_same_steps():
    c = core(circuits.make('none'))
    out = c.handle({'op': 'circuits', 'pairs': [['t2', 't3']]}, 0.0)
    assert out.reply == {'ok': True, 'circuits': [['o0', 't2', 't3']]}
    out = c.step(0.0)
    assert out.log[0]['scheduler'] == 'request' and out.mods == {}
    out = c.step(0.010)
    assert plane_rules(out.mods) == [(3, 4, 'add'), (4, 3, 'add')]
    st = c.handle({'op': 'decision'}, 0.011).reply['circuits']
    assert st['live'] == [] and st['reconfiguring']   # not confirmed yet
    out = c.on_confirmed(out.token, 0.011)
    st = c.handle({'op': 'decision'}, 0.012).reply['circuits']
    assert st['live'] == st['routed'] == [['o0', 't2', 't3']]
    c.on_confirmed(out.token, 0.012)
    assert not c.handle({'op': 'decision'}, 0.013).reply['circuits'][
        'reconfiguring']
    bad = c.handle({'op': 'circuits', 'pairs': [['t2', 't7']]}, 0.02)
    assert not bad.reply['ok'] and 't7' in bad.reply['error']
    plain = ControllerCore(topo.dumbbell(2), 8)
    assert 'no circuit switch' in plain.handle(
        {'op': 'circuits', 'pairs': []}, 0.0).reply['error']


def test_a_demand_driven_circuit_scheduler_gets_transfer_reports():
    # fair decides nothing and asks only for iteration marks; matching
    # reads the demand, so the agents report their transfers too
    def reports(sched):
        c = core(sched)
        out = c.handle({'op': 'register', 'host': 'h0_0', 'run': 'r',
                        'conns': [], 'sends': []}, 0.0)
        return out.reply['reports']
    assert reports(circuits.make('none')) == ['mark']
    assert reports(circuits.make('matching')) == ['start', 'recv', 'mark']


def test_the_plane_gets_exactly_the_matching_the_scheduler_decided():
    # registered demand: rack 0 -> 1 heavy, rack 2 -> 3 light, rack 0 ->
    # 2 lighter still: max-weight matching on one plane takes 0-1 and 2-3
    sched = circuits.make('matching', {'period_s': 1.0, 'hold_s': 1.0})
    c = core(sched)
    sends = {'h0_0': [('h1_0', 400e6, 1), ('h2_0', 10e6, 2)],
             'h2_0': [('h3_0', 100e6, 3)]}
    for host, ss in sends.items():
        out = c.handle({'op': 'register', 'host': host, 'run': 'r1',
                        'conns': [{'id': n, 'sport': 20000 + n,
                                   'dport': 7000,
                                   'dst_ip': G.nodes[d]['ip']}
                                  for d, _, n in ss],
                        'sends': [{'id': n, 'coflow': 'j/0', 'job': 'j',
                                   'bytes': b, 'conn': n, 'dst': d,
                                   'iter': 0} for d, b, n in ss]}, 0.0)
        assert out.reply['ok'], out.reply
    c.handle({'op': 'report', 'host': 'h0_0', 'events': [
        {'ev': 'start', 'task': 1, 'ready': 0.0, 't': 0.0}]}, 0.0)
    out = c.step(0.0)
    decided = [r for r in out.log if r['kind'] == 'circuit_decision'][0]
    assert decided['circuits'] == [['o0', 't0', 't1'], ['o0', 't2', 't3']]
    out = c.step(0.010)
    p = {t: topo.port(G, 'o0', t) for t in ('t0', 't1', 't2', 't3')}
    assert plane_rules(out.mods) == sorted([
        (p['t0'], p['t1'], 'add'), (p['t1'], p['t0'], 'add'),
        (p['t2'], p['t3'], 'add'), (p['t3'], p['t2'], 'add')])
    circuits.check_circuits({(0, 0, 1), (0, 2, 3)}, 4, 1)


def test_the_circuit_period_runs_from_the_run_start():
    """A periodic scheduler decides when the controller starts, and then
    on its period; the run's common start (the coordinator's 'start'
    op, t0) moves its next decision to t0, and the period runs from
    there, as the simulator's does from t = 0."""
    c = core(circuits.make('matching', {'period_s': 0.1, 'hold_s': 0.1}))

    def decided(now):
        return [r['t'] for r in c.step(now).log
                if r['kind'] == 'circuit_decision']
    assert decided(5.0) == [5.0]          # the controller's own start
    assert decided(5.05) == []
    out = c.handle({'op': 'start', 't0': 5.137}, 5.06)
    assert out.reply == {'ok': True, 't0': 5.137}
    assert decided(5.1) == []             # its old grid point is gone
    assert decided(5.136) == []
    assert decided(5.137) == [5.137]
    assert decided(5.2) == []
    assert decided(5.237) == [5.237]


@pytest.mark.parametrize('t0', [None, 'soon', True, float('nan')])
def test_a_start_without_a_numeric_t0_is_refused(t0):
    c = core(circuits.make('matching'))
    out = c.handle({'op': 'start', 't0': t0}, 1.0)
    assert not out.reply['ok'] and 't0 must be a number' in \
        out.reply['error']
