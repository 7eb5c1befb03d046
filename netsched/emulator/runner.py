"""The emulator backend: a coordinator in the root namespace, one agent
per emulated host (netsched.host.agent), real TCP through the fabric,
and the policy run by the controller.

The coordinator only orchestrates: it brings the fabric up with the
experiment's policy in the controller, hands every agent its slice of
the task graph over a Unix socket, starts everyone at one common time,
releases tuning-stage barriers, and turns the agents' timestamps into
the same event log the simulator writes (times relative to the start, in
seconds; bytes in data-center units). The agents register with the
controller and report to it; its scheduler decides and applies classes
and rates (netsched.control.scheduler), and what it decided comes back
through its decision log, copied into the event log as it arrives. The
coordinator samples the switch ports' byte counters for link
utilisation, and watches the agents: an agent that exits or goes quiet
ends the run with an error naming the host, and ``timeout_s`` bounds the
whole run.
"""
import json
import os
import time

from ..control.channel import ControlClient
from ..control.spec import ControllerSpec
from ..errors import ConfigError
from ..events import EventLog
from ..workload import taskgraph
from . import drops, monitor
from .agents import CONNECT_TIMEOUT_S, AgentFailed, AgentPool, hand_command
from .fabric import Fabric
from .links import LinkSampler


def agent_plan(exp, fab, plan, h, hosts):
    """The plan message agent ``h`` is handed: its own tasks, the sends
    it receives, its connections, its jobs' registrations, where to
    listen and report, and the measuring knobs it applies
    (pipeline.knobs)."""
    g = fab.g
    mine = [t.to_dict() for t in plan.tasks if t.host == h]
    incoming = [{'id': t.id} for t in plan.tasks
                if t.kind == 'send' and t.dst == h]
    mine_jobs = {t['job'] for t in mine if t['job'] is not None}
    jobs = {j: jp.registered()
            for j, jp in plan.jobs.items() if j in mine_jobs}
    return {'op': 'plan', 'host': h, 'ip': g.nodes[h]['ip'],
            'scale': exp.scale, 'queues': fab.queues,
            'tasks': mine, 'incoming': incoming,
            'conns': plan.conns_of(g, h), 'jobs': jobs,
            'n_in': sum(1 for c in plan.conns if c.dst == h),
            'listen_port': taskgraph.AGENT_PORT,
            'controller': fab.socket_path if fab.policy else None,
            'run': fab.run_id,
            'tcp_cc': exp.knobs.congestion_control,
            'drain': exp.knobs.drain,
            'probe': monitor.probe_plan(g, plan, h, hosts)}


