"""The packet-level backend's run loop: the simulator's workload drivers
(netsched.sim.drivers: the plan executor both other backends follow) on
an ns-3 network, with the controller's scheduling core
(netsched.control.scheduler) in the loop.

The drivers see the engine interface of netsched.sim.engine (``at``,
``add_flows``, ``coflow``, ``log``, ``now``; ``on_flows_sent`` when a
sender has written a transfer's last byte, ``on_flows_done`` when its
receiver has it all). Every transfer is a real TCP byte stream on its
plan connection (core.h's Conn and Sink).

The controller hears what the agents would tell it -- registration with
each host's connections and planned sends, transfer starts and
receptions, iteration marks, acknowledged bytes every 10 ms for the
policies that read them -- and decides with the same code and at the
same moments as in the emulated fabric (Scheduler.step: when something
changed, at most once per 2 ms, and at the policy's recheck time). What
it decides takes effect ``control_delay_s`` later, where the emulator
enforces it: a DSCP rule per connection at its ingress switch, the
classes, per-send tags and rates at the sending hosts, time shifts at
the workers.
"""
import json
from types import SimpleNamespace

import numpy as np

from .. import qos
from .. import routing
from ..control.scheduler import HOLD, Scheduler
from ..errors import NetschedError
from ..events import FLOW_LINE
from ..sim.drivers import PlanDriver
from ..sim.engine import Clock, no_route, route_errors

PROGRESS_S = 0.010          # the agents' progress reports (host.agent)
CLASS_WAIT_S = 0.100        # a new coflow waits this long for its class
# simulated seconds with flows in flight and nothing delivered before the
# run is declared stalled (a route that never comes back, a hold never
# lifted)
STALL_S = 120.0


class ReportingPlan(PlanDriver):
    """The plan driver, telling the controller each iteration mark (the
    agents report them: job progress for JPAS and the job views), and
    holding a connection's next transfer as the agents' senders do
    (``drain``, the experiment's ``emulator.drain``): one of another
    coflow in another class (or of a coflow not classed yet) starts only
    once the connection's earlier transfers are received, not as soon as
    they are written (host.transport, Transport._drain)."""

    def __init__(self, plan, control, drain=True, **kw):
        super().__init__(plan, **kw)
        self.control = control
        control.driver = self
        self.drain = bool(drain)
        self.unacked = {}           # connection -> sends written, in flight
        self.parked = {}            # connection -> the send waiting on them

    def on_flows_sent(self, ids):
        for i in ids.tolist():
            t = self.eng.flow_tag[i]
            self.unacked.setdefault(t.conn, []).append(t)
        super().on_flows_sent(ids)

    def on_flows_done(self, ids):
        for i in ids.tolist():
            t = self.eng.flow_tag[i]
            u = self.unacked.get(t.conn, [])
            for j, r in enumerate(u):
                if r is t:
                    del u[j]
                    break
        super().on_flows_done(ids)
        self.unpark()

    def _start_send(self, t):
        if self.drain and self._must_wait(t):
            self.parked[t.conn] = t
            return
        super()._start_send(t)

    def unpark(self):
        """Start the held transfers that need wait no more (a transfer
        before them arrived, or their coflow got its class)."""
        for conn, t in sorted(self.parked.items()):
            if t.job in self.failed:          # its job failed meanwhile
                del self.parked[conn]
            elif not self._must_wait(t):
                del self.parked[conn]
                super()._start_send(t)

    def _must_wait(self, t):
        ctl = self.control
        if t.id in ctl.send_class:
            return False
        k = ctl.coflow_class.get(t.coflow)
        if k is None and not ctl.waits:
            k = 0
        return any(r.coflow != t.coflow and r.id not in ctl.send_class
                   and (k is None or ctl.coflow_class.get(r.coflow, 0) != k)
                   for r in self.unacked.get(t.conn, ()))

    def _done(self, t):
        failed = t.job in self.failed
        super()._done(t)
        if t.kind == 'mark' and not failed:
            self.control.report(t.host, {'ev': 'mark', 'job': t.job,
                                         'iter': t.iter, 't': self.eng.now,
                                         'loss': t.loss})


