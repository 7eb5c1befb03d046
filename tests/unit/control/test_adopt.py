"""A restarted controller adopts what the switches hold (issue 27: the
controller killed and restarted while the switches fail secure):
ControllerCore.on_connect with the switch's flow table, built here by
hand or by a first core's FlowMods, and the scheduler taking agents'
re-registrations with their progress. No framework: the shell's side is
in test_controller_restart.py."""
import collections

from netsched import policies
from netsched import topology as topo
from netsched.control import adopt
from netsched.control import openflow as of
from netsched.control.core import ControllerCore

FT = topo.fat_tree(4)
E00, E01, A00 = 0x030000, 0x030001, 0x020000
SL, SR = 0x060000, 0x060001
R = of.cookie(of.OWNER_ROUTING)
FULL = (1 << 64) - 1
MB = 1e6


def C(i):
    return of.cookie(of.OWNER_CLASSIFY, i)


def S(i):
    return of.cookie(of.OWNER_SCHEDULE, i)


def reported(fm):
    """A rule as a switch lists it in its flow stats: an add, all-ones
    masks dropped (Open vSwitch reports the ECMP rules' metadata so)."""
    match = tuple(sorted((k, v[0]) if isinstance(v, tuple) and v[1] == FULL
                         else (k, v) for k, v in fm.match))
    return of.FlowMod(fm.table, fm.priority, match, fm.actions, fm.goto,
                      fm.metadata, fm.cookie)


class Switch:
    """A flow table with OpenFlow's semantics: one rule per (table,
    priority, match) as the switch reports it; an add replaces, deletes
    filter by cookie under the mask (netsched deletes by cookie or
    strictly)."""

    def __init__(self, mods=()):
        self.t = {}
        self.apply(mods)

    def apply(self, mods):
        for m in mods:
            r = reported(m)
            k = (r.table, r.priority, r.match)
            hit = lambda x: x.cookie & m.cookie_mask == \
                m.cookie & m.cookie_mask                     # noqa: E731
            if m.command == 'add':
                self.t[k] = r
            elif m.command == 'delete_strict':
                if k in self.t and hit(self.t[k]):
                    del self.t[k]
            else:
                assert m.match == ()
                for kk in [kk for kk, x in self.t.items() if hit(x) and
                           m.table in (of.ALL_TABLES, kk[0])]:
                    del self.t[kk]
        return self

    def table(self):
        return list(self.t.values())

    def cookies(self):
        return collections.Counter(x.cookie for x in self.t.values())


def ports_up(core, down=()):
    """Every switch lists its ports (``down``: (switch, port) pairs with
    their link down); the Outcomes' mods per switch, merged."""
    mods = {}
    for sw in topo.switches(core.g):
        ports = {topo.port(core.g, sw, n): (sw, topo.port(core.g, sw, n))
                 not in down for n in core.g[sw]}
        for d, ms in core.on_port_desc(core.dpid(sw), ports, 9.0).mods.items():
            mods.setdefault(d, []).extend(ms)
    return mods


def rules_of(core):
    return core.handle({'op': 'rules'}).reply['rules']


# --- routes and manual rules ------------------------------------------------

def test_a_fresh_switch_gets_todays_clean_slate_program():
    prog = ControllerCore(FT, 4).on_connect(E00)
    assert prog[0] == of.delete_all() and len(prog) == 70
    c = ControllerCore(FT, 4)
    assert c.on_connect(E00, table=[]) == prog
    # a rule of no netsched owner (cookie 0, as a switch's own) does not
    # make a switch netsched's: it is wiped with the rest
    foreign = of.FlowMod(0, 0, (), (('output', 0xfffffffb),))
    c = ControllerCore(FT, 4)
    assert c.on_connect(E00, table=[foreign]) == prog
    assert c.adoption.records == {}


