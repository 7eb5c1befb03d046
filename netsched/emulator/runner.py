"""The emulator backend: a coordinator in the root namespace, one agent
per emulated host (netsched.emulator.agent), real TCP through the fabric,
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
import selectors
import socket
import sys
import time

from .. import ROOT
from ..errors import ConfigError, NetschedError
from ..events import EventLog
from ..workload import taskgraph
from .fabric import Fabric
from .links import LinkSampler

STUCK_S = 10.0
CONNECT_TIMEOUT_S = 60.0


class AgentFailed(NetschedError):
    pass


class Coordinator:
    def __init__(self, exp, plan, fab, log, say):
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
        self.started = {}                    # send -> (ready, start) abs
        self.recv_done = 0
        self.marks_done = 0
        self.coflow_left = {}
        for t in self.sends.values():
            self.coflow_left[t.coflow] = self.coflow_left.get(t.coflow, 0) + 1
        self.coflow_arrival = {}
        self.marks_left = {}
        for t in plan.tasks:
            if t.kind == 'mark':
                k = (t.job, t.iter)
                self.marks_left[k] = self.marks_left.get(k, 0) + 1
        self.jobs_started = set()
        self.decisions = DecisionLog(fab.decision_log)

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
                'listen_port': taskgraph.AGENT_PORT,
                'controller': self.fab.socket_path if self.fab.policy
                else None, 'run': self.fab.run_id,
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
                h, [sys.executable, '-m', 'netsched.emulator.agent',
                    '--socket', path, '--host', h],
                stdout=f, stderr=f, env=env)
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
            for key, _ in self.sel.select(timeout=0.05):
                self._read(key.data)
            sampler.maybe_sample(self.log)
            self.decisions.copy(self.log, t0)
            self._liveness()
            if time.monotonic() - last_progress >= 2.0:
                last_progress = time.monotonic()
                self.say('emu t=%.1f s: %d/%d transfers and marks done'
                         % (last_progress - t0,
                            self.recv_done + self.marks_done, total))
        sampler.sample(self.log)
        wall = time.monotonic() - t0
        self.decisions.copy(self.log, t0)
        for h in self.hosts:
            try:
                self._send(h, {'op': 'stop'})
            except OSError:
                pass
        cpu = self._collect_cpu()
        return {'agents': len(self.hosts), 'transfers': len(self.sends),
                'agent_cpu_s': cpu, 'run_s': wall,
                'tcp_retransmits': sum(self.retrans.values()),
                'controller': self.decisions.summary(),
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
            return
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
        for line in lines:
            m = json.loads(line)
            getattr(self, '_on_' + m['op'], self._on_unknown)(h, m)

    # --- what agents report -------------------------------------------------
    def _on_unknown(self, h, m):
        raise AgentFailed('agent on %s sent an unknown message %r'
                          % (h, m.get('op')))

    def _on_hb(self, h, m):
        pass

    def _on_bye(self, h, m):
        self.cpu[h] = m['cpu_s']
        self.retrans[h] = m.get('retrans', 0)

    def _on_error(self, h, m):
        raise AgentFailed('agent on %s: %s (log: %s)'
                          % (h, m['msg'], self.logs[h]))

    def _on_job_start(self, h, m):
        if m['job'] not in self.jobs_started:
            self.jobs_started.add(m['job'])
            self.log.write(m['t'] - self.t0, 'job_start', job=m['job'])

    def _on_start(self, h, m):
        t = self.sends[m['task']]
        self.started[t.id] = (m['ready'], m['t'])
        a = self.coflow_arrival.get(t.coflow)
        self.coflow_arrival[t.coflow] = m['ready'] if a is None \
            else min(a, m['ready'])

    def _on_recv(self, h, m):
        t0 = self.t0
        t = self.sends[m['task']]
        ready, start = self.started.get(t.id, (m['t'], m['t']))
        self.recv_done += 1
        self.log.write(m['t'] - t0, 'flow', id=t.id, coflow=t.coflow,
                       src=t.host, dst=t.dst, bytes=t.bytes,
                       start=start - t0)
        self.coflow_left[t.coflow] -= 1
        if self.coflow_left[t.coflow] == 0:
            self.log.write(self.coflow_arrival[t.coflow] - t0, 'coflow',
                           coflow=t.coflow, job=t.job, iter=t.iter,
                           bytes=self.plan.coflow_bytes[t.coflow])
            self.log.write(m['t'] - t0, 'coflow_end', coflow=t.coflow)

    def _on_mark(self, h, m):
        t = self.tasks[m['task']]
        jp = self.plan.jobs[t.job]
        self.marks_done += 1
        self.log.write(m['t'] - self.t0, 'iter', job=t.job, worker=t.worker,
                       iter=t.iter, loss=round(jp.loss_at(t.iter + 1), 6))
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


class DecisionLog:
    """The controller's decision log (JSON lines it appends as it
    decides, times on the hosts' clock), copied into the run's event log
    as it arrives: 'classes' and 'rates' events as the simulator writes
    them; 'decision' records (flow-mods, time to the last barrier) are
    summarised in run.json."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.buf = b''
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
            r = json.loads(line)
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


def run(exp, log_path, say):
    if exp.trace is not None:
        raise ConfigError('%s: coflow traces run on the simulator '
                          '(--backend sim)' % (exp.path or exp.name))
    plan = taskgraph.build(exp)
    link_mbps = exp.link_bps / exp.scale / 1e6
    if link_mbps > 1000:
        raise ConfigError('%s: scale: links would be emulated at %.0f Mbit/s;'
                          ' raise scale so that link_gbps * 1000 / scale <= '
                          '1000 (this machine carries ~50 Mbit/s links well)'
                          % (exp.path or exp.name, link_mbps))
    out_dir = os.path.dirname(os.path.abspath(log_path))
    decision_log = os.path.join(out_dir, 'decisions.jsonl')
    if os.path.exists(decision_log):
        os.unlink(decision_log)
    with EventLog(log_path) as log:
        log.write(0.0, 'run_start', backend='emu', policy=exp.policy,
                  seed=exp.seed, link_mbps=link_mbps)
        with Fabric(exp.graph(), link_mbps=link_mbps, queues=exp.queues,
                    mtu=exp.mtu, queue_packets=exp.queue_packets,
                    fair_queues=exp.fair_queues, log=say,
                    policy=exp.policy, policy_params=exp.policy_params,
                    decision_log=decision_log) as fab:
            c = Coordinator(exp, plan, fab, log, say)
            c.start_agents(out_dir)
            say('%d agents connected; running' % len(c.hosts))
            info = c.run()
        log.write(time.monotonic() - c.t0, 'run_end')
    return info
