"""netsched's controller app (Ryu or os-ken). A thin shell around
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
The same file loads under os-ken (sdn_framework.py picks the names):
     netsched controller --framework os-ken ...
 or: python controllers/launch.py --framework os-ken \
         controllers/netsched_app.py

A switch that connects is first asked for its flow table: one that
holds netsched's rules (the controller was killed and restarted while
the switches kept forwarding, failing secure) is adopted -- sent only
the difference, never a wipe (ControllerCore.on_connect) -- and the
decision log, opened for appending, says so ('adopt' records).

Under os-ken 4 the hub runs native threads, so the switch events, the
control-socket clients and the scheduler's clock run in parallel: every
call into the core holds ``core_lock`` and every batch sent holds
``io_lock`` (under Ryu's eventlet they cost nothing).
"""
import json
import os
import socket
import sys
import time

from netsched import topology
from netsched.control import channel
from netsched.control import openflow as of
from netsched.control.core import ControllerCore
from netsched.control.outbox import Outbox
from netsched.control.spec import ControllerSpec
from netsched.errors import NetschedError

try:
    import sdn_framework
except ImportError:        # imported by module name, not loaded as a file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sdn_framework

fw = sdn_framework.load()
hub = fw.hub

BARRIER_TIMEOUT_S = 10
RECV_BYTES = 1 << 16        # read from a control client at once
MAX_LINE_BYTES = 16 << 20   # a longer request line closes the client
TICK_S = 0.001              # the scheduler's clock
CONFIRMED_OPS = ('set_class', 'clear_class')
PORT_STATS_S = 0.5              # how often switches are asked for counters
# routes an adopted switch kept wait this long at most for every link's
# state (past Open vSwitch's 8 s reconnection backoff)
ROUTE_SETTLE_S = 10.0


def load_spec(env=os.environ):
    """The ControllerSpec of the fabric this controller serves, from the
    environment: the app takes no arguments so that it loads unchanged
    in a plain framework manager (NETSCHED_FABRIC: its fabric
    description, or the NETSCHED_TOPOLOGY family)."""
    path = env.get('NETSCHED_FABRIC')
    if path:
        with open(path) as f:
            return ControllerSpec.from_json(f.read())
    spec = env.get('NETSCHED_TOPOLOGY')
    if not spec:
        raise NetschedError('set NETSCHED_FABRIC or NETSCHED_TOPOLOGY')
    return ControllerSpec(
        topology.parse_spec(spec), int(env.get('NETSCHED_QUEUES', '8')),
        scale=float(env.get('NETSCHED_SCALE', '1')),
        policy=env.get('NETSCHED_POLICY') or None,
        decision_log=env.get('NETSCHED_DECISION_LOG') or None,
        socket=env.get('NETSCHED_SOCKET', channel.DEFAULT_SOCKET))


def open_log(path):
    """The decision log, opened for appending: a restarted controller
    goes on in the file its predecessor wrote. A line the predecessor
    was killed in the middle of is ended first, so that the next record
    starts a line of its own."""
    f = open(path, 'a')
    if f.tell() > 0:
        with open(path, 'rb') as r:
            r.seek(-1, os.SEEK_END)
            if r.read(1) != b'\n':
                f.write('\n')
                f.flush()
    return f


def to_ryu(dp, fm):
    """netsched.control.openflow.FlowMod -> the framework's OFPFlowMod,
    field for field (os-ken's classes are Ryu's under another name): the
    core's rules stay plain data, testable without a framework."""
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