class Coordinator:
    """One experiment's plan on the agents of ``pool`` (running on the
    fabric ``fab``), its event log, and its stage barriers. The
    transfers' start and end messages are its :class:`Transfers`, the
    agents' totals at their bye its :class:`Byes`."""

    def __init__(self, exp, plan, fab, log, say, bar=None):
        self.bar = bar              # bar(done, total), where one is drawn
        self.exp, self.plan, self.fab, self.log, self.say = (
            exp, plan, fab, log, say)
        self.tasks = plan.tasks
        self.hosts = plan.hosts()
        self.sends = {t.id: t for t in plan.tasks if t.kind == 'send'}
        self.n_marks = sum(1 for t in plan.tasks if t.kind == 'mark')
        self.barriers = {st.barrier: st for st in plan.stages}
        self.barrier_left = {b: set(self.tasks[b].deps)
                             for b in self.barriers}
        self.waiting_on = {}                 # mark -> barriers
        for b, deps in self.barrier_left.items():
            for d in deps:
                self.waiting_on.setdefault(d, []).append(b)
        self.mark_time = {}
        self.transfers = Transfers(plan, self.sends, log)
        self.marks_done = 0
        # jobs failed (an agent lost) -> why; their tasks not done are
        # written off so that the run ends when the others have finished
        self.failed = {}
        self.killed = {}                     # host -> the fault's words
        self.off_sends = self.off_marks = 0
        self.marks_left = {}
        for t in plan.tasks:
            if t.kind == 'mark':
                k = (t.job, t.iter)
                self.marks_left[k] = self.marks_left.get(k, 0) + 1
        self.jobs_started = set()
        self.byes = Byes()
        self.decisions = DecisionLog(fab.decision_log)
        self.pool = AgentPool(self.hosts,
                              os.path.join(fab.state.dir, 'coord.sock'))

    # --- set-up ---------------------------------------------------------
    def slice_for(self, h):
        return agent_plan(self.exp, self.fab, self.plan, h, self.hosts)

    def start_agents(self, out_dir=None):
        """Launch the agents in their hosts (or, without ``out_dir``,
        wait for agents started by hand), then hand out the plan. The
        drop counters are read first: reading them takes a while on a
        large fabric, and between the plan and the common start it would
        move the run against the controller's own periodic decisions
        (a hybrid fabric's circuit period)."""
        self.drops0 = drops.snapshot(self.fab)
        if out_dir is not None:
            self.pool.launch(self.fab, out_dir)
        self.pool.accept()
        self.pool.handshake(self.slice_for)

    # --- the run ----------------------------------------------------------
    def run(self):
        t0 = time.monotonic() + 0.5
        self.t0 = t0
        if self.fab.socket_path is not None:
            # the controller's own periodic decisions (a hybrid fabric's
            # circuits) start with the run, as the simulator's do
            with ControlClient(self.fab.socket_path, 5.0).connect() as c:
                c.request('start', t0=t0)
        self.pool.broadcast({'op': 'go', 't0': t0})
        for st in self.plan.stages:
            if st.index == 0:
                self.log.write(min(self.plan.jobs[j].arrival_s
                                   for j in st.jobs), 'stage_start',
                               stage=st.id, group=st.group,
                               jobs=list(st.jobs))
        sampler = LinkSampler(self.fab, self.exp.sample_s)
        sampler.start(t0)
        faults = Faults(self.exp.faults, self.fab, self.log, t0, self.kill)
        last_progress = time.monotonic()
        total = len(self.sends) + self.n_marks
        while self.transfers.done + self.off_sends < len(self.sends) or \
                self.marks_done + self.off_marks < self.n_marks:
            now = time.monotonic()
            if self.exp.timeout_s and now - t0 > self.exp.timeout_s:
                self.log.write(now - t0, 'run_incomplete',
                               why='timeout_s %.0f reached'
                               % self.exp.timeout_s)
                self.say('timeout_s reached: stopping with what was measured')
                break
            for h, m in self.pool.poll(faults.wait_s(0.05)):
                self._handle(h, m)
            faults.apply_due()
            sampler.maybe_sample(self.log)
            self.decisions.copy(self.log, t0)
            for h, m in self.pool.liveness():
                self._handle(h, m)
            if self.bar is not None:
                self.bar(self.transfers.done + self.marks_done, total)
            elif time.monotonic() - last_progress >= 2.0:
                last_progress = time.monotonic()
                self.say('emu t=%.1f s: %d/%d transfers and marks done'
                         % (last_progress - t0,
                            self.transfers.done + self.marks_done, total))
        sampler.sample(self.log)
        wall = time.monotonic() - t0
        lost = drops.delta(self.drops0, drops.snapshot(self.fab))
        self.decisions.copy(self.log, t0)
        self.pool.broadcast({'op': 'stop'}, ignore_errors=True)
        for h, m in self.pool.drain(lambda: len(self.byes.cpu) == len(
                self.hosts) - len(self.pool.lost), 2.0):
            try:
                self._handle(h, m)
            except AgentFailed:      # the run is over: keep what it measured
                pass
        self._log_open_coflows(wall)
        self.pool.close()
        cpu = sum(self.byes.cpu.values()) \
            if len(self.byes.cpu) == len(self.hosts) else None
        info = self._info(wall, lost, cpu)
        info['fidelity'] = {
            'datapath': monitor.datapath(self.fab.g, self.byes.probes,
                                         self.fab.rate_bps, self.exp.mtu),
            'agents': monitor.agents(self.byes.late),
            'controller': monitor.controller(self.decisions.applied_ms,
                                             self.decisions.decided),
            'tcp': monitor.tcp(info),
            'ideal_cct_s_median': monitor.ideal_scale(self.fab.g,
                                                      self.plan)}
        return info

    def _info(self, wall, lost, cpu):
        b = self.byes
        return {'agents': len(self.hosts), 'transfers': len(self.sends),
                'agent_cpu_s': cpu, 'run_s': wall,
                **b.tcp_info(),
                'queue_drops': sum(lost['queue'].values()),
                'queue_drops_by_interface': lost['queue'],
                'ovs_drops_by_port': lost['ovs'],
                'socket_drops_by_port': lost['socket'],
                'paused_s': round(sum(b.paused_by_conn.values()), 3),
                'paused_s_by_connection': {
                    k: v for k, v in sorted(b.paused_by_conn.items())
                    if v},
                'controller': self.decisions.summary(),
                'link_mbps': self.fab.link_mbps,
                'startup_s': self.fab.timings.get('startup_s')}

    def _log_open_coflows(self, wall):
        self.transfers.log_open(wall, self.t0)

    def _handle(self, h, m):
        getattr(self, '_on_' + m['op'], self._on_unknown)(h, m)

    # --- what agents report -------------------------------------------------
    def _on_unknown(self, h, m):
        raise AgentFailed('agent on %s sent an unknown message %r'
                          % (h, m.get('op')))

    def _on_hb(self, h, m):
        pass

    def _on_bye(self, h, m):
        """The agent's totals (:class:`Byes`), and the times of its
        writes where it kept them."""
        self.byes.add(h, m)
        if m.get('wrote'):
            self.log.write(time.monotonic() - self.t0, 'writes', host=h,
                           wrote={k: round(v - self.t0, 9)
                                  for k, v in m['wrote'].items()})

    def _on_error(self, h, m):
        raise AgentFailed('agent on %s: %s (log: %s)'
                          % (h, m['msg'], self.pool.logs[h]))

    # --- agents lost ----------------------------------------------------------
    def kill(self, h):
        """A fault: the agent of ``h`` is killed; its jobs fail when its
        channel closes (_on_lost)."""
        self.killed[h] = 'the agent on %s was killed at %.3f s' % (
            h, time.monotonic() - self.t0)
        self.pool.kill(h)

    def _on_lost(self, h, m):
        """An agent is gone (killed, crashed, stuck): every job with a
        task on its host or a transfer to it fails, with the reason; the
        other jobs run on."""
        why = self.killed.get(h, m['why'])
        self._fail({t.job for t in self.tasks if t.job is not None and (
            t.host == h or (t.kind == 'send' and t.dst == h))}, why)

    def _on_conn_lost(self, h, m):
        """A connection broke under an agent (its peer died): the jobs
        that send on it fail, unless they already did."""
        conn, g = m.get('conn'), self.fab.g
        if isinstance(conn, list):          # an incoming one: its peer
            conn = next((c.id for c in self.plan.conns if c.dst == h
                         and g.nodes[c.src]['ip'] == conn[0]
                         and c.sport == conn[1]), None)
        c = self.plan.conns[conn] if conn is not None else None
        jobs = {t.job for t in self.sends.values() if t.job is not None
                and c is not None and t.conn == c.id}
        self._fail(jobs, 'connection %s -> %s lost: %s' % (
            h, c.dst if c is not None else '?', m.get('msg')))

    def _fail(self, jobs, why):
        t_now = time.monotonic() - self.t0
        ended = {t.job for t in self.tasks if t.kind == 'mark'
                 and t.job is not None and t.id in self.mark_time
                 and t.iter == self.plan.jobs[t.job].iterations - 1}
        for j in sorted(set(jobs) - set(self.failed) - ended):
            self.failed[j] = why
            self.log.write(t_now, 'job_failed', job=j, reason=why)
            self.say('job %s failed: %s' % (j, why))
            self.off_sends += sum(1 for t in self.sends.values()
                                  if t.job == j
                                  and t.id not in self.transfers.received)
            self.off_marks += sum(1 for t in self.tasks if t.kind == 'mark'
                                  and t.job == j
                                  and t.id not in self.mark_time)
            for b, left in self.barrier_left.items():
                gone = {d for d in left if self.tasks[d].job == j}
                if gone:
                    left -= gone
                    if not left and any(d in self.mark_time
                                        for d in self.tasks[b].deps):
                        self._release(b)

    def _on_job_start(self, h, m):
        if m['job'] not in self.jobs_started:
            self.jobs_started.add(m['job'])
            # workers: the iter events that end each of its iterations
            self.log.write(m['t'] - self.t0, 'job_start', job=m['job'],
                           workers=sum(1 for t in self.plan.tasks
                                       if t.kind == 'mark' and t.iter == 0
                                       and t.job == m['job']))

    def _on_gate(self, h, m):
        """A worker started an iteration on its job's shifted grid
        (CASSINI): when it was ready, when it started, its drift."""
        self.log.write(m['t'] - self.t0, 'gate', job=m['job'],
                       worker=m['worker'], iter=m['iter'],
                       start=round(m['start'] - self.t0, 9),
                       drift=round(m['drift'], 9))

    def _on_start(self, h, m):
        t = self.sends[m['task']]
        if t.job not in self.failed:
            self.transfers.start(t, m, self.t0)

    def _on_recv(self, h, m):
        t = self.sends[m['task']]
        if t.job not in self.failed:
            self.transfers.recv(t, m, self.t0)

    def _on_mark(self, h, m):
        t = self.tasks[m['task']]
        if t.job in self.failed:
            return
        jp = self.plan.jobs[t.job]
        self.marks_done += 1
        spans = m.get('compute')
        self.log.write(m['t'] - self.t0, 'iter', job=t.job, worker=t.worker,
                       iter=t.iter, loss=t.loss, host=h,
                       compute=[[round(a - self.t0, 9), round(b - self.t0, 9)]
                                for a, b in spans] if spans else None)
        k = (t.job, t.iter)
        self.marks_left[k] -= 1
        if self.marks_left[k] == 0 and t.iter == jp.iterations - 1:
            self.log.write(m['t'] - self.t0, 'job_end', job=t.job)
        self.mark_time[t.id] = m['t']
        for b in self.waiting_on.get(t.id, ()):
            self.barrier_left[b].discard(t.id)
            if not self.barrier_left[b]:
                self._release(b)

    def _release(self, b):
        st = self.barriers[b]
        t = max(self.mark_time[d] for d in self.tasks[b].deps
                if d in self.mark_time)
        self.log.write(t - self.t0, 'stage_end', stage=st.id, group=st.group,
                       survivors=list(st.survivors))
        self.pool.broadcast({'op': 'release', 'task': b, 't': t})
        nxt = [s for s in self.plan.stages
               if s.group == st.group and s.index == st.index + 1]
        if nxt:
            self.log.write(t - self.t0, 'stage_start', stage=nxt[0].id,
                           group=st.group, jobs=list(nxt[0].jobs))


