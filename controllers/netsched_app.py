"""Ryu app: netsched's controller. A thin shell around
netsched.ControllerCore: it turns switch events and control-socket
requests into calls on the core and sends the FlowMods the core returns,
each batch closed by a barrier.

Configuration comes from the environment, so the file loads unchanged in
plain ryu-manager:
  NETSCHED_FABRIC   path of a fabric description (JSON) written by
                    netsched; it names the topology, Q and the socket
or, when that is not set:
  NETSCHED_TOPOLOGY a topology spec such as "fattree,4"
  NETSCHED_QUEUES   number of priority classes (default 8)
  NETSCHED_SOCKET   control socket path (default /run/netsched/ctl.sock)
  NETSCHED_POLICY   scheduling policy (default: none, routes only)
  NETSCHED_SCALE    data-center bit/s per emulated bit/s (default 1)
  NETSCHED_DECISION_LOG  where to append the decision log (JSON lines)

Run: netsched controller --topology fattree,4 --policy sebf
 or: NETSCHED_TOPOLOGY=fattree,4 NETSCHED_POLICY=sebf \
         ryu-manager controllers/netsched_app.py
"""
import json
import os
import socket
import time

import eventlet
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import (CONFIG_DISPATCHER, DEAD_DISPATCHER,
                                    MAIN_DISPATCHER, set_ev_cls)
from ryu.lib import hub
from ryu.ofproto import ofproto_v1_3

from netsched import topology
from netsched.control import channel
from netsched.control.core import ControllerCore
from netsched.errors import NetschedError

BARRIER_TIMEOUT_S = 10
TICK_S = 0.001              # the scheduler's clock
CONFIRMED_OPS = ('set_class', 'clear_class')
PORT_STATS_S = 0.5              # how often switches are asked for counters


def load_description(env=os.environ):
    path = env.get('NETSCHED_FABRIC')
    if path:
        with open(path) as f:
            return json.load(f)
    spec = env.get('NETSCHED_TOPOLOGY')
    if not spec:
        raise NetschedError('set NETSCHED_FABRIC or NETSCHED_TOPOLOGY')
    return channel.fabric_description(
        topology.parse_spec(spec), int(env.get('NETSCHED_QUEUES', '8')),
        env.get('NETSCHED_SOCKET', channel.DEFAULT_SOCKET),
        policy=env.get('NETSCHED_POLICY') or None,
        scale=float(env.get('NETSCHED_SCALE', '1')),
        decision_log=env.get('NETSCHED_DECISION_LOG') or None)


def to_ryu(dp, fm):
    """netsched.control.openflow.FlowMod -> OFPFlowMod, field for field."""
    p, o = dp.ofproto_parser, dp.ofproto
    actions = []
    for a in fm.actions:
        if a[0] == 'output':
            actions.append(p.OFPActionOutput(a[1]))
        elif a[0] == 'set_field':
            actions.append(p.OFPActionSetField(**{a[1]: a[2]}))
        else:
            raise ValueError('unknown action %r' % (a,))
    inst = []
    if actions:
        inst.append(p.OFPInstructionActions(o.OFPIT_APPLY_ACTIONS, actions))
    if fm.metadata is not None:
        inst.append(p.OFPInstructionWriteMetadata(*fm.metadata))
    if fm.goto is not None:
        inst.append(p.OFPInstructionGotoTable(fm.goto))
    command = {'add': o.OFPFC_ADD, 'delete': o.OFPFC_DELETE,
               'delete_strict': o.OFPFC_DELETE_STRICT}[fm.command]
    return p.OFPFlowMod(datapath=dp, cookie=fm.cookie,
                        cookie_mask=fm.cookie_mask, table_id=fm.table,
                        command=command, priority=fm.priority,
                        out_port=o.OFPP_ANY, out_group=o.OFPG_ANY,
                        match=p.OFPMatch(**dict(fm.match)),
                        instructions=inst)


