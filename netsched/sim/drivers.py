"""Workload drivers for the simulator: they start flows on the engine at
the right moments and react to flows finishing; the plan driver also
tells the policy what it knows of the jobs (``view``)."""
import dataclasses
import random

import numpy as np

from ..events import FLOW_LINE
from ..policies import JobView
from ..host.compute import ComputeSpans
from ..host.shifts import gate


class TraceDriver:
    """Releases every coflow of a trace at its arrival time (the
    conventional reading), rack i on host ``racks[i]``
    (workload.trace.rack_hosts). Its network flows are those
    ``trace.network_flows`` gives, with the emulator's ports (the k-th of
    the trace on source port TRACE_SPORT + k, to the agents' port), so
    that ECMP puts them on the same paths on both backends."""

    def __init__(self, coflows, racks, big_switch=False):
        from ..workload import trace
        self.coflows = coflows
        self.racks = racks
        self.big_switch = big_switch
        self.left = {}
        self.first = {}
        k = 0
        for c in coflows:
            self.first[c.id] = k
            k += len(trace.network_flows(c, racks, big_switch)[2])

    def start(self, eng):
        self.eng = eng
        for c in self.coflows:
            eng.at(c.arrival_s, self._arrive, c)

    def _arrive(self, c):
        from ..workload import trace
        from ..workload.taskgraph import AGENT_PORT
        eng = self.eng
        idx = eng.coflow(c.id, eng.now)
        src, dst, size = trace.network_flows(c, self.racks, self.big_switch)
        # bytes: what crosses the network (the emulator's plan says the
        # same, workload.taskgraph); a coflow with none ends as it arrives
        eng.log.write(eng.now, 'coflow', coflow=c.id, bytes=float(size.sum()),
                      width=len(c.mappers) * len(c.reducers))
        if len(size) == 0:
            eng.log.write(eng.now, 'coflow_end', coflow=c.id)
            return
        self.left[idx] = len(size)
        k = self.first[c.id] + np.arange(len(size))
        sport = (trace.TRACE_SPORT + k % trace.TRACE_PORTS).tolist()
        eng.add_flows(list(src), list(dst), size, idx, sport=sport,
                      dport=[AGENT_PORT] * len(size))

    def on_flows_done(self, ids):
        eng = self.eng
        # per coflow, ascending (np.unique's order), by counting
        count = np.bincount(eng.flows['coflow'][ids])
        which = np.flatnonzero(count)
        for c, n in zip(which.tolist(), count[which].tolist()):
            self.left[c] -= n
            if self.left[c] == 0:
                del self.left[c]
                eng.log.write(eng.now, 'coflow_end',
                              coflow=eng.coflow_names[c])


def _per_send(tasks, what):
    """(n,) a per-send attribute of tasks (None: not a plan task), NaN
    where unknown."""
    return np.array([np.nan if t is None or getattr(t, what) is None
                     else getattr(t, what) for t in tasks], float)


def _next_send(q):
    """Which of a connection's waiting sends goes next: the lowest
    ``order`` key (a job that sends front layers first), else the first
    ready; the emulator's agents pick the same (host.transport)."""
    best = 0
    for i, t in enumerate(q):
        if t.order is not None and (q[best].order is None
                                    or t.order < q[best].order):
            best = i
    return best


