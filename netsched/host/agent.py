"""The host agent: runs inside one emulated host and executes its slice
of the workload task graph with real TCP.

    python -m netsched.host.agent --socket /run/netsched/runs/<id>/coord.sock \
        --host h0_0_0

It talks to the runner (netsched.emulator.runner) over a Unix socket -
the filesystem is shared across Mininet's network namespaces, 127.0.0.1
is not. The runner sends the plan, a common start time (all hosts share
CLOCK_MONOTONIC) and barrier releases; the agent sends back timestamps
for every transfer, iteration mark and job start, and a heartbeat.

Where the fabric's controller runs a scheduling policy, the agent also
registers with it (the control socket; ControllerLink below): its
connections and planned sends, then reports every transfer start and
end and every iteration mark. The controller's scheduler answers with
the class of each coflow the agent sends in (the controller also sets
it in the switches) and, for policies that give them, per-transfer
rates.

Execution:
- compute tasks are waits; a task's finish time is computed from its
  dependencies' finish times (not from when the agent woke up), so
  chains of layers do not accumulate scheduling drift;
- every outgoing connection is one persistent TCP connection (bound to
  the plan's source port so the ECMP path is the plan's) with a sender
  thread that writes one transfer at a time, in the order transfers
  became ready, each preceded by a 12-byte header (task id, length) and
  marked with the DSCP of its priority class (IP_TOS, looked up again
  every 64 KiB so a new class applies within a transfer); a transfer
  of another coflow in another class is written only once the ones
  before it are acknowledged, as the simulator's connection starts its
  next transfer when the last is received. A coflow the
  controller has not classified yet goes in class 0: it is new, and the
  policy will place it within milliseconds. Where the policy gives
  per-flow rates (Varys' MADD), the controller sends each transfer's
  rate and the sender keeps to it with a token bucket between 8 KiB
  writes, re-reading it before every write;
- a receiver thread per incoming connection timestamps the last byte of
  every transfer; that completes the task. Its ACKs go in class 0;
- a job with ``send_order: prophet`` or ``bytescheduler`` (the
  policies prophet and bytescheduler) has its gradient sends go through
  this host's sender (host.prophet.Sender: Prophet's, or the
  ByteScheduler-like one; the simulator's driver runs the same) before
  they join their connection's queue: it is told when each becomes ready
  (with its backward pass's start: the finish of the task its
  ``prophet.anchor`` names), when its sender thread has written it whole
  ('sent', from the transport) and when a block opens (its wake-ups, in
  the main loop), all that happened since its last call at once, once
  the main loop has fired every timer due (sends ready at one instant
  are taken in together); what it releases is queued at once.

For the run's fidelity verdict the agent also keeps how late its main
loop woke for its timers (its CPU against the plan) and runs the host's
probes (host.probes: the datapath's own delay); both go back with bye.
"""
import argparse
import heapq
import json
import os
import queue
import socket
import sys
import threading
import time

from . import prophet
from .compute import ComputeSpans
from .probes import Probes
from .shifts import gate
from .transport import Transport, tcp_counters

REPORT_BATCH_S = 0.001
MOST_LATE_KEPT = 2000     # wake-up delays kept for the fidelity report
PROGRESS_S = 0.01         # progress reports, where the controller asks