def from_ryu(dp, st):
    """One entry of a flow-stats reply -> netsched's FlowMod (an 'add'
    of what the switch holds), the inverse of to_ryu, for the core to
    compare with what it wants (instructions it never writes keep a
    mark, so that they compare unequal)."""
    p, o = dp.ofproto_parser, dp.ofproto
    actions, goto, metadata = [], None, None
    for i in st.instructions:
        if isinstance(i, p.OFPInstructionActions) and \
                i.type == o.OFPIT_APPLY_ACTIONS:
            for a in i.actions:
                if isinstance(a, p.OFPActionOutput):
                    actions.append(('output', a.port))
                elif isinstance(a, p.OFPActionSetField):
                    actions.append(('set_field', a.key, a.value))
                else:
                    actions.append((type(a).__name__,))
        elif isinstance(i, p.OFPInstructionWriteMetadata):
            metadata = (i.metadata, i.metadata_mask)
        elif isinstance(i, p.OFPInstructionGotoTable):
            goto = i.table_id
        else:
            actions.append((type(i).__name__, getattr(i, 'type', None)))
    match = tuple(sorted((k, tuple(v) if isinstance(v, (tuple, list))
                          else v) for k, v in st.match.items()))
    return of.FlowMod(st.table_id, st.priority, match, tuple(actions),
                      goto, metadata, st.cookie)


def _ms(a, b):
    return None if a is None or b is None else round((b - a) * 1e3, 3)


def _stages(out, t_in, t_done, marks):
    """Where a decision's time went, in ms: ``report`` from its first
    event on the host to the core taking the report (the agent's
    batching, the channel, the app's threads), ``wait`` from there to
    the step that decided (the decision gap, the clock, the lock),
    ``core`` the policy and the rules, ``send`` encoding and writing the
    FlowMods, ``barrier`` from the last write to the last reply."""
    marks = marks or {}
    step, sent = marks.get('step'), marks.get('sent')
    core_done = None if step is None else step + out.core_ms / 1e3
    return {'report': _ms(out.reported, t_in),
            'wait': _ms(t_in, step), 'core': round(out.core_ms, 3),
            'send': _ms(core_done, sent), 'barrier': _ms(sent, t_done)}