class Transfers:
    """The plan's transfers as the agents report them, logged as the
    simulator's flow events: a send's start comes from its sender and its
    end from its receiver, and the two messages may cross (a short
    transfer's end can be read before its start); a transfer is logged
    when both are known, a coflow when its last transfer ends."""

    def __init__(self, plan, sends, log):
        self.plan, self.log = plan, log
        self.started = {}                    # send -> (ready, start) abs
        self.early = {}                      # send -> end read before start
        self.done = 0
        self.received = set()
        # per transfer, the receiver's first read (host clock): which
        # side a stall is on
        self.first_read = {}
        self.coflow_left = {}
        self.coflow_send = {}                # coflow -> one of its sends
        for t in sends.values():
            self.coflow_left[t.coflow] = self.coflow_left.get(t.coflow, 0) + 1
            self.coflow_send.setdefault(t.coflow, t)
        self.coflow_arrival = {}

    def start(self, t, m, t0):
        """A send's start, from its sender."""
        self.started[t.id] = (m['ready'], m['t'])
        a = self.coflow_arrival.get(t.coflow)
        self.coflow_arrival[t.coflow] = m['ready'] if a is None \
            else min(a, m['ready'])
        if t.id in self.early:              # its end was read first
            self._finished(t, self.early.pop(t.id), t0)

    def recv(self, t, m, t0):
        """A send's end, from its receiver."""
        if m.get('first') is not None:
            self.first_read[t.id] = m['first']
        if t.id not in self.started:
            self.early[t.id] = m['t']
            return
        self._finished(t, m['t'], t0)

    def _finished(self, t, t_recv, t0):
        ready, start = self.started[t.id]
        self.done += 1
        self.received.add(t.id)
        extra = {} if t.urgency is None else {'ready': ready - t0,
                                              'urgency': t.urgency}
        at = self.first_read.pop(t.id, None)
        if at is not None:
            extra['first_read'] = round(at - t0, 9)
        self.log.write(t_recv - t0, 'flow', id=t.id, coflow=t.coflow,
                       src=t.host, dst=t.dst, bytes=t.bytes,
                       start=start - t0, **extra)
        self.coflow_left[t.coflow] -= 1
        if self.coflow_left[t.coflow] == 0:
            self.log.write(self.coflow_arrival[t.coflow] - t0, 'coflow',
                           coflow=t.coflow, job=t.job, iter=t.iter,
                           bytes=self.plan.coflow_bytes[t.coflow])
            self.log.write(t_recv - t0, 'coflow_end', coflow=t.coflow)

    def log_open(self, wall, t0):
        """The coflows a finished transfer did not log: a trace's coflows
        with no flow across the network (they end as they arrive, as on
        the simulator) and, when the run stopped early, those that
        arrived and did not finish (no end: their CCT is unknown)."""
        for cf, at in sorted(self.plan.instant_coflows.items()):
            if at <= wall:
                self.log.write(at, 'coflow', coflow=cf, job=None, iter=None,
                               bytes=self.plan.coflow_bytes[cf])
                self.log.write(at, 'coflow_end', coflow=cf)
        for cf, left in sorted(self.coflow_left.items()):
            if left and cf in self.coflow_arrival:
                t = self.coflow_send[cf]
                self.log.write(self.coflow_arrival[cf] - t0, 'coflow',
                               coflow=cf, job=t.job, iter=t.iter,
                               bytes=self.plan.coflow_bytes[cf])


