"""The controller's scheduling core: what the agents report in, the
policy's decision and the OpenFlow rules and agent messages that apply
it out. Pure (FAUCET's shape): no sockets, no Ryu, no clock; time comes
in as ``now`` (seconds of the hosts' shared CLOCK_MONOTONIC).

What it learns, from the agents over the control channel:
  register  a host's connections (5-tuples) and its planned sends
            (transfer id, coflow, job, bytes in data-center units,
            connection): the demand the jobs will put on the network
  start     a transfer began (with the time it became ready)
  recv      a transfer's last byte arrived (reported by the receiver)
  mark      a worker finished an iteration (job progress)

What it decides, with the same policy code the simulator calls: a class
per coflow (ranks mapped by policies.stable_classes) and, where the
policy gives them, per-transfer rates (the fluid allocation with the
policy's rates reserved and the rest back-filled by class, as the
simulator computes it). It decides when flows start, when a coflow ends
(and at every transfer end for policies that decide per flow or give
rates), at the policy's recheck time, and at most once per
``decide_gap_s``.

How it applies a decision:
  - a rule per connection in the classification table of the
    connection's ingress switch that sets the DSCP of its class, owned
    by the cookie of the coflow it carries now (netsched.control.rules:
    only changes, deletes before adds; a finished coflow's rules go
    with one cookie delete);
  - the same classes to the agents that send in those coflows, so their
    own interface queues agree; rates to the agents that send the
    transfers (they keep to them with a token bucket).
"""
from dataclasses import dataclass

import numpy as np

from . import openflow as of
from .rules import Rule, RuleTable
from .. import fluid
from .. import topology as topo
from ..errors import NetschedError
from ..policies import Snapshot, coflow_class

DECIDE_GAP_S = 0.005          # at most one decision per 5 ms


@dataclass
class Send:
    """A planned transfer, as an agent registered it."""
    id: int
    host: str
    dst: str
    conn: tuple               # (host, connection id)
    coflow: str
    job: str
    bytes: float              # data-center bytes
    ready: float = None       # when it became ready to go (started)
    done: bool = False


@dataclass
class Conn:
    key: tuple                # (host, connection id)
    match: tuple              # sorted 5-tuple match
    dpid: int                 # the ingress switch
    path: int                 # path id in the fluid network
    coflow: str = None        # whose data it carries now


@dataclass
class Outcome:
    """What one event produces: FlowMods per switch, messages per agent
    host, records for the decision log, and the reply to a request."""
    mods: dict
    pushes: dict
    log: list
    decided: bool = False
    reply: dict = None        # for a request on the channel
    since: float = None       # the first report the decision answers
    core_ms: float = 0.0      # time the core took (measured by the app)

    @property
    def n_mods(self):
        return sum(len(v) for v in self.mods.values())


