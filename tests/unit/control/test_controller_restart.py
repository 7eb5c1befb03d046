"""The controller killed and restarted (issue 27), under Ryu and under
os-ken: a first app instance programs the fake switches of
test_ryu_shell (a manual rule, the scheduler's rules for two agents'
transfers); it goes; a second instance on the same socket and decision
log finds the switches holding all of it. Rules are counted by cookie
before and after: nothing wiped, nothing sent twice, the manual rule
recovered; once the agents register again with their progress, the
scheduler's decision replaces the old schedule rules."""
import json
import os
import shutil
import tempfile
import time

import pytest

from netsched.control import openflow as of
from tests.support.ryu_shell import (
    AGENTS, SL, SR, Shell, dumbbell_fabric, flow_mods)

R = of.cookie(of.OWNER_ROUTING)


def C(i):
    return of.cookie(of.OWNER_CLASSIFY, i)


def S(i):
    return of.cookie(of.OWNER_SCHEDULE, i)


@pytest.fixture
def fabric(app_module, tmp_path, monkeypatch):  # noqa: F811 (the fixture)
    """(start, stop, desc): app instances on one fabric description (one
    socket, one decision log), each stopped once."""
    sock_dir = tempfile.mkdtemp(prefix='ns-restart-')
    desc = dumbbell_fabric(tmp_path, sock_dir, monkeypatch)
    running = []

    def start():
        s = Shell(app_module, desc)
        running.append(s)
        return s

    def stop(s):
        running.remove(s)
        s.close()
        # a killed controller leaves its socket file; gone, the next
        # Shell waits for its successor's
        os.unlink(desc['socket'])
    try:
        yield start, stop, desc
    finally:
        for s in running:
            s.close()
        shutil.rmtree(sock_dir, ignore_errors=True)


def reply_to(shell, client, stash):
    """The reply to a client's last request; scheduler messages that
    arrive around it go to ``stash``."""
    got = []

    def replied():
        for m in client.lines():
            (got if 'ok' in m else stash).append(m)
        return got
    shell.wait_until(replied)
    assert len(got) == 1, got
    return got[0]


CUT = '{"kind":"decision","t":'        # a record its writer died in


def log_records(desc, kind):
    with open(desc['decision_log']) as f:
        lines = f.read().splitlines()
    return [(i, json.loads(x)) for i, x in enumerate(lines)
            if x != CUT and json.loads(x)['kind'] == kind]


