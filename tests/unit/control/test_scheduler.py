"""The controller's scheduling core, driven by fake agent reports over a
fake switch table (no Ryu, no Mininet): registrations, decisions, the
rule diff per decision as golden messages, idempotence, a finished
coflow's rules removed by its cookie."""
import pytest

from netsched import policies
from netsched import topology as topo
from netsched.control import openflow as of
from netsched.control.core import ControllerCore
from netsched.control.scheduler import HOLD

SL, SR = 0x060000, 0x060001
MB = 1e6


class Switches:
    """What a switch table would hold after the FlowMods it was sent:
    classification rules by (priority, match) with their cookie."""

    def __init__(self):
        self.tables = {}

    def apply(self, mods):
        for dpid, batch in mods.items():
            t = self.tables.setdefault(dpid, {})
            for m in batch:
                if m.command == 'add':
                    t[(m.priority, m.match)] = (m.cookie, m.actions)
                elif m.command == 'delete_strict':
                    t.pop((m.priority, m.match), None)
                else:
                    for k in [k for k, (ck, _) in t.items()
                              if ck & m.cookie_mask == m.cookie]:
                        del t[k]

    def dscp(self, dpid, sport):
        for (_, match), (_, actions) in self.tables.get(dpid, {}).items():
            if dict(match).get('tcp_src') == sport:
                return actions[0][2]
        return None


def core(policy='sebf', knobs=None):
    c = ControllerCore(topo.parse_spec('dumbbell,2'), 8,
                       policies.make(policy), scale=500.0, knobs=knobs)
    for d in (SL, SR):
        c.on_connect(d)
    return c


def register(c, run='r1'):
    outs = [c.handle({'op': 'register', 'host': 'hl0', 'run': run,
                      'conns': [{'id': 1, 'sport': 40001, 'dport': 5000,
                                 'dst_ip': '10.0.1.2'}],
                      'sends': [{'id': 1, 'coflow': 'a/0', 'job': 'a',
                                 'bytes': 1 * MB, 'conn': 1, 'dst': 'hr0'},
                                {'id': 2, 'coflow': 'a/1', 'job': 'a',
                                 'bytes': 1 * MB, 'conn': 1, 'dst': 'hr0'}]},
                     0.0),
            c.handle({'op': 'register', 'host': 'hl1', 'run': run,
                      'conns': [{'id': 1, 'sport': 40002, 'dport': 5000,
                                 'dst_ip': '10.0.1.3'}],
                      'sends': [{'id': 3, 'coflow': 'b/0', 'job': 'b',
                                 'bytes': 10 * MB, 'conn': 1,
                                 'dst': 'hr1'}]}, 0.0)]
    for o in outs:
        assert o.reply['ok'], o.reply
    return outs


def report(c, host, now, **ev):
    out = c.handle({'op': 'report', 'host': host, 'events': [ev]}, now)
    assert out.reply is None
    return c.step(now)


def test_registration_then_decision_installs_one_rule_per_connection():
    c = core()
    sw = Switches()
    assert not any(o.mods or o.pushes for o in register(c))
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    out = report(c, 'hl1', 1.01, ev='start', task=3, ready=1.0, t=1.01)
    # SEBF: a/0 (1 MB) before b/0 (10 MB)
    assert out.decided
    golden = [
        {'command': 'add', 'table': 0, 'priority': 200,
         'cookie': (3 << 56) | 1, 'goto': 1,
         'match': {'eth_type': 0x0800, 'ip_proto': 6,
                   'ipv4_dst': '10.0.1.2', 'ipv4_src': '10.0.0.2',
                   'tcp_dst': 5000, 'tcp_src': 40001},
         'actions': [['set_field', 'ip_dscp', 56]]},
        {'command': 'add', 'table': 0, 'priority': 200,
         'cookie': (3 << 56) | 2, 'goto': 1,
         'match': {'eth_type': 0x0800, 'ip_proto': 6,
                   'ipv4_dst': '10.0.1.3', 'ipv4_src': '10.0.0.3',
                   'tcp_dst': 5000, 'tcp_src': 40002},
         'actions': [['set_field', 'ip_dscp', 48]]}]
    # the first step (one coflow) gave a/0 class 0; this one adds b/0
    first = c.scheduler.rules.per_switch()
    assert [m.to_dict() for m in out.mods[SL]] == golden[1:]
    assert out.pushes == {'hl1': [{'op': 'classes',
                                   'classes': {'b/0': 1}}]}
    assert sorted(first) == [SL]            # ingress switch only
    sw.apply({SL: [of.schedule_rule(dict(r.match), r.cls, 8, r.owner)
                   for r in c.scheduler.rules.installed.values()]})
    assert sw.dscp(SL, 40001) == 56 and sw.dscp(SL, 40002) == 48


