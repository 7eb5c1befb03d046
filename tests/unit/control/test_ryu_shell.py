"""The controller app's shell, without Open vSwitch, under Ryu and under
os-ken.

A fake datapath takes what the app sends as the framework's real
OpenFlow 1.3 messages, serialized as for the wire and parsed back as a
switch would read them. Switch messages are built from bytes, parsed by
the framework's own parser and handed to the handlers the framework
would dispatch them to (by event class and dispatcher state), so a
handler bound to the wrong event or state is not called. The control
channel is the app's own Unix socket. What comes out is checked against
what netsched's core (netsched.control) says it should be."""
import collections
import importlib
import importlib.util
import json
import os
import shutil
import socket
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
from netsched.control.spec import ControllerSpec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
CONTROLLERS = os.path.join(ROOT, 'controllers')
APP = os.path.join(CONTROLLERS, 'netsched_app.py')
PACKAGE = {'ryu': 'ryu', 'os-ken': 'os_ken'}
SL, SR = 0x060000, 0x060001          # dumbbell,2: sl port 3 faces sr
MB = 1e6


def framework_or_skip(name):
    """The framework's package; a missing one skips, except under CI
    (CI=true), where it fails: CI installs both."""
    try:
        return importlib.import_module(PACKAGE[name])
    except ImportError as e:
        if os.environ.get('CI', '').lower() == 'true':
            pytest.fail('%s is not installed: %s' % (name, e), pytrace=False)
        pytest.skip('%s is not installed' % name)


@pytest.fixture(scope='module', params=sorted(PACKAGE))
def app_module(request):
    """The app module, loaded from its file bound to one framework."""
    name = request.param
    framework_or_skip(name)
    sys.path.insert(0, CONTROLLERS)
    try:
        import sdn_framework
        sdn_framework.choose(name)
        spec = importlib.util.spec_from_file_location(
            'netsched_app_' + name.replace('-', '_'), APP)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sdn_framework.choose(None)
    finally:
        sys.path.remove(CONTROLLERS)
    assert mod.fw.name == name
    return mod