class Control:
    """The controller in the loop: the Scheduler fed the agents' reports,
    stepped when they change something, its outcome applied after
    ``delay_s`` (a time the engine keeps)."""

    def __init__(self, eng, g, plan, policy, queues, delay_s,
                 class_map=None, hold_starved=False, release_floor=False):
        self.eng, self.g, self.plan = eng, g, plan
        self.delay_s = float(delay_s)
        self.queues = queues
        self.sched = Scheduler(g, queues, policy, scale=1.0, net=eng.net,
                               class_map=class_map,
                               hold_starved=hold_starved,
                               release_floor=release_floor)
        self.static = getattr(policy, 'static', False)
        self.wanted = set()
        self.waits = False
        self.pending = False        # reports since the last step
        self.wake_at = None
        self.rules = {}             # connection key -> DSCP, as applied
        # what the hosts apply (the pushes they were sent)
        self.coflow_class = {}
        self.send_class = {}
        self.rate = {}              # send id -> bytes/s (HOLD: held)
        self.shifts = {}
        self.decisions = 0
        self.applied = 0
        self.held = False           # the controller is down (faults)
        self.driver = None          # the plan driver (ReportingPlan)

    def register(self, run_id):
        """Every host's registration, as its agent sends it at start."""
        plan, g = self.plan, self.g
        sends, jobs = {}, {}
        for t in plan.tasks:
            # as emulator.runner.slice_for: the jobs of a host's tasks
            if t.job is not None and t.host is not None:
                jobs.setdefault(t.host, {})[t.job] = \
                    plan.jobs[t.job].registered()
            if t.kind == 'send':
                # the fields host.agent.register sends of a planned send
                sends.setdefault(t.host, []).append(
                    {'id': t.id, 'coflow': t.coflow, 'job': t.job,
                     'bytes': t.bytes, 'conn': t.conn, 'dst': t.dst,
                     'iter': t.iter, 'urgency': t.urgency,
                     'position': t.position})
        senders = {c.src for c in plan.conns}
        for h in sorted(senders | set(sends) | set(jobs)):
            self.sched.register({'host': h, 'run': run_id,
                                 'conns': plan.conns_of(g, h),
                                 'sends': sends.get(h, []),
                                 'jobs': jobs.get(h, {})}, 0.0)
        self.wanted = set(self.sched.reports_wanted())
        self.waits = self.sched.waits_for_class()

    def report(self, host, ev):
        if ev['ev'] not in self.wanted:
            return
        self.sched.report(host, [ev], self.eng.now)
        self.pending = True

    def rerouted(self):
        """Connections moved to new paths: the policy decides again over
        them, as the simulator's does when its flows move."""
        s = self.sched.intake
        if not s.dirty:
            s.dirty, s.dirty_since = True, self.eng.now
        self.pending = True

    def hold(self, on):
        """The controller down (a fault): reports wait, nothing is
        decided or applied; back, it steps at once on what it missed."""
        self.held = bool(on)
        if not on:
            self.pending = True
            self.step()

    def step(self):
        """Step the scheduler now if a report or its own timing asks."""
        if self.held:
            return
        now = self.eng.now
        s = self.sched
        due = self.pending or (self.wake_at is not None
                               and now >= self.wake_at)
        if not due:
            return
        self.pending = False
        self.wake_at = None
        out = s.step(now)
        if out.decided:
            self.decisions += 1
        wanted = {}
        for key, r in s.rules.installed.items():
            wanted[key] = qos.class_dscp(r.cls, self.queues)
        # only the rules that changed (None: the rule goes)
        rules = {k: wanted.get(k) for k in set(wanted) | set(self.rules)
                 if wanted.get(k) != self.rules.get(k)}
        if out.pushes or out.log or rules:
            self.eng.at(now + self.delay_s, self._apply, out.pushes,
                        out.log, rules)
            self.rules = wanted
        self._next_wake()

    def _next_wake(self):
        s = self.sched.clock
        last = s.last if s.last is not None else 0.0
        # a nanosecond past the gap: the scheduler asks for a gap of at
        # least its clock's gap_s, which a float sum may fall short of
        gap = last + s.gap_s + 1e-9
        when = []
        if self.sched.intake.dirty:
            when.append(gap)
        if s.recheck_at is not None:
            when.append(max(s.recheck_at, gap))
        if when:
            t = max(min(when), self.eng.now)
            if self.wake_at is None or t < self.wake_at:
                self.wake_at = t
                self.eng.background(t, self._wake, t)

    def _wake(self, t):
        if self.wake_at is not None and self.wake_at <= self.eng.now:
            self.step()

    def _apply(self, pushes, log, rules):
        eng = self.eng
        self.applied += 1
        for rec in log:
            rec = dict(rec)
            kind, t = rec.pop('kind'), rec.pop('t')
            eng.log.write(t, kind, applied=round(eng.now, 9), **rec)
        touched = set()
        for h, msgs in sorted(pushes.items()):
            for m in msgs:
                op = m['op']
                if op == 'classes':
                    self.coflow_class.update(m.get('classes') or {})
                    for c in (m.get('classes') or {}):
                        touched |= eng.in_flight_of_coflow(c, h)
                    for k, v in (m.get('sends') or {}).items():
                        self.send_class[int(k)] = int(v)
                        touched |= eng.in_flight_of_send(int(k))
                elif op == 'rates':
                    for k, v in m['rates'].items():
                        self.rate[int(k)] = v
                        touched |= eng.in_flight_of_send(int(k))
                elif op == 'shifts':
                    for j, v in m['shifts'].items():
                        if v is None:
                            self.shifts.pop(j, None)
                        else:
                            self.shifts[j] = tuple(v)
                    eng.driver_shifts(dict(self.shifts))
        if rules:
            eng.set_rules(rules)
        for fid in sorted(touched):
            eng.refresh(fid)
        if self.driver is not None:
            self.driver.unpark()

    # --- what a sender applies to a transfer --------------------------
    def dscp_of(self, t):
        """The transfer's mark: its own class where the policy tags
        sends, else its coflow's; None while a coflow that must wait for
        its class has none."""
        k = self.send_class.get(t.id)
        if k is None:
            k = self.coflow_class.get(t.coflow)
        if k is None:
            if self.waits:
                return None
            k = 0
        return qos.class_dscp(int(k), self.queues)

    def rate_of(self, t):
        """bytes/s for the sender's token bucket: 0 unlimited, < 0 held."""
        r = self.rate.get(t.id, 0)
        return -1.0 if r == HOLD else float(r)