class PlanDriver:
    """Executes a workload task graph (netsched.workload) on the engine:
    compute phases are timers, sends are flows queued per connection,
    marks and barriers are logged. What the policy sees of the plan is
    its :class:`PlanView`, the policy's time shifts its
    :class:`TimeGrid`, the hosts' own gradient senders its
    :class:`HostSenders`."""

    def __init__(self, plan, send_jitter_s=0.0, seed=0):
        self.plan = plan
        # a measuring knob (benchmarks/sensitivity_bench.py): each send
        # starts a uniform draw in [0, send_jitter_s] after its
        # connection takes it, the connection busy meanwhile: timing
        # noise of the emulator's order, not a model of its agents
        # (they write a connection's queued sends back to back)
        self.send_jitter_s = float(send_jitter_s)
        self.rng = random.Random(seed)
        tasks = plan.tasks
        self.pending = pending = [0] * len(tasks)
        self.dependents = dependents = [[] for _ in tasks]
        # connections with a send that has an order key: elsewhere the
        # next send is the first ready, found without scanning the queue
        # (a parameter server's connection queues a whole model)
        self.ordered = ordered = set()
        self.coflow_left = coflow_left = {}
        self.milestones = Milestones(self, plan)
        marks_left = self.milestones.marks_left
        # whether any send has an urgency (flow_fields adds to its line)
        self.urgent = False
        # one pass over a plan's (hundreds of thousands of) tasks
        for i, t in enumerate(tasks):
            if t.deps:
                pending[i] = len(t.deps)
                for d in t.deps:
                    dependents[d].append(t.id)
            kind = t.kind
            if kind == 'send':
                coflow_left[t.coflow] = coflow_left.get(t.coflow, 0) + 1
                if t.order is not None:
                    ordered.add(t.conn)
                if t.urgency is not None:
                    self.urgent = True
            elif kind == 'mark':
                key = (t.job, t.iter)
                marks_left[key] = marks_left.get(key, 0) + 1
        # per connection (ids are list indices): its waiting sends, and
        # whether a send of it is under way (none waits on an idle one)
        self.conn_queue = [[] for _ in plan.conns]
        self.conn_busy = [False] * len(plan.conns)
        self.started_jobs = set()
        self.seen = PlanView(self)
        self.open_coflows = set()
        self.ready_at = {}              # send -> when it became ready
        self.senders = HostSenders(self, tasks)
        self.grid = TimeGrid()
        self.done = 0
        self.sent_early = set()         # flows sent, not yet received
        self.failed = set()             # jobs whose agent was killed
        self.finished = set()           # tasks done
        # the engine's index of each coflow opened (a lookup per send)
        self.coflow_index = {}

    def start(self, eng):
        self.eng = eng
        # one flow at a time without lists, where the engine can (the
        # ns-3 backend's takes add_flows)
        self._add_send = getattr(eng, 'add_send', None)
        for t in self.plan.tasks:
            if not t.deps:
                eng.at(t.not_before, self._ready, t)
        for st in self.plan.stages:
            if st.index == 0:
                arrival = min(self.plan.jobs[j].arrival_s for j in st.jobs)
                eng.at(arrival, self.milestones.stage_start, st)

    def _ready(self, t):
        failed = self.failed
        if failed and t.job in failed:
            return
        eng = self.eng
        now = eng.now
        if t.not_before > now:
            eng.at(t.not_before, self._ready, t)
            return
        kind = t.kind
        if kind == 'send':
            self.ready_at[t.id] = now
            if t.coflow not in self.open_coflows:
                self._open(t)
            if t.prophet is not None:
                self.senders.event(t.job, t.host, 'ready', t)
            else:
                self.enqueue(t)
        elif kind == 'compute':
            if t.job not in self.started_jobs:
                self.started_jobs.add(t.job)
                # workers: the iter events that end each of its iterations
                eng.log.write(now, 'job_start', job=t.job,
                              workers=self.milestones.marks_left.get(
                                  (t.job, 0), 0))
            start = self.grid.start(eng, t) if self.grid.shifts else now
            dur = t.dur
            if dur > 0:
                self.milestones.span(t, start)
            if dur > 0 or start > eng.now:
                eng.at(start + dur, self._done, t)
            else:
                self._done(t)
        else:
            self._done(t)

    def _open(self, t):
        """A send's coflow opens: registered with the engine, logged,
        and its job enters the policy's view with its first."""
        eng = self.eng
        self.open_coflows.add(t.coflow)
        self.coflow_index[t.coflow] = eng.coflow(t.coflow, eng.now, t.job)
        eng.log.write(eng.now, 'coflow', coflow=t.coflow, job=t.job,
                      iter=t.iter, bytes=self.plan.coflow_bytes[t.coflow])
        if t.job is not None and t.iter == 0:
            self.seen.arrives(t.job)

    def set_shifts(self, shifts):
        """The policy's time shifts (Decision.job_shift): see
        :meth:`TimeGrid.set`."""
        self.grid.set(self.eng, shifts)

    def enqueue(self, t):
        conn = t.conn
        if self.conn_busy[conn]:
            self.conn_queue[conn].append(t)
        elif t.prophet is None and not self.send_jitter_s > 0:
            # an idle connection's queue is empty: it takes t at once,
            # as _send_next would
            self.conn_busy[conn] = True
            self._start_send(t)
        else:
            self.conn_queue[conn].append(t)
            self._send_next(conn)

    def _send_next(self, conn):
        q = self.conn_queue[conn]
        if not q:
            self.conn_busy[conn] = False
            return
        t = q.pop(_next_send(q) if conn in self.ordered else 0)
        if t.prophet is not None:
            self.senders.sent_at[t.id] = self.eng.now
        self.conn_busy[conn] = True
        if self.send_jitter_s > 0:
            self.eng.at(self.eng.now + self.rng.uniform(
                0.0, self.send_jitter_s), self._start_send, t)
        else:
            self._start_send(t)

    def _start_send(self, t):
        del self.seen.unstarted[t.coflow][t.id]
        c = self.plan.conns[t.conn]
        eng = self.eng
        cof = self.coflow_index.get(t.coflow)
        if cof is None:
            cof = eng.coflow(t.coflow, eng.now, t.job)
        if self._add_send is not None:
            self._add_send(t.host, t.dst, t.bytes, cof, t, c.sport, c.dport)
        else:
            eng.add_flows([t.host], [t.dst], [t.bytes], cof, tags=[t],
                          sport=[c.sport], dport=[c.dport])

    def view(self, coflows, active, clairvoyant):
        """What the policy sees beyond the flows: :meth:`PlanView.view`."""
        return self.seen.view(coflows, active, clairvoyant)

    def flow_fields(self, ids):
        """The flow events' fields beyond the engine's, per flow: a
        model data send's ready time and urgency (as the emulator logs
        them)."""
        if not self.urgent:
            return [''] * len(ids)
        tags = self.eng.flow_tag
        out = []
        for i in ids.tolist():
            t = tags[i]
            if t is None or t.urgency is None:
                out.append('')
            else:
                out.append(FLOW_LINE.extra(
                    round(float(self.ready_at.pop(t.id)), 9), t.urgency))
        return out

    def on_flows_sent(self, ids):
        """The flows have left their senders (store and forward: they
        are received later): their connections send what is next, and
        a Prophet sender counts them done (as the emulator's agents do
        when a send is written)."""
        for i in ids.tolist():
            self.sent_early.add(i)
            self._sent(self.eng.flow_tag[i])

    def on_flows_done(self, ids):
        tags, early = self.eng.flow_tag, self.sent_early
        queue, busy = self.conn_queue, self.conn_busy
        for i in ids.tolist():
            t = tags[i]
            if i in early:
                early.discard(i)
            elif t.prophet is None and not queue[t.conn]:
                busy[t.conn] = False        # _sent: nothing waits
            else:
                self._sent(t)
            self._done(t)

    def _sent(self, t):
        if t.prophet is not None:
            self.senders.event(t.job, t.host, 'done', t)
        self._send_next(t.conn)

    def fail_host(self, host, reason):
        """The agent on ``host`` was killed: every job with a task there
        or a send to it fails (``job_failed``, with ``reason``), its
        flows stop, its queued sends are dropped and its tasks go no
        further; a tuning stage's barrier no longer waits for it. The
        other jobs run on, as on the emulator."""
        eng = self.eng
        hit = sorted({t.job for t in self.plan.tasks if t.job is not None
                      and (t.host == host or (t.kind == 'send'
                                              and t.dst == host))}
                     - self.failed - self.milestones.ended)
        if not hit:
            return
        self.failed.update(hit)
        for j in hit:
            eng.log.write(eng.now, 'job_failed', job=j, reason=reason)
            self.seen.jobs.pop(j, None)
        tags = eng.flow_tag
        eng.cancel(np.array([tags[i] is not None and tags[i].job in hit
                             for i in eng.a_id.tolist()], bool))
        for q in self.conn_queue:
            q[:] = [t for t in q if t.job not in self.failed]
        # out of the policy's view
        for sends in self.seen.unstarted.values():
            for tid in [i for i, t in sends.items() if t.job in hit]:
                del sends[tid]
        busy = {tags[i].conn for i in eng.a_id.tolist()
                if tags[i] is not None}
        for conn in range(len(self.conn_queue)):
            if self.conn_busy[conn] and conn not in busy:
                self._send_next(conn)
        for b, st in self.milestones.stage_of.items():
            gone = [d for d in self.plan.tasks[b].deps
                    if self.plan.tasks[d].job in hit
                    and d not in self.finished]
            if gone:
                self.pending[b] -= len(gone)
                if self.pending[b] == 0:
                    self._ready(self.plan.tasks[b])

    def _done(self, t):
        failed = self.failed
        if failed and t.job in failed:
            return
        tid = t.id
        self.finished.add(tid)
        self.done += 1
        if tid in self.senders.anchors:
            self.senders.anchor_at[tid] = self.eng.now
        kind = t.kind
        if kind == 'send':
            left = self.coflow_left
            n = left[t.coflow] - 1
            left[t.coflow] = n
            if n == 0:
                self.eng.log.write(self.eng.now, 'coflow_end',
                                   coflow=t.coflow)
                self.seen.coflow_ended(t)
        elif kind != 'compute':
            self.milestones.done(t)
        deps = self.dependents[tid]
        if deps:
            pending, tasks = self.pending, self.plan.tasks
            for d in deps:
                n = pending[d] - 1
                pending[d] = n
                if n == 0:
                    self._ready(tasks[d])