def test_a_restarted_core_adopts_a_full_table_and_sends_nothing():
    first = ControllerCore(FT, 4)
    sw = Switch(first.on_connect(E00))
    for src in ('10.0.0.2', '10.0.0.3', '10.0.1.2'):
        out = first.handle({'op': 'set_class', 'match': {'ipv4_src': src},
                            'cls': 1})
        sw.apply(out.mods[E00])
    sw.apply(first.handle({'op': 'clear_class', 'id': 1}).mods[E00])
    assert sw.cookies() == {R: 69, C(2): 1, C(3): 1}
    second = ControllerCore(FT, 4)
    ports_up(second)
    assert second.on_connect(E00, sw.table(), 5.0) == []
    # 69 routes + manual rules 2 and 3, all kept; none sent
    assert second.adoption.records[E00] == {
        'kind': 'adopt', 't': 5.0, 'switch': 'e0_0', 'adopted': 71,
        'sent': 0, 'held': {'classify': 2, 'routing': 69},
        'recovered_rules': [2, 3], 'schedule_kept': 0,
        'routes_pending': False, 'applied_ms': None}
    assert rules_of(second) == [
        {'id': 2, 'match': {'ipv4_src': '10.0.0.3'}, 'cls': 1,
         'priority': 100},
        {'id': 3, 'match': {'ipv4_src': '10.0.1.2'}, 'cls': 1,
         'priority': 100}]
    # the next rule's id is above the largest found: its cookie is new
    out = second.handle({'op': 'set_class', 'match': {'tcp_dst': 80},
                         'cls': 2})
    assert out.reply == {'ok': True, 'id': 4}
    sw.apply(out.mods[E00])
    assert sw.cookies() == {R: 69, C(2): 1, C(3): 1, C(4): 1}


def test_only_the_difference_is_sent_and_foreign_rules_stay():
    first = ControllerCore(FT, 4)
    prog = first.on_connect(E00)
    keep = first.handle({'op': 'set_class', 'match': {'ipv4_src':
                                                      '10.0.0.2'},
                         'cls': 1}).mods[E00]
    missing = prog[2]                  # a destination's IP route
    assert missing.table == of.FORWARD_TABLE
    # an ECMP rule of a set e0_0 never uses (its host ports 1 and 2)
    stale = of.ecmp_rules((1, 2), of.set_id((1, 2)), 0, R)[0]
    # a rule under a manual rule's cookie that sets no class's DSCP
    bad = of.FlowMod(of.CLASSIFY_TABLE, 100, (('eth_type', of.ETH_IP),
                                              ('tcp_dst', 22)),
                     (('set_field', 'ip_dscp', 4),), goto=of.FORWARD_TABLE,
                     cookie=C(5))
    foreign = of.FlowMod(0, 5, (('in_port', 9),), (('output', 0xfffffffb),))
    held = [m for m in prog[1:] if m != missing] + keep + [stale, bad,
                                                            foreign]
    sw = Switch(held)
    c = ControllerCore(FT, 4)
    ports_up(c)
    mods = c.on_connect(E00, sw.table(), 1.0)
    # the missing route added; the rule no owner could have written goes
    # (the stale ECMP rule stays, as a reroute leaves unused sets)
    assert mods == [missing, adopt.delete(reported(bad))]
    sw.apply(mods)
    assert sw.cookies() == {R: 70, C(1): 1, 0: 1}
    rec = c.adoption.records[E00]
    # held: 68 + 1 stale routes, rules 1 and 5, the foreign one; kept:
    # the 69 routes and rule 1
    assert (rec['held'], rec['adopted'], rec['sent'],
            rec['recovered_rules']) == (
        {'classify': 2, 'foreign': 1, 'routing': 69}, 70, 2, [1])


def test_a_rule_this_core_cleared_while_the_switch_was_away_goes():
    c = ControllerCore(FT, 4)
    ports_up(c)
    sw = Switch(c.on_connect(E00))
    sw.apply(c.handle({'op': 'set_class', 'match': {'ipv4_src':
                                                    '10.0.0.2'},
                       'cls': 1}).mods[E00])
    c.on_disconnect(E00)
    assert c.handle({'op': 'clear_class', 'id': 1}).mods == {}
    (rule,) = [m for m in sw.table() if m.cookie == C(1)]
    assert c.on_connect(E00, sw.table()) == [adopt.delete(rule)]
    assert rules_of(c) == []


def test_a_manual_rule_one_switch_lacks_is_sent_to_it():
    first = ControllerCore(FT, 4)
    tables = {d: Switch(first.on_connect(d)) for d in (E00, E01)}
    for i, src in enumerate(('10.0.0.2', '10.0.0.3')):
        out = first.handle({'op': 'set_class', 'match': {'ipv4_src': src},
                            'cls': i})
        tables[E00].apply(out.mods[E00])
        if i == 0:                      # e0_1 missed the second
            tables[E01].apply(out.mods[E01])
    c = ControllerCore(FT, 4)
    ports_up(c)
    assert c.on_connect(E00, tables[E00].table()) == []
    assert c.on_connect(E01, tables[E01].table()) == [
        of.classify_rule({'ipv4_src': '10.0.0.3'}, 1, 4, 2)]


# --- links down across the restart ------------------------------------------