class Scheduler:
    def __init__(self, g, queues, policy, scale=1.0,
                 decide_gap_s=DECIDE_GAP_S):
        self.g, self.queues, self.policy = g, queues, policy
        self.scale = float(scale)
        self.decide_gap_s = decide_gap_s
        self.net = fluid.Network(g)
        self.ingress = {h: g.nodes[next(iter(g[h]))]['dpid']
                        for h in topo.hosts(g)}
        self.rules = RuleTable(queues)
        self.run = None
        self._reset()

    def _reset(self):
        self.hosts = set()
        self.conns = {}               # (host, cid) -> Conn
        self.sends = {}               # id -> Send
        self.unstarted = {}           # coflow -> {id: Send}
        self.left = {}                # coflow -> sends not received
        self.senders = {}             # coflow -> hosts that send in it
        self.job_of = {}              # coflow -> job
        self.ended = set()            # coflows ended since the last step
        self.in_flight = set()
        self.arrival = {}             # coflow -> first ready time
        self.sent = {}                # coflow -> bytes received so far
        self.classes = {}             # coflow -> class (ranked policies)
        self.rates = {}               # send -> emulated bytes/s
        self.serial = {}              # coflow -> owner serial (cookie)
        self.jobs = {}                # job -> {'iter': k, 't': time}
        self.rate_limited = False
        self.dirty = False
        self.dirty_since = None
        self.recheck_at = None
        self.last_decision = None
        self.decisions = 0

    # --- what the agents tell -------------------------------------------
    def register(self, req):
        """A host's connections and planned sends. A registration for
        another run first forgets the previous run (and its rules)."""
        host = req.get('host')
        if host not in self.ingress:
            raise NetschedError('register: %r is not a host of this '
                                'fabric' % (host,))
        out = Outcome({}, {}, [])
        run = str(req.get('run', ''))
        if run != self.run:
            out.mods = self.rules.apply({}, set(self.serial.values()))
            self.run = run
            self._reset()
        g = self.g
        by_ip = topo.host_by_ip(g)
        for c in req.get('conns', ()):
            dst = by_ip.get(c.get('dst_ip'))
            if dst is None:
                raise NetschedError('register %s: connection %r goes to '
                                    '%r, not a host of this fabric'
                                    % (host, c.get('id'), c.get('dst_ip')))
            key = (host, int(c['id']))
            match = of.check_match(of.connection_match(
                g.nodes[host]['ip'], c['dst_ip'], int(c['sport']),
                int(c['dport'])))
            self.conns[key] = Conn(key, tuple(sorted(match.items())),
                                   self.ingress[host],
                                   self.net.path_id(host, dst, c['sport'],
                                                    c['dport']))
        for s in req.get('sends', ()):
            key = (host, int(s['conn']))
            if key not in self.conns:
                raise NetschedError('register %s: send %r uses connection '
                                    '%r, which it did not register'
                                    % (host, s.get('id'), s.get('conn')))
            t = Send(int(s['id']), host, s['dst'], key, s['coflow'],
                     s.get('job') or s['coflow'].rsplit('/', 1)[0],
                     float(s['bytes']))
            self.sends[t.id] = t
            self.unstarted.setdefault(t.coflow, {})[t.id] = t
            self.left[t.coflow] = self.left.get(t.coflow, 0) + 1
            self.senders.setdefault(t.coflow, set()).add(host)
            self.job_of[t.coflow] = t.job
        self.hosts.add(host)
        return out

    def report(self, host, events, now=None):
        """Agent reports (start / recv / mark); what they change is
        applied at the next step."""
        was = self.dirty
        for ev in events:
            kind = ev.get('ev')
            if kind == 'start':
                self._start(self._send(ev), ev)
            elif kind == 'recv':
                self._recv(self._send(ev))
            elif kind == 'mark':
                j = self.jobs.setdefault(ev['job'], {'iter': -1})
                j['iter'] = max(j['iter'], int(ev['iter']))
                j['t'] = ev.get('t')
            else:
                raise NetschedError('report from %s: unknown event %r'
                                    % (host, kind))
        if self.dirty and not was:
            self.dirty_since = now

    def _send(self, ev):
        t = self.sends.get(ev.get('task'))
        if t is None:
            raise NetschedError('report: transfer %r was never registered'
                                % (ev.get('task'),))
        return t

    def _start(self, t, ev):
        if t.ready is not None:
            return
        t.ready = float(ev.get('ready', ev.get('t')))
        self.in_flight.add(t.id)
        self.unstarted[t.coflow].pop(t.id, None)
        a = self.arrival.get(t.coflow)
        self.arrival[t.coflow] = t.ready if a is None else min(a, t.ready)
        self.conns[t.conn].coflow = t.coflow
        self.serial.setdefault(t.coflow, len(self.serial) + 1)
        self.dirty = True

    def _recv(self, t):
        if t.done:
            return
        t.done = True
        self.in_flight.discard(t.id)
        self.rates.pop(t.id, None)
        self.sent[t.coflow] = self.sent.get(t.coflow, 0.0) + t.bytes
        self.left[t.coflow] -= 1
        if self.left[t.coflow] == 0:
            self.ended.add(t.coflow)
            self.dirty = True
        elif self.rate_limited or getattr(self.policy, 'decides_on',
                                          'flows') != 'coflows':
            self.dirty = True

    # --- deciding ---------------------------------------------------------
    def step(self, now):
        """Decide if something changed (or the policy's recheck time came)
        and the last decision is at least ``decide_gap_s`` old; apply
        ended coflows. Returns an Outcome (possibly empty)."""
        ended, self.ended = sorted(self.ended), set()
        for c in ended:
            self.classes.pop(c, None)
            for key, conn in self.conns.items():
                if conn.coflow == c:
                    conn.coflow = None
        released = [self.serial[c] for c in ended if c in self.serial]
        due = self.dirty or (self.recheck_at is not None
                             and now >= self.recheck_at)
        if due and self.last_decision is not None and \
                now - self.last_decision < self.decide_gap_s:
            due = False
        out = Outcome({}, {}, [])
        if due:
            self._decide(now, out)
        if due or released:         # rules change only with these
            out.mods = self.rules.apply(self._wanted(), released)
        return out

    def snapshot(self, now):
        """The policy's view of the transfers in flight (their coflows'
        sends not yet started are pending demand, for clairvoyant
        policies). A transfer in flight is counted whole until it is
        received: the agents report starts and ends, not progress."""
        tasks = [self.sends[i] for i in sorted(self.in_flight)]
        names = sorted({t.coflow for t in tasks})
        idx = {c: i for i, c in enumerate(names)}
        pend = [t for c in names for t in self.unstarted[c].values()] \
            if getattr(self.policy, 'clairvoyant', False) else []
        flow_path = np.array([self.conns[t.conn].path for t in tasks],
                             np.int64)
        pending_path = np.array([self.conns[t.conn].path for t in pend],
                                np.int64)
        snap = Snapshot(                 # the path table after every path
            t=now, queues=self.queues,
            link_capacity=self.net.capacity, path_links=self.net.table(),
            flow_path=flow_path,
            flow_coflow=np.array([idx[t.coflow] for t in tasks], np.int64),
            flow_remaining=np.array([t.bytes for t in tasks], float),
            flow_sent=np.zeros(len(tasks)), flow_rate=np.zeros(len(tasks)),
            coflow_id=tuple(names),
            coflow_arrival=np.array([self.arrival[c] for c in names], float),
            coflow_sent=np.array([self.sent.get(c, 0.0) for c in names]),
            coflow_job=tuple(self.job_of[c] for c in names),
            pending_path=pending_path,
            pending_coflow=np.array([idx[t.coflow] for t in pend], np.int64),
            pending_bytes=np.array([t.bytes for t in pend], float))
        return snap, tasks

    def _decide(self, now, out):
        out.since = self.dirty_since if self.dirty else now
        self.dirty = False
        self.recheck_at = None
        self.last_decision = now
        if not self.in_flight:
            return
        snap, tasks = self.snapshot(now)
        d = self.policy.decide(snap)
        self.decisions += 1
        out.decided = True
        self.recheck_at = d.recheck_at
        names = snap.coflow_id
        cls = coflow_class(snap, d, [self.classes.get(c, -1) for c in names])
        if d.coflow_rank is not None:
            changed = {c: int(k) for c, k in zip(names, cls)
                       if self.classes.get(c) != int(k)}
            if changed:
                self.classes.update(changed)
                out.log.append({'kind': 'classes', 't': now,
                                'classes': changed})
                per_host = {}
                for c, k in changed.items():
                    for h in self.senders.get(c, ()):
                        per_host.setdefault(h, {})[c] = k
                for h, m in sorted(per_host.items()):
                    out.pushes.setdefault(h, []).append(
                        {'op': 'classes', 'classes': m})
        if d.flow_rate is not None:
            self._limit_rates(snap, tasks, cls, d.flow_rate, out)

    def _limit_rates(self, snap, tasks, cls, explicit, out):
        """The policy's per-flow rates (MADD) with the rest back-filled
        by class, as the simulator allocates them, become each
        transfer's sending rate, kept by its agent. A transfer the
        allocation gives nothing is left unlimited (its class keeps it
        behind)."""
        self.rate_limited = True
        rate, _ = fluid.allocate(snap.path_links, snap.flow_path,
                                 np.asarray(cls)[snap.flow_coflow],
                                 snap.link_capacity, explicit)
        per_host, logged = {}, {}
        for t, r in zip(tasks, rate.tolist()):
            bps = r / self.scale / 8.0 if r > 0 else 0
            old = self.rates.get(t.id, 0)
            if (bps == 0) != (old == 0) or abs(bps - old) > 0.01 * old:
                self.rates[t.id] = bps
                per_host.setdefault(t.host, {})[str(t.id)] = round(bps)
                logged[str(t.id)] = round(r)
        for h, rates in sorted(per_host.items()):
            out.pushes.setdefault(h, []).append({'op': 'rates',
                                                 'rates': rates})
        if logged:
            out.log.append({'kind': 'rates', 't': snap.t, 'rates': logged})

    def _wanted(self):
        """The rule every connection should have now: the class of the
        coflow it carries, where the policy gave one."""
        return {key: Rule(c.dpid, c.match, self.classes[c.coflow],
                          self.serial[c.coflow])
                for key, c in self.conns.items()
                if c.coflow is not None and c.coflow in self.classes}

    # --- what `netsched status` shows ---------------------------------------
    def status(self):
        cof = {}
        for t in (self.sends[i] for i in sorted(self.in_flight)):
            r = cof.setdefault(t.coflow, {
                'class': self.classes.get(t.coflow), 'in_flight': 0,
                'pending': len(self.unstarted.get(t.coflow, ())),
                'owner': self.serial.get(t.coflow)})
            r['in_flight'] += 1
        conns = []
        for key, c in sorted(self.conns.items()):
            if c.coflow is None:
                continue
            live = [t for t in (self.sends[i] for i in self.in_flight)
                    if t.conn == key]
            conns.append({'host': key[0], 'id': key[1],
                          'match': dict(c.match), 'coflow': c.coflow,
                          'class': self.classes.get(c.coflow),
                          'rates_Bps': {str(t.id): self.rates[t.id]
                                        for t in live if t.id in self.rates}})
        return {'policy': getattr(self.policy, 'name', None),
                'run': self.run, 'hosts': sorted(self.hosts),
                'decisions': self.decisions,
                'jobs': {j: dict(v) for j, v in sorted(self.jobs.items())},
                'coflows': cof, 'connections': conns,
                'rules': {'%016x' % d: r
                          for d, r in self.rules.per_switch().items()}}

