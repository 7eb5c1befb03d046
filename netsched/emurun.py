"""The emulator backend: a coordinator in the root namespace, one agent
per emulated host (netsched.agent), real TCP through the fabric.

The coordinator brings the fabric up, hands every agent its slice of the
task graph over a Unix socket, starts everyone at one common time, and
turns the agents' timestamps into the same event log the simulator
writes (times relative to the start, in seconds; bytes in data-center
units). It runs the policy on what it has seen (transfers started and
finished) and sends the resulting priority class of every coflow to the
agents, which mark their packets with it. It samples the switch ports'
byte counters for link utilisation, releases tuning-stage barriers, and
watches the agents: an agent that exits or goes quiet ends the run with
an error naming the host, and ``timeout_s`` bounds the whole run.

Limitation (README): explicit per-flow rates (Varys' MADD) are not
enforced on the emulator; the policy's order is, through the classes.
"""
import json
import os
import selectors
import socket
import sys
import time

import numpy as np

from . import fluid, policies, sim, workload
from .emulator import ROOT, Fabric, intf_name
from .errors import ConfigError, NetschedError
from .events import EventLog

STUCK_S = 10.0
DECIDE_GAP_S = 0.005     # at most one policy decision per 5 ms
CONNECT_TIMEOUT_S = 60.0


class AgentFailed(NetschedError):
    pass