class Byes:
    """What each agent reports as it leaves (its ``bye``): its CPU time
    (the benchmark's overhead), its connections' TCP retransmissions,
    retransmission timeouts and time in recovery from them, the time its
    senders were held by the controller, its host's TCP timeouts (those
    found spurious, and DSACKs) and its probes (fidelity diagnostics)."""

    def __init__(self):
        self.cpu, self.retrans = {}, {}
        self.retrans_by_conn, self.timeouts = {}, {}
        self.paused_by_conn = {}
        self.rto_by_conn = {}
        self.tcp_cc = set()
        self.probes, self.late = {}, {}      # per host
        self.counters = {}                   # per host, transport.TCP_COUNTERS

    def add(self, h, m):
        self.cpu[h] = m['cpu_s']
        self.retrans[h] = m.get('retrans', 0)
        for cid, n in m.get('retrans_by_conn', {}).items():
            self.retrans_by_conn['%s#%s' % (h, cid)] = n
        for cid, v in m.get('paused_by_conn', {}).items():
            self.paused_by_conn['%s#%s' % (h, cid)] = v
        for cid, v in m.get('rto_by_conn', {}).items():
            self.rto_by_conn['%s#%s' % (h, cid)] = v
        self.timeouts[h] = m.get('timeouts')
        self.counters[h] = m.get('tcp_counters')
        self.probes[h] = m.get('probes')
        self.late[h] = m.get('late_us')
        if m.get('tcp_cc'):
            self.tcp_cc.add(m['tcp_cc'])

    def tcp_info(self):
        """run.json's TCP fields."""
        return {'tcp_retransmits': sum(self.retrans.values()),
                'tcp_retransmits_by_connection': {
                    k: n for k, n in sorted(self.retrans_by_conn.items())
                    if n},
                'tcp_timeouts_by_host': dict(sorted(self.timeouts.items())),
                'tcp_spurious_rtos': _total(self.counters, 'TCPSpuriousRTOs'),
                'tcp_dsacks': _total(self.counters, 'TCPDSACKRecv'),
                'tcp_timeouts_by_connection': {
                    k: v[0] for k, v in sorted(self.rto_by_conn.items())
                    if v[0]},
                'tcp_rto_recovery_s_by_connection': {
                    k: v[1] for k, v in sorted(self.rto_by_conn.items())
                    if v[0]},
                'tcp_congestion_control': ','.join(sorted(self.tcp_cc))
                or None}


