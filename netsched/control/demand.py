"""What the agents have told the controller, as the scheduler's view of
the network's demand: registered hosts, connections (5-tuple, ingress
switch, path) and planned sends, and per transfer and coflow how far
they got (started, received), per job its latest iteration. Pure: no
I/O, no clock; built into a policy Snapshot on request."""
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from . import openflow as of
from .. import routing
from .. import topology as topo
from ..errors import NetschedError
from ..policies import JobView, Snapshot


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
    iter: int = None          # the job's iteration it belongs to
    urgency: float = float('nan')   # place in the next forward pass
    position: float = float('nan')  # its tensor's consumption order
    ready: float = None       # when it became ready to go (started)
    done: bool = False
    sent: float = 0.0         # bytes acknowledged so far (progress)
    rate: float = 0.0         # bit/s over the last two progress reports
    seen: float = None        # time of the last progress report


@dataclass
class Conn:
    """A registered TCP connection: its match and ingress switch (where
    its rule goes) and the coflow whose data it carries now."""
    key: tuple                # (host, connection id)
    match: tuple              # sorted 5-tuple match
    dpid: int                 # the ingress switch
    path: int                 # path id in the fluid network
    coflow: str = None        # whose data it carries now
    ends: tuple = None        # (src host, dst host, sport, dport)


def _optional(x):
    return None if x is None else _finite(x, 'a time')


def _pattern(x):
    """A job's pattern as an agent sent it (None: an agent of before
    it was sent, which policies read as not known)."""
    if x is not None and not isinstance(x, str):
        raise TypeError('pattern must be a name, got %r' % (x,))
    return x