class Milestones:
    """What the plan driver logs of a plan beyond its flows and coflows:
    each host's compute spans (an iteration's go with its mark), the
    iteration marks (an ``iter`` event each, ``job_end`` after a job's
    last), the tuning stages' starts and ends."""

    def __init__(self, driver, plan):
        self.driver, self.plan = driver, plan
        self.marks_left = {}            # (job, iteration) -> marks to come
        self.ended = set()              # jobs that finished
        self.compute = {}               # host -> its ComputeSpans
        self.stage_of = {st.barrier: st for st in plan.stages}
        self.next_stage = {(st.group, st.index): st for st in plan.stages}

    def span(self, t, start):
        """Compute task ``t`` runs from ``start`` for its duration."""
        spans = self.compute.get(t.host)
        if spans is None:
            spans = self.compute[t.host] = ComputeSpans()
        spans.add((t.job, t.iter), start, start + t.dur)

    def stage_start(self, st):
        eng = self.driver.eng
        eng.log.write(eng.now, 'stage_start', stage=st.id, group=st.group,
                      jobs=list(st.jobs))

    def done(self, t):
        """A mark or a barrier done: logged (an iteration's end, a
        job's, a stage's) and the next stage started."""
        eng = self.driver.eng
        if t.kind == 'mark':
            jp = self.plan.jobs[t.job]
            spans = self.compute.get(t.host)
            eng.log.write(eng.now, 'iter', job=t.job, worker=t.worker,
                          iter=t.iter, loss=t.loss, host=t.host,
                          compute=spans and spans.pop((t.job, t.iter)))
            self.driver.seen.marked(t)
            key = (t.job, t.iter)
            self.marks_left[key] -= 1
            if self.marks_left[key] == 0 and t.iter == jp.iterations - 1:
                eng.log.write(eng.now, 'job_end', job=t.job)
                self.ended.add(t.job)
        elif t.kind == 'barrier':
            st = self.stage_of[t.id]
            eng.log.write(eng.now, 'stage_end', stage=st.id, group=st.group,
                          survivors=list(st.survivors))
            nxt = self.next_stage.get((st.group, st.index + 1))
            if nxt is not None:
                self.stage_start(nxt)


