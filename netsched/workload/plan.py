"""The plan both backends execute: its tasks, connections, jobs and
stages (the data types), filled in by taskgraph (data-parallel jobs,
tuning stages, traces), parallelism (collective and model-parallel jobs)
and chakra (execution traces), none of which the others import."""
import zlib
from dataclasses import dataclass, field

import numpy as np

from . import trace
from .. import topology as topo
from ..errors import ConfigError

AGENT_PORT = 7000
# a parameter-server job's slices of one iteration at most: each is a
# task of the plan per worker and server, and a slice of a few bytes would
# make billions (VGG-16 in 64 KiB slices is 8,800)
MAX_SLICES = 10000
FIRST_SPORT = 20000
# send orders whose gradient sends go through a host sender
# (host.prophet.Sender; the task's ``prophet`` field)
SENDERS = ('prophet', 'bytescheduler')


class Task:
    __slots__ = ('id', 'kind', 'host', 'dst', 'bytes', 'dur', 'deps', 'job',
                 'iter', 'coflow', 'conn', 'label', 'prio', 'not_before',
                 'worker', 'urgency', 'position', 'loss', 'order',
                 'prophet')

    def __init__(self, id, kind, host, job, iter, deps=(), dur=0.0,
                 dst=None, bytes=0, coflow=None, conn=None, label='',
                 prio=0, not_before=0.0, worker=None, urgency=None,
                 position=None, loss=None, order=None, prophet=None):
        self.id, self.kind, self.host, self.job, self.iter = (
            id, kind, host, job, iter)
        self.deps = list(deps)
        self.dur, self.dst, self.bytes = dur, dst, bytes
        self.coflow, self.conn, self.label, self.prio = (
            coflow, conn, label, prio)
        self.not_before, self.worker = not_before, worker
        # send: where its data sits in the next forward pass (0 = first
        # consumed .. 1); mark: the job's training loss after it
        self.urgency, self.loss = urgency, loss
        # send: its tensor's place in the next forward pass's consumption
        # order (tensor index over the model's tensors)
        self.position = position
        # send: its key among the sends waiting on its connection (lower
        # first), None = in the order they became ready
        self.order = order
        # send: a gradient send that goes through its worker's Prophet
        # sender (host.prophet): {'profile_iterations', 'credit_mb',
        # 'anchor': the task whose end begins its backward pass}
        self.prophet = prophet

    def to_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass
class Conn:
    id: int
    src: str
    dst: str
    sport: int
    dport: int
    job: str


@dataclass
class JobPlan:
    id: str
    model: str
    pattern: str
    workers: tuple                    # hosts
    servers: tuple                    # PS hosts
    iterations: int                   # planned (tuning: until stopped)
    arrival_s: float
    loss: tuple                       # (beta0, beta1, beta2)
    bytes_per_iteration: int          # network bytes of one coflow
    gradient_bytes: int
    group: str = None
    buckets: tuple = ()
    stage_ends: tuple = ()            # tuning: cumulative stage ends
    lanes: int = 1                    # ps: connections per pair each way
    # the job's profile: one iteration's compute (forward and backward
    # passes), and when after an iteration's start its first gradient is
    # ready to go (CASSINI's circle reads them)
    compute_s: float = 0.0
    first_send_s: float = 0.0

    def registered(self):
        """What a job's agents tell the controller of it at registration
        (control.demand._job_meta reads it)."""
        return {'iterations': self.iterations,
                'bytes_per_iteration': self.bytes_per_iteration,
                'group': self.group, 'stage_ends': list(self.stage_ends),
                'compute_s': self.compute_s,
                'first_send_s': self.first_send_s, 'pattern': self.pattern}

    def loss_at(self, k):
        b0, b1, b2 = self.loss
        return 1.0 / (b0 * k + b1) + b2


@dataclass
class StagePlan:
    id: str
    group: str
    index: int
    jobs: tuple                       # configurations running in it
    survivors: tuple
    barrier: int                      # task id
    start_after: int = None           # previous barrier task id


@dataclass
class Plan:
    tasks: list = field(default_factory=list)
    conns: list = field(default_factory=list)
    jobs: dict = field(default_factory=dict)
    stages: list = field(default_factory=list)
    coflow_bytes: dict = field(default_factory=dict)
    # coflows without a network flow: id -> arrival (they end there)
    instant_coflows: dict = field(default_factory=dict)
    # job -> {'candidates', 'chosen', 'by'}: placements a policy chose
    placements: dict = field(default_factory=dict)
    # host -> its leaf switch, for collective jobs' groups (placement)
    leaf_of: dict = field(default_factory=dict)

    def add(self, kind, host, job, it, **kw):
        t = Task(len(self.tasks), kind, host, job, it, **kw)
        self.tasks.append(t)
        return t.id

    def conn(self, src, dst, job, sport=None):
        c = Conn(len(self.conns), src, dst,
                 FIRST_SPORT + len(self.conns) if sport is None else sport,
                 AGENT_PORT, job)
        if sport is None and c.sport >= trace.TRACE_SPORT:
            raise ConfigError('the workload needs more than %d connections'
                              % (trace.TRACE_SPORT - FIRST_SPORT))
        self.conns.append(c)
        return c.id

    def conns_of(self, g, host):
        """Host ``host``'s connections as its agent registers them."""
        return [{'id': c.id, 'sport': c.sport, 'dport': c.dport,
                 'dst_ip': g.nodes[c.dst]['ip']}
                for c in self.conns if c.src == host]

    def hosts(self):
        return sorted({t.host for t in self.tasks if t.host} |
                      {t.dst for t in self.tasks if t.dst},
                      key=topo.natural)

    def send_totals(self):
        """(tasks, sends, bytes sent, the most bytes one host sends):
        what workload.bounds estimates a run's size from."""
        per_host = {}
        sends = sent = 0
        for t in self.tasks:
            if t.kind == 'send':
                sends += 1
                sent += t.bytes
                per_host[t.host] = per_host.get(t.host, 0) + t.bytes
        return (len(self.tasks), sends, float(sent),
                max(per_host.values(), default=0))


def urgencies_from(tensors, total):
    """Per tensor ((layer, Tensor) in forward order), where its bytes
    start in the next forward pass: the bytes of the tensors consumed
    before it over ``total`` (0 for the first layer's)."""
    sizes = np.array([t.bytes for _, t in tensors], float)
    return np.r_[0.0, np.cumsum(sizes)[:-1]] / max(total, 1.0)


def compute_factors(spec, jid, iterations, seed):
    """(iterations, workers) multipliers of each worker's iteration
    compute: 1 everywhere, or with ``compute_jitter`` > 0 a normal draw
    of mean 1 and that coefficient of variation, cut at 3 of them. Drawn
    from the experiment's seed and the job's id alone, so a job's
    stragglers are the same under every policy (runs pair by seed) and
    adding a job changes no other job's draws."""
    cv = spec.compute_jitter
    if not cv:
        return np.ones((iterations, spec.workers))
    rng = np.random.default_rng([int(seed), zlib.crc32(jid.encode())])
    return np.clip(rng.normal(1.0, cv, (iterations, spec.workers)),
                   1.0 - 3 * cv, 1.0 + 3 * cv)