def _finite(x, what):
    """A number an agent sent, as a float: NaN and inf are no size or
    time (TypeError or ValueError, named by the registration's error)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError('%s must be a number, got %r' % (what, x))
    v = float(x)                      # an int past float's: OverflowError
    if not math.isfinite(v):
        raise ValueError('%s must be finite, got %r' % (what, x))
    return v


def _each(host, what, items, read):
    """``read(item)`` of each item of a registration's list ``what``
    (None: none); a malformed item is a NetschedError that names the
    host, the list and the item's index, raised before anything of the
    registration is kept (it was a KeyError, TypeError, AttributeError
    or OverflowError escaping the controller)."""
    if items is None:
        return []
    if not isinstance(items, (list, tuple)):
        raise NetschedError('register %s: %s must be a list, got %r'
                            % (host, what, items))
    out = []
    for i, x in enumerate(items):
        if not isinstance(x, dict):
            raise NetschedError('register %s: %s[%d] must be a mapping, '
                                'got %r' % (host, what, i, x))
        try:
            out.append(read(x))
        except NetschedError:
            raise
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise NetschedError('register %s: %s[%d]: %s%s' % (
                host, what, i, 'missing key ' if isinstance(e, KeyError)
                else '', e)) from None
    return out


def _job_meta(host, job, m):
    """What a host registered of job ``job``, checked and typed."""
    try:
        return {'iterations': int(m['iterations']),
                'bytes_per_iteration': _finite(
                    m['bytes_per_iteration'], 'bytes_per_iteration'),
                'group': m.get('group'),
                'stage_ends': tuple(int(x)
                                    for x in m.get('stage_ends', ())),
                'compute_s': _optional(m.get('compute_s')),
                'first_send_s': _optional(m.get('first_send_s')),
                'pattern': _pattern(m.get('pattern'))}
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise NetschedError('register %s: job %r: bad description '
                            '(%s: %s)' % (host, job, type(e).__name__,
                                           e))


class Demand:
    """The agents' reports kept as the scheduler's view of the demand
    (the module docstring says what), from which each decision's policy
    Snapshot is built."""

    def __init__(self, g, net):
        self.g, self.net = g, net
        self.by_ip = topo.host_by_ip(g)
        self.ingress = {h: g.nodes[next(iter(g[h]))]['dpid']
                        for h in topo.hosts(g)}
        self.hosts = set()
        self.conns = {}               # (host, cid) -> Conn
        self.sends = {}               # id -> Send
        self.unstarted = {}           # coflow -> {id: Send}
        self.left = {}                # coflow -> sends not received
        self.senders = {}             # coflow -> hosts that send in it
        self.job_of = {}              # coflow -> job
        self.in_flight = set()
        self.arrival = {}             # coflow -> first ready time
        self.sent = {}                # coflow -> bytes received so far
        self.jobs = {}                # job -> {'iter': k, 't': time}
        self.job_meta = {}            # job -> what its agents registered
        self.views = {}               # job -> JobView, while it runs
        self.first_sends = {}         # job -> its first iteration's sends
        self.iteration_coflows = {}   # (job, iteration) -> its coflows
        self.iter_of = {}             # coflow -> its iteration
        self.carrying = {}            # coflow -> connections carrying it
        self.on_conn = {}             # (conn, coflow) -> sends not received
        self.head = {}                # conn -> the send it started last
        self.flying = {}              # conn -> {coflow: sends in flight}
        self.idle = set()             # connections done with their coflow
        self.job_hosts = {}           # job -> hosts that run its tasks

    def check_host(self, host):
        """Refuse a registration from a name that is not a host of this
        fabric, before anything of it is kept."""
        # a list for a host raised TypeError (unhashable) in the lookup
        if not isinstance(host, str) or host not in self.ingress:
            raise NetschedError('register: %r is not a host of this '
                                'fabric' % (host,))

    def add_host(self, host, conns, sends, jobs=None):
        """A host's connections, planned sends and what it knows of its
        jobs (validated first, so a bad registration changes nothing)."""
        self.check_host(host)
        new = _each(host, 'conns', conns, lambda c: self._conn(host, c))
        known = set(self.conns) | {c.key for c in new}
        plan = _each(host, 'sends', sends,
                     lambda s: self._planned(host, s, known))
        if not isinstance(jobs or {}, dict):
            raise NetschedError('register %s: jobs must be a mapping, got '
                                '%r' % (host, jobs))
        meta = {str(j): _job_meta(host, j, m)
                for j, m in (jobs or {}).items()}
        self.job_meta.update(meta)
        for j in list(meta) + [t.job for t in plan]:
            self.job_hosts.setdefault(j, set()).add(host)
        for c in new:
            self.conns[c.key] = c
        for t in plan:
            self.sends[t.id] = t
            self.unstarted.setdefault(t.coflow, {})[t.id] = t
            self.left[t.coflow] = self.left.get(t.coflow, 0) + 1
            self.senders.setdefault(t.coflow, set()).add(host)
            self.job_of[t.coflow] = t.job
            # a collective job has many coflows an iteration: the view
            # ends with the last of its last iteration's (end_coflow)
            self.iteration_coflows.setdefault((t.job, t.iter),
                                              set()).add(t.coflow)
            self.iter_of[t.coflow] = t.iter
            k = (t.conn, t.coflow)
            self.on_conn[k] = self.on_conn.get(k, 0) + 1
            if t.iter == 0:
                self.first_sends.setdefault(t.job, []).append(t)
        self.hosts.add(host)

    def _conn(self, host, c):
        dst = self.by_ip.get(c.get('dst_ip'))
        if dst is None:
            raise NetschedError('register %s: connection %r goes to %r, '
                                'not a host of this fabric'
                                % (host, c.get('id'), c.get('dst_ip')))
        match = of.check_match(of.connection_match(
            self.g.nodes[host]['ip'], c['dst_ip'], int(c['sport']),
            int(c['dport'])))
        ends = (host, dst, int(c['sport']), int(c['dport']))
        return Conn((host, int(c['id'])), tuple(sorted(match.items())),
                    self.ingress[host], self.net.path_id(*ends), ends=ends)

    def reroute(self):
        """The connections' paths again, after the routing changed (a
        hybrid fabric's circuits: fluid.Network.set_circuits; links
        down). One the router leaves with no route keeps its path, as on
        ns-3: its packets find no rule until a link comes back
        (workload.faults refuses fault sets that strand a planned
        connection, so only traffic the checks did not foresee)."""
        for c in self.conns.values():
            try:
                c.path = self.net.path_id(*c.ends)
            except routing.NoRoute:
                pass

    def _planned(self, host, s, known):
        key = (host, int(s['conn']))
        if key not in known:
            raise NetschedError('register %s: send %r uses connection %r, '
                                'which it did not register'
                                % (host, s.get('id'), s.get('conn')))
        u, pos = s.get('urgency'), s.get('position')
        for k in ('coflow', 'dst') + (('job',) if s.get('job') else ()):
            if not isinstance(s[k], str):   # dict keys, names in replies
                raise TypeError('%s must be a string, got %r' % (k, s[k]))
        nbytes = _finite(s['bytes'], 'bytes')
        if nbytes < 0:
            raise ValueError('bytes must be >= 0, got %r' % (s['bytes'],))
        return Send(int(s['id']), host, s['dst'], key, s['coflow'],
                    s.get('job') or s['coflow'].rsplit('/', 1)[0],
                    nbytes,
                    None if s.get('iter') is None else int(s['iter']),
                    float('nan') if u is None else float(u),
                    float('nan') if pos is None else float(pos))

    def send(self, task):
        """The registered transfer a report names; an unknown id is the
        agent's error, reported back to it."""
        t = self.sends.get(task)
        if t is None:
            raise NetschedError('report: transfer %r was never registered'
                                % (task,))
        return t

    def start(self, t, ready):
        """A transfer started; False if it was known to have, or to have
        ended (reports of two agents may cross: a short transfer's end
        can arrive before its start)."""
        if t.ready is not None or t.done:
            return False
        t.ready = float(ready)
        self.in_flight.add(t.id)
        self.head[t.conn] = t.id
        f = self.flying.setdefault(t.conn, {})
        f[t.coflow] = f.get(t.coflow, 0) + 1
        self.unstarted[t.coflow].pop(t.id, None)
        if t.coflow not in self.arrival and t.iter == 0:
            self._job_arrives(t.job, t.ready)
        a = self.arrival.get(t.coflow)
        self.arrival[t.coflow] = t.ready if a is None else min(a, t.ready)
        conn = self.conns[t.conn]
        if conn.coflow is not None:
            self.carrying[conn.coflow].discard(conn.key)
        conn.coflow = t.coflow
        self.idle.discard(conn.key)
        self.carrying.setdefault(t.coflow, set()).add(conn.key)
        return True

    def finish(self, t):
        """A transfer was received: 'coflow' if that ended its coflow,
        'flow' if not, None if it was known to have."""
        if t.done:
            return None
        t.done = True
        if t.id in self.in_flight:
            self.in_flight.discard(t.id)
            f = self.flying[t.conn]
            f[t.coflow] -= 1
            if not f[t.coflow]:
                del f[t.coflow]
        self.unstarted[t.coflow].pop(t.id, None)
        self.sent[t.coflow] = self.sent.get(t.coflow, 0.0) + t.bytes
        k = (t.conn, t.coflow)
        self.on_conn[k] -= 1
        conn = self.conns[t.conn]
        if self.on_conn[k] == 0 and conn.coflow == t.coflow:
            conn.coflow = None                # sent all it had of it
            self.carrying[t.coflow].discard(conn.key)
            self.idle.add(conn.key)
        self.left[t.coflow] -= 1
        return 'coflow' if self.left[t.coflow] == 0 else 'flow'

    def writing(self, t):
        """Whether a transfer in flight is the one its connection's
        sender writes now (or wrote last): an agent writes one transfer
        at a time per connection, so the others in flight there are
        written whole and only wait to be received."""
        return self.head.get(t.conn) == t.id

    def flying_coflows(self, key):
        """The coflows with transfers started on a connection and not yet
        received."""
        return self.flying.get(key, {}).keys()

    def progress(self, t, sent):
        """A sender's acknowledged bytes per transfer ({id: bytes});
        reports of transfers already received, or not known, are late
        and change nothing. True if any transfer's count grew."""
        grew = False
        for k, b in sent.items():
            s = self.sends.get(int(k))
            if s is None or s.done or s.ready is None:
                continue
            b = min(float(b), s.bytes)
            if b <= s.sent:
                continue
            if s.seen is not None and t is not None and t > s.seen:
                s.rate = 8.0 * (b - s.sent) / (t - s.seen)
            elif t is not None and t > s.ready:
                s.rate = 8.0 * b / (t - s.ready)
            s.sent, s.seen = b, t
            grew = True
        return grew

    def mark(self, job, iteration, t, loss=None):
        """A worker finished an iteration: job-aware policies read the
        progress (and the loss, where the job reports one)."""
        j = self.jobs.setdefault(job, {'iter': -1})
        j['iter'] = max(j['iter'], int(iteration))
        j['t'] = t
        v = self.views.get(job)
        if v is not None and int(iteration) + 1 > v.done:
            done = int(iteration) + 1
            self.views[job] = dataclasses.replace(
                v, done=done, losses=v.losses + ((
                    done, None if loss is None else float(loss), t),))

    def _job_arrives(self, job, t):
        """A job is in the policy's view from its first coflow's arrival
        until its last planned coflow ends (as in the simulator)."""
        m = self.job_meta.get(job)
        if m is None or job in self.views:
            return
        first = self.first_sends.get(job, [])
        load = self.net.link_bytes([self.conns[s.conn].path for s in first],
                                   [s.bytes for s in first])
        self.views[job] = JobView(
            job, t, m['iterations'],
            bytes_per_iteration=m['bytes_per_iteration'],
            iteration_load=load, group=m['group'],
            stage_ends=m['stage_ends'], compute_s=m['compute_s'],
            first_send_s=m['first_send_s'], pattern=m['pattern'])

    def end_coflow(self, coflow):
        """The connections that carried it carry nothing now; the last
        planned coflow of a job takes the job out of the view."""
        for key in self.carrying.pop(coflow, ()):
            self.conns[key].coflow = None
        job = self.job_of.get(coflow)
        v = self.views.get(job)
        it = self.iter_of.get(coflow)
        if v is not None and it == v.iterations - 1 and not any(
                self.left.get(c) for c in self.iteration_coflows[(job, it)]):
            del self.views[job]

    def snapshot(self, now, queues, clairvoyant):
        """The policy's view of the transfers in flight (their coflows'
        sends not yet started are pending demand, for clairvoyant
        policies), and those transfers. A transfer in flight has sent
        what its agent last reported (progress reports, for the policies
        that ask for them; otherwise nothing until it is received)."""
        tasks = [self.sends[i] for i in sorted(self.in_flight)]
        names = sorted({t.coflow for t in tasks})
        idx = {c: i for i, c in enumerate(names)}
        pend = [t for c in names for t in self.unstarted[c].values()] \
            if clairvoyant else []
        snap = Snapshot(
            t=now, queues=queues, link_capacity=self.net.capacity,
            flow_path=self._paths(tasks),
            pending_path=self._paths(pend),
            path_links=self.net.table(),        # after every path id
            flow_coflow=np.array([idx[t.coflow] for t in tasks], np.int64),
            flow_remaining=np.array([t.bytes - t.sent for t in tasks],
                                    float),
            flow_sent=np.array([t.sent for t in tasks], float),
            flow_rate=np.array([t.rate for t in tasks], float),
            coflow_id=tuple(names),
            coflow_arrival=np.array([self.arrival[c] for c in names], float),
            coflow_sent=np.array([self.sent.get(c, 0.0) for c in names])
            + np.bincount([idx[t.coflow] for t in tasks],
                          [t.sent for t in tasks], len(names)),
            coflow_job=tuple(self.job_of[c] for c in names),
            pending_coflow=np.array([idx[t.coflow] for t in pend], np.int64),
            pending_bytes=np.array([t.bytes for t in pend], float),
            flow_urgency=np.array([t.urgency for t in tasks], float),
            pending_urgency=np.array([t.urgency for t in pend], float),
            flow_position=np.array([t.position for t in tasks], float),
            pending_position=np.array([t.position for t in pend], float),
            jobs=dict(self.views))
        return snap, pend, tasks

    def _paths(self, sends):
        return np.array([self.conns[t.conn].path for t in sends], np.int64)
