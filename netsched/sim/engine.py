"""The flow-level (fluid) simulator backend's event loop.

Event-driven: between events every active flow runs at a constant rate;
rates are recomputed (:class:`RateSetter`: policy decision, then
:func:`fluid.allocate`) only when the set of flows changes or the policy
asked to decide again. The next event is the earliest of: a flow
finishing at its current rate, a timed workload event (a compute phase
ending, an arrival), the policy's recheck time. At each event the flows
done leave the active set (:class:`FlowTable`, which coalesces
completions), are logged, and the driver hears of them.

A workload driver (``netsched.drive``) starts flows and reacts to their
completion; the engine knows nothing of jobs or traces. With packets
(``fluid.Network.set_packets``: a packet time per busy hop) a flow that
has sent its last byte frees its sender at once (the driver's
``on_flows_sent``) and is received, logged and reported done a few
packet times later, after what its connection sent before. A driver may
also have ``settle()``, called at every event after the timers (before
the rates), and keep timers in the background (:meth:`Engine.background`:
they fire while the run goes on but do not keep it going); a hybrid
fabric's circuit driver (netsched.sim.circuits) uses both, and
:meth:`Engine.reroute` when the circuits change the routes.
"""
import contextlib
import gc
import heapq
import itertools
import json
import os

import numpy as np

from .coflows import CoflowTable
from .flows import FlowTable
from .links import LinkMeter
from .rates import RateSetter
from . import kernels
from .. import routing
from ..errors import NetschedError
from ..events import FLOW_LINE

# sim.runner pauses the garbage collector over a run, so the reference
# cycles a run keeps making (networkx's matching, per circuit decision)
# are collected every this many events, the youngest generation only
GC_EVENTS = 4096
FULL = 0.999          # a link loaded to this share of its capacity is full


class Clock:
    """The timers a workload driver sets (``at``, ``background``) and
    their firing, shared by the engines that drive the plan (this one and
    the ns-3 backend's), and the run's limits (``limits``: a
    workload.bounds.Limits, or None) that :meth:`limit_reached` checks."""

    # the event log's size is read from the file every this many events
    # (a stat call; the log's buffer is a few kB)
    LOG_CHECK_EVENTS = 1024

    def __init__(self):
        self.now = 0.0
        self._timers = []
        self._background = 0             # of them, background timers
        self._seq = itertools.count()
        self.limits = None
        self.stopped = None              # why a limit stopped the run

    def limit_reached(self, events, log_path=None):
        """Whether a limit is reached after ``events`` events, with
        the reason in ``stopped`` (a run that hits one ends there and
        says so in a ``run_incomplete`` event)."""
        lim = self.limits
        if lim is None:
            return False
        if self.now > lim.time_s:
            self.stopped = 'simulated time %.6g s reached %s' % (
                self.now, lim.time_text())
        elif events >= lim.events:
            self.stopped = '%d events reached %s' % (events,
                                                     lim.events_text())
        elif log_path is not None and events % self.LOG_CHECK_EVENTS == 0:
            try:
                size = os.stat(log_path).st_size
            except OSError:
                return False
            if size >= lim.log_bytes:
                self.stopped = 'the event log (%d MB) reached %s' % (
                    size >> 20, lim.log_text())
        return self.stopped is not None

    def at(self, t, fn, *args):
        """Call ``fn(*args)`` at time ``t`` (s), or now if that is past."""
        heapq.heappush(self._timers, (max(t, self.now), next(self._seq), fn,
                                      args, False))

    def background(self, t, fn, *args):
        """Like :meth:`at`, but the timer does not keep the run going:
        once no flow is active and only background timers are left, the
        run ends (a periodic task beside the workload)."""
        self._background += 1
        heapq.heappush(self._timers, (max(t, self.now), next(self._seq), fn,
                                      args, True))

    def _timed_work(self):
        """Timers that keep the run going are left."""
        return len(self._timers) > self._background

    def _fire_timers(self):
        while self._timers and self._timers[0][0] <= self.now:
            _, _, fn, args, bg = heapq.heappop(self._timers)
            self._background -= bg
            fn(*args)