def _total(by_host, name):
    """A TCP counter summed over the hosts that report it (None when
    none does)."""
    got = [c[name] for c in by_host.values() if c and name in c]
    return sum(got) if got else None


class Faults:
    """An experiment's faults (workload.faults) on the fabric, each at its
    time after the common start ``t0``: the links' interfaces go down or
    up and the event log says when (the controller's reroute comes
    through its decision log). The poll waits no longer than the next
    one is due."""

    def __init__(self, faults, fab, log, t0, kill):
        from ..workload.faults import timeline
        self.fab, self.log, self.t0, self.kill = fab, log, t0, kill
        self.todo = timeline(faults)

    def wait_s(self, most):
        if not self.todo:
            return most
        return min(most, max(0.0, self.t0 + self.todo[0][0]
                             - time.monotonic()))

    def apply_due(self):
        while self.todo and time.monotonic() >= self.t0 + self.todo[0][0]:
            _, what, f = self.todo.pop(0)
            self.log.write(time.monotonic() - self.t0, 'fault', what=what,
                           kind=f.kind, target=f.target,
                           links=sorted(f.links))
            if f.kind == 'agent':
                self.kill(f.target)
            elif f.kind == 'controller':
                if what == 'down':
                    self.fab.kill_controller()
                else:
                    self.fab.restart_controller()
            else:
                self.fab.set_links(f.links, what == 'up')