class ControllerLink:
    """The agent's channel to the controller's scheduler: one
    registration, then reports out and decisions ('classes', 'rates')
    in, which go to the agent's inbox. Reports are queued by the threads
    that make them and sent by the agent's main loop whenever it has
    nothing else to do, and at least every ``REPORT_BATCH_S``, all that
    gathered in one message: the data path does no I/O for them, and the
    controller parses a few messages instead of one per transfer start
    and end. (A write per report slowed the parameter-server pattern from
    1.10 to 1.19 times the analytical time; a flusher thread of its own,
    to 1.11-1.16: its wake-ups took the interpreter from the data path.)

    When the channel breaks (the controller was restarted: a read sees
    its end, a write fails), a thread of its own connects to the same
    socket again, every ``RETRY_S`` for up to ``GIVE_UP_S``, and
    registers again with the host's progress: the sends it began (with
    their ready times), the transfers it received and its iteration
    marks, kept from the reports as they are made, so that the restarted
    scheduler does not take finished transfers for pending ones. Reports
    queue up meanwhile (the data path goes on, doing no I/O for this)
    and go out after the new registration. A controller that does not
    come back in time, or refuses the registration, leaves the agent to
    run on its last classes and rates, reporting nothing more."""

    class Refused(ValueError):
        """The controller answered a re-registration with an error:
        trying again would get the same."""

    RETRY_S = 0.1             # between attempts to reconnect
    GIVE_UP_S = 30.0          # ... for at most this long
    REPLY_TIMEOUT_S = 5.0     # a re-registration's reply

    def __init__(self, path, inbox):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.rfile = self.sock.makefile('r')
        self.lock = threading.Lock()
        self.inbox = inbox
        self.queued = []
        self.queue_lock = threading.Lock()
        self.state = 'up'             # 'up', 'reconnecting' or 'lost'
        self.registration = None      # the first registration, as sent
        self.started = {}             # own sends begun: id -> ready time
        self.received = []            # transfers received at this host
        self.marks = []               # iteration marks reported
        self.reconnects = 0

    def _write(self, msg):
        data = (json.dumps(msg, separators=(',', ':')) + '\n').encode()
        with self.lock:
            self.sock.sendall(data)

    def register(self, host, run, plan):
        """Connections and planned sends (bytes in data-center units);
        returns the controller's reply (the classes it has decided)."""
        sends = [{'id': t['id'], 'coflow': t['coflow'], 'job': t['job'],
                  'bytes': t['bytes'], 'conn': t['conn'], 'dst': t['dst'],
                  'iter': t['iter'], 'urgency': t['urgency'],
                  'position': t['position']}
                 for t in plan['tasks'] if t['kind'] == 'send']
        self.registration = {'op': 'register', 'host': host, 'run': run,
                             'conns': plan['conns'], 'sends': sends,
                             'jobs': plan.get('jobs', {})}
        self._write(self.registration)
        reply = json.loads(self.rfile.readline() or 'null')
        if not reply or not reply.get('ok'):
            raise RuntimeError('controller refused the registration: %s'
                               % (reply or {}).get('error', 'no reply'))
        self.wanted = set(reply.get('reports', ('start', 'recv', 'mark')))
        threading.Thread(target=self._read, args=(self.rfile,),
                         daemon=True).start()
        return reply

    def report(self, **ev):
        """Queue a report (of the kinds the controller asked for); the
        first of a batch nudges the main loop. Starts, receptions and
        marks are kept whatever the kinds asked for: a re-registration
        carries them."""
        kind = ev['ev']
        with self.queue_lock:
            if kind == 'start':
                self.started[ev['task']] = ev.get('ready', ev.get('t'))
            elif kind == 'recv':
                self.received.append(ev['task'])
            elif kind == 'mark':
                self.marks.append({k: ev.get(k)
                                   for k in ('job', 'iter', 't', 'loss')})
            if kind not in self.wanted or self.state == 'lost':
                return
            first = not self.queued
            self.queued.append(ev)
            nudge = first and self.state == 'up'
        if nudge:
            self.inbox.put(('flush',))

    def pending(self):
        """Reports to send now (none while reconnecting: they wait)."""
        return bool(self.queued) and self.state == 'up'

    def wants(self, kind):
        """Whether the controller asked for this kind of report."""
        return kind in self.wanted

    def flush(self):
        """Send what is queued in one message; if the write fails, it
        goes back to the queue, after the re-registration."""
        if self.state != 'up':
            return
        with self.queue_lock:
            events, self.queued = self.queued, []
        if not events:
            return
        try:
            self._write({'op': 'report', 'events': events})
        except OSError:
            with self.queue_lock:
                self.queued[:0] = events
            self._broken()

    def _read(self, rfile):
        try:
            for line in rfile:
                m = json.loads(line)
                if m.get('op') in ('classes', 'rates', 'shifts'):
                    self.inbox.put(('ctl', m))
        except (OSError, ValueError):
            pass
        self._broken(rfile)

    def _broken(self, rfile=None):
        """The channel broke (a reader's own, not one already replaced):
        reconnect in a thread of its own, once."""
        with self.queue_lock:
            if self.state != 'up' or (rfile is not None
                                      and rfile is not self.rfile):
                return
            self.state = 'reconnecting'
        threading.Thread(target=self._reconnect, daemon=True).start()

    def _reconnect(self):
        try:
            self.sock.close()
        except OSError:
            pass
        deadline = time.monotonic() + self.GIVE_UP_S
        while True:
            try:
                sock, rfile, reply = self._register_again()
                break
            except (OSError, ValueError) as e:
                why = e
            if isinstance(why, self.Refused) or \
                    time.monotonic() >= deadline:
                with self.queue_lock:
                    self.state, self.queued = 'lost', []
                sys.stderr.write('netsched agent: controller channel lost '
                                 '(%s); scheduling messages stop\n' % why)
                return
            time.sleep(self.RETRY_S)
        with self.lock:
            self.sock, self.rfile = sock, rfile
        self.wanted = set(reply.get('reports', self.wanted))
        self.reconnects += 1
        if reply.get('classes') or reply.get('sends'):
            self.inbox.put(('ctl', {'op': 'classes',
                                    'classes': reply.get('classes') or {},
                                    'sends': reply.get('sends') or {}}))
        threading.Thread(target=self._read, args=(rfile,),
                         daemon=True).start()
        with self.queue_lock:
            self.state = 'up'
            more = bool(self.queued)
        if more:
            self.inbox.put(('flush',))

    def _register_again(self):
        """One attempt: connect, register with the progress so far, read
        the reply. (socket, its reader, the reply)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.REPLY_TIMEOUT_S)
            sock.connect(self.path)
            with self.queue_lock:
                msg = dict(self.registration,
                           started=[[i, r] for i, r in self.started.items()],
                           done=list(self.received), marks=list(self.marks))
            sock.sendall((json.dumps(msg, separators=(',', ':'))
                          + '\n').encode())
            rfile = sock.makefile('r')
            reply = json.loads(rfile.readline() or 'null')
            if not isinstance(reply, dict):
                raise OSError('no reply to the re-registration')
            if not reply.get('ok'):
                raise self.Refused('controller refused the re-registration:'
                                   ' %s' % reply.get('error'))
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return sock, rfile, reply

class NoController:
    """Stands in for the link when the fabric runs no policy."""

    def report(self, **ev):
        pass

    def pending(self):
        return False

    def wants(self, kind):
        return False

    def flush(self):
        pass


class HostSenders:
    """This host's senders of the jobs that order their own gradient
    sends (send_order prophet or bytescheduler, host.prophet.Sender): a
    sender per job (one worker per host), its wake-ups (time, job) and
    those asked for, and per job what it has not yet been handed (ready
    Sends, (id, start, end) of sends written whole). ``finish``: the
    agent's task end times (a backward pass's anchor); ``send(task,
    ready)``: a released send to its connection's queue."""

    def __init__(self, finish, send):
        self.finish, self.send = finish, send
        self.senders, self.wakes, self.woken = {}, [], set()
        self.batch = {}

    def next_wake(self):
        """When the first wake-up asked for is due, or None."""
        return self.wakes[0][0] if self.wakes else None

    def due(self, now):
        """The wake-ups due by ``now``, then each sender handed what
        happened, at once (after every timer due: an instant whole)."""
        while self.wakes and self.wakes[0][0] <= now:
            w = heapq.heappop(self.wakes)
            self.woken.discard(w)
            self.event(w[1], 'wake')
        if self.batch:
            self.flush()

    def event(self, job, what, task=None, ready=None, start=None, end=None):
        """An event for this host's sender of ``job``
        (host.prophet.Sender: Prophet's or the ByteScheduler-like
        one, as the send's ``prophet`` field asks; the simulator's driver
        runs the same):
        a gradient send ready (at ``ready``), one written whole (from
        ``start`` to ``end``), or a wake-up it asked for. It joins the
        sender's batch, handed over by :meth:`flush`."""
        if job not in self.senders:
            self.senders[job] = prophet.sender_for(task['prophet'])
        b = self.batch.setdefault(job, ([], []))
        if what == 'ready':
            b[0].append(prophet.Send.of(
                task.get, ready, self.finish[task['prophet']['anchor']],
                task))
        elif what == 'done':
            b[1].append((task['id'], start, end))

    def flush(self):
        """Each sender takes in what happened since the last flush at
        once (sends ready at one instant come off the timer heap one by
        one, a layer with no backward compute after the layer
        back-propagated before it); what it releases goes to its
        connection's queue."""
        batch, self.batch = self.batch, {}
        for job, (ready, done) in batch.items():
            s = self.senders[job]
            for x in s.update(time.monotonic(), ready, done):
                self.send(x.task, x.ready)
            w = s.next_wake()
            if w is not None and (w, job) not in self.woken:
                self.woken.add((w, job))
                heapq.heappush(self.wakes, (w, job))


