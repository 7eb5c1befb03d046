"""The controller app's shell, without Open vSwitch, under Ryu and under
os-ken: the fake datapath, the shell and the TCP switch are in
tests/support/ryu_shell.py; what comes out is checked against what
netsched's core (netsched.control) says it should be."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import types

import pytest

from netsched import topology as topo
from netsched.control import channel
from netsched.control import openflow as of
from netsched.control.core import ControllerCore
from tests.support.ryu_shell import (
    AGENTS, APP, CONTROLLERS, PACKAGE, ROOT, SL, SR, Shell, TcpSwitch,
    dumbbell_fabric, expected, flow_mods, framework_or_skip, free_port)


def test_handlers_are_bound_to_the_events_and_states_switches_send(shell):
    fw = shell.fw
    ev, C, M, D = (fw.ofp_event, fw.CONFIG_DISPATCHER, fw.MAIN_DISPATCHER,
                   fw.DEAD_DISPATCHER)
    want = {(ev.EventOFPSwitchFeatures, C): ['on_features'],
            (ev.EventOFPSwitchFeatures, M): [],
            # a barrier may return before the port description moves the
            # switch to MAIN
            (ev.EventOFPBarrierReply, C): ['on_barrier'],
            (ev.EventOFPBarrierReply, M): ['on_barrier'],
            (ev.EventOFPPortStatsReply, M): ['on_port_stats'],
            # a connecting switch's table and ports, before or after the
            # port description moves it to MAIN
            (ev.EventOFPFlowStatsReply, C): ['on_flow_stats'],
            (ev.EventOFPFlowStatsReply, M): ['on_flow_stats'],
            (ev.EventOFPPortDescStatsReply, C): ['on_port_desc'],
            (ev.EventOFPPortDescStatsReply, M): ['on_port_desc'],
            (ev.EventOFPStateChange, D): ['on_dead'],
            (ev.EventOFPStateChange, M): [],
            # a port down or back up reroutes (faults); the switches
            # fail secure: no reaction to packets sent up
            (ev.EventOFPPortStatus, M): ['on_port_status'],
            (ev.EventOFPPacketIn, M): []}
    got = {k: shell.handlers(*k) for k in want}
    assert got == want


def test_the_socket_file_appears_only_once_it_listens(app_module, tmp_path,
                                                     monkeypatch):
    """Binding creates a Unix socket's file before listen(); a client
    that saw the file in that gap was refused (under os-ken's native
    threads, 4 first connects in 200). The app listens under another
    name and renames the socket into place, restricted to its owner."""
    sock_dir = tempfile.mkdtemp(prefix='ns-listen-')
    desc = dumbbell_fabric(tmp_path, sock_dir, monkeypatch)
    real, seen = app_module.hub.listen, []

    def listen(addr, *args, **kw):
        seen.append((addr, os.path.exists(desc['socket'])))
        server = real(addr, *args, **kw)
        seen.append((addr, os.path.exists(desc['socket'])))
        return server

    monkeypatch.setattr(app_module.hub, 'listen', listen)
    s = Shell(app_module, desc)
    try:
        assert len(seen) == 2 and seen[0][0] != desc['socket']
        assert [there for _, there in seen] == [False, False]
        assert os.stat(desc['socket']).st_mode & 0o777 == 0o600
        assert os.listdir(sock_dir) == ['ctl.sock']
        c = s.client()
        c.send({'op': 'status'})
        assert c.receive()['ok'] is True
    finally:
        s.close()
        shutil.rmtree(sock_dir, ignore_errors=True)


def test_a_connecting_switch_gets_the_cores_program_then_a_barrier(shell):
    ref = ControllerCore.from_description(shell.desc)
    dp = shell.connect(SL)
    program = ref.on_connect(SL)
    assert program[0] == of.delete_all() and len(program) == 10
    assert flow_mods(dp) == [expected(fm) for fm in program]
    assert type(dp.sent[-1]).__name__ == 'OFPBarrierRequest'
    st = shell.request('status')
    assert (st['ok'], st['switches'], st['connected'], st['ready']) == \
        (True, 2, 1, 0)
    # another xid's reply is not this batch's
    o = dp.ofproto
    shell.deliver(dp, o.OFPT_BARRIER_REPLY, xid=dp.sent[-1].xid + 100)
    assert shell.request('status')['ready'] == 0
    assert shell.confirm(dp) == 1
    assert shell.request('status')['ready'] == 1
    # a barrier answered while the switch is still in CONFIG counts too
    dr = shell.connect(SR)
    shell.confirm(dr, state=shell.fw.CONFIG_DISPATCHER)
    st = shell.request('status')
    assert (st['connected'], st['ready'], st['all_ready']) == (2, 2, True)
    # a switch of another fabric gets nothing
    stray = shell.connect(0xdead)
    assert stray.sent == [] and 0xdead not in shell.app.datapaths
    # a port going down (state LINK_DOWN) reroutes: sl's link to sr
    # carried its only route to sr's host, so the core's difference
    # removes it, then a barrier; back up, the route returns
    before = len(dp.of_type('OFPFlowMod'))
    for state in (o.OFPPS_LINK_DOWN, 0):
        desc = struct.pack(o.OFP_PORT_PACK_STR, 3, b'\x00' * 6, b'sl-eth3',
                           0, state, 0, 0, 0, 0, 0, 0)
        assert shell.deliver(dp, o.OFPT_PORT_STATUS, struct.pack(
            '!B7x', o.OFPPR_MODIFY) + desc) == ['on_port_status']
        change = ref.on_port_status(SL, 3, state == 0, 0.0).mods
        assert change and flow_mods(dp, before) == [expected(fm)
                                                   for fm in change[SL]]
        assert type(dp.sent[-1]).__name__ == 'OFPBarrierRequest'
        before = len(dp.of_type('OFPFlowMod'))
        assert shell.confirm(dp) == 1     # the next batch waits for it
    # a switch that went away is forgotten; back, it gets all of it anew
    change = shell.fw.ofp_event.EventOFPStateChange(dp)
    for h in shell.app.get_handlers(change, shell.fw.DEAD_DISPATCHER):
        h(change)
    st = shell.request('status')
    assert (st['connected'], st['ready']) == (1, 1)
    again = shell.connect(SL)
    ref.on_disconnect(SL)
    assert flow_mods(again) == [expected(fm) for fm in ref.on_connect(SL)]


def test_what_comes_while_a_batch_is_in_flight_waits_merged(shell):
    """One batch in flight per switch: a port going down then up and
    down again before the first reroute's barrier returns sends the first
    reroute at once, holds the next two, and sends them as one batch
    once the barrier returns: each rule in its last form, in the place
    it first had (control.outbox)."""
    ref = ControllerCore.from_description(shell.desc)
    dp = shell.connect(SL)
    ref.on_connect(SL)
    shell.confirm(dp)
    o = dp.ofproto
    changes = []
    before = len(dp.of_type('OFPFlowMod'))
    for state in (o.OFPPS_LINK_DOWN, 0, o.OFPPS_LINK_DOWN):
        desc = struct.pack(o.OFP_PORT_PACK_STR, 3, b'\x00' * 6, b'sl-eth3',
                           0, state, 0, 0, 0, 0, 0, 0)
        shell.deliver(dp, o.OFPT_PORT_STATUS, struct.pack(
            '!B7x', o.OFPPR_MODIFY) + desc)
        changes.append(ref.on_port_status(SL, 3, state == 0, 0.0).mods[SL])
    first, held = changes[0], changes[1] + changes[2]
    assert flow_mods(dp, before) == [expected(fm) for fm in first]
    assert len(shell.barriers(dp)) == 1
    merged = {}
    for fm in held:                       # later wins, first place kept
        assert fm.command != 'delete'
        merged[fm.table, fm.priority, fm.match] = fm
    assert len(merged) < len(held)        # the same rules, rewritten
    before = len(dp.of_type('OFPFlowMod'))
    assert shell.confirm(dp) == 1
    assert flow_mods(dp, before) == [expected(fm) for fm in merged.values()]
    assert type(dp.sent[-1]).__name__ == 'OFPBarrierRequest'
    assert shell.confirm(dp) == 1 and shell.barriers(dp) == []


def test_port_counters_are_polled_and_become_the_link_load(shell,
                                                           monkeypatch):
    dp = shell.connect(SL)
    shell.confirm(dp)
    # the poller asks every PORT_STATS_S (0.5 s) for every port's counters
    shell.wait_until(lambda: dp.of_type('OFPPortStatsRequest'), 3.0)
    req = dp.of_type('OFPPortStatsRequest')[0]
    assert (req.port_no, req.flags) == (dp.ofproto.OFPP_ANY, 0)
    clock = {'t': 10.0}
    monkeypatch.setattr(shell.mod, 'time', types.SimpleNamespace(
        monotonic=lambda: clock['t']))
    o = dp.ofproto

    def reply(counters):
        body = struct.pack(o.OFP_MULTIPART_REPLY_PACK_STR,
                           o.OFPMP_PORT_STATS, 0)
        for port, tx in counters.items():
            body += struct.pack(o.OFP_PORT_STATS_PACK_STR, port, 0, 0, 0, tx,
                                *([0] * 10))
        return shell.deliver(dp, o.OFPT_MULTIPART_REPLY, body)

    assert reply({3: 1000, 1: 0}) == ['on_port_stats']
    clock['t'] = 11.0
    reply({3: 1000 + 2_500_000, 1: 0})
    # sl port 3 faces sr: 2.5 MB in 1 s = 20 Mbit/s emulated, x500 (the
    # fabric's scale) = 10 Gbit/s, the link's capacity
    links = shell.request('decision')['links']
    assert links == [{'link': 'sl->sr', 'bps': 10e9, 'util': 1.0}]


def test_a_manual_rule_is_answered_once_the_switches_have_it(shell,
                                                             monkeypatch):
    dps = shell.up()
    before = {d: len(dp.of_type('OFPFlowMod')) for d, dp in dps.items()}
    c = shell.client()
    c.send({'op': 'set_class', 'match': {'ipv4_src': '10.0.0.2'}, 'cls': 1})
    shell.wait_until(lambda: all(shell.barriers(dp) for dp in dps.values()))
    rule = of.classify_rule({'ipv4_src': '10.0.0.2'}, 1, 8, 1)
    for d, dp in dps.items():            # both switches have hosts
        assert flow_mods(dp, before[d]) == [expected(rule)]
    shell.fw.hub.sleep(0.05)
    assert c.lines() == []               # not before both barriers
    shell.confirm(dps[SL])
    shell.fw.hub.sleep(0.05)
    assert c.lines() == []
    shell.confirm(dps[SR])
    assert c.receive() == {'ok': True, 'id': 1}
    c.send({'op': 'clear_class', 'id': 1})
    shell.wait_until(lambda: all(shell.barriers(dp) for dp in dps.values()))
    for dp in dps.values():
        assert flow_mods(dp)[-1] == expected(of.classify_delete(1))
        shell.confirm(dp)
    assert c.receive() == {'ok': True, 'cleared': 1}
    # switches that never confirm: the reply says so
    monkeypatch.setattr(shell.mod, 'BARRIER_TIMEOUT_S', 0.2)
    c.send({'op': 'set_class', 'match': {'tcp_dst': 5001}, 'cls': 0})
    r = c.receive()
    assert r['ok'] is False and 'barrier timeout' in r['error']
    # the lost barrier does not hold what comes next for ever: the port
    # poller gives up on it and sends the next batch with its own barrier
    lost = {d: shell.barriers(dp) for d, dp in dps.items()}
    c.send({'op': 'set_class', 'match': {'tcp_dst': 5002}, 'cls': 0})
    rule = of.classify_rule({'tcp_dst': 5002}, 0, 8, 3)
    shell.wait_until(lambda: all(flow_mods(dp)[-1] == expected(rule)
                                 for dp in dps.values()), 3.0)
    monkeypatch.setattr(shell.mod, 'BARRIER_TIMEOUT_S', 10)
    for d, dp in dps.items():
        dp.answered.update(lost[d])      # never answered: they were lost
        assert shell.confirm(dp) == 1
    assert c.receive() == {'ok': True, 'id': 3}
    c.send(b'{not json\n')
    r = c.receive()
    assert r['ok'] is False and r['error'].startswith('bad request')




def test_agent_reports_become_rules_agent_messages_and_a_logged_decision(
        shell):
    dps = shell.up()
    before = {d: len(dp.of_type('OFPFlowMod')) for d, dp in dps.items()}
    agents = {}
    for host, reg in AGENTS.items():
        a = agents[host] = shell.client()
        a.send(dict(reg, op='register', host=host, run='r1'))
        r = a.receive()
        assert (r['ok'], r['policy'], r['queues'], r['wait_for_class']) == \
            (True, 'sebf', 8, True)
        assert r['reports'] == ['start', 'recv', 'mark']
    now = time.monotonic()
    for host, task in (('hl0', 1), ('hl1', 3)):
        agents[host].send({'op': 'report', 'host': host, 'events': [
            {'ev': 'start', 'task': task, 'ready': now, 't': now}]})
    told = {h: {} for h in agents}

    def settled():
        for h, a in agents.items():
            for m in a.lines():
                assert m['op'] == 'classes', m
                told[h].update(m['classes'])
        shell.confirm(dps[SL])
        return told == {'hl0': {'a/0': 0}, 'hl1': {'b/0': 1}}
    shell.wait_until(settled)
    d = shell.request('decision')
    # SEBF: a/0 (1 MB) before b/0 (10 MB); each agent hears only of its
    # own coflow; rules only in the ingress switch sl
    assert {c: v['class'] for c, v in d['coflows'].items()} == \
        {'a/0': 0, 'b/0': 1}
    assert list(d['rules']) == ['%016x' % SL]
    assert flow_mods(dps[SR], before[SR]) == []
    # the switch ends with exactly the rules the core says it installed
    table = {}
    for m in flow_mods(dps[SL], before[SL]):
        assert m[0] == 'add', m          # a new coflow: no rule removed
        table[m[-2]] = m
    want = [expected(of.schedule_rule(r['match'], r['class'], 8, r['owner']))
            for r in d['rules']['%016x' % SL]]
    assert sorted(table.values(), key=repr) == sorted(want, key=repr)
    dscp = {dict(m[-2])['tcp_src']: m[-1]['apply'][0][2]
            for m in table.values()}
    assert dscp == {40001: 56, 40002: 48}     # class 0 = DSCP 56, 1 = 48
    # every decision that changed rules is logged once its barrier came
    # back (and not before: the last batch may still be unanswered)
    sent = len(flow_mods(dps[SL], before[SL]))
    decisions = []

    def logged():
        with open(shell.desc['decision_log']) as f:
            decisions[:] = [r for r in map(json.loads, f)
                            if r['kind'] == 'decision' and r['flow_mods']]
        n = sum(r['flow_mods'] for r in decisions)
        assert n <= sent
        if n == sent:
            return True
        shell.confirm(dps[SL])
        return False
    shell.wait_until(logged)
    assert all(r['switches'] == 1 and r['applied_ms'] >= 0
               for r in decisions)


@pytest.mark.parametrize('name', sorted(PACKAGE))
def test_the_launcher_runs_the_app_under_each_framework(name, tmp_path):
    """controllers/launch.py --framework NAME: the app answers on its
    channel, programs a switch that connects over TCP and counts it
    ready once the switch confirms."""
    framework_or_skip(name)
    sock_dir = tempfile.mkdtemp(prefix='ns-launch-')
    sock = os.path.join(sock_dir, 'ctl.sock')
    port = free_port()
    env = dict(os.environ, NETSCHED_TOPOLOGY='dumbbell,2',
               NETSCHED_SOCKET=sock,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    env.pop('NETSCHED_FABRIC', None)
    log = open(tmp_path / 'controller.log', 'w')
    proc = subprocess.Popen(
        [sys.executable, os.path.join(CONTROLLERS, 'launch.py'),
         '--framework', name, '--ofp-listen-host', '127.0.0.1',
         '--ofp-tcp-listen-port', str(port), APP],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(tmp_path))
    switch = None
    try:
        client = channel.ControlClient(sock, 5.0).connect(wait_s=20)
        # the channel sets rules in every switch: its owner's only
        assert os.stat(sock).st_mode & 0o777 == 0o600
        st = client.status()
        assert (st['switches'], st['connected'], st['policy']) == \
            (2, 0, None)
        switch = TcpSwitch(port, SL)
        n = len(ControllerCore(topo.parse_spec('dumbbell,2'), 8)
                .on_connect(SL))
        switch.serve_until(lambda: switch.barriers >= 1
                           and switch.flow_mods >= n)
        deadline = time.monotonic() + 10
        while client.status()['ready'] < 1:
            assert time.monotonic() < deadline, 'switch never ready'
            switch.serve_until(lambda: True)
            time.sleep(0.05)
        assert switch.flow_mods == n
        client.close()
    finally:
        if switch is not None:
            switch.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(sock_dir, ignore_errors=True)
    out = (tmp_path / 'controller.log').read_text()
    assert 'Traceback' not in out, out


def test_the_framework_reaches_the_launcher_from_cli_and_emulator(
        tmp_path, monkeypatch):
    """`netsched controller --framework os-ken` and the emulator's
    ControllerProcess both hand the name to the launcher; Ryu, the
    default, gets ryu-manager's own command line."""
    from netsched import cli
    from netsched.emulator import controller as ctl
    sys.path.insert(0, CONTROLLERS)
    try:
        import launch
        import sdn_framework
    finally:
        sys.path.remove(CONTROLLERS)
    assert ctl.FRAMEWORKS == tuple(sdn_framework.FRAMEWORKS)
    assert ctl.ryu_command(6653) == [sys.executable, ctl.CONTROLLER_LAUNCHER,
                                     '--ofp-tcp-listen-port', '6653',
                                     ctl.CONTROLLER_APP]
    cmd = ctl.ryu_command(6653, '127.0.0.1', 'os-ken')
    assert launch.split_framework(cmd[2:]) == ('os-ken', [
        '--ofp-listen-host', '127.0.0.1', '--ofp-tcp-listen-port', '6653',
        ctl.CONTROLLER_APP])
    assert launch.split_framework(['--framework=ryu', 'x']) == ('ryu', ['x'])
    with pytest.raises(ValueError, match='unknown framework'):
        launch.split_framework(['--framework', 'pox'])
    with pytest.raises(Exception, match='framework must be one of'):
        ctl.ryu_command(6653, framework='pox')
    run = []
    monkeypatch.setattr(cli.fabric.os, 'execve', lambda *a: run.append(a))
    for extra, want in (([], 'ryu'), (['--framework', 'os-ken'], 'os-ken')):
        run.clear()
        cli.main(['controller', '--topology', 'dumbbell,2', '--socket',
                  str(tmp_path / 'ctl.sock')] + extra)
        (exe, argv, env), = run
        assert launch.split_framework(argv[2:])[0] == want
        assert argv[1] == ctl.CONTROLLER_LAUNCHER and argv[-1] == \
            ctl.CONTROLLER_APP