def test_same_decision_twice_sends_nothing():
    c = core()
    register(c)
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    report(c, 'hl1', 1.01, ev='start', task=3, ready=1.0, t=1.01)
    # a repeated report changes nothing; a forced re-decision finds the
    # same classes and sends no message and no FlowMod
    again = report(c, 'hl1', 1.02, ev='start', task=3, ready=1.0, t=1.01)
    assert not again.decided and not again.mods and not again.pushes
    c.scheduler.intake.dirty = True
    forced = c.step(1.03)
    assert forced.decided and not forced.mods and not forced.pushes


def test_finished_coflow_rules_removed_by_cookie_and_next_owner_added():
    c = core()
    sw = Switches()
    register(c)
    for out in (report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0),
                report(c, 'hl1', 1.01, ev='start', task=3, ready=1.0,
                       t=1.01)):
        sw.apply(out.mods)
    assert sw.dscp(SL, 40001) == 56
    out = report(c, 'hr0', 1.2, ev='recv', task=1, t=1.2)
    assert [m.to_dict() for m in out.mods[SL]] == [
        {'command': 'delete', 'table': 0, 'priority': 0,
         'cookie': (3 << 56) | 1, 'cookie_mask': (1 << 64) - 1,
         'match': {}, 'actions': []}]
    sw.apply(out.mods)
    assert sw.dscp(SL, 40001) is None and sw.dscp(SL, 40002) == 48
    # the connection's next transfer (coflow a/1) gets a rule of its own
    out = report(c, 'hl0', 1.3, ev='start', task=2, ready=1.3, t=1.3)
    (m,) = out.mods[SL]
    assert m.cookie == (3 << 56) | 3 and m.command == 'add'
    sw.apply(out.mods)
    assert sw.dscp(SL, 40001) == 56


def test_ingress_switch_gets_rules_again_when_it_reconnects():
    c = core()
    register(c)
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    report(c, 'hl1', 1.01, ev='start', task=3, ready=1.0, t=1.01)
    mods = c.on_connect(SL)
    assert sum(m.priority == 200 for m in mods) == 2


def test_rates_go_to_the_sending_agent_in_emulated_bytes():
    c = core('varys')
    register(c)
    for host, task in (('hl0', 1), ('hl1', 3)):
        c.handle({'op': 'report', 'host': host, 'events': [
            {'ev': 'start', 'task': task, 'ready': 1.0, 't': 1.0}]}, 1.0)
    out = c.step(1.0)
    rates = {h: m['rates'] for h, ms in out.pushes.items() for m in ms
             if m['op'] == 'rates'}
    # one bottleneck, sl->sr at 10 Gbit/s: MADD gives a/0 (first by
    # SEBF) all of it, b/0 nothing: its sender holds it. Emulated at
    # / 500, in bytes/s.
    assert rates == {'hl0': {'1': 10e9 / 500 / 8}, 'hl1': {'3': HOLD}}
    # a/0 received: b/0 is given the link
    out = report(c, 'hr0', 1.1, ev='recv', task=1, t=1.1)
    rates = {h: m['rates'] for h, ms in out.pushes.items() for m in ms
             if m['op'] == 'rates'}
    assert rates == {'hl1': {'3': 10e9 / 500 / 8}}