class Engine(Clock):
    """The engine interface the workload drivers use (netsched.sim.engine),
    over an ns-3 fabric (fabric.Fabric). Its links' counters are its
    :class:`PortMeter`.

    It stays one class of over 300 lines on purpose: the transfers in
    flight (``_active``, ``_by_coflow``, ``_by_send``, ``_waiting``,
    ``_cancelled``) are one state machine that add_flows, cancel, refresh,
    the bus's reports (``_take``) and the progress reports all change,
    and the drivers call it as one engine; split, each part would reach
    into the others' tables."""

    def __init__(self, ns, core, fab, net, log, sample_s=0.1,
                 progress=None):
        self.ns, self.core, self.fab, self.net, self.log = (
            ns, core, fab, net, log)
        super().__init__()
        self.sample_s = sample_s
        self.progress = progress
        self.events = 0
        self.control = None
        self.coflow_names = []
        self._coflow_index = {}
        self.flow_tag = []
        self._flow = []               # per flow: (src, dst, bytes, start)
        self._flow_cof = []
        self._flow_ends = []          # per flow: (src, dst) index in net
        self._host_index = {h: i for i, h in enumerate(net.hosts)}
        self._active = {}             # flow id -> (conn key, start offset)
        self._by_coflow = {}          # coflow name -> active flow ids
        self._by_send = {}            # send id -> active flow id
        self._waiting = {}            # flow id -> waits for its class
        self._cancelled = set()       # flows of failed jobs
        self.conns = {}               # (src, sport, dst, dport) -> Conn
        self._conn_bytes = {}         # conn key -> bytes queued on it
        self.listeners = {}
        self.meter = PortMeter(self)
        self._last_delivery = 0.0

    # --- the drivers' interface (netsched.sim.engine.Engine's) ----------
    @property
    def flows(self):
        ends = np.array(self._flow_ends, np.int64).reshape(-1, 2)
        return {'coflow': np.array(self._flow_cof, np.int64),
                'src': ends[:, 0], 'dst': ends[:, 1]}

    @property
    def a_id(self):
        return np.array(sorted(self._active), np.int64)

    @property
    def table(self):
        """The transfers in flight as a hybrid fabric's circuit driver
        reads them (the simulator's FlowTable): ``a_id``, and ``a_rem``
        their bytes not yet acknowledged."""
        ids = self.a_id
        acked = {}
        rem = np.array([self._active[f][2] - self._acked(f, acked)
                        for f in ids.tolist()], float)
        return SimpleNamespace(a_id=ids, a_rem=rem)

    def _acked(self, fid, cache):
        """Bytes of transfer ``fid`` its receiver acknowledged; ``cache``
        keeps each connection's count for one reading."""
        key, offset, nbytes = self._active[fid]
        a = cache.get(key)
        if a is None:
            a = cache[key] = int(self.conns[key].Acked())
        return min(max(a - offset, 0), nbytes)

    def coflow(self, name, arrival, job=None):
        i = self._coflow_index.get(name)
        if i is None:
            i = self._coflow_index[name] = len(self.coflow_names)
            self.coflow_names.append(name)
        return i

    def busy(self):
        return bool(self._active) or self._timed_work()

    def add_flows(self, src, dst, size, coflow, tags=None, sport=None,
                  dport=None):
        ids = []
        for k in range(len(src)):
            fid = len(self.flow_tag)
            t = tags[k] if tags is not None else None
            cof = coflow if np.ndim(coflow) == 0 else coflow[k]
            nbytes = max(1, int(round(float(size[k]))))
            key = (src[k], int(sport[k]), dst[k], int(dport[k]))
            conn = self.conns[key]
            self.flow_tag.append(t)
            self._flow.append((src[k], dst[k], float(size[k]), self.now))
            self._flow_cof.append(int(cof))
            self._flow_ends.append((self._host_index[src[k]],
                                    self._host_index[dst[k]]))
            offset = self._conn_bytes.get(key, 0)
            self._conn_bytes[key] = offset + nbytes
            self._active[fid] = (key, offset, nbytes)
            name = self.coflow_names[int(cof)]
            self._by_coflow.setdefault(name, set()).add(fid)
            if t is not None:
                self._by_send[t.id] = fid
                self.control.report(t.host, {
                    'ev': 'start', 'task': t.id,
                    'ready': self.workload.ready_at.get(t.id, self.now)})
            dscp, rate = self._mark(fid)
            if dscp is None:           # waits for its class, at most this
                self._waiting[fid] = True
                self.at(self.now + CLASS_WAIT_S, self._class_wait_over, fid)
                dscp, rate = qos.class_dscp(0, self.control.queues), -1.0
            conn.Push(fid, nbytes, int(dscp), float(rate))
            ids.append(fid)
        return np.array(ids, np.int64)

    def cancel(self, which):
        """Stop the transfers in flight ``which`` (a mask over ``a_id``):
        a failed job's. Their connections stop writing; what arrives of
        them later is not reported."""
        ids = self.a_id[np.asarray(which, bool)]
        for fid in ids.tolist():
            key, _, _ = self._active.pop(fid)
            self._cancelled.add(fid)
            self._waiting.pop(fid, None)
            self.conns[key].Abort()
            name = self.coflow_names[self._flow_cof[fid]]
            self._by_coflow.get(name, set()).discard(fid)
            t = self.flow_tag[fid]
            if t is not None:
                self._by_send.pop(t.id, None)
        return ids

    def reroute(self):
        """The routes again over the live links (net.set_down was told):
        every connection with a path takes it, in both directions; one
        left with none keeps its route (its packets lost until a link
        comes back). Returns (connections moved, stranded)."""
        moved = stranded = 0
        for (src, sport, dst, dport) in self.conns:
            old = self.fab.routed(src, dst, sport, dport)
            try:
                new = self.fab.route(src, dst, sport, dport, self.net.live,
                                     self.net.circuits)
            except routing.NoRoute:
                stranded += 1
                continue
            moved += new != old
        demand = self.control.sched.demand
        for c in demand.conns.values():
            try:
                c.path = self.net.path_id(*c.ends)
            except routing.NoRoute:
                pass                  # stranded: the old path stands
        if moved:
            self.control.rerouted()
        return moved, stranded

    # --- applying the controller's outcome --------------------------------
    def _mark(self, fid):
        t = self.flow_tag[fid]
        if t is None:
            return qos.class_dscp(0, self.control.queues), 0.0
        return self.control.dscp_of(t), self.control.rate_of(t)

    def _class_wait_over(self, fid):
        if self._waiting.pop(fid, None) and fid in self._active:
            t = self.flow_tag[fid]
            conn = self.conns[self._active[fid][0]]
            conn.SetRate(fid, float(self.control.rate_of(t)))

    def refresh(self, fid):
        """A transfer's class or rate changed at its sender."""
        if fid not in self._active:
            return
        dscp, rate = self._mark(fid)
        conn = self.conns[self._active[fid][0]]
        if dscp is None:
            return
        self._waiting.pop(fid, None)
        conn.SetDscp(fid, int(dscp))
        conn.SetRate(fid, float(rate))

    def in_flight_of_coflow(self, name, host):
        return {f for f in self._by_coflow.get(name, ())
                if self._flow[f][0] == host}

    def in_flight_of_send(self, sid):
        f = self._by_send.get(sid)
        return {f} if f is not None and f in self._active else set()

    def set_rules(self, rules):
        """Changed class rules at the ingress switches (connection key ->
        DSCP, None: the rule goes)."""
        conns = self.control.sched.demand.conns
        for key, dscp in sorted(rules.items()):
            src, dst, sport, dport = conns[key].ends
            self.fab.set_rule(src, dst, sport, dport, dscp)

    def driver_shifts(self, shifts):
        fn = getattr(self.driver, 'set_shifts', None)
        if fn is not None:
            fn(shifts)

    # --- connections ------------------------------------------------------
    def open(self, plan, seg):
        """The plan's connections, opened at start as the agents open
        theirs: a listener per receiving host, a routed TCP connection
        per plan connection."""
        from ..workload.taskgraph import AGENT_PORT
        core = self.core
        top = qos.class_dscp(0, self.control.queues) << 2
        for c in plan.conns:
            if c.dst not in self.listeners:
                self.listeners[c.dst] = core.MakeListener(
                    self.fab.node[c.dst], AGENT_PORT, top)
            try:
                self.fab.route(c.src, c.dst, c.sport, c.dport,
                               self.net.live, self.net.circuits)
            except ValueError as e:       # the simulator's line, not a
                no_route(self, e)         # traceback
            sink = core.MakeSink()
            self.listeners[c.dst].Register(
                self.fab.ip(c.src), c.sport, sink)
            lowat = max(4 * seg, 32 * 1024)
            conn = core.MakeConn(self.fab.node[c.src], self.fab.ip(c.src),
                                 c.sport, self.fab.ip(c.dst), c.dport, sink,
                                 64 * 1024, lowat)
            self.conns[(c.src, c.sport, c.dst, c.dport)] = conn

    # --- the loop -----------------------------------------------------------
    def run(self, driver, until=None):
        """Run ``driver`` (the plan's, or it beside a hybrid fabric's
        circuit driver: sim.circuits.WithCircuits) to its end or
        ``until``."""
        self.driver = driver
        self.workload = getattr(driver, 'workload', driver)
        settle = getattr(driver, 'settle', None)
        driver.start(self)
        bus = self.core.GetBus()
        bus.stop_on_write = True
        self.background(self.sample_s, self.meter.sample)
        if 'progress' in self.control.wanted:
            self.background(PROGRESS_S, self._progress_report)
        limit = np.inf if until is None else float(until)
        if self.limits is not None:
            limit = min(limit, self.limits.time_s)
        log_path = getattr(self.log, 'path', None)
        # a path looked up mid-run (a job's first coflow over the links
        # up then) that finds no route ends the run as the simulator's
        with route_errors(self):
            self._loop(settle, bus, limit, log_path)
        self.meter.sample(final=True)
        return self.now

    def _loop(self, settle, bus, limit, log_path):
        while True:
            self._fire_timers()
            if settle is not None:
                settle()
            self.control.step()
            if not (self._timed_work() or self._active):
                break
            nxt = self._timers[0][0] if self._timers else np.inf
            target = min(nxt, limit)
            if not np.isfinite(target):
                target = self.now + STALL_S
            if target > limit or self.now >= limit:
                break
            self.now = float(self.core.RunUntil(target))
            self._take(bus)
            self.events += 1
            if self._active and self.now - self._last_delivery > STALL_S:
                raise NetschedError(
                    'ns-3 run stalled at t=%.3f s: %d transfers in flight, '
                    'none received for %g s' % (self.now, len(self._active),
                                                STALL_S))
            if self.progress:
                self.progress(self)
            if self.limit_reached(self.events, log_path):
                break

    def _take(self, bus):
        if bus.written.size():
            ids = [int(x) for x in bus.written]
            bus.written.clear()
            tagged = [i for i in ids if self.flow_tag[i] is not None]
            sent = getattr(self.driver, 'on_flows_sent', None)
            if tagged and sent is not None:
                sent(np.array(tagged, np.int64))
        if bus.received.size():
            ids = [int(x) for x in bus.received]
            bus.received.clear()
            self._last_delivery = self.now
            ids = [i for i in ids if i not in self._cancelled]
            if not ids:
                return
            for i in ids:
                key, _, _ = self._active.pop(i)
                self._waiting.pop(i, None)
                name = self.coflow_names[self._flow_cof[i]]
                s = self._by_coflow.get(name)
                if s is not None:
                    s.discard(i)
                    if not s:
                        del self._by_coflow[name]
                t = self.flow_tag[i]
                if t is not None:
                    self._by_send.pop(t.id, None)
                    self.control.report(t.dst, {'ev': 'recv',
                                                'task': t.id})
            arr = np.array(ids, np.int64)
            self._log_flows(arr)
            self.driver.on_flows_done(arr)

    def _log_flows(self, ids):
        extra = getattr(self.driver, 'flow_fields', None)
        more = extra(ids) if extra else [''] * len(ids)
        head = FLOW_LINE.head(round(float(self.now), 9))
        lines = []
        for i, x in zip(ids.tolist(), more):
            src, dst, size, start = self._flow[i]
            lines.append(FLOW_LINE.line(
                head, i, json.dumps(self.coflow_names[self._flow_cof[i]]),
                src, dst, repr(size), repr(round(start, 9)), x))
        self.log.write_raw(''.join(lines))

    def _progress_report(self):
        """Acknowledged bytes per transfer in flight, per sending host, as
        the agents report them every 10 ms (policies that read bytes
        sent: Aalo, LAS, FIFO-LM)."""
        per_host = {}
        acked = {}
        for fid in self._active:
            t = self.flow_tag[fid]
            if t is None:
                continue
            per_host.setdefault(t.host, {})[str(t.id)] = float(
                self._acked(fid, acked))
        for h, sent in sorted(per_host.items()):
            self.control.report(h, {'ev': 'progress', 't': self.now,
                                    'sent': sent})
        if self.busy():
            self.background(self.now + PROGRESS_S, self._progress_report)