class DecisionLog:
    """The controller's decision log (JSON lines it appends as it
    decides, times on the hosts' clock), copied into the run's event log
    as it arrives: 'classes' and 'rates' events as the simulator writes
    them; 'decision' records (flow-mods, time to the last barrier) are
    summarised in run.json."""

    def __init__(self, path):
        self.path = path            # what was there before is not this run's
        self.offset = os.path.getsize(path) \
            if path and os.path.exists(path) else 0
        self.buf = b''
        self.cut = 0                # lines a killed controller left cut
        self.applied_ms = []
        self.flow_mods = []
        self.decided = 0

    def copy(self, log, t0):
        if not self.path or not os.path.exists(self.path):
            return
        with open(self.path, 'rb') as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        *lines, self.buf = (self.buf + data).split(b'\n')
        for line in lines:
            try:
                r = json.loads(line)
            except ValueError:     # cut short: the controller was killed
                self.cut += 1
                continue
            kind = r.pop('kind')
            t = r.pop('t')
            if kind == 'decision':
                self.decided += bool(r['decided'])
                self.flow_mods.append(r['flow_mods'])
                if r['applied_ms'] is not None:
                    self.applied_ms.append(r['applied_ms'])
            else:
                log.write(max(t - t0, 0.0), kind, **r)

    def summary(self):
        ms = sorted(self.applied_ms)
        return {'decisions': self.decided,
                'flow_mods': int(sum(self.flow_mods)),
                'applied_ms_p50': ms[len(ms) // 2] if ms else None,
                'applied_ms_max': ms[-1] if ms else None}


def run(exp, log_path, say, attach=None, bar=None):
    """Run exp on a fabric brought up for it -- or, with ``attach`` (an
    AttachedFabric: a running controller's fabric, checked), on a fabric
    someone brought up, with agents started by hand (the commands are
    said). ``bar(done, total)``: the run's progress in transfers and
    marks, where a bar shows it."""
    plan = taskgraph.build(exp)
    g = exp.graph()
    fastest = max(d['capacity_bps'] for _, _, d in g.edges(data=True))
    link_mbps = fastest / exp.scale / 1e6        # the Fabric's fastest link
    if link_mbps > 1000:
        raise ConfigError('%s: scale: links would be emulated at %.0f Mbit/s;'
                          ' raise scale so that the fastest link (Gbit/s) '
                          '* 1000 / scale <= 1000 (this machine carries '
                          '~50 Mbit/s links well)'
                          % (exp.path or exp.name, link_mbps))
    out_dir = os.path.dirname(os.path.abspath(log_path))
    decision_log = os.path.join(out_dir, 'decisions.jsonl')
    if os.path.exists(decision_log):
        os.unlink(decision_log)
    if attach:
        if exp.faults:
            raise ConfigError('%s: faults need a fabric netsched brings up '
                              'and tears down itself, not --attach'
                              % (exp.path or exp.name))
        fabric = attach
    else:
        fabric = Fabric(ControllerSpec.from_experiment(exp, decision_log, g),
                        mtu=exp.mtu, queue_packets=exp.queue_packets,
                        fair_queues=exp.fair_queues, log=say,
                        host_tcp=exp.knobs.host_tcp())
    with EventLog(log_path) as log:
        log.write(0.0, 'run_start', backend='emu', policy=exp.policy,
                  seed=exp.seed, link_mbps=link_mbps)
        for j, p in sorted(plan.placements.items()):
            log.write(0.0, 'placement', job=j, **p)
        with fabric as fab:
            if any(f.kind == 'controller' for f in exp.faults):
                fab.short_backoff()
            c = Coordinator(exp, plan, fab, log, say, bar)
            if attach:
                say('start one agent in each of these hosts (e.g. in the '
                    'Mininet CLI), within %.0f s:' % CONNECT_TIMEOUT_S)
                for h in c.hosts:
                    say('  %s %s > /tmp/netsched-agent-%s.log 2>&1 &' % (
                        h, hand_command(c.pool.path, h), h))
                c.start_agents()
            else:
                c.start_agents(out_dir)
            say('%d agents connected; running' % len(c.hosts))
            info = c.run()
        # what the run measured of its own fidelity (pipeline.verdict)
        figures = info['fidelity']
        if exp.fidelity_forecast is not None:
            figures = dict(figures, packets=exp.fidelity_forecast)
        log.write(time.monotonic() - c.t0, 'fidelity', figures=figures)
        log.write(time.monotonic() - c.t0, 'run_end')
    return info