# Over 300 lines and 25 methods on purpose: the framework dispatches each
# OpenFlow event to a method of the one registered app, so every handler
# lives here; each is a few lines of I/O around ControllerCore.
class NetschedController(fw.App):
    """The shell around ControllerCore: switch events and control-channel
    lines in, the core's FlowMods (each batch closed by a barrier),
    replies and agent messages out. It decides nothing itself, so that
    the core's tests cover every decision."""
    OFP_VERSIONS = [fw.ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        spec = load_spec()
        self.core = ControllerCore.from_spec(spec)
        self.socket_path = spec.socket
        path = spec.decision_log
        self.decision_log = open_log(path) if path else None
        self.datapaths = {}
        self.tables = {}                # dpid -> its flow-stats entries
        self.port_descs = {}            # dpid -> {port: up}, as they come
        self.outbox = Outbox()          # one batch in flight per switch
        self.barrier_xids = {}          # dpid -> its batch's barrier xid
        self.agents = {}                # host -> (file, lock)
        self.core_lock = hub.Semaphore()    # every call into the core
        self.io_lock = hub.Semaphore()      # batches sent, log lines
        self.stopping = False
        self.listener = None
        self.server = hub.spawn(self._serve)
        self.ticker = None
        if self.core.scheduler is not None or self.core.circuits is not None:
            self.ticker = hub.spawn(self._tick)
        self.poller = hub.spawn(self._poll_ports)

    def close(self):
        """Stop serving (the app manager calls it at shutdown): the loops
        end at their next turn, and the listening socket is shut so that
        an accept blocked in a native thread returns."""
        self.stopping = True
        if self.listener is not None:
            try:
                self.listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.listener.close()
        with self.io_lock:
            f, self.decision_log = self.decision_log, None
        if f is not None:
            f.close()

    # --- sending -----------------------------------------------------
    def _send(self, dpid, mods, done=None):
        """Send mods to one switch, then a barrier; done() on its reply,
        the only sign that the switch has applied them all. While a batch
        is in flight to the switch, mods wait, merged, for its barrier
        (control.outbox). False if the switch is not connected."""
        dp = self.datapaths.get(dpid)
        if dp is None:
            return False
        with self.io_lock:              # threads (os-ken) race on xids
            batch = self.outbox.offer(dpid, mods, done, time.monotonic())
            if batch is not None:
                self._write_batch(dp, dpid, batch)
        return True

    def _write_batch(self, dp, dpid, mods):
        """FlowMods and their barrier (the caller holds io_lock)."""
        for fm in mods:
            dp.send_msg(to_ryu(dp, fm))
        barrier = dp.ofproto_parser.OFPBarrierRequest(dp)
        dp.set_xid(barrier)
        self.barrier_xids[dpid] = barrier.xid      # xids are per switch
        dp.send_msg(barrier)

    def _send_and_wait(self, sends):
        """Send batches to several switches and wait for every barrier
        (a manual rule's reply promises the switches have it); False on
        a timeout."""
        events = []
        for dpid, mods in sends.items():
            ev = fw.Event()
            if self._send(dpid, mods, ev.set):
                events.append(ev)
        return all(ev.wait(timeout=BARRIER_TIMEOUT_S) for ev in events)

    def _apply(self, out, t_in):
        """An outcome of the scheduler: messages to agents at once, rules
        to the switches, and a decision-log record once every switch
        confirmed its batch: the time from the first report the decision
        answers to the last barrier reply, the time in the core, and
        where the rest went (stages: _stages)."""
        t_step = t_in
        t_in = out.since if out.since is not None else t_in
        for host, msgs in out.pushes.items():
            self._push(host, msgs)
        records = list(out.log)
        if not out.mods:
            self._log(records, out, t_in, None)
            self._next_circuit_step(out)
            return
        marks = {'step': t_step, 'sent': None}
        left = {'n': len(out.mods)}
        count_lock = hub.Semaphore()    # replies and failed sends race

        def confirmed():
            with count_lock:
                left['n'] -= 1
                last = left['n'] == 0
            if last:
                self._log(records, out, t_in, time.monotonic(), marks)
                self._next_circuit_step(out)
        for dpid, mods in out.mods.items():
            if not self._send(dpid, mods, confirmed):
                confirmed()
        marks['sent'] = time.monotonic()

    def _next_circuit_step(self, out):
        """A circuit step is in every switch it touched: the next (a
        reconfiguration's steps must not overtake each other)."""
        if out.token is not None:
            with self.core_lock:
                now = time.monotonic()
                nxt = self.core.on_confirmed(out.token, now)
            self._apply(nxt, now)

    def _log(self, records, out, t_in, t_done, marks=None):
        """Append a decision's records to the decision log, the run's only
        trace of what the controller decided and how long applying took."""
        if out.decided or out.mods:
            records.append({'kind': 'decision', 't': t_in,
                            'decided': out.decided, 'flow_mods': out.n_mods,
                            'switches': len(out.mods),
                            'rules': len(self.core.scheduler.rules.installed)
                            if self.core.scheduler is not None else None,
                            'core_ms': round(out.core_ms, 3),
                            'applied_ms': None if t_done is None else
                            round((t_done - t_in) * 1e3, 3),
                            'stages': _stages(out, t_in, t_done, marks)})
        if not records:
            return
        for r in records:           # the core leaves these to the shell
            if 'applied_ms' in r and r['applied_ms'] is None \
                    and t_done is not None:
                r['applied_ms'] = round((t_done - t_in) * 1e3, 3)
        self._write_log(records)

    def _write_log(self, records):
        """Append records to the decision log (opened for appending: a
        restarted controller goes on in the same file)."""
        with self.io_lock:
            if self.decision_log is None:
                return
            for r in records:
                self.decision_log.write(json.dumps(r, separators=(',', ':'))
                                        + '\n')
            self.decision_log.flush()

    def _push(self, host, msgs):
        """Messages to one agent on its own channel; an agent that went
        away is forgotten rather than failing the decision."""
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
        """The scheduler's clock: it decides on time as well as on reports
        (recheck times, the decision gap, circuit periods)."""
        while not self.stopping:
            hub.sleep(TICK_S)
            self._step()

    def _step(self):
        """One turn of the core; its measured cost spaces the decisions
        (Scheduler.note_cost), so it is timed inside the lock."""
        with self.core_lock:
            now = time.monotonic()
            out = self.core.step(now)
            cost_s = time.monotonic() - now
            if out.decided:
                self.core.note_cost(cost_s)
        out.core_ms = cost_s * 1e3
        self._apply(out, now)

    def _poll_ports(self):
        """Ask every switch for its port counters: the link load the
        `decision` request shows comes from them."""
        while not self.stopping:
            hub.sleep(PORT_STATS_S)
            for dp in list(self.datapaths.values()):
                p, o = dp.ofproto_parser, dp.ofproto
                with self.io_lock:
                    dp.send_msg(p.OFPPortStatsRequest(dp, 0, o.OFPP_ANY))
            self._release_overdue()
            with self.core_lock:        # routes adopted switches kept
                now = time.monotonic()
                out = self.core.settle(now, ROUTE_SETTLE_S)
            if out.mods or out.log:
                self._apply(out, now)

    def _release_overdue(self):
        """A switch that has not answered a barrier in BARRIER_TIMEOUT_S
        would hold every batch behind it: the reply is taken as lost
        (its waiters have timed out on their own) and the next batch
        goes."""
        with self.io_lock:
            now = time.monotonic()
            for dpid in self.outbox.overdue(now, BARRIER_TIMEOUT_S):
                self.barrier_xids.pop(dpid, None)
                batch = self.outbox.expire(dpid, now)
                dp = self.datapaths.get(dpid)
                if batch is not None and dp is not None:
                    self._write_batch(dp, dpid, batch)

    def _dpid(self, dp):
        """The id a datapath was registered under (not dp.id, which the
        framework's own handler sets, possibly after ours ran)."""
        return next((d for d, x in list(self.datapaths.items()) if x is dp),
                    None)

    @fw.set_ev_cls(fw.ofp_event.EventOFPPortStatsReply, fw.MAIN_DISPATCHER)
    def on_port_stats(self, ev):
        """Transmitted-byte counters of one switch, for the link load."""
        dpid = self._dpid(ev.msg.datapath)
        if dpid is None:
            return
        with self.core_lock:
            self.core.on_port_stats(dpid, {st.port_no: st.tx_bytes
                                           for st in ev.msg.body},
                                    time.monotonic())

    # --- switch events -------------------------------------------------
    @fw.set_ev_cls(fw.ofp_event.EventOFPSwitchFeatures, fw.CONFIG_DISPATCHER)
    def on_features(self, ev):
        """A switch connected: it is asked for its flow table first
        (on_flow_stats goes on). The id is the reply's: under os-ken's
        threads the framework's handler that sets dp.id may run after
        this one."""
        dp, dpid = ev.msg.datapath, ev.msg.datapath_id
        with self.core_lock:
            known = self.core.knows(dpid)
        if not known:
            self.logger.warning('switch %016x is not in the fabric; ignored',
                                dpid)
            return
        self.datapaths[dpid] = dp
        self.tables[dpid] = []
        p, o = dp.ofproto_parser, dp.ofproto
        with self.io_lock:
            dp.send_msg(p.OFPFlowStatsRequest(
                dp, 0, o.OFPTT_ALL, o.OFPP_ANY, o.OFPG_ANY, 0, 0,
                p.OFPMatch()))

    # the replies may come before or after the port description moves
    # the switch to MAIN: both states are taken
    @fw.set_ev_cls(fw.ofp_event.EventOFPFlowStatsReply,
                   [fw.CONFIG_DISPATCHER, fw.MAIN_DISPATCHER])
    def on_flow_stats(self, ev):
        """The flow table of a switch that connected (in parts while the
        reply says more follow): the core decides its program from it --
        a fresh switch's clean slate, routes and the rules to replay, or
        for one that holds netsched's rules (the controller restarted)
        only the difference -- and the switch counts as ready when that
        batch's barrier returns; an adoption is logged then."""
        msg = ev.msg
        dpid = self._dpid(msg.datapath)
        if dpid is None or dpid not in self.tables:
            return                      # not a reply to on_features' ask
        self.tables[dpid] += [from_ryu(msg.datapath, st) for st in msg.body]
        if msg.flags & msg.datapath.ofproto.OFPMPF_REPLY_MORE:
            return
        table = self.tables.pop(dpid)
        with self.core_lock:
            now = time.monotonic()
            mods = self.core.on_connect(dpid, table, now)
            record = self.core.adoption.records.pop(dpid, None)
        if mods is None:
            return
        if record is not None:
            self.logger.info('switch %016x adopted: %d rules kept, %d flow '
                             'mods sent', dpid, record['adopted'],
                             record['sent'])

        def done():
            if record is not None:
                record['applied_ms'] = round(
                    (time.monotonic() - now) * 1e3, 3)
                self._write_log([record])
            self._ready(dpid)
        self._send(dpid, mods, done)

    @fw.set_ev_cls(fw.ofp_event.EventOFPPortDescStatsReply,
                   [fw.CONFIG_DISPATCHER, fw.MAIN_DISPATCHER])
    def on_port_desc(self, ev):
        """A switch's ports (the framework asks every switch that
        connects): the core learns which are down, as from port
        status messages, and reroutes if that changed anything."""
        msg = ev.msg
        dp = msg.datapath
        dpid = self._dpid(dp)
        if dpid is None:
            return
        o = dp.ofproto
        ports = self.port_descs.setdefault(dpid, {})
        for p in msg.body:
            ports[p.port_no] = not (p.state & o.OFPPS_LINK_DOWN
                                    or p.config & o.OFPPC_PORT_DOWN)
        if msg.flags & o.OFPMPF_REPLY_MORE:
            return
        del self.port_descs[dpid]
        with self.core_lock:
            now = time.monotonic()
            out = self.core.on_port_desc(dpid, ports, now)
        if out.log:
            self.logger.info('ports of %016x: rerouting (%d flow mods)',
                             dpid, out.n_mods)
        self._apply(out, now)

    def _ready(self, dpid):
        """A switch confirmed its program: the fabric is up once all are
        (the `status` request's all_ready)."""
        with self.core_lock:
            self.core.on_ready(dpid)
            n, total = len(self.core.ready), len(self.core.switch_of)
        self.logger.info('switch %016x ready (%d/%d)', dpid, n, total)

    # a barrier can return before the framework's port description
    # reply moves the switch to MAIN: both states are taken
    @fw.set_ev_cls(fw.ofp_event.EventOFPBarrierReply,
                   [fw.CONFIG_DISPATCHER, fw.MAIN_DISPATCHER])
    def on_barrier(self, ev):
        """A switch applied a batch: whoever waits for it goes on, and
        what waited behind it goes out."""
        dpid = self._dpid(ev.msg.datapath)
        with self.io_lock:
            if dpid is None or self.barrier_xids.get(dpid) != ev.msg.xid:
                return
            del self.barrier_xids[dpid]
            dones, batch = self.outbox.confirmed(dpid, time.monotonic())
            dp = self.datapaths.get(dpid)
            if batch is not None and dp is not None:
                self._write_batch(dp, dpid, batch)
        for done in dones:
            done()

    @fw.set_ev_cls(fw.ofp_event.EventOFPPortStatus, fw.MAIN_DISPATCHER)
    def on_port_status(self, ev):
        """A port went down or came back (a link's carrier, or its
        administrative state): the core reroutes around the links down
        and the new routes go out like any decision, logged with the
        time until every switch confirmed them."""
        msg = ev.msg
        dpid = self._dpid(msg.datapath)
        if dpid is None:
            return
        o, desc = msg.datapath.ofproto, msg.desc
        up = msg.reason != o.OFPPR_DELETE and not (
            desc.state & o.OFPPS_LINK_DOWN or desc.config & o.OFPPC_PORT_DOWN)
        with self.core_lock:
            now = time.monotonic()
            out = self.core.on_port_status(dpid, desc.port_no, up, now)
            sw = self.core.switch_of.get(dpid)
        # logged as it arrives, not with the reroute (written once the
        # switches confirm it): a reroute that never shows can then be
        # told from a status that never came
        self._write_log([{'kind': 'port_status', 't': now, 'switch': sw,
                          'port': desc.port_no, 'up': up,
                          'reason': msg.reason, 'state': desc.state,
                          'config': desc.config}])
        if out.log:
            self.logger.info('port %s of %016x %s: rerouting (%d flow mods)',
                             desc.port_no, dpid, 'up' if up else 'down',
                             out.n_mods)
        self._apply(out, now)

    @fw.set_ev_cls(fw.ofp_event.EventOFPStateChange, fw.DEAD_DISPATCHER)
    def on_dead(self, ev):
        """A switch disconnected: nothing is sent to it until it connects
        again, when it is programmed from its table anew (on_flow_stats:
        the difference, if it kept netsched's rules)."""
        dpid = self._dpid(ev.datapath)
        if dpid is not None:
            del self.datapaths[dpid]
            with self.io_lock:
                self.outbox.drop(dpid)
                self.barrier_xids.pop(dpid, None)
            self.tables.pop(dpid, None)
            self.port_descs.pop(dpid, None)
            with self.core_lock:
                self.core.on_disconnect(dpid)

    # --- control socket --------------------------------------------------
    def _serve(self):
        """The control channel: a Unix socket (Mininet hosts live in other
        network namespaces but share the filesystem), one thread per
        client."""
        os.makedirs(os.path.dirname(self.socket_path), exist_ok=True)
        # bound under a private name and renamed once listening: binding
        # creates the file before listen(), and a client that sees the
        # file in that gap is refused
        staging = '%s.%d' % (self.socket_path, os.getpid())
        if os.path.exists(staging):
            os.unlink(staging)
        server = self.listener = hub.listen(staging, family=socket.AF_UNIX)
        # its owner's only (root, as netsched and the emulated hosts'
        # agents run): the channel sets rules in every switch
        os.chmod(staging, 0o600)
        os.replace(staging, self.socket_path)
        self.logger.info('control socket %s', self.socket_path)
        while not self.stopping:
            try:
                conn, _ = server.accept()
            except OSError:
                if self.stopping:
                    return
                raise
            hub.spawn(self._client, conn)

    def _client(self, conn):
        """One client's lines, answered in order. A registered agent's
        channel also carries the scheduler's messages to it; a manual
        rule is answered only once the switches confirmed it. The lines
        that arrived together are taken in together and the scheduler
        steps once after them, not once per report: with a hundred jobs
        reporting, a step per line kept the switches' barrier replies
        waiting behind the reports."""
        f = conn.makefile('wb')
        lock = hub.Semaphore()
        host = None
        buf = b''
        try:
            while True:
                data = conn.recv(RECV_BYTES)
                if not data:
                    break
                *lines, buf = (buf + data).split(b'\n')
                if len(buf) > MAX_LINE_BYTES:
                    self.logger.warning('%s sent a line over %d bytes; '
                                        'closed', host or 'a client',
                                        MAX_LINE_BYTES)
                    self._reply(f, lock, {'ok': False, 'error': 'line over '
                                          '%d bytes' % MAX_LINE_BYTES})
                    break
                reported = False
                for line in lines:
                    op, host = self._line(line, f, lock, host)
                    reported |= op == 'report'
                if reported:
                    self._step()
                hub.sleep(0)        # the switches' replies get their turn
        except OSError:
            pass
        finally:
            if host is not None and self.agents.get(host, (None,))[0] is f:
                del self.agents[host]
            conn.close()

    def _line(self, line, f, lock, host):
        """One request line of a client (``host`` once it registered):
        (its op, the client's host)."""
        if not line.strip():
            return None, host
        try:
            req = channel.decode(line)
        except NetschedError as e:
            # dropped with its reason, as a refused request is
            self.logger.warning('line from %s dropped: %s',
                                host or 'a client', e)
            self._reply(f, lock, {'ok': False, 'error': str(e)})
            return None, host
        with self.core_lock:
            now = time.monotonic()
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
        return op, host

    def _reply(self, f, lock, reply):
        """One reply line; the lock keeps it whole beside pushes to the
        same agent from other threads."""
        with lock:
            f.write(channel.encode(reply))
            f.flush()