class PlanView:
    """What the policy sees of a plan beyond the flows (``view``, read
    by sim.rates.snapshot): each job from its first coflow's arrival to
    its last planned coflow's end, the active sends' urgency, and the
    sends not yet started (for clairvoyant policies and the circuit
    scheduler's demand)."""

    def __init__(self, driver):
        self.driver = driver
        self.plan = plan = driver.plan
        self.jobs = {}                  # job -> JobView, while it runs
        self.unstarted = {}             # coflow -> its sends not yet flows
        self.conn_path = {}             # connection -> path id
        self.first_sends = {}           # job -> its first iteration's
        # job -> the coflows of its last planned iteration not yet ended
        # (a collective job has many; the last one takes it out of view)
        self.last_coflows = {}
        last_iter = {j: jp.iterations - 1 for j, jp in plan.jobs.items()}
        unstarted, first, last = (self.unstarted, self.first_sends,
                                  self.last_coflows)
        for t in plan.tasks:
            if t.kind != 'send':
                continue
            u = unstarted.get(t.coflow)
            if u is None:
                u = unstarted[t.coflow] = {}
            u[t.id] = t
            # (no list or set made per send for setdefault to drop)
            if t.iter == 0:
                f = first.get(t.job)
                if f is None:
                    f = first[t.job] = []
                f.append(t)
            if t.job is not None and t.iter == last_iter[t.job]:
                c = last.get(t.job)
                if c is None:
                    c = last[t.job] = set()
                c.add(t.coflow)

    def path(self, t):
        """A send's path id (its connection's, cached)."""
        p = self.conn_path.get(t.conn)
        if p is None:
            k = self.plan.conns[t.conn]
            p = self.conn_path[t.conn] = self.driver.eng.net.path_id(
                t.host, t.dst, k.sport, k.dport)
        return p

    def arrives(self, job):
        """A job is in the policy's view from its first coflow's arrival
        until its last planned coflow ends (as the controller sees it):
        once, at the first of its first iteration's coflows (a collective
        job has many)."""
        if job in self.jobs:
            return
        jp = self.plan.jobs[job]
        first = self.first_sends.get(job, [])
        eng = self.driver.eng
        load = eng.net.link_bytes([self.path(t) for t in first],
                                  [t.bytes for t in first])
        self.jobs[job] = JobView(
            job, float(eng.now), jp.iterations,
            bytes_per_iteration=float(jp.bytes_per_iteration),
            iteration_load=load, group=jp.group,
            stage_ends=tuple(jp.stage_ends), compute_s=jp.compute_s,
            first_send_s=jp.first_send_s, pattern=jp.pattern)

    def marked(self, t):
        """An iteration mark (any worker's): the job's progress and its
        loss then, as its log reports them."""
        v = self.jobs.get(t.job)
        if v is None or t.iter + 1 <= v.done:
            return
        done, now = t.iter + 1, float(self.driver.eng.now)
        self.jobs[t.job] = dataclasses.replace(
            v, done=done, losses=v.losses + ((done, t.loss, now),))

    def view(self, coflows, active, clairvoyant):
        """What the policy sees beyond the flows (sim.rates.snapshot): the
        jobs, the active flows' urgency and, for clairvoyant policies,
        the sends of these coflows (engine indices) not yet started."""
        eng = self.driver.eng
        tags = eng.flow_tag
        act = [tags[i] for i in active.tolist()]
        out = {'jobs': dict(self.jobs),
               'flow_urgency': _per_send(act, 'urgency'),
               'flow_position': _per_send(act, 'position')}
        if not clairvoyant:
            return out
        path, cof, size, pend = [], [], [], []
        for c in coflows.tolist():
            for t in self.unstarted.get(eng.coflow_names[c], {}).values():
                path.append(self.path(t))
                cof.append(c)
                size.append(float(t.bytes))
                pend.append(t)
        out.update(pending_path=np.array(path, np.int64),
                   pending_coflow=np.array(cof, np.int64),
                   pending_bytes=np.array(size, float),
                   pending_urgency=_per_send(pend, 'urgency'),
                   pending_position=_per_send(pend, 'position'))
        return out

    def coflow_ended(self, t):
        """A send's coflow has ended: its job leaves the view with its
        last planned coflow."""
        last = self.last_coflows.get(t.job)
        if last is not None and t.coflow in last:
            last.discard(t.coflow)
            if not last:
                self.jobs.pop(t.job, None)