class NetschedController(app_manager.RyuApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        desc = load_description()
        self.core = ControllerCore.from_description(desc)
        self.socket_path = desc['socket']
        path = desc.get('decision_log')
        self.decision_log = open(path, 'a') if path else None
        self.datapaths = {}
        self.barrier_waiters = {}       # xid -> callable
        self.agents = {}                # host -> (file, lock)
        self.server = hub.spawn(self._serve)
        if self.core.scheduler is not None or self.core.circuits is not None:
            self.ticker = hub.spawn(self._tick)
        self.poller = hub.spawn(self._poll_ports)

    # --- sending -----------------------------------------------------
    def _send(self, dpid, mods, done=None):
        """Send mods to one switch, then a barrier; done() on its reply."""
        dp = self.datapaths.get(dpid)
        if dp is None:
            return False
        for fm in mods:
            dp.send_msg(to_ryu(dp, fm))
        barrier = dp.ofproto_parser.OFPBarrierRequest(dp)
        dp.set_xid(barrier)
        if done is not None:
            self.barrier_waiters[barrier.xid] = done
        dp.send_msg(barrier)
        return True

    def _send_and_wait(self, sends):
        events = []
        for dpid, mods in sends.items():
            ev = hub.Event()
            if self._send(dpid, mods, ev.set):
                events.append(ev)
        return all(ev.wait(timeout=BARRIER_TIMEOUT_S) for ev in events)

    def _apply(self, out, t_in):
        """An outcome of the scheduler: messages to agents at once, rules
        to the switches, and a decision-log record once every switch
        confirmed its batch: the time from the first report the decision
        answers to the last barrier reply, and the time in the core."""
        t_in = out.since if out.since is not None else t_in
        for host, msgs in out.pushes.items():
            self._push(host, msgs)
        records = list(out.log)
        if not out.mods:
            self._log(records, out, t_in, None)
            self._next_circuit_step(out)
            return
        left = {'n': len(out.mods)}

        def confirmed():
            left['n'] -= 1
            if left['n'] == 0:
                self._log(records, out, t_in, time.monotonic())
                self._next_circuit_step(out)
        for dpid, mods in out.mods.items():
            if not self._send(dpid, mods, confirmed):
                confirmed()

    def _next_circuit_step(self, out):
        """A circuit step is in every switch it touched: the next."""
        if out.token is not None:
            now = time.monotonic()
            self._apply(self.core.on_confirmed(out.token, now), now)

    def _log(self, records, out, t_in, t_done):
        if out.decided or out.mods:
            records.append({'kind': 'decision', 't': t_in,
                            'decided': out.decided, 'flow_mods': out.n_mods,
                            'switches': len(out.mods),
                            'core_ms': round(out.core_ms, 3),
                            'applied_ms': None if t_done is None else
                            round((t_done - t_in) * 1e3, 3)})
        if self.decision_log is None or not records:
            return
        for r in records:
            self.decision_log.write(json.dumps(r, separators=(',', ':')) +
                                    '\n')
        self.decision_log.flush()

    def _push(self, host, msgs):
        a = self.agents.get(host)
        if a is None:
            return
        f, lock = a
        try:
            with lock:
                for m in msgs:
                    f.write(channel.encode(m))
                f.flush()
        except OSError:
            self.agents.pop(host, None)

    def _tick(self):
        while True:
            hub.sleep(TICK_S)
            self._step()

    def _step(self):
        now = time.monotonic()
        out = self.core.step(now)
        cost_s = time.monotonic() - now
        out.core_ms = cost_s * 1e3
        if out.decided:
            self.core.note_cost(cost_s)
        self._apply(out, now)

    def _poll_ports(self):
        while True:
            hub.sleep(PORT_STATS_S)
            for dp in list(self.datapaths.values()):
                p, o = dp.ofproto_parser, dp.ofproto
                dp.send_msg(p.OFPPortStatsRequest(dp, 0, o.OFPP_ANY))

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    def on_port_stats(self, ev):
        self.core.on_port_stats(ev.msg.datapath.id,
                                {st.port_no: st.tx_bytes
                                 for st in ev.msg.body}, time.monotonic())

    # --- switch events -------------------------------------------------
    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_features(self, ev):
        dp = ev.msg.datapath
        mods = self.core.on_connect(dp.id)
        if mods is None:
            self.logger.warning('switch %016x is not in the fabric; ignored',
                                dp.id)
            return
        self.datapaths[dp.id] = dp
        self._send(dp.id, mods, lambda: self._ready(dp.id))

    def _ready(self, dpid):
        self.core.on_ready(dpid)
        self.logger.info('switch %016x ready (%d/%d)', dpid,
                         len(self.core.ready), len(self.core.switch_of))

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    def on_barrier(self, ev):
        done = self.barrier_waiters.pop(ev.msg.xid, None)
        if done is not None:
            done()

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def on_dead(self, ev):
        dp = ev.datapath
        if dp.id is not None and self.datapaths.get(dp.id) is dp:
            del self.datapaths[dp.id]
            self.core.on_disconnect(dp.id)

    # --- control socket --------------------------------------------------
    def _serve(self):
        os.makedirs(os.path.dirname(self.socket_path), exist_ok=True)
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        server = eventlet.listen(self.socket_path, family=socket.AF_UNIX)
        os.chmod(self.socket_path, 0o666)
        self.logger.info('control socket %s', self.socket_path)
        while True:
            conn, _ = server.accept()
            hub.spawn(self._client, conn)

    def _client(self, conn):
        f = conn.makefile('rwb')
        lock = hub.Semaphore()
        host = None
        try:
            for line in f:
                now = time.monotonic()
                try:
                    req = channel.decode(line)
                except NetschedError as e:
                    self._reply(f, lock, {'ok': False, 'error': str(e)})
                    continue
                out = self.core.handle(req, now)
                op = req.get('op')
                if op == 'register' and out.reply.get('ok'):
                    host = req['host']
                    self.agents[host] = (f, lock)
                if op in CONFIRMED_OPS and out.mods:
                    # manual rules: the reply says the switches have them
                    if not self._send_and_wait(out.mods):
                        out.reply = {'ok': False, 'error': 'switches did not '
                                     'confirm the change (barrier timeout)'}
                    out.mods = {}
                if out.reply is not None:
                    if not out.reply.get('ok'):
                        self.logger.warning('%s from %s: %s', op, host,
                                            out.reply.get('error'))
                    self._reply(f, lock, out.reply)
                self._apply(out, now)
                if op == 'report':
                    self._step()
        except OSError:
            pass
        finally:
            if host is not None and self.agents.get(host, (None,))[0] is f:
                del self.agents[host]
            conn.close()

    def _reply(self, f, lock, reply):
        with lock:
            f.write(channel.encode(reply))
            f.flush()