def test_rates_go_to_the_transfer_its_connection_writes():
    """A sender writes one transfer at a time per connection: once send 1
    is written whole and send 2 begins, send 1 only waits to be received
    (its bytes drain in the network). The allocation is per connection:
    send 2 gets the link. As a flow of its own, send 1 (a/0, first by
    SEBF) took the link and the sender was told to hold send 2 -- the
    one it was writing -- until send 1 was received."""
    c = core('varys')
    register(c)
    c.handle({'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'start', 'task': 1, 'ready': 1.0, 't': 1.0}]}, 1.0)
    c.step(1.0)
    c.handle({'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'start', 'task': 2, 'ready': 1.05, 't': 1.05}]}, 1.05)
    out = c.step(1.05)
    rates = {h: m['rates'] for h, ms in out.pushes.items() for m in ms
             if m['op'] == 'rates'}
    assert rates == {'hl0': {'2': 10e9 / 500 / 8}}


def test_fair_installs_nothing():
    c = core('fair')
    register(c)
    out = report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    # a static policy is not even asked: no snapshot is built
    assert not out.decided and not out.mods and not out.pushes
    assert c.scheduler.decisions == 0


def test_a_new_run_forgets_the_old_one_and_its_rules():
    c = core()
    register(c)
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    out = register(c, run='r2')[0]
    assert [m.command for m in out.mods[SL]] == ['delete']
    assert c.scheduler.rules.installed == {}
    assert c.handle({'op': 'decision'}).reply['coflows'] == {}


def test_status_shows_classes_connections_and_rules():
    c = core()
    register(c)
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    st = c.handle({'op': 'decision'}).reply
    assert st['policy'] == 'sebf' and st['coflows']['a/0']['class'] == 0
    (conn,) = st['connections']
    assert conn['host'] == 'hl0' and conn['class'] == 0
    assert list(st['rules']) == ['%016x' % SL]


@pytest.mark.parametrize('req, err', [
    ({'op': 'register', 'host': 'nope'}, 'not a host'),
    ({'op': 'register', 'host': 'hl0',
      'conns': [{'id': 1, 'sport': 1, 'dport': 2, 'dst_ip': '9.9.9.9'}]},
     'not a host of this fabric'),
    ({'op': 'register', 'host': 'hl0',
      'sends': [{'id': 1, 'coflow': 'a/0', 'bytes': 1, 'conn': 7,
                 'dst': 'hr0'}]}, 'did not register'),
    ({'op': 'report', 'host': 'hl0', 'events': [{'ev': 'start',
                                                 'task': 99}]},
     'never registered'),
    ({'op': 'report', 'host': 'hl0', 'events': 'x'}, 'must be a list'),
    ({'op': 'report', 'host': 'hl0', 'events': [{'ev': 'mark'}]},
     'malformed event'),
])
def test_bad_agent_messages_are_errors(req, err):
    c = core()
    out = c.handle(req, 0.0)
    assert out.reply['ok'] is False and err in out.reply['error']


def test_without_policy_agents_are_told_so():
    c = ControllerCore(topo.parse_spec('dumbbell,2'), 8)
    out = c.handle({'op': 'register', 'host': 'hl0'})
    assert 'runs no scheduling policy' in out.reply['error']


def test_link_load_from_port_counters():
    c = core()
    # sl port 3 faces sr: 2.5 MB in 1 s = 20 Mbit/s emulated = 10 Gbit/s
    # at scale 500, the link's capacity
    c.on_port_stats(SL, {3: 1000, 1: 0}, 10.0)
    c.on_port_stats(SL, {3: 1000 + 2_500_000, 1: 0}, 11.0)
    (busiest,) = c.handle({'op': 'decision'}).reply['links']
    assert busiest == {'link': 'sl->sr', 'bps': 10e9, 'util': 1.0}


def test_status_text_renders_a_decision():
    from netsched.cli.fabric import status_text
    c = core()
    register(c)
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    text = status_text(c.handle({'op': 'status'}).reply,
                       c.handle({'op': 'decision'}).reply)
    assert 'policy sebf' in text and 'coflow a/0' in text
    assert '10.0.0.2:40001 -> 10.0.1.2:5000  class 0' in text


def test_decisions_are_spaced_by_their_cost():
    c = core()
    register(c)
    sch = c.scheduler
    assert sch.clock.gap_s == 0.002
    for _ in range(50):
        c.note_cost(0.010)                 # decisions that take 10 ms
    assert sch.clock.gap_s == pytest.approx(0.020, rel=0.01)
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    assert not report(c, 'hl1', 1.01, ev='start', task=3, ready=1.0,
                      t=1.01).decided         # within 20 ms: waits
    assert c.step(1.021).decided
    for _ in range(50):
        c.note_cost(0.0001)                # cheap again: back to 2 ms
    assert sch.clock.gap_s == 0.002


def one_connection_each(policy, hosts):
    """A dumbbell,2 controller under ``policy`` with one connection per
    host of ``hosts``: (host, dst ip, sport, [(send id, coflow, dst)]);
    each coflow's job is its name's first part."""
    c = ControllerCore(topo.parse_spec('dumbbell,2'), 8,
                       policies.make(policy), scale=500.0)
    for d in (SL, SR):
        c.on_connect(d)
    for host, dst_ip, sport, sends in hosts:
        c.handle({'op': 'register', 'host': host, 'run': 'r',
                  'conns': [{'id': 1, 'sport': sport, 'dport': 5000,
                             'dst_ip': dst_ip}],
                  'sends': [{'id': tid, 'coflow': cf, 'bytes': MB,
                             'conn': 1, 'dst': dst,
                             'job': cf.split('/')[0]}
                            for tid, cf, dst in sends]}, 0.0)
    return c


def test_a_connection_done_with_its_coflow_loses_its_rule():
    """A coflow on two connections: when one of them has sent all it had
    of it, its rule goes with the next batch (strict delete), while the
    coflow's other connection keeps its rule until the coflow ends
    (cookie delete)."""
    c = one_connection_each('sebf', (
        ('hl0', '10.0.1.2', 40001, [(1, 'a/0', 'hr0')]),
        ('hl1', '10.0.1.3', 40002, [(2, 'a/0', 'hr1')]),
        ('hr0', '10.0.0.2', 40003, [(3, 'b/0', 'hl0')])))
    sw = Switches()
    c.handle({'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'start', 'task': 1, 'ready': 1.0},
        {'ev': 'start', 'task': 2, 'ready': 1.0}]}, 1.0)
    sw.apply(c.step(1.0).mods)
    assert sw.dscp(SL, 40001) == 56 and sw.dscp(SL, 40002) == 56
    out = report(c, 'hr0', 1.1, ev='recv', task=1, t=1.1)
    assert not out.mods                       # waits for the next batch
    out = report(c, 'hr0', 1.2, ev='start', task=3, ready=1.2, t=1.2)
    assert [m.command for m in out.mods[SL]] == ['delete_strict']
    assert [m.command for m in out.mods[SR]] == ['add']
    sw.apply(out.mods)
    assert sw.dscp(SL, 40001) is None and sw.dscp(SL, 40002) == 56
    out = report(c, 'hr1', 1.3, ev='recv', task=2, t=1.3)
    assert [(m.command, m.cookie) for m in out.mods[SL]] == [
        ('delete', (3 << 56) | 1)]


def test_a_connection_keeps_its_last_coflows_class_until_its_tail_arrives():
    """FIFO: a/0 (class 0) on hl0's connection, then b/0 (class 1), then
    a/1 (class 2) starts on the same connection as soon as a/0's last
    byte is written -- while a/0's tail is still in the socket and the
    network. The connection keeps a/0's class until a/0's transfer is
    received: re-marked class 2 at once, the tail would wait behind
    b/0. Then it drops to a/1's class (a demotion reorders nothing)."""
    c = one_connection_each('fifo', (
        ('hl0', '10.0.1.2', 40001, [(1, 'a/0', 'hr0'), (2, 'a/1', 'hr0')]),
        ('hl1', '10.0.1.3', 40002, [(3, 'b/0', 'hr1')])))
    sw = Switches()
    sw.apply(report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0).mods)
    sw.apply(report(c, 'hl1', 1.1, ev='start', task=3, ready=1.1).mods)
    assert (sw.dscp(SL, 40001), sw.dscp(SL, 40002)) == (56, 48)
    sw.apply(report(c, 'hl0', 1.2, ev='start', task=2, ready=1.2).mods)
    assert c.scheduler.decided.classes['a/1'] == 2
    assert sw.dscp(SL, 40001) == 56               # a/0's tail: class 0
    sw.apply(report(c, 'hr0', 1.3, ev='recv', task=1, t=1.3).mods)
    assert sw.dscp(SL, 40001) == 40               # a/1's class 2


def test_an_end_reported_before_its_start_is_kept_consistent():
    """Two agents' reports may cross: the receiver's 'recv' of a short
    transfer before the sender's 'start'. The transfer is then done, not
    in flight forever, and its coflow ends."""
    c = core()
    register(c)
    report(c, 'hr0', 1.0, ev='recv', task=1, t=1.0)
    out = report(c, 'hl0', 1.01, ev='start', task=1, ready=0.99, t=0.99)
    d = c.scheduler.demand
    assert d.in_flight == set() and d.unstarted['a/0'] == {}
    assert d.left['a/0'] == 0 and not out.mods


def test_registration_says_which_events_to_report():
    """A policy that decides nothing needs only job progress from the
    agents (per-transfer reports cost the hosts CPU); the others need
    every start and end."""
    assert register(core('fair'))[0].reply['reports'] == ['mark']
    assert register(core('sebf'))[0].reply['reports'] == [
        'start', 'recv', 'mark']
    # and senders hold a new coflow until it is classified, only where
    # the policy classifies
    assert register(core('fair'))[0].reply['wait_for_class'] is False
    assert register(core('sebf'))[0].reply['wait_for_class'] is True


def test_aalo_demotes_a_coflow_when_its_reported_progress_crosses_a_threshold():
    """Agents report acknowledged bytes (progress) only where the policy
    reads them; Aalo moves b/0 to its second queue once 5 MiB of it
    were sent."""
    c = ControllerCore(topo.parse_spec('dumbbell,2'), 8,
                       policies.make('aalo', {'first_mb': 5}), scale=500.0)
    for d in (SL, SR):
        c.on_connect(d)
    outs = register(c)
    assert outs[0].reply['reports'] == ['start', 'recv', 'mark', 'progress']
    # b/0 first, then a/0: both in Aalo's first queue, FIFO inside it
    report(c, 'hl1', 1.0, ev='start', task=3, ready=0.99, t=1.0)
    out = report(c, 'hl0', 1.01, ev='start', task=1, ready=1.0, t=1.01)
    assert c.scheduler.decided.classes == {'b/0': 0, 'a/0': 1}
    # 4 MiB of b/0: below the threshold, asked again, nothing changes
    out = report(c, 'hl1', 1.02, ev='progress', t=1.02,
                 sent={'3': 4 * 2 ** 20})
    assert out.decided and not out.pushes
    # 6 MiB: b/0 goes to the second queue, behind a/0 (which keeps its
    # class)
    out = report(c, 'hl1', 1.04, ev='progress', t=1.04,
                 sent={'3': 6 * 2 ** 20})
    assert c.scheduler.decided.classes == {'a/0': 1, 'b/0': 2}
    assert out.pushes == {'hl1': [{'op': 'classes', 'classes': {'b/0': 2}}]}


class Tags(policies.Policy):
    """Per-send classes from urgency: quarter q -> class q."""
    name = 'test-tags'
    clairvoyant = True
    decides_on = 'coflows'

    def decide(self, snap):
        return policies.Decision(
            flow_class=policies.urgency_class(snap.urgency(), 4),
            pending_class=policies.urgency_class(snap.urgency(True), 4))


def register_tensors(c):
    """hl0 -> hr0 on connection 1 sends tensors of two urgency classes
    (0.1 and 0.6: one connection, two tags); hl1 -> hr1 on connection 1
    two tensors of one class (0.3, 0.4: class 1)."""
    def s(i, conn, u, coflow='a/0', job='a'):
        return {'id': i, 'coflow': coflow, 'job': job, 'bytes': MB,
                'conn': conn, 'dst': 'hr0' if job == 'a' else 'hr1',
                'iter': 0, 'urgency': u}

    def jobs(j):
        return {j: {'iterations': 1, 'bytes_per_iteration': 2 * MB}}
    for out in (
            c.handle({'op': 'register', 'host': 'hl0', 'run': 'r',
                      'conns': [{'id': 1, 'sport': 40001, 'dport': 5000,
                                 'dst_ip': '10.0.1.2'}],
                      'sends': [s(1, 1, 0.6), s(2, 1, 0.1)],
                      'jobs': jobs('a')}, 0.0),
            c.handle({'op': 'register', 'host': 'hl1', 'run': 'r',
                      'conns': [{'id': 1, 'sport': 40002, 'dport': 5000,
                                 'dst_ip': '10.0.1.3'}],
                      'sends': [s(3, 1, 0.4, 'b/0', 'b'),
                                s(4, 1, 0.3, 'b/0', 'b')],
                      'jobs': jobs('b')}, 0.0)):
        assert out.reply['ok'], out.reply


def test_per_send_classes_tag_at_the_hosts_and_rule_one_class_connections(
        monkeypatch):
    monkeypatch.setitem(policies.REGISTRY, 'test-tags', Tags)
    c = core('test-tags')
    register_tensors(c)
    c.handle({'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'start', 'task': 1, 'ready': 1.0, 't': 1.0}]}, 1.0)
    c.handle({'op': 'report', 'host': 'hl1', 'events': [
        {'ev': 'start', 'task': 3, 'ready': 1.0, 't': 1.0}]}, 1.0)
    out = c.step(1.0)
    # every send, started or not, is tagged at its host
    assert out.pushes == {
        'hl0': [{'op': 'classes', 'classes': {}, 'sends': {'1': 2, '2': 0}}],
        'hl1': [{'op': 'classes', 'classes': {}, 'sends': {'3': 1, '4': 1}}]}
    # hl1's connection carries class 1 only: a rule at its ingress (DSCP
    # CS6); hl0's carries two classes: no rule, the hosts' tags stand
    assert [m.to_dict() for m in out.mods[SL]] == [
        {'command': 'add', 'table': 0, 'priority': 200,
         'cookie': (3 << 56) | 2, 'goto': 1,
         'match': {'eth_type': 0x0800, 'ip_proto': 6,
                   'ipv4_dst': '10.0.1.3', 'ipv4_src': '10.0.0.3',
                   'tcp_dst': 5000, 'tcp_src': 40002},
         'actions': [['set_field', 'ip_dscp', 48]]}]
    # idempotent: deciding again sends nothing
    c.scheduler.intake.dirty = True
    again = c.step(1.1)
    assert again.decided and not again.mods and not again.pushes
    # a late agent learns its sends' tags with its registration reply
    assert c.scheduler.send_classes_of('hl0') == {'1': 2, '2': 0}


def test_the_controller_shows_policies_jobs_progress_and_losses():
    c = core()
    register_tensors(c)
    d = c.scheduler.demand
    assert d.views == {}                       # no coflow arrived yet
    report(c, 'hl0', 1.0, ev='start', task=1, ready=1.0, t=1.0)
    v = d.views['a']
    assert (v.arrival, v.iterations, v.done) == (1.0, 1, 0)
    # a's iteration: 2 MB over hl0 -> sl -> sr -> hr0
    assert v.iteration_load.sum() == pytest.approx(3 * 2 * MB)
    c.handle({'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'mark', 'job': 'a', 'iter': 0, 't': 1.5, 'loss': 0.7}]}, 1.5)
    assert d.views['a'].losses == ((1, 0.7, 1.5),)
    snap, _, _ = d.snapshot(1.6, 8, True)
    assert snap.jobs['a'].done == 1
    assert snap.flow_urgency.tolist() == [0.6]
    assert sorted(snap.pending_urgency.tolist()) == [0.1]
    # its last coflow ends: the job leaves the view
    report(c, 'hr0', 1.7, ev='recv', task=1, t=1.7)
    report(c, 'hl0', 1.7, ev='start', task=2, ready=1.7, t=1.7)
    report(c, 'hr0', 1.8, ev='recv', task=2, t=1.8)
    c.step(1.9)
    assert 'a' not in d.views


def test_a_bad_job_description_is_refused_whole():
    c = core()
    out = c.handle({'op': 'register', 'host': 'hl0', 'run': 'r',
                    'conns': [], 'sends': [],
                    'jobs': {'a': {'iterations': 'many'}}}, 0.0)
    assert not out.reply['ok']
    assert "job 'a': bad description" in out.reply['error']
    assert c.scheduler.demand.job_meta == {}


def test_hold_starved_knob_holds_what_strict_priority_starves():
    """scheduler.hold_starved (a measuring knob, docs/experiment-format.md; the fabric
    description's ``scheduler``): under a policy that only orders
    coflows, the transfers the fluid allocation gives nothing are held at
    their senders and the rest go as fast as their class lets them;
    without it SEBF sends no rates at all."""
    def rates_of(out):
        return {h: m['rates'] for h, ms in out.pushes.items() for m in ms
                if m['op'] == 'rates'}
    for knob, first, after in ((True, {'hl1': {'3': HOLD}},
                                {'hl1': {'3': 0}}), (False, {}, {})):
        c = core('sebf', knobs={'hold_starved': knob})
        register(c)
        for host, task in (('hl0', 1), ('hl1', 3)):
            c.handle({'op': 'report', 'host': host, 'events': [
                {'ev': 'start', 'task': task, 'ready': 1.0, 't': 1.0}]}, 1.0)
        # a/0 (1 MB) before b/0 (10 MB) on the one bottleneck: b/0 is
        # starved, so held; a/0 unlimited (0, as before: nothing sent)
        assert rates_of(c.step(1.0)) == first
        # a/0 received: b/0 goes
        assert rates_of(report(c, 'hr0', 1.1, ev='recv', task=1,
                               t=1.1)) == after


def test_both_backends_take_the_floor_release_knob(monkeypatch):
    """Both backends take stable_classes' release_floor from the
    experiment's scheduler.floor_release, given where they are set up;
    the environment is read by neither (pipeline.knobs maps it onto the
    key)."""
    from netsched import fluid
    from netsched.control.spec import ControllerSpec
    from netsched.control.core import ControllerCore
    from netsched.sim.rates import RateSetter
    monkeypatch.setenv('NETSCHED_FLOOR_RELEASE', '1')
    g = topo.parse_spec('dumbbell,1')
    net = fluid.Network(g)
    for knob in (True, False):
        sim = RateSetter(net, policies.make('sebf'), None, 8,
                         release_floor=knob)
        assert sim.release_floor is knob
        desc = ControllerSpec(g, 8, policy='sebf', socket='/nonexistent',
                              scheduler={'floor_release': knob}).to_dict()
        c = ControllerCore.from_description(desc)
        assert c.scheduler.release_floor is knob
        assert c.scheduler.hold_starved is False
        assert c.handle({'op': 'status'}, 0.0).reply['scheduler'] == {
            'floor_release': knob, 'hold_starved': False}
    assert RateSetter(net, policies.make('sebf'), None, 8).release_floor \
        is False