class PortMeter:
    """The fabric's port byte counters, read every ``sample_s`` of the
    engine's time into ``links`` events and the links' peak use."""

    def __init__(self, eng):
        self.eng = eng
        self.links = sorted(eng.fab.dev, key=lambda k: eng.net.index[k])
        self.link_bytes = np.zeros(len(self.links))
        self.peak_util = np.zeros(len(self.links))
        self.last_bytes = None
        self.bin_start = 0.0

    def sample(self, final=False):
        """Link use over the last ``sample_s``: the same ``links`` events
        the emulator's port counters and the simulator's meter give."""
        eng = self.eng
        now_b = np.array(eng.fab.port_bytes(self.links), float)
        last = self.last_bytes if self.last_bytes is not None \
            else np.zeros_like(now_b)
        self.last_bytes = now_b
        b = now_b - last
        self.link_bytes += b
        start = self.bin_start
        dt = eng.now - start if final else eng.sample_s
        if b.any() and dt > 0:
            nz = np.flatnonzero(b)
            net = eng.net
            cap = np.array([net.capacity[net.index[self.links[i]]]
                            for i in nz.tolist()])
            util = b[nz] * 8.0 / (cap * dt)
            self.peak_util[nz] = np.maximum(self.peak_util[nz], util)
            eng.log.write(start, 'links', dt=dt, util={
                net.names[net.index[self.links[i]]]:
                    round(float(u), 6)
                for i, u in zip(nz.tolist(), util.tolist())})
        self.bin_start = eng.now
        if not final and eng.busy():
            eng.background(eng.now + eng.sample_s, self.sample)
