"""What the tests of the controller app's shell share (the tests:
tests/unit/control/test_ryu_shell.py, test_controller_restart.py): the
app loaded under Ryu or os-ken, without Open vSwitch.

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
import sys
import tempfile
import time

import pytest

from netsched import topology as topo
from netsched.control import channel
from netsched.control.spec import ControllerSpec
from tests.support import prerequisite

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
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
        prerequisite.missing('%s is not installed: %s' % (name, e))


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


def dumbbell_fabric(tmp_path, sock_dir, monkeypatch):
    """The fabric description the shells run: dumbbell,2 under SEBF,
    its socket in ``sock_dir`` (AF_UNIX paths must be short), named to
    the app by NETSCHED_FABRIC."""
    desc = ControllerSpec(
        topo.parse_spec('dumbbell,2'), 8, policy='sebf', scale=500.0,
        decision_log=str(tmp_path / 'decisions.jsonl'),
        socket=os.path.join(sock_dir, 'ctl.sock')).to_dict()
    path = tmp_path / 'fabric.json'
    path.write_text(json.dumps(desc))
    monkeypatch.setenv('NETSCHED_FABRIC', str(path))
    return desc


@pytest.fixture
def shell(app_module, tmp_path, monkeypatch):
    sock_dir = tempfile.mkdtemp(prefix='ns-shell-')
    s = Shell(app_module, dumbbell_fabric(tmp_path, sock_dir, monkeypatch))
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



AGENTS = {
    'hl0': {'conns': [{'id': 1, 'sport': 40001, 'dport': 5000,
                       'dst_ip': '10.0.1.2'}],
            'sends': [{'id': 1, 'coflow': 'a/0', 'job': 'a',
                       'bytes': 1 * MB, 'conn': 1, 'dst': 'hr0'}]},
    'hl1': {'conns': [{'id': 1, 'sport': 40002, 'dport': 5000,
                       'dst_ip': '10.0.1.3'}],
            'sends': [{'id': 3, 'coflow': 'b/0', 'job': 'b',
                       'bytes': 10 * MB, 'conn': 1, 'dst': 'hr1'}]}}


# --- the launcher, under each framework, with a switch on TCP ----------------

def free_port():
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