def _e00_routes_after_link_down():
    """e0_0 with its link to a0_0 (port 3) down: 14 remote hosts, each an
    IP rule that went to the ECMP set {3, 4} and an ARP rule out of port
    3, now both out of port 4: 28 rules change."""
    new = of.route_rules(topo.without(FT, {'a0_0-e0_0'}), 'e0_0')
    old = of.route_rules(FT, 'e0_0')
    assert len([m for m in new if m not in old]) == 28
    return new


def test_a_link_down_before_the_restart_is_kept_routed_around():
    first = ControllerCore(FT, 4)
    tables = {d: Switch(first.on_connect(d)) for d in (E00, A00)}
    for d, port in ((E00, 3), (A00, topo.port(FT, 'a0_0', 'e0_0'))):
        out = first.on_port_status(d, port, False, 1.0)
        for dd, ms in out.mods.items():
            tables[dd].apply(ms)
    c = ControllerCore(FT, 4)
    # e0_0 connects before any switch listed its ports: its routes stay
    assert c.on_connect(E00, tables[E00].table(), 2.0) == []
    assert c.adoption.records[E00]['routes_pending'] is True
    mods = ports_up(c, down={('e0_0', 3),
                             ('a0_0', topo.port(FT, 'a0_0', 'e0_0'))})
    assert mods == {}                   # they avoid the dead link already
    assert not c.adoption.routes_pending
    want = _e00_routes_after_link_down()
    assert set(want) <= set(tables[E00].table())


def test_a_link_that_went_down_while_the_controller_was_away():
    first = ControllerCore(FT, 4)
    sw = Switch(first.on_connect(E00))
    c = ControllerCore(FT, 4)
    assert c.on_connect(E00, sw.table(), 2.0) == []     # not known yet
    mods = ports_up(c, down={('e0_0', 3),
                             ('a0_0', topo.port(FT, 'a0_0', 'e0_0'))})
    # the 28 rules through port 3 are rerouted, nothing deleted (the set
    # {3, 4}'s 36 ECMP rules stay unused); reconciling adds nothing more
    assert len(mods[E00]) == 28 and all(m.command == 'add'
                                        for m in mods[E00])
    sw.apply(mods[E00])
    want = _e00_routes_after_link_down()
    assert set(want) <= set(sw.table()) and len(sw.table()) == 69
    # a switch adopted once every link is known is diffed at once
    c2 = ControllerCore(FT, 4)
    ports_up(c2, down={('e0_0', 3)})
    assert len(c2.on_connect(E00, Switch(prog_e00()).table())) == 28


def prog_e00():
    return ControllerCore(FT, 4).on_connect(E00)


def test_routes_kept_are_reconciled_after_a_while_without_every_port():
    c = ControllerCore(FT, 4)
    assert c.on_connect(E00, Switch(prog_e00()).table(), 5.0) == []
    assert c.settle(6.0, 2.0).mods == {}          # 1 s < 2 s
    out = c.settle(7.5, 2.0)
    assert out.mods == {} and not c.adoption.routes_pending
    assert out.log == [{'kind': 'adopt_routes', 't': 7.5, 'links_down': [],
                        'flow_mods': 0, 'applied_ms': None}]
    assert c.settle(20.0, 2.0).log == []


def test_port_descriptions_of_a_fresh_fabric_change_nothing():
    c = ControllerCore(FT, 4)
    c.on_connect(E00)
    assert ports_up(c) == {} and c.links.down == frozenset()


# --- the scheduler's rules and the agents' re-registration ------------------

REG = {'hl0': {'conns': [{'id': 1, 'sport': 40001, 'dport': 5000,
                          'dst_ip': '10.0.1.2'}],
               'sends': [{'id': 1, 'coflow': 'a/0', 'job': 'a',
                          'bytes': 1 * MB, 'conn': 1, 'dst': 'hr0'}]},
       'hl1': {'conns': [{'id': 1, 'sport': 40002, 'dport': 5000,
                          'dst_ip': '10.0.1.3'}],
               'sends': [{'id': 3, 'coflow': 'b/0', 'job': 'b',
                          'bytes': 10 * MB, 'conn': 1, 'dst': 'hr1'}]},
       'hr1': {'conns': [], 'sends': []}}


def sebf():
    return ControllerCore(topo.parse_spec('dumbbell,2'), 8,
                          policies.make('sebf'), scale=500.0)


def register(c, host, now, **progress):
    out = c.handle(dict(REG[host], op='register', host=host, run='r1',
                        **progress), now)
    assert out.reply['ok'], out.reply
    return out