def test_a_restarted_app_adopts_the_rules_then_scheduling_resumes(fabric):
    start, stop, desc = fabric
    first = start()
    dps = first.up()
    c = first.client()
    c.send({'op': 'set_class', 'match': {'ipv4_src': '10.0.0.2'}, 'cls': 1})
    first.wait_until(lambda: all(first.barriers(dp) for dp in dps.values()))
    for dp in dps.values():
        first.confirm(dp)
    assert c.receive() == {'ok': True, 'id': 1}
    agents = {h: first.client() for h in AGENTS}
    for host, reg in AGENTS.items():
        agents[host].send(dict(reg, op='register', host=host, run='r1'))
        assert reply_to(first, agents[host], [])['ok']
    t0 = time.monotonic()
    for host, task in (('hl0', 1), ('hl1', 3)):
        agents[host].send({'op': 'report', 'host': host, 'events': [
            {'ev': 'start', 'task': task, 'ready': t0, 't': t0}]})
    # dumbbell,2: each switch 9 routes (the default, 4 hosts x IP and
    # ARP) and the manual rule (both have hosts); sl, the hosts' ingress,
    # a rule per connection owned by coflows 1 and 2 (a/0 and b/0, in the
    # order their reports came)
    want = {SL: {R: 9, C(1): 1, S(1): 1, S(2): 1}, SR: {R: 9, C(1): 1}}

    def scheduled():
        first.confirm(dps[SL])
        return {d: dp.cookies() for d, dp in dps.items()} == want \
            and not first.barriers(dps[SL])
    first.wait_until(scheduled)
    held = {d: dict(dp.table) for d, dp in dps.items()}
    stop(first)
    with open(desc['decision_log'], 'a') as f:
        f.write(CUT)                  # killed in the middle of a line

    second = start()
    new = {SL: second.connect(SL, held=held[SL], down=()),
           SR: second.connect(SR, held=held[SR], parts=2)}
    second.port_desc(new[SR])
    o = new[SL].ofproto
    for dp in new.values():
        (req,) = dp.of_type('OFPFlowStatsRequest')
        assert (req.table_id, req.out_port, req.out_group, req.cookie_mask,
                len(req.match.items())) == (o.OFPTT_ALL, o.OFPP_ANY,
                                            o.OFPG_ANY, 0, 0)
        # no wipe, no rule sent again: the switch has all it should
        assert flow_mods(dp) == []
        assert second.confirm(dp) == 1
    assert {d: dp.cookies() for d, dp in new.items()} == want
    st = second.request('status')
    assert (st['connected'], st['ready'], st['all_ready'], st['rules'],
            st['adopted_schedule_rules']) == (2, 2, True, 1, 2)
    assert second.request('rules')['rules'] == [
        {'id': 1, 'match': {'ipv4_src': '10.0.0.2'}, 'cls': 1,
         'priority': 100}]
    # the same decision log goes on: after the first app's decisions, a
    # record per switch adopted (sl: 9 + 1 + 2 rules; sr: 9 + 1), sent 0
    with open(desc['decision_log']) as f:
        assert CUT + '\n' in f.read()     # ended: records start anew
    decided = log_records(desc, 'decision')
    adopted = log_records(desc, 'adopt')
    assert decided and adopted and decided[0][0] < adopted[0][0]
    assert sorted((r['switch'], r['adopted'], r['sent'], r['held'])
                  for _, r in adopted) == [
        ('sl', 12, 0, {'classify': 1, 'routing': 9, 'schedule': 2}),
        ('sr', 10, 0, {'classify': 1, 'routing': 9})]
    assert all(r['applied_ms'] >= 0 for _, r in adopted)

    # the agents come back: hr1 received b/0's transfer, hl0's is in
    # flight, hl1's began and (hr1 says) ended
    back = {h: second.client() for h in ('hr1', 'hl0', 'hl1')}
    pushed = []
    for host, reg in (('hr1', {'conns': [], 'sends': [], 'done': [3]}),
                      ('hl0', dict(AGENTS['hl0'], started=[[1, t0]],
                                   done=[])),
                      ('hl1', dict(AGENTS['hl1'], started=[[3, t0]],
                                   done=[]))):
        back[host].send(dict(reg, op='register', host=host, run='r1'))
        assert reply_to(second, back[host], pushed)['ok']
    # the decision: a/0 alone, class 0, under serial 3 (above the 2
    # found); its rule replaces the old one of the same match, hl1's old
    # rule goes; nothing else changes anywhere
    after = {SL: {R: 9, C(1): 1, S(3): 1}, SR: {R: 9, C(1): 1}}

    def resumed():
        second.confirm(new[SL])
        pushed.extend(back['hl0'].lines())
        return {d: dp.cookies() for d, dp in new.items()} == after
    second.wait_until(resumed)
    assert {'op': 'classes', 'classes': {'a/0': 0}} in pushed
    (rule,) = [m for ck, m in new[SL].table.values() if ck == S(3)]
    assert dict(rule.match.items())['tcp_src'] == 40001
    assert second.request('status')['adopted_schedule_rules'] == 0
    d = second.request('decision')
    assert {c: (v['class'], v['owner']) for c, v in d['coflows'].items()} \
        == {'a/0': (0, 3)}
    # a new manual rule's id is above the one recovered
    c = second.client()
    c.send({'op': 'set_class', 'match': {'tcp_dst': 80}, 'cls': 2})
    # sl may still have the decision's batch in flight: the new rule
    # waits behind its barrier (control.outbox), and leaves with a
    # barrier of its own once that one is answered, as a switch would
    got = []

    def replied():
        got.extend(m for m in c.lines() if 'ok' in m)
        if not got:
            for dp in new.values():
                second.confirm(dp)
        return got
    second.wait_until(replied)
    assert got == [{'ok': True, 'id': 2}]
    assert not any(second.barriers(dp) for dp in new.values())