class FakeDatapath:
    """What the app may call on a datapath. It keeps what is sent, each
    message serialized as the framework would before writing it (a
    message no switch could decode fails here)."""

    def __init__(self, pkg):
        self.ofproto = importlib.import_module(pkg + '.ofproto.ofproto_v1_3')
        self.ofproto_parser = importlib.import_module(
            pkg + '.ofproto.ofproto_v1_3_parser')
        self.id = None              # the framework's handler sets it
        self.xid = 0
        self.sent = []
        self.answered = set()       # xids of barriers already replied to
        self.table = {}             # the flow table the FlowMods built

    def set_xid(self, msg):
        self.xid += 1
        msg.set_xid(self.xid)
        return self.xid

    def send_msg(self, msg):
        assert isinstance(msg, self.ofproto_parser.MsgBase)
        if msg.xid is None:
            self.set_xid(msg)
        msg.serialize()
        self.sent.append(msg)
        if type(msg).__name__ == 'OFPFlowMod':
            self.apply(msg)

    def apply(self, msg):
        """Keep the flow table as Open vSwitch would: one entry per
        (table, priority, match), the match as the switch reports it (an
        all-ones mask dropped), an add replacing the entry of its key,
        deletes filtered by cookie under the cookie mask."""
        command, table, prio, cookie, mask = on_wire(self, msg)[:5]
        match = switch_match(on_wire(self, msg)[-2])
        if command == 'add':
            self.table[table, prio, match] = (cookie, msg)
            return
        hit = [k for k, (ck, _) in self.table.items()
               if ck & mask == cookie & mask and (
                   k == (table, prio, match) if command == 'delete_strict'
                   else table in (self.ofproto.OFPTT_ALL, k[0]))]
        assert command == 'delete_strict' or match == (), \
            'netsched deletes by cookie, not by match'
        for k in hit:
            del self.table[k]

    def cookies(self):
        """How many rules the switch holds per cookie."""
        return collections.Counter(ck for ck, _ in self.table.values())

    def stats_entry(self, key):
        """One entry of a flow-stats reply for a rule held, in bytes: its
        match as the switch reports it, its instructions as sent."""
        o, p = self.ofproto, self.ofproto_parser
        (table, prio, match), (cookie, msg) = key, self.table[key]
        mbuf = bytearray()
        p.OFPMatch(**dict(match)).serialize(mbuf, 0)
        at = 48                     # a FlowMod's match follows 48 bytes
        sent_len = struct.unpack_from('!HH', msg.buf, at)[1]
        inst = bytes(msg.buf[at + (sent_len + 7) // 8 * 8:])
        return struct.pack(o.OFP_FLOW_STATS_0_PACK_STR,
                           48 + len(mbuf) + len(inst), table, 0, 0, prio,
                           0, 0, 0, cookie, 0, 0) + bytes(mbuf) + inst

    def of_type(self, name):
        return [m for m in list(self.sent)
                if type(m).__name__ == name]


class Shell:
    """One app instance on dumbbell,2 under SEBF, with its channel in a
    temporary folder and the helpers that play the switches."""

    def __init__(self, mod, desc):
        self.mod, self.fw, self.desc = mod, mod.fw, desc
        self.pkg = PACKAGE[mod.fw.name]
        self.app = mod.NetschedController()
        importlib.import_module(
            self.pkg + '.controller.handler').register_instance(self.app)
        self.parser = importlib.import_module(
            self.pkg + '.ofproto.ofproto_parser')
        self.clients = []
        self.wait_until(lambda: os.path.exists(desc['socket']))

    def close(self):
        for c in self.clients:
            c.close()
        self.app.close()
        threads = [t for t in (self.app.server, self.app.ticker,
                               self.app.poller) if t is not None]
        if self.fw.native:
            for t in threads:
                t.join(5)
                assert not t.is_alive(), t
        else:
            for t in threads:
                self.fw.hub.kill(t)
        self.fw.hub.sleep(0.05)          # client threads see their EOF

    def wait_until(self, cond, timeout_s=5.0):
        """Poll through the framework's hub, so that the app's threads
        run under eventlet too."""
        deadline = time.monotonic() + timeout_s
        while not cond():
            assert time.monotonic() < deadline, 'timed out'
            self.fw.hub.sleep(0.005)

    def handlers(self, ev_cls, state):
        ev = ev_cls.__new__(ev_cls)
        return sorted(h.__name__ for h in self.app.get_handlers(ev, state))

    def deliver(self, dp, msg_type, body=b'', xid=0, state=None):
        """A message from the switch, from its bytes to the app's
        handlers for its event in ``state`` (MAIN by default). Returns
        the names of the handlers that ran."""
        o = dp.ofproto
        buf = struct.pack(o.OFP_HEADER_PACK_STR, o.OFP_VERSION, msg_type,
                          8 + len(body), xid) + body
        msg = self.parser.msg(dp, o.OFP_VERSION, msg_type, len(buf), xid,
                              buf)
        ev = self.fw.ofp_event.ofp_msg_to_ev(msg)
        hs = list(self.app.get_handlers(
            ev, self.fw.MAIN_DISPATCHER if state is None else state))
        for h in hs:
            h(ev)
        return [h.__name__ for h in hs]

    def connect(self, dpid, held=None, down=None, parts=1):
        """A switch's features reply (in CONFIG, as the framework
        dispatches it); dp.id is set after the app's handler ran, the
        order os-ken's threads may take. The switch then answers the
        app's flow-stats request with what it holds (``held``: another
        FakeDatapath's table; none: a fresh switch), in ``parts``
        replies; with ``down`` (ports down, possibly none) it lists its
        ports first, as the framework asks every switch to."""
        dp = FakeDatapath(self.pkg)
        dp.table = dict(held or {})
        o = dp.ofproto
        ran = self.deliver(dp, o.OFPT_FEATURES_REPLY, struct.pack(
            o.OFP_SWITCH_FEATURES_PACK_STR, dpid, 0, 254, 0, 0, 0),
            state=self.fw.CONFIG_DISPATCHER)
        assert ran == ['on_features']
        dp.id = dpid
        if down is not None:
            self.port_desc(dp, down)
        if dp.of_type('OFPFlowStatsRequest'):
            self.flow_stats(dp, parts)
        return dp

    def flow_stats(self, dp, parts=1, state=None):
        """Answer the flow-stats request with the table, in ``parts``
        multipart replies (all but the last flagged: more follow)."""
        o = dp.ofproto
        (req,) = dp.of_type('OFPFlowStatsRequest')
        entries = [dp.stats_entry(k) for k in sorted(dp.table, key=repr)]
        n = -(-len(entries) // parts) if entries else 1
        chunks = [entries[i:i + n] for i in range(0, len(entries), n)] or [[]]
        for i, chunk in enumerate(chunks):
            more = o.OFPMPF_REPLY_MORE if i < len(chunks) - 1 else 0
            ran = self.deliver(dp, o.OFPT_MULTIPART_REPLY, struct.pack(
                o.OFP_MULTIPART_REPLY_PACK_STR, o.OFPMP_FLOW, more)
                + b''.join(chunk), xid=req.xid, state=state)
            assert ran == ['on_flow_stats']

    def port_desc(self, dp, down=()):
        """The switch's ports (those of the topology), ``down`` ones with
        their link down; CONFIG, as the framework's own ask."""
        o = dp.ofproto
        g = topo.from_dict(self.desc['topology'])
        sw = topo.by_dpid(g)[dp.id]
        body = struct.pack(o.OFP_MULTIPART_REPLY_PACK_STR,
                           o.OFPMP_PORT_DESC, 0)
        for nb in sorted(g[sw]):
            port = topo.port(g, sw, nb)
            body += struct.pack(o.OFP_PORT_PACK_STR, port, b'\x00' * 6,
                                b'p%d' % port, 0, o.OFPPS_LINK_DOWN
                                if port in down else 0, 0, 0, 0, 0, 0, 0)
        return self.deliver(dp, o.OFPT_MULTIPART_REPLY, body,
                            state=self.fw.CONFIG_DISPATCHER)

    def barriers(self, dp):
        return [m.xid for m in dp.of_type('OFPBarrierRequest')
                if m.xid not in dp.answered]

    def confirm(self, dp, state=None):
        """Answer every barrier request not answered yet."""
        xids = self.barriers(dp)
        for xid in xids:
            dp.answered.add(xid)
            assert self.deliver(dp, dp.ofproto.OFPT_BARRIER_REPLY, xid=xid,
                                state=state) == ['on_barrier']
        return len(xids)

    def up(self):
        """Both switches connected and their programs confirmed."""
        dps = {d: self.connect(d) for d in (SL, SR)}
        for dp in dps.values():
            self.confirm(dp)
        return dps

    def client(self):
        c = Client(self.desc['socket'], self)
        self.clients.append(c)
        return c

    def request(self, op, **fields):
        c = self.client()
        c.send(dict(fields, op=op))
        reply = c.receive()
        c.close()
        return reply


class Client:
    """A control-channel client that never blocks: it polls through the
    hub, so the app's (green) threads run while it waits."""

    def __init__(self, path, shell):
        self.shell = shell
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.setblocking(False)
        self.buf = b''

    def send(self, obj):
        self.sock.sendall(obj if isinstance(obj, bytes)
                          else channel.encode(obj))

    def lines(self):
        """Every complete line that has arrived, decoded."""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.buf += chunk
        *done, self.buf = self.buf.split(b'\n')
        return [channel.decode(x) for x in done]

    def receive(self, timeout_s=5.0):
        got = []
        self.shell.wait_until(lambda: got.extend(self.lines()) or got,
                              timeout_s)
        assert len(got) == 1, got
        return got[0]

    def close(self):
        self.sock.close()


@pytest.fixture
def shell(app_module, tmp_path, monkeypatch):
    sock_dir = tempfile.mkdtemp(prefix='ns-shell-')   # AF_UNIX: short path
    desc = ControllerSpec(
        topo.parse_spec('dumbbell,2'), 8, policy='sebf', scale=500.0,
        decision_log=str(tmp_path / 'decisions.jsonl'),
        socket=os.path.join(sock_dir, 'ctl.sock')).to_dict()
    path = tmp_path / 'fabric.json'
    path.write_text(json.dumps(desc))
    monkeypatch.setenv('NETSCHED_FABRIC', str(path))
    s = Shell(app_module, desc)
    try:
        yield s
    finally:
        s.close()
        shutil.rmtree(sock_dir, ignore_errors=True)


# --- what the switch reads ------------------------------------------------

def on_wire(dp, msg):
    """A FlowMod as the switch reads it (parsed back from its bytes), in
    the terms of netsched's FlowMod."""
    p, o = dp.ofproto_parser, dp.ofproto
    back = p.OFPFlowMod.parser(dp, msg.version, msg.msg_type, msg.msg_len,
                               msg.xid, msg.buf)
    inst = {}
    for i in back.instructions:
        if isinstance(i, p.OFPInstructionActions):
            assert i.type == o.OFPIT_APPLY_ACTIONS
            inst['apply'] = tuple(
                ('output', a.port) if isinstance(a, p.OFPActionOutput)
                else ('set_field', a.key, a.value) for a in i.actions)
        elif isinstance(i, p.OFPInstructionWriteMetadata):
            inst['metadata'] = (i.metadata, i.metadata_mask)
        else:
            inst['goto'] = i.table_id
    command = {o.OFPFC_ADD: 'add', o.OFPFC_DELETE: 'delete',
               o.OFPFC_DELETE_STRICT: 'delete_strict'}[back.command]
    return (command, back.table_id, back.priority, back.cookie,
            back.cookie_mask, back.buffer_id == o.OFP_NO_BUFFER,
            back.out_port == o.OFPP_ANY, back.out_group == o.OFPG_ANY,
            back.idle_timeout, back.hard_timeout,
            tuple(sorted(back.match.items(), key=lambda kv: kv[0])), inst)


def expected(fm):
    """What the switch should read for a FlowMod of the core: its fields,
    no buffer, no out_port/out_group filter, no timeouts."""
    inst = {}
    if fm.actions:
        inst['apply'] = tuple(fm.actions)
    if fm.metadata is not None:
        inst['metadata'] = tuple(fm.metadata)
    if fm.goto is not None:
        inst['goto'] = fm.goto
    return (fm.command, fm.table, fm.priority, fm.cookie, fm.cookie_mask,
            True, True, True, 0, 0, tuple(sorted(fm.match)), inst)


def flow_mods(dp, start=0):
    return [on_wire(dp, m) for m in dp.of_type('OFPFlowMod')[start:]]


def switch_match(items):
    """A match as Open vSwitch reports it: a field under an all-ones mask
    as its plain value (the ECMP rules' metadata)."""
    full = {(1 << 64) - 1, '255.255.255.255'}
    return tuple(sorted((k, v[0] if isinstance(v, tuple) and v[1] in full
                         else v) for k, v in items))


# --- the tests --------------------------------------------------------------

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


AGENTS = {
    'hl0': {'conns': [{'id': 1, 'sport': 40001, 'dport': 5000,
                       'dst_ip': '10.0.1.2'}],
            'sends': [{'id': 1, 'coflow': 'a/0', 'job': 'a',
                       'bytes': 1 * MB, 'conn': 1, 'dst': 'hr0'}]},
    'hl1': {'conns': [{'id': 1, 'sport': 40002, 'dport': 5000,
                       'dst_ip': '10.0.1.3'}],
            'sends': [{'id': 3, 'coflow': 'b/0', 'job': 'b',
                       'bytes': 10 * MB, 'conn': 1, 'dst': 'hr1'}]}}


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


# --- the launcher, under each framework, with a switch on TCP ----------------

def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class TcpSwitch:
    """The least an OpenFlow 1.3 switch does for the controller: hello,
    features, empty multipart replies, echo and barrier replies; it
    counts the FlowMods it is sent."""
    HELLO, ECHO_REQ, ECHO_REP, FEAT_REQ, FEAT_REP = 0, 2, 3, 5, 6
    FLOW_MOD, MP_REQ, MP_REP, BARRIER_REQ, BARRIER_REP = 14, 18, 19, 20, 21

    def __init__(self, port, dpid, wait_s=10.0):
        self.dpid, self.flow_mods, self.barriers = dpid, 0, 0
        deadline = time.monotonic() + wait_s
        while True:     # the OpenFlow listener may start after the channel
            try:
                self.sock = socket.create_connection(('127.0.0.1', port),
                                                     timeout=10)
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, 'no OpenFlow listener'
                time.sleep(0.05)
        self.buf = b''
        self.send(self.HELLO, 1)

    def send(self, typ, xid, body=b''):
        self.sock.sendall(struct.pack('!BBHI', 4, typ, 8 + len(body), xid)
                          + body)

    def serve_until(self, done, timeout_s=15.0):
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, 'switch: timed out'
            while len(self.buf) < 8 or len(self.buf) < struct.unpack(
                    '!H', self.buf[2:4])[0]:
                chunk = self.sock.recv(65536)
                assert chunk, 'the controller closed the connection'
                self.buf += chunk
            _, typ, n, xid = struct.unpack('!BBHI', self.buf[:8])
            body, self.buf = self.buf[8:n], self.buf[n:]
            if typ == self.FEAT_REQ:
                self.send(self.FEAT_REP, xid, struct.pack(
                    '!QIBB2xII', self.dpid, 0, 254, 0, 0, 0))
            elif typ == self.ECHO_REQ:
                self.send(self.ECHO_REP, xid, body)
            elif typ == self.MP_REQ:
                self.send(self.MP_REP, xid, body[:2] + b'\x00' * 6)
            elif typ == self.FLOW_MOD:
                self.flow_mods += 1
            elif typ == self.BARRIER_REQ:
                self.barriers += 1
                self.send(self.BARRIER_REP, xid)

    def close(self):
        self.sock.close()


@pytest.mark.parametrize('name', sorted(PACKAGE))
def test_the_launcher_runs_the_app_under_each_framework(name, tmp_path):
    """controllers/launch.py --framework NAME: the app answers on its
    channel, programs a switch that connects over TCP and counts it
    ready once the switch confirms."""
    framework_or_skip(name)
    sock_dir = tempfile.mkdtemp(prefix='ns-launch-')
    sock = os.path.join(sock_dir, 'ctl.sock')
    port = _free_port()
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