def test_scheduler_rules_stay_until_a_decision_after_their_hosts_return():
    # dumbbell,2's sl: 9 routes (1 default + 4 hosts x IP and ARP) and a
    # rule per connection, owned by coflows 1 (a/0) and 2 (b/0)
    tables = _first_run_tables()
    c = sebf()
    ports_up(c)
    assert c.on_connect(SL, tables[SL].table(), 1.0) == []
    assert c.on_connect(SR, tables[SR].table(), 1.0) == []
    assert c.adoption.records[SL]['schedule_kept'] == 2
    assert c.handle({'op': 'status'}).reply['adopted_schedule_rules'] == 2
    # hl0 returns with its transfer in flight: the decision replaces its
    # rule (same match) under a new coflow serial, 2 + 1
    register(c, 'hl0', 1.0, started=[[1, 0.1]], done=[])
    out = c.step(1.0)
    assert out.decided
    tables[SL].apply(out.mods[SL])
    assert tables[SL].cookies() == {R: 9, S(3): 1, S(2): 1}
    assert [m.command for m in out.mods[SL]] == ['add']
    # hr1 received b/0's transfer (before its sender returns); hl1 then
    # returns: b/0 began and ended, its old rule goes at the decision
    register(c, 'hr1', 1.1, done=[3])
    assert c.step(1.1).mods == {}
    register(c, 'hl1', 1.2, started=[[3, 0.1]])
    out = c.step(1.2)
    (old,) = [m for m in tables[SL].table() if m.cookie == S(2)]
    assert out.decided and out.mods == {SL: [adopt.delete(old)]}
    tables[SL].apply(out.mods[SL])
    assert tables[SL].cookies() == {R: 9, S(3): 1}
    assert c.handle({'op': 'status'}).reply['adopted_schedule_rules'] == 0
    d = c.handle({'op': 'decision'}).reply
    assert list(d['coflows']) == ['a/0'] and d['coflows']['a/0']['owner'] \
        == 3


def test_adopted_rules_whose_agents_never_return_go_after_the_grace():
    # sl adopted at 1.0 with hl0's rule (coflow 1) and hl1's (coflow 2);
    # hl0 returns and the decision replaces its rule; hl1's agent never
    # does: its rule stays until 1.0 + adopt.GRACE_S (36.0), then goes
    tables = _first_run_tables()
    c = sebf()
    ports_up(c)
    c.on_connect(SL, tables[SL].table(), 1.0)
    c.on_connect(SR, tables[SR].table(), 1.0)
    register(c, 'hl0', 1.0, started=[[1, 0.1]], done=[])
    out = c.step(1.0)
    tables[SL].apply(out.mods[SL])
    assert tables[SL].cookies() == {R: 9, S(3): 1, S(2): 1}
    assert adopt.GRACE_S == 35.0
    assert c.step(35.9).mods == {}
    assert c.handle({'op': 'status'}).reply['adopted_schedule_rules'] == 1
    out = c.step(36.0)
    (old,) = [m for m in tables[SL].table() if m.cookie == S(2)]
    assert out.mods == {SL: [adopt.delete(old)]}
    assert out.log == [{'kind': 'adopt_expired', 't': 36.0, 'switch': 'sl',
                        'flow_mods': 1, 'applied_ms': None}]
    tables[SL].apply(out.mods[SL])
    assert tables[SL].cookies() == {R: 9, S(3): 1}
    assert c.handle({'op': 'status'}).reply['adopted_schedule_rules'] == 0
    assert c.step(37.0).mods == {}                  # once


def test_a_reregistration_is_taken_once_and_late_reports_are_harmless():
    c = sebf()
    for d in (SL, SR):
        c.on_connect(d)
    register(c, 'hl0', 0.0)
    register(c, 'hl1', 0.0)
    sch = c.scheduler
    c.handle({'op': 'report', 'host': 'hl1', 'events': [
        {'ev': 'start', 'task': 3, 'ready': 0.1}]}, 0.1)
    c.step(0.1)
    # hl1's channel broke, the controller did not restart: its sends are
    # not registered twice, its progress is known already
    register(c, 'hl1', 0.2, started=[[3, 0.1]], done=[],
             marks=[{'job': 'b', 'iter': 0, 't': 0.15, 'loss': None}])
    assert sch.demand.left['b/0'] == 1 and len(sch.demand.sends) == 2
    assert sch.demand.jobs['b']['iter'] == 0
    # the transfer is received; the report of it again changes nothing
    for _ in range(2):
        out = c.handle({'op': 'report', 'host': 'hr1', 'events': [
            {'ev': 'recv', 'task': 3, 't': 0.3}]}, 0.3)
        assert out.reply is None
    assert sch.demand.left['b/0'] == 0
    c.step(0.3)
    assert c.step(0.4).mods == {} and sch.demand.sends[3].done