class TimeGrid:
    """Where the policy shifts jobs in time (Decision.job_shift), the
    iterations of those jobs start on their grid (host.shifts.gate), as
    the emulator's agents start them."""

    def __init__(self):
        self.shifts = {}                # job -> (shift, period, tol, max wait)
        self.aligned = set()            # (job, worker) started on its grid

    def set(self, eng, shifts):
        """The policy's time shifts ({job: (shift, period, tolerance,
        max_wait)}), logged where they change."""
        shifts = {j: tuple(float(x) for x in v) for j, v in shifts.items()}
        if shifts != self.shifts:
            self.aligned = {(j, w) for j, w in self.aligned
                            if shifts.get(j) == self.shifts.get(j)}
            self.shifts = shifts
            eng.log.write(eng.now, 'shifts', shifts={
                j: list(v) for j, v in sorted(shifts.items())})

    def start(self, eng, t):
        """When a compute task starts: now, unless it begins an
        iteration (a worker's first forward layer) of a job the policy
        shifts in time; then on the job's grid (logged: a 'gate' event
        with the wait and the drift)."""
        if t.label != 'F0' or t.job not in self.shifts:
            return eng.now
        first = (t.job, t.worker) not in self.aligned
        self.aligned.add((t.job, t.worker))
        start, drift = gate(eng.now, *self.shifts[t.job], first=first)
        eng.log.write(eng.now, 'gate', job=t.job, worker=t.worker,
                      iter=t.iter, start=round(start, 9),
                      drift=round(drift, 9))
        return start