class Coordinator:
    def __init__(self, exp, plan, fab, log, say):
        self.exp, self.plan, self.fab, self.log, self.say = (
            exp, plan, fab, log, say)
        self.policy = policies.make(exp.policy, exp.policy_params)
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
        self.started = {}                    # send -> (ready, start) abs
        self.in_flight = set()
        self.recv_done = 0
        self.marks_done = 0
        self.coflow_left = {}
        self.unstarted = {}          # coflow -> its sends not yet started
        self.rate_limited = False          # the policy gives per-flow rates
        self.rates = {}              # send -> its rate, emulated B/s
        for t in self.sends.values():
            self.coflow_left[t.coflow] = self.coflow_left.get(t.coflow, 0) + 1
            self.unstarted.setdefault(t.coflow, {})[t.id] = t
        self.coflow_arrival = {}
        self.coflow_sent = {}
        self.marks_left = {}
        for t in plan.tasks:
            if t.kind == 'mark':
                k = (t.job, t.iter)
                self.marks_left[k] = self.marks_left.get(k, 0) + 1
        self.jobs_started = set()
        self.classes = {}
        self.net = sim.Network(exp.graph())
        self.conns = {c.id: c for c in plan.conns}

    # --- set-up ---------------------------------------------------------
    def slice_for(self, h):
        g = self.fab.g
        mine = [t.to_dict() for t in self.tasks if t.host == h]
        incoming = [{'id': t.id} for t in self.sends.values() if t.dst == h]
        conns = [{'id': c.id, 'sport': c.sport, 'dport': c.dport,
                  'dst_ip': g.nodes[c.dst]['ip']}
                 for c in self.plan.conns if c.src == h]
        return {'op': 'plan', 'host': h, 'ip': g.nodes[h]['ip'],
                'scale': self.exp.scale, 'queues': self.fab.queues,
                'tasks': mine, 'incoming': incoming, 'conns': conns,
                'n_in': sum(1 for c in self.plan.conns if c.dst == h),
                'listen_port': workload.AGENT_PORT, 'classes': self.classes,
                'tcp_cc': os.environ.get('NETSCHED_CC')}

    def start_agents(self, out_dir):
        path = os.path.join(self.fab.state.dir, 'coord.sock')
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(len(self.hosts) + 8)
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep +
                   os.environ.get('PYTHONPATH', ''))
        self.procs, self.logs = {}, {}
        for h in self.hosts:
            lp = os.path.join(out_dir, 'agent-%s.log' % h)
            f = open(lp, 'w')
            self.logs[h] = lp
            self.procs[h] = self.fab.popen(
                h, [sys.executable, '-m', 'netsched.agent', '--socket', path,
                    '--host', h], stdout=f, stderr=f, env=env)
            f.close()
        self.sock, self.rbuf, self.last_seen = {}, {}, {}
        self.server.settimeout(CONNECT_TIMEOUT_S)
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        pending = []
        while len(pending) < len(self.hosts):
            self._check_procs()
            self.server.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                s, _ = self.server.accept()
            except socket.timeout:
                raise AgentFailed('agents did not connect within %.0f s'
                                  % CONNECT_TIMEOUT_S) from None
            pending.append(s)
        for s in pending:
            s.settimeout(CONNECT_TIMEOUT_S)
            f = s.makefile('r')
            hello = json.loads(f.readline())
            h = hello['host']
            self.sock[h] = (s, f)
            self._send(h, self.slice_for(h))
        self._phase('listening')
        for h in self.hosts:
            self._send(h, {'op': 'connect'})
        self._phase('connected')
        self.sel = selectors.DefaultSelector()
        for h, (s, f) in self.sock.items():
            s.setblocking(False)
            self.rbuf[h] = b''
            self.sel.register(s, selectors.EVENT_READ, h)
            self.last_seen[h] = time.monotonic()

    def _phase(self, want):
        for h, (s, f) in self.sock.items():
            line = f.readline()
            if not line:
                self._check_procs()
                raise AgentFailed('agent on %s closed its channel during '
                                  'set-up (log: %s)' % (h, self.logs[h]))
            m = json.loads(line)
            if m.get('op') == 'error':
                raise AgentFailed('agent on %s: %s' % (h, m['msg']))
            if m.get('op') != want:
                raise AgentFailed('agent on %s: expected %s, got %r'
                                  % (h, want, m))

    def _send(self, h, msg):
        s = self.sock[h][0]
        blocking = s.getblocking()
        s.setblocking(True)
        s.sendall((json.dumps(msg, separators=(',', ':')) + '\n').encode())
        s.setblocking(blocking)

    def _check_procs(self):
        for h, p in self.procs.items():
            if p.poll() is not None:
                raise AgentFailed('agent on %s exited with code %s (log: %s)'
                                  % (h, p.returncode, self.logs[h]))

    # --- the run ----------------------------------------------------------
    def run(self):
        t0 = time.monotonic() + 0.5
        self.t0 = t0
        for h in self.hosts:
            self._send(h, {'op': 'go', 't0': t0})
        for st in self.plan.stages:
            if st.index == 0:
                self.log.write(min(self.plan.jobs[j].arrival_s
                                   for j in st.jobs), 'stage_start',
                               stage=st.id, group=st.group,
                               jobs=list(st.jobs))
        sampler = LinkSampler(self.fab, self.exp.sample_s)
        sampler.start(t0)
        dirty = False
        last_decision = 0.0
        last_progress = time.monotonic()
        total = len(self.sends) + self.n_marks
        while self.recv_done < len(self.sends) or \
                self.marks_done < self.n_marks:
            now = time.monotonic()
            if self.exp.timeout_s and now - t0 > self.exp.timeout_s:
                self.log.write(now - t0, 'run_incomplete',
                               why='timeout_s %.0f reached'
                               % self.exp.timeout_s)
                self.say('timeout_s reached: stopping with what was measured')
                break
            for key, _ in self.sel.select(
                    timeout=DECIDE_GAP_S if dirty else 0.05):
                dirty |= self._read(key.data)
            sampler.maybe_sample(self.log)
            self._liveness()
            if dirty and time.monotonic() - last_decision >= DECIDE_GAP_S:
                self._decide()
                dirty = False
                last_decision = time.monotonic()
            if time.monotonic() - last_progress >= 2.0:
                last_progress = time.monotonic()
                self.say('emu t=%.1f s: %d/%d transfers and marks done'
                         % (last_progress - t0,
                            self.recv_done + self.marks_done, total))
        sampler.sample(self.log)
        wall = time.monotonic() - t0
        for h in self.hosts:
            try:
                self._send(h, {'op': 'stop'})
            except OSError:
                pass
        cpu = self._collect_cpu()
        return {'agents': len(self.hosts), 'transfers': len(self.sends),
                'agent_cpu_s': cpu, 'run_s': wall,
                'tcp_retransmits': sum(self.retrans.values()),
                'link_mbps': self.fab.link_mbps,
                'startup_s': self.fab.timings.get('startup_s')}

    def _collect_cpu(self, wait_s=2.0):
        """Sum of the agents' CPU seconds, from their goodbyes."""
        self.cpu = {}
        self.retrans = {}
        deadline = time.monotonic() + wait_s
        while len(self.cpu) < len(self.hosts) and \
                time.monotonic() < deadline:
            for key, _ in self.sel.select(timeout=0.05):
                try:
                    self._read(key.data)
                except AgentFailed:
                    self.sel.unregister(key.fileobj)
        return sum(self.cpu.values()) if len(self.cpu) == len(self.hosts) \
            else None

    def _read(self, h):
        s = self.sock[h][0]
        try:
            data = s.recv(1 << 16)
        except BlockingIOError:
            return False
        if not data:
            try:                     # a dead agent: say how it ended
                self.procs[h].wait(timeout=1.0)
            except Exception:        # still running: it closed the channel
                pass
            self._check_procs()
            raise AgentFailed('agent on %s closed its channel (log: %s)'
                              % (h, self.logs[h]))
        self.last_seen[h] = time.monotonic()
        buf = self.rbuf[h] + data
        *lines, self.rbuf[h] = buf.split(b'\n')
        dirty = False
        for line in lines:
            dirty |= self._handle(h, json.loads(line))
        return dirty

    def _handle(self, h, m):
        op = m['op']
        t0 = self.t0
        if op == 'hb':
            return False
        if op == 'bye':
            self.cpu[h] = m['cpu_s']
            self.retrans[h] = m.get('retrans', 0)
            return False
        if op == 'error':
            raise AgentFailed('agent on %s: %s (log: %s)'
                              % (h, m['msg'], self.logs[h]))
        if op == 'job_start':
            if m['job'] not in self.jobs_started:
                self.jobs_started.add(m['job'])
                self.log.write(m['t'] - t0, 'job_start', job=m['job'])
            return False
        if op == 'start':
            t = self.sends[m['task']]
            self.started[t.id] = (m['ready'], m['t'])
            self.in_flight.add(t.id)
            self.unstarted[t.coflow].pop(t.id, None)
            a = self.coflow_arrival.get(t.coflow)
            self.coflow_arrival[t.coflow] = m['ready'] if a is None \
                else min(a, m['ready'])
            return True
        if op == 'recv':
            t = self.sends[m['task']]
            ready, start = self.started.get(t.id, (m['t'], m['t']))
            self.recv_done += 1
            self.in_flight.discard(t.id)
            self.log.write(m['t'] - t0, 'flow', id=t.id, coflow=t.coflow,
                           src=t.host, dst=t.dst, bytes=t.bytes,
                           start=start - t0)
            self.coflow_sent[t.coflow] = self.coflow_sent.get(
                t.coflow, 0) + t.bytes
            self.coflow_left[t.coflow] -= 1
            if self.coflow_left[t.coflow] == 0:
                self.log.write(self.coflow_arrival[t.coflow] - t0, 'coflow',
                               coflow=t.coflow, job=t.job, iter=t.iter,
                               bytes=self.plan.coflow_bytes[t.coflow])
                self.log.write(m['t'] - t0, 'coflow_end', coflow=t.coflow)
                return True
            # a transfer ended inside a coflow that goes on: only
            # policies that decide per flow, or whose rates limit the
            # transfers (what it freed is back-filled), are asked again
            return self.rate_limited or getattr(
                self.policy, 'decides_on', 'flows') != 'coflows'
        if op == 'mark':
            t = self.tasks[m['task']]
            jp = self.plan.jobs[t.job]
            self.marks_done += 1
            self.log.write(m['t'] - t0, 'iter', job=t.job, worker=t.worker,
                           iter=t.iter, loss=round(jp.loss_at(t.iter + 1), 6))
            k = (t.job, t.iter)
            self.marks_left[k] -= 1
            if self.marks_left[k] == 0 and t.iter == jp.iterations - 1:
                self.log.write(m['t'] - t0, 'job_end', job=t.job)
            self.mark_time[t.id] = m['t']
            for b in self.waiting_on.get(t.id, ()):
                self.barrier_left[b].discard(t.id)
                if not self.barrier_left[b]:
                    self._release(b)
            return False
        return False

    def _release(self, b):
        st = self.barriers[b]
        t = max(self.mark_time[d] for d in self.tasks[b].deps)
        self.log.write(t - self.t0, 'stage_end', stage=st.id, group=st.group,
                       survivors=list(st.survivors))
        for h in self.hosts:
            self._send(h, {'op': 'release', 'task': b, 't': t})
        nxt = [s for s in self.plan.stages
               if s.group == st.group and s.index == st.index + 1]
        if nxt:
            self.log.write(t - self.t0, 'stage_start', stage=nxt[0].id,
                           group=st.group, jobs=list(nxt[0].jobs))

    def _liveness(self):
        self._check_procs()
        now = time.monotonic()
        for h, seen in self.last_seen.items():
            if now - seen > STUCK_S:
                raise AgentFailed('agent on %s sent nothing for %.0f s: '
                                  'stuck (log: %s)' % (h, now - seen,
                                                       self.logs[h]))

    def _path(self, t):
        c = self.conns[t.conn]
        return self.net.path_id(t.host, t.dst, c.sport, c.dport)

    def _decide(self):
        """Run the policy on the transfers in flight (their coflows' sends
        not yet started are pending demand); send changed coflow classes
        to the agents. The coordinator does not see a transfer's progress:
        it is counted whole until it is received."""
        active = sorted(self.in_flight)
        if not active:
            return
        tasks = [self.sends[i] for i in active]
        cof_names = sorted({t.coflow for t in tasks})
        idx = {c: i for i, c in enumerate(cof_names)}
        pend = [t for c in cof_names for t in self.unstarted[c].values()] \
            if getattr(self.policy, 'clairvoyant', False) else []
        flow_path = np.array([self._path(t) for t in tasks], np.int64)
        pending_path = np.array([self._path(t) for t in pend], np.int64)
        snap = policies.Snapshot(     # the path table after every path_id
            t=time.monotonic() - self.t0, queues=self.fab.queues,
            link_capacity=self.net.capacity, path_links=self.net.table(),
            flow_path=flow_path,
            flow_coflow=np.array([idx[t.coflow] for t in tasks]),
            flow_remaining=np.array([float(t.bytes) for t in tasks]),
            flow_sent=np.zeros(len(tasks)),
            flow_rate=np.zeros(len(tasks)), coflow_id=tuple(cof_names),
            coflow_arrival=np.array([self.coflow_arrival[c] - self.t0
                                     for c in cof_names]),
            coflow_sent=np.array([float(self.coflow_sent.get(c, 0))
                                  for c in cof_names]),
            coflow_job=tuple(c.rsplit('/', 1)[0] for c in cof_names),
            pending_path=pending_path,
            pending_coflow=np.array([idx[t.coflow] for t in pend], np.int64),
            pending_bytes=np.array([float(t.bytes) for t in pend]))
        d = self.policy.decide(snap)
        cls = policies.coflow_class(
            snap, d, [self.classes.get(c, -1) for c in cof_names])
        changed = {c: int(k) for c, k in zip(cof_names, cls)
                   if self.classes.get(c) != int(k)}
        if changed and d.coflow_rank is not None:
            self.classes.update(changed)
            self.log.write(snap.t, 'classes', classes=changed)
            for h in self.hosts:
                self._send(h, {'op': 'classes', 'classes': changed})
        if d.flow_rate is not None:
            self._limit_rates(snap, tasks, cls, d.flow_rate)

    def _limit_rates(self, snap, tasks, cls, explicit):
        """A policy's per-flow rates (MADD) on the emulator: the fluid
        allocation with those rates reserved and the rest back-filled by
        class, as the simulator computes it, becomes each transfer's
        sending rate, which its agent keeps to (a token bucket between
        writes, as Varys' own daemons rate-limit in user space). A
        transfer the allocation gives nothing is left unlimited (its
        class keeps it behind)."""
        self.rate_limited = True
        rate, _ = fluid.allocate(snap.path_links, snap.flow_path,
                                 np.asarray(cls)[snap.flow_coflow],
                                 snap.link_capacity, explicit)
        per_host, logged = {}, {}
        for t, r in zip(tasks, rate.tolist()):
            bps = r / self.exp.scale / 8.0 if r > 0 else 0
            old = self.rates.get(t.id, 0)
            if (bps == 0) != (old == 0) or abs(bps - old) > 0.01 * old:
                self.rates[t.id] = bps
                per_host.setdefault(t.host, {})[t.id] = round(bps)
                logged[t.id] = r
        for h, rates in per_host.items():
            self._send(h, {'op': 'rates', 'rates': rates})
        if logged:
            self.log.write(snap.t, 'rates', rates={
                str(k): round(v) for k, v in logged.items()})