def test_malformed_progress_is_refused_and_nothing_kept():
    for progress, err in [
            ({'started': [[1]]}, 'started[0] must be [send id, ready time]'),
            ({'started': [[2, 0.0]]}, 'started[0] is not a send it '
             'registered'),
            ({'started': [[1, 'x']]}, 'ready must be a finite number'),
            ({'done': ['x']}, 'done[0] must be a transfer id'),
            ({'done': 'x'}, 'done must be a list'),
            ({'marks': [{'job': 'a', 'iter': -1}]}, 'iter must be')]:
        c = sebf()
        out = c.handle(dict(REG['hl0'], op='register', host='hl0',
                            run='r1', **progress), 0.0)
        assert out.reply['ok'] is False and err in out.reply['error'], \
            (progress, out.reply)
        assert c.scheduler.demand.hosts == set()
    # a transfer never registered is still refused outside a recovery
    c = sebf()
    register(c, 'hl0', 0.0)
    out = c.handle({'op': 'report', 'host': 'hr1', 'events': [
        {'ev': 'recv', 'task': 9}]}, 0.0)
    assert 'never registered' in out.reply['error']


def test_canonical_forms_match_what_a_switch_reports():
    ecmp = [m for m in of.route_rules(FT, 'e0_0')
            if m.table == of.ECMP_TABLE][0]
    assert dict(reported(ecmp).match)['metadata'] == of.set_id((3, 4))
    assert adopt.canonical(reported(ecmp)) == ecmp
    ip = of.FlowMod(1, 100, (('eth_type', of.ETH_IP), ('ipv4_dst', (
        '10.0.0.2', '255.255.255.255'))), (('output', 1),), cookie=R)
    assert adopt.canonical(ip).match == (('eth_type', of.ETH_IP),
                                         ('ipv4_dst', '10.0.0.2'))
    assert adopt.owner(S(7)) == of.OWNER_SCHEDULE and adopt.serial(S(7)) == 7


def _first_run_tables():
    """sl and sr as a first core left them: sl holds hl0's and hl1's
    connection rules, owned by coflows 1 (a/0) and 2 (b/0)."""
    first = sebf()
    tables = {d: Switch(first.on_connect(d)) for d in (SL, SR)}
    register(first, 'hl0', 0.0)
    register(first, 'hl1', 0.0)
    for host, task in (('hl0', 1), ('hl1', 3)):
        first.handle({'op': 'report', 'host': host, 'events': [
            {'ev': 'start', 'task': task, 'ready': 0.1}]}, 0.1)
    tables[SL].apply(first.step(0.1).mods[SL])
    assert tables[SL].cookies() == {R: 9, S(1): 1, S(2): 1}
    return tables


def test_agents_back_before_the_switches_wait_for_the_serial_floor():
    tables = _first_run_tables()
    c = sebf()
    # hl0 is back first (switches reconnect at their backoff): its
    # coflow is decided and its class pushed, but gets no serial yet
    register(c, 'hl0', 1.0, started=[[1, 0.1]], done=[])
    out = c.step(1.0)
    assert out.decided and out.mods == {} and out.pushes == {
        'hl0': [{'op': 'classes', 'classes': {'a/0': 0}}]}
    assert c.scheduler.intake.serial == {} and c.scheduler.intake.unnumbered == ['a/0']
    ports_up(c)
    assert c.on_connect(SR, tables[SR].table(), 1.1) == []
    assert c.scheduler.intake.serials_held          # sl, the ingress, is not back
    assert c.on_connect(SL, tables[SL].table(), 1.2) == []
    # sl's cookies go up to 2: a/0 is numbered 3, and its rule replaces
    # hl0's old one at the next decision; hl1's stays (hl1 is not back)
    assert c.scheduler.intake.serial == {'a/0': 3}
    out = c.step(1.3)
    assert out.decided and [(m.command, m.cookie) for m in out.mods[SL]] \
        == [('add', S(3))]
    tables[SL].apply(out.mods[SL])
    assert tables[SL].cookies() == {R: 9, S(3): 1, S(2): 1}


def test_serials_held_are_numbered_after_a_while_without_the_switches():
    c = sebf()
    register(c, 'hl0', 1.0, started=[[1, 0.1]], done=[])
    c.step(1.0)
    assert c.settle(2.0, 2.0).mods == {} and c.scheduler.intake.serials_held
    c.settle(3.0, 2.0)
    assert not c.scheduler.intake.serials_held
    assert c.scheduler.intake.serial == {'a/0': 1}
    # a first registration (no progress) never holds them
    c = sebf()
    register(c, 'hl0', 1.0)
    assert not c.scheduler.intake.serials_held