class HostSenders:
    """The host senders of a plan's jobs that order their own gradient
    sends (a send's ``prophet`` field: Prophet's or the ByteScheduler-like
    one, host.prophet.Sender), one per (job, host), as the emulator's
    agents run them: they take what happens at an instant in one batch
    and release sends into the driver's connection queues."""

    def __init__(self, driver, tasks):
        self.driver = driver
        self.senders = {}
        # the tasks whose end begins a backward pass, when they ended,
        # when a gradient send started, the wake-ups asked for
        self.anchors = {t.prophet['anchor'] for t in tasks
                        if t.kind == 'send' and t.prophet}
        self.anchor_at = {}
        self.sent_at = {}
        self.wakes = set()
        # per sender, what happened at this instant and is not yet
        # handed over: (ready Sends, (id, start, end) of sends done)
        self.batch = {}

    def event(self, job, host, what, t=None, wake_at=None):
        """An event for the host sender of ``job`` on ``host``
        (host.prophet.Sender: Prophet's or the ByteScheduler-like
        one, as the send's ``prophet`` field asks; the emulator's agents
        run the same):
        a gradient send ready (``t``), one done (``t``), or a wake-up it
        asked for. It joins the sender's batch for this instant, handed
        over by :meth:`flush`."""
        from ..host import prophet
        eng = self.driver.eng
        key = (job, host)
        if key not in self.senders:
            self.senders[key] = prophet.sender_for(t.prophet)
        b = self.batch.get(key)
        if b is None:
            if not self.batch:
                # runs after the rest of this instant: the engine ends
                # flows before it fires timers, and a timer due now was
                # set before this one (nothing sets one for the instant
                # it is in)
                eng.at(eng.now, self.flush)
            b = self.batch[key] = ([], [])
        if what == 'ready':
            b[0].append(prophet.Send.of(
                lambda k: getattr(t, k), eng.now,
                self.anchor_at[t.prophet['anchor']], t))
        elif what == 'done':
            b[1].append((t.id, self.sent_at.pop(t.id), eng.now))
        else:
            self.wakes.discard((key, wake_at))

    def flush(self):
        """Each sender takes in its instant's events at once (a
        gradient's partitions ready together go in its order, not one
        by one as they were handed over); what it releases joins its
        connection's queue."""
        eng, driver = self.driver.eng, self.driver
        batch, self.batch = self.batch, {}
        for key, (ready, done) in batch.items():
            if key[0] in driver.failed:
                continue
            s = self.senders[key]
            for x in s.update(eng.now, ready, done):
                driver.enqueue(x.task)
            w = s.next_wake()
            if w is not None and (key, w) not in self.wakes:
                self.wakes.add((key, w))
                eng.at(w, self.event, key[0], key[1], 'wake', None, w)


class Together:
    """Several drivers on one engine (a trace next to DL jobs): flows
    tagged with a plan task go to the plan driver, the rest to the
    trace driver."""

    def __init__(self, trace, plan):
        self.trace, self.plan = trace, plan

    def start(self, eng):
        self.eng = eng
        self.trace.start(eng)
        self.plan.start(eng)

    def view(self, coflows, active, clairvoyant):
        return self.plan.view(coflows, active, clairvoyant)

    def set_shifts(self, shifts):
        self.plan.set_shifts(shifts)

    def flow_fields(self, ids):
        return self.plan.flow_fields(ids)

    def _tagged(self, ids):
        return np.array([self.eng.flow_tag[i] is not None
                         for i in ids.tolist()], dtype=bool)

    def on_flows_sent(self, ids):
        tagged = self._tagged(ids)
        if tagged.any():
            self.plan.on_flows_sent(ids[tagged])

    def on_flows_done(self, ids):
        tagged = self._tagged(ids)
        if (~tagged).any():
            self.trace.on_flows_done(ids[~tagged])
        if tagged.any():
            self.plan.on_flows_done(ids[tagged])