class LinkSampler:
    """Byte counters of every switch port (the root namespace's view of
    the switches' interfaces) -> utilisation of each directed link."""

    def __init__(self, fab, sample_s):
        self.fab, self.sample_s = fab, sample_s
        g = fab.g
        self.counters = []          # (path, link name, emulated bit/s)
        for u, v, d in g.edges(data=True):
            for s, o in ((u, v), (v, u)):
                if g.nodes[s]['role'] == 'host':
                    continue
                base = '/sys/class/net/%s/statistics/' % intf_name(
                    s, d['ports'][s])
                rate = fab.rate_bps(u, v)
                self.counters.append((base + 'tx_bytes', '%s->%s' % (s, o),
                                      rate))
                if g.nodes[o]['role'] == 'host':
                    self.counters.append((base + 'rx_bytes',
                                          '%s->%s' % (o, s), rate))

    def _read(self):
        out = []
        for path, _, _ in self.counters:
            try:
                with open(path) as f:
                    out.append(int(f.read()))
            except OSError:
                out.append(0)
        return np.array(out, float)

    def start(self, t0):
        self.t0 = t0
        while time.monotonic() < t0:
            time.sleep(0.005)
        self.last_t = time.monotonic()
        self.last = self._read()

    def maybe_sample(self, log):
        if time.monotonic() - self.last_t >= self.sample_s:
            self.sample(log)

    def sample(self, log):
        now = time.monotonic()
        cur = self._read()
        dt = now - self.last_t
        if dt <= 0:
            return
        util = (cur - self.last) * 8.0 / (np.array(
            [r for _, _, r in self.counters]) * dt)
        nz = np.flatnonzero(util > 0)
        if len(nz):
            log.write(self.last_t - self.t0, 'links', dt=dt, util={
                self.counters[i][1]: round(float(util[i]), 6) for i in nz})
        self.last, self.last_t = cur, now