def no_route(eng, e):
    """A flow the router finds no path for (routing.NoRoute ``e``:
    links down leave no valley-free path; workload.faults refuses fault
    sets that strand a job's or a trace's pairs, so this is traffic the
    checks did not foresee) ends the run with a line that says so and
    when, not a traceback; any other ValueError is a bug and goes on.
    The ns-3 engine ends its runs with the same line."""
    if not isinstance(e, routing.NoRoute):
        raise e
    down = sorted(getattr(eng.net, 'down', ()) or ())
    raise NetschedError('at t=%.6f s: %s with %s down: no route'
                        % (eng.now, e, ', '.join(down) or 'no link'))


@contextlib.contextmanager
def route_errors(eng):
    """:func:`no_route` around a block."""
    try:
        yield
    except ValueError as e:
        no_route(eng, e)


class Engine(Clock):
    """Runs one workload driver over one network under one policy: the
    timers, the loop from event to event, link sampling and the flow log.
    The flows are in ``table``, the rate step in ``rates``."""

    def __init__(self, net, policy, log, queues=8, resolution_s=1e-6,
                 rel_tol=1e-3, sample_s=0.1, progress=None, class_map=None,
                 release_floor=False):
        super().__init__()
        self.net, self.policy, self.log = net, policy, log
        self.resolution_s = resolution_s
        self.progress = progress
        self.events = 0
        self._delivered = {}             # connection -> its last delivery
        self._reprs = ({}, {})           # the flow log's texts of floats
        self._quoted = []                # per coflow index, its name, JSON
        self._flow_text = None           # the compiled flow lines
        self.coflows = CoflowTable()
        self.table = FlowTable(net, self.coflows, rel_tol, resolution_s)
        self.rates = RateSetter(net, policy, self.table, queues, class_map,
                                release_floor)
        self.links = LinkMeter(net, log, sample_s)

    # --- what drivers and the runner read ----------------------------------
    flows = property(lambda self: self.table.record,
                     doc='Columns of every flow started (path, coflow, ...)')
    flow_tag = property(lambda self: self.table.tags,
                        doc="The driver's object per flow id")
    a_id = property(lambda self: self.table.a_id,
                    doc='Ids of the active flows')
    coflow_names = property(lambda self: self.coflows.names,
                            doc='Coflow name per engine coflow index')
    decisions = property(lambda self: self.rates.decisions)
    allocations = property(lambda self: self.rates.allocations)

    # --- what drivers call (at, background: Clock) -------------------------
    def reroute(self):
        """The network's routes changed (``net.set_circuits``): every
        active flow takes its path anew, and where one moved the policy
        decides again over the new paths (as when flows start)."""
        with route_errors(self):
            moved = self.table.reroute()
        if moved:
            self.rates.flows_started()

    def cancel(self, which):
        """Stop the active flows ``which`` (a boolean mask over
        ``a_id``) without logging them done: a failed job's. The policy
        decides again over what is left."""
        ids = self.table.cancel(which)
        if len(ids):
            self.rates.flows_started()
        return ids

    def busy(self):
        """Work is left: active flows, or timers that keep the run going
        (a run stopped by ``until`` with work left did not finish)."""
        return bool(len(self.table.a_id)) or \
            len(self._timers) > self._background

    def coflow(self, name, arrival, job=None):
        """The index of coflow ``name``; registered on first use."""
        return self.coflows.index(name, arrival, job)

    def add_flows(self, src, dst, size, coflow, tags=None, sport=None,
                  dport=None):
        """Start flows now. src/dst: host names; size: bytes; coflow: one
        coflow index or one per flow. Returns their ids."""
        # not route_errors: a plan starts its sends one by one, and a
        # context manager would cost more than the table's start
        try:
            ids = self.table.start(src, dst, size, coflow, self.now,
                                   tags=tags, sport=sport, dport=dport)
        except ValueError as e:
            no_route(self, e)
        if len(ids):
            self.rates.flows_started()
        return ids

    def add_send(self, src, dst, size, coflow, tag, sport, dport):
        """:meth:`add_flows` of one flow (a plan's send: one coflow
        index, its tag, its ports), its id not returned."""
        try:
            self.table.start_send(src, dst, size, coflow, self.now, tag,
                                  sport, dport)
        except ValueError as e:
            no_route(self, e)
        self.rates.flows_started()

    # --- the loop -----------------------------------------------------------
    def run(self, driver, until=None):
        """Run ``driver`` to its end or ``until`` (s); returns the time
        it ended. A flow that finds no route anywhere in the run (a
        policy's view of a send not yet started too) ends it with a
        line that names it (:func:`route_errors`)."""
        with route_errors(self):
            return self._run(driver, until)

    def _run(self, driver, until):
        self.driver = driver
        driver.start(self)
        view = getattr(driver, 'view', None)
        self.rates.on_shifts = getattr(driver, 'set_shifts', None)
        self.rates.on_classes = lambda t, ch: self.log.write(
            t, 'classes', classes=ch)
        settle = getattr(driver, 'settle', None)
        if self.limits is not None:
            until = min(until if until is not None else np.inf,
                        self.limits.time_s)
        log_path = getattr(self.log, 'path', None)
        while True:
            self._fire_timers()
            if settle is not None:
                settle()
            self.rates.update(self.now, view)
            nxt = self._next_event_s()
            if not np.isfinite(nxt) or (until is not None and nxt > until):
                lim = self.limits
                if np.isfinite(nxt) and lim is not None and \
                        not lim.time_given and until >= lim.time_s:
                    self.stopped = 'the next event at %.6g s is past %s' % (
                        nxt, lim.time_text())
                break
            self._advance(nxt)
            self._finish_flows()
            self.events += 1
            if not self.events % GC_EVENTS and not gc.isenabled():
                gc.collect(0)
            if self.progress:
                self.progress(self)
            if self.limit_reached(self.events, log_path):
                break
        self.links.close(self.now)
        return self.now

    def release(self):
        """Drop what ties the engine to its driver (the driver, its
        timers, the rate setter's callbacks) once the run is over: the
        driver refers to the engine, so with these kept the whole run
        (a plan's every task) could be freed only by the garbage
        collector, not as soon as the last reference goes."""
        self.driver = None
        self._timers.clear()
        self._background = 0
        self.rates.on_shifts = self.rates.on_classes = None

    def _next_event_s(self):
        """When the next event is (s; inf when there is none)."""
        keep = len(self._timers) > self._background or len(self.table.a_id)
        nxt = self._timers[0][0] if self._timers and keep else np.inf
        if self.rates.recheck_s is not None and not self.rates.held:
            nxt = min(nxt, self.rates.recheck_s)
        fin = self.rates.first_finish_s()
        if fin is not None:
            nxt = min(nxt, self.now + fin + self.resolution_s * 0.5)
        elif len(self.table.a_id) and not np.isfinite(nxt):
            raise NetschedError('simulation stalled at t=%.6f s: %d '
                                'flows have no rate' % (self.now,
                                                        len(self.table.a_id)))
        return nxt

    def _advance(self, t):
        dt = t - self.now
        if dt <= 0:
            return
        self.table.send(dt, t)
        self.links.advance(self.rates.load_bps, self.now, t)
        self.now = t

    def _finish_flows(self):
        packets = self.net.packet_bytes is not None
        if packets:                  # flows per link, before any leaves
            t = self.net.table()[self.table.a_path]
            busy = np.bincount(t[t >= 0], minlength=len(self.net.capacity))
        ids, coflow_ended = self.table.finish(self.now)
        if not len(ids):
            return
        self.rates.flows_finished(coflow_ended)
        if not packets:
            self._deliver(ids)
            return
        # store and forward (fluid.Network.set_packets): the flows have
        # left their senders, which may send the next thing on their
        # connections, and are received a few packet times later: one
        # per busy hop, one that carries other flows (whatever their
        # rate: a flow strict priority starves still has a packet in the
        # link's queue now and then, as on the emulator) or that the flow
        # fills after such a hop
        sent = getattr(self.driver, 'on_flows_sent', None)
        if sent is not None:
            sent(ids)
        f = self.table.record
        paths = f['path'][ids]
        links = self.net.table()[paths]
        # a hop is busy where it carries other flows, or where the flow
        # fills it after a hop that carries others: packets that waited
        # behind another flow's reach the next hops bunched and queue
        # there (measured on the emulator's fat-tree: a packet time per
        # such hop), while a flow alone on an idle path gets no lag (a
        # probe trace, docs/emulation.md)
        hop = np.maximum(links, 0)
        full = self.rates.load_bps >= FULL * self.net.capacity
        shared = np.where(links >= 0, busy[hop] - 1, 0)
        filled = np.where(links >= 0, full[hop], False)
        after = np.cumsum(shared > 0, axis=1) > 0
        others = shared + (filled & after)
        lag = self.net.delivery_s(paths, f['size'][ids], others)
        # a connection delivers in order: not before what it sent earlier
        due = self.now + lag
        for k, conn in enumerate(zip(
                f['src'][ids].tolist(), f['dst'][ids].tolist(),
                f['sport'][ids].tolist(), f['dport'][ids].tolist())):
            due[k] = max(due[k], self._delivered.get(conn, 0.0))
            self._delivered[conn] = due[k]
        due = np.round(due, 9)
        for d in np.unique(due).tolist():
            group = ids[due == d]
            if d <= self.now:
                self._deliver(group)
            else:
                self.at(d, self._deliver, group)

    def _deliver(self, ids):
        """Flows received: logged, and the driver hears of them."""
        self._log_flows(ids)
        self.driver.on_flows_done(ids)

    def _log_flows(self, ids):
        f = self.table.record
        hosts = self.net.hosts
        t = round(float(self.now), 9)
        head = FLOW_LINE.head(t)
        quoted = self._quoted
        # a name is the user's: JSON-quoted (a str as json.dumps quotes
        # it, without setting up its encoder per name)
        quote = json.encoder.encode_basestring_ascii
        quoted.extend(quote(n) if type(n) is str else json.dumps(n)
                      for n in self.coflows.names[len(quoted):])
        extra = getattr(self.driver, 'flow_fields', None)
        more = extra(ids) if extra else None
        # a plan's sends without an urgency (collectives) add nothing:
        # their lines are the compiled ones too
        if more is None or not any(more):
            if self._flow_text is None:     # compiled, hosts ASCII
                self._flow_text = all(h.isascii() for h in hosts) and \
                    kernels.FlowText(hosts)
            text = self._flow_text and self._flow_text.lines(
                head, ids, f['coflow'][ids], f['src'][ids], f['dst'][ids],
                f['size'][ids], f['start'][ids], quoted)
            if text:
                self.log.write_raw(text)
                return
        if more is None:
            more = [''] * len(ids)
        # the floats' texts are kept (a trace's flows share sizes and
        # start times; repr is the costly part of a line); zeros and NaNs
        # are not (0.0 and -0.0 are one key, NaN is none)
        reprs, starts = self._reprs
        if len(reprs) + len(starts) > 1 << 16:
            reprs.clear()
            starts.clear()
        fmt = '%s' + FLOW_LINE.BODY       # head, then the flow's
        lines = []
        for i, c, s, d, b, st, x in zip(
                ids.tolist(), f['coflow'][ids].tolist(),
                f['src'][ids].tolist(), f['dst'][ids].tolist(),
                f['size'][ids].tolist(), f['start'][ids].tolist(), more):
            rb = reprs.get(b)
            if rb is None:
                rb = repr(b)
                if b > 0:
                    reprs[b] = rb
            rs = starts.get(st)
            if rs is None:
                rs = repr(round(st, 9))
                if st > 0:
                    starts[st] = rs
            lines.append(fmt % (head, i, quoted[c], hosts[s], hosts[d], rb,
                                rs, x))
        self.log.write_raw(''.join(lines))