class Agent:
    """One emulated host's agent: its slice of the plan run against the
    coordinator's common start, its transfers on its :class:`Transport`,
    its gradient senders' order its :class:`HostSenders`."""

    def __init__(self, sock_path, host):
        self.host = host
        self.ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ctl.connect(sock_path)
        self.ctl_lock = threading.Lock()
        self.inbox = queue.Queue()
        self.rfile = self.ctl.makefile('r')

    # --- coordinator channel ----------------------------------------------
    def tell(self, **msg):
        data = (json.dumps(msg, separators=(',', ':')) + '\n').encode()
        with self.ctl_lock:
            self.ctl.sendall(data)

    def _read_ctl(self):
        for line in self.rfile:
            self.inbox.put(('ctl', json.loads(line)))
        self.inbox.put(('ctl', {'op': 'stop', 'why': 'coordinator closed'}))

    def _heartbeat(self):
        while True:
            time.sleep(0.5)
            try:
                self.tell(op='hb')
            except OSError:
                return

    # --- set-up -----------------------------------------------------------
    def setup(self):
        self.tell(op='hello', host=self.host, pid=os.getpid())
        plan = json.loads(self.rfile.readline())
        self._take_plan(plan)
        # listen, then connect out (the coordinator orders the phases)
        # ``drain``: the experiment's measuring knob emulator.drain.
        # Each transfer's last write is kept here and sent once, with
        # bye: a message per transfer from the data path slowed it
        self.wrote = {}
        self.net = Transport(self.scale, self.cls, self.rate, self.inbox,
                             self._started, drain=plan.get('drain', True),
                             on_written=self._written)
        self.net.report_sent = any(t.get('prophet') for t in plan['tasks'])
        self.net.listen(plan['listen_port'], plan['n_in'])
        self.tell(op='listening')
        msg = json.loads(self.rfile.readline())
        assert msg['op'] == 'connect', msg
        self.net.connect(plan['ip'], plan['conns'], plan.get('tcp_cc'))
        p = plan.get('probe')
        self.probes = Probes(plan['ip'], p['port'], p['peers'],
                             p['interval_s'], p['phase_s']) if p else None
        self.controller = NoController()
        if plan.get('controller'):
            self.controller = ControllerLink(plan['controller'], self.inbox)
            reply = self.controller.register(self.host, plan.get('run', ''),
                                             plan)
            self.net.set_classes(reply.get('classes', {}), {
                int(k): v for k, v in reply.get('sends', {}).items()})
            self.net.wait_class = bool(reply.get('wait_for_class'))
        self.tell(op='connected')
        threading.Thread(target=self._read_ctl, daemon=True).start()
        threading.Thread(target=self._heartbeat, daemon=True).start()

    def _take_plan(self, plan):
        """This host's slice of the plan (the runner's) as the agent's
        state: its tasks, what each waits for, the senders' books."""
        self.scale = plan['scale']
        self.queues = plan['queues']
        self.tasks = {t['id']: t for t in plan['tasks']}
        self.incoming = {t['id'] for t in plan['incoming']}
        self.cls = dict(plan.get('classes', {}))
        self.rate = {}                 # task id -> emulated bytes/s
        self.shifts = {}               # job -> (shift, period, tol, max wait)
        self.aligned = set()           # jobs started on their grid here
        self.compute = ComputeSpans()  # for the iteration marks
        # a dependency is a local task, a transfer received here, or a
        # barrier the coordinator releases; each completes exactly once
        self.pending, self.dependents = {}, {}
        for t in plan['tasks']:
            for d in t['deps']:
                self.dependents.setdefault(d, []).append(t['id'])
            self.pending[t['id']] = len(t['deps'])
        self.finish = {}
        self.senders = HostSenders(
            self.finish, lambda task, ready: self.net.send(task, ready))
        # how late the main loop woke for its timers, one per wake-up (s):
        # this host's CPU against the plan, for the fidelity verdict
        self.late = []

    def _start(self, t0):
        """The run's common start: every task with no dependency is due
        at its ``not_before``."""
        self.t0 = t0
        self.timers = []
        for tid, n in list(self.pending.items()):
            if n == 0:
                heapq.heappush(self.timers, (self.t0 + self.tasks[tid][
                    'not_before'], -1 - tid))

    def _due(self, now):
        """Everything due by ``now``: the timers (tasks ending, root
        tasks becoming ready), the senders' wake-ups, then each sender
        handed what happened, at once."""
        if self.timers and self.timers[0][0] <= now:
            # one figure per wake-up, its earliest timer's: timers due
            # together are late together (one by one, a stall fills a tail)
            self.late.append(now - self.timers[0][0])
        while self.timers and self.timers[0][0] <= now:
            at, tid = heapq.heappop(self.timers)
            if tid < 0:                      # a root task becomes ready
                self._ready(self.tasks[-1 - tid])
            else:
                self._done(tid, at)
        self.senders.due(now)

    def _started(self, task, ready, start, n):
        """A sender thread began writing a transfer."""
        self.tell(op='start', task=task['id'], ready=ready, t=start, bytes=n)
        self.controller.report(ev='start', task=task['id'], ready=ready,
                               t=start)

    # --- scheduling ---------------------------------------------------------
    def _done(self, tid, t):
        self.finish[tid] = t
        for d in self.dependents.get(tid, ()):
            self.pending[d] -= 1
            if self.pending[d] == 0:
                self._ready(self.tasks[d])

    def _ready(self, task):
        # logical ready time: the latest finish among its dependencies
        ready = max([self.finish[d] for d in task['deps']
                     if d in self.finish] + [self.t0 + task['not_before']])
        kind = task['kind']
        if kind == 'compute':
            if task['label'] == 'F0' and task['iter'] == 0:
                self.tell(op='job_start', job=task['job'], t=ready)
            start = self._iteration_start(task, ready)
            self.compute.add((task['job'], task['iter']), start,
                             start + task['dur'])
            heapq.heappush(self.timers, (start + task['dur'], task['id']))
        elif kind == 'send':
            if task.get('prophet'):
                self.senders.event(task['job'], 'ready', task, ready)
            else:
                self.net.send(task, ready)
        elif kind == 'mark':
            self.tell(op='mark', task=task['id'], t=ready,
                      compute=self.compute.pop((task['job'], task['iter'])))
            self.controller.report(ev='mark', job=task['job'],
                                   iter=task['iter'], t=ready,
                                   loss=task['loss'])
            self._done(task['id'], ready)

    def _iteration_start(self, task, ready):
        """When a compute task starts: when it is ready, unless it begins
        an iteration (the first forward layer) of a job the controller
        shifts in time (CASSINI); then on the job's grid, counted from
        the run's common start as the simulator counts it
        (host.shifts.gate, the simulator's driver calls the same),
        reported with the wait and the drift."""
        shift = self.shifts.get(task['job'])
        if task['label'] != 'F0' or shift is None:
            return ready
        first = task['job'] not in self.aligned
        self.aligned.add(task['job'])
        start, drift = gate(ready - self.t0, *shift, first=first)
        self.tell(op='gate', job=task['job'], worker=task['worker'],
                  iter=task['iter'], t=ready, start=start + self.t0,
                  drift=drift)
        return start + self.t0

    def _written(self, t, at):
        """A sender thread wrote a transfer's last byte (one dict store:
        the threads write distinct keys)."""
        self.wrote[t['id']] = at

    def _report_progress(self, now):
        """Bytes acknowledged so far of each transfer in flight, in
        data-center bytes, for policies that rank by bytes sent (Aalo)."""
        sent = self.net.progress()
        if sent:
            self.controller.report(ev='progress', t=now, sent={
                str(k): v * self.scale for k, v in sent.items()})

    def _bye(self):
        """Report this agent's CPU time (the benchmark's overhead), its
        connections' TCP retransmissions, retransmission timeouts and
        time in recovery from them, and the host's TCP timeouts during
        the run (fidelity diagnostics: was a result shaped by loss?),
        and when each of its transfers' last byte was written (which
        side a stall was on)."""
        import resource
        ru = resource.getrusage(resource.RUSAGE_SELF)
        net = getattr(self, 'net', None)
        by_conn = net.retransmits() if net else {}
        rto = net.timeouts() if net else {}
        paused = net.paused if net else {}
        now, before = tcp_counters(), getattr(self, 'tcp0', None)
        tcp = None if now is None or before is None else {
            k: n - before[k] for k, n in now.items() if k in before}
        probes = getattr(self, 'probes', None)
        late = getattr(self, 'late', [])
        step = -(-len(late) // MOST_LATE_KEPT) if late else 1
        try:
            self.tell(op='bye', cpu_s=ru.ru_utime + ru.ru_stime,
                      retrans=sum(by_conn.values()),
                      retrans_by_conn={str(k): v for k, v in by_conn.items()},
                      rto_by_conn={str(k): [n, round(t, 3)]
                                   for k, (n, t) in rto.items()},
                      paused_by_conn={str(k): round(v, 4)
                                      for k, v in paused.items()},
                      tcp_cc=net.congestion_control() if net else None,
                      wrote={str(k): v for k, v in
                             dict(getattr(self, 'wrote', {})).items()},
                      timeouts=(tcp or {}).get('TCPTimeouts'),
                      tcp_counters=tcp,
                      probes=probes.stop() if probes else None,
                      late_us={'n': len(late),
                               'max': round(max(late, default=0) * 1e6),
                               'kept': [round(x * 1e6)
                                        for x in late[::step]]})
        except OSError:
            pass

    def run(self):  # noqa: C901 (the agent loop: one branch per message)
        msg = self.inbox.get()
        while msg[0] != 'ctl' or msg[1]['op'] != 'go':
            if msg[0] == 'ctl' and msg[1]['op'] == 'stop':
                return 0
            msg = self.inbox.get()
        self._start(msg[1]['t0'])
        self.tcp0 = tcp_counters()
        if self.probes is not None:
            self.probes.start(self.t0)
        progress = self.controller.wants('progress')
        next_progress = self.t0
        while True:
            now = time.monotonic()
            self._due(now)
            timeout = (self.timers[0][0] - time.monotonic()
                       if self.timers else 0.5)
            wake = self.senders.next_wake()
            if wake is not None:
                timeout = min(timeout, wake - time.monotonic())
            if progress:
                if now >= next_progress:
                    self._report_progress(now)
                    next_progress = now + PROGRESS_S
                timeout = min(timeout, next_progress - now)
            if self.controller.pending():
                if self.inbox.empty():
                    self.controller.flush()
                else:
                    timeout = min(timeout, REPORT_BATCH_S)
            try:
                msg = self.inbox.get(timeout=max(timeout, 0.0))
            except queue.Empty:
                continue
            kind = msg[0]
            if kind == 'recv':
                _, tid, t = msg
                self.tell(op='recv', task=tid, t=t,
                          first=self.net.first_read.pop(tid, None))
                self.controller.report(ev='recv', task=tid, t=t)
                self._done(tid, t)
            elif kind == 'error':
                self.tell(op='error', msg=msg[1])
                return 1
            elif kind == 'conn_lost':           # its peer's agent died
                self.tell(op='conn_lost', conn=msg[1], msg=msg[2])
            elif kind == 'flush':
                pass                    # reports go out below, when idle
            elif kind == 'sent':        # a host sender's send written whole
                _, tid, start, end = msg
                self.senders.event(self.tasks[tid]['job'], 'done',
                                   self.tasks[tid], start=start, end=end)
            else:
                m = msg[1]
                if m['op'] == 'release':
                    self._done(m['task'], m['t'])
                elif m['op'] == 'classes':
                    self.net.set_classes(m['classes'], {
                        int(k): v for k, v in m.get('sends', {}).items()})
                elif m['op'] == 'shifts':
                    for j, v in m['shifts'].items():
                        self.aligned.discard(j)     # a new grid: align
                        if v is None:
                            self.shifts.pop(j, None)
                        else:
                            self.shifts[j] = tuple(v)
                elif m['op'] == 'rates':
                    self.net.set_rates({int(k): v
                                        for k, v in m['rates'].items()})
                elif m['op'] == 'stop':
                    self._bye()
                    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog='netsched.host.agent')
    ap.add_argument('--socket', required=True)
    ap.add_argument('--host', required=True)
    a = ap.parse_args(argv)
    agent = Agent(a.socket, a.host)
    try:
        agent.setup()
        return agent.run()
    except Exception as e:          # report, then die: the run must not hang
        try:
            agent.tell(op='error', msg='%s: %s' % (type(e).__name__, e))
        except OSError:
            pass
        raise


if __name__ == '__main__':
    sys.exit(main())