def run(exp, log_path, say):
    if exp.trace is not None:
        raise ConfigError('%s: coflow traces run on the simulator '
                          '(--backend sim)' % (exp.path or exp.name))
    plan = workload.build(exp)
    link_mbps = exp.link_bps / exp.scale / 1e6
    if link_mbps > 1000:
        raise ConfigError('%s: scale: links would be emulated at %.0f Mbit/s;'
                          ' raise scale so that link_gbps * 1000 / scale <= '
                          '1000 (this machine carries ~50 Mbit/s links well)'
                          % (exp.path or exp.name, link_mbps))
    out_dir = os.path.dirname(os.path.abspath(log_path))
    with EventLog(log_path) as log:
        log.write(0.0, 'run_start', backend='emu', policy=exp.policy,
                  seed=exp.seed, link_mbps=link_mbps)
        with Fabric(exp.graph(), link_mbps=link_mbps, queues=exp.queues,
                    mtu=exp.mtu, queue_packets=exp.queue_packets,
                    fair_queues=exp.fair_queues, log=say) as fab:
            c = Coordinator(exp, plan, fab, log, say)
            c.start_agents(out_dir)
            say('%d agents connected; running' % len(c.hosts))
            info = c.run()
        log.write(time.monotonic() - c.t0, 'run_end')
    return info
