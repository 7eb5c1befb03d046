"""How big a run will be, and the limits that keep every run bounded.

:func:`estimate` counts what a run will hold and do (tasks, flows,
events, memory, log bytes; for ns-3 packets and wall time) from the
experiment's numbers alone: the model profiles' layer and tensor counts,
the trace's mapper and reducer counts, the topology's size. It builds
no plan, so a run too big to plan is refused before planning it.
:func:`admit` refuses, with the estimate and the key to change, a run
that would not fit this machine, and says what is worth a warning.
:func:`limits` gives the run's limits on simulated time, events and log
bytes (docs/experiment-format.md, "Limits"), derived from the estimate
unless the experiment sets them.
"""
import dataclasses
import gc
import math
import os
import shutil
from dataclasses import dataclass

from .. import topology as topo
from ..errors import ConfigError
from .plan import Plan

# the simulator's clock resolves a microsecond (sim.engine: half of
# resolution_s is added to each event time); past 1e8 s a double's
# spacing nears that, and a later time would stop the clock advancing
MAX_TIME_S = 1e8
MIN_TIME_S = 1e-6
# the derived limit on simulated time: this many times the plan's ideal
# duration, and never below the floor
TIME_FACTOR = 10.0
TIME_FLOOR_S = 60.0
# the derived limits on events and log bytes: this many times the
# estimate, never below the floors
COUNT_FACTOR = 20.0
EVENTS_FLOOR = 10 ** 6
LOG_FLOOR_BYTES = 1 << 30
# topologies at most this big: fattree,64 (65,536 hosts) builds in 2 s
# and 160 MB; fattree,200 took 3.5 GB and over 40 s before any check
MAX_HOSTS = 65536
# a sweep's runs at most (--seeds 1-100000000000 listed every seed;
# each run is checked before any starts, a fraction of a second each)
MAX_RUNS = 10000
# what one item costs in memory, measured on this code (bytes): a task
# of the plan, a flow of the simulator (its columns, its log line's
# texts), a node of the topology with its routes
TASK_BYTES = 450
FLOW_BYTES = 400
NODE_BYTES = 3000
BASE_BYTES = 150 << 20          # the interpreter, numpy, networkx
# a log line's bytes: a flow's, an iteration mark's, one link's share of
# a sample line
FLOW_LINE_BYTES = 160
MARK_LINE_BYTES = 80
SAMPLE_LINK_BYTES = 24
DECISION_LINE_BYTES = 120       # a circuit_decision line
# reading the log back (metrics.logread): events.scan parses a block of
# 16 MiB at a time, an event other than a flow line a dict of up to this
# many times its line's bytes (docs/testing.md, "Hostile and careless
# input"); a sample kept is its t and dt, and a link's share of it its
# number, utilisation and sample number
READ_BLOCK_BYTES = 1 << 24
READ_FACTOR = 16
SAMPLE_BYTES = 64
SAMPLE_LINK_KEPT_BYTES = 24
# ns-3's speed on this machine: packet hops a second of wall time
# (docs/benchmarks.md, "ns-3"), and how long a run may take unasked
NS3_HOPS_PER_S = 50000.0
NS3_LONG_S = 3600.0
# a share of this machine's memory above which a run warns, and above
# which it is refused
WARN_SHARE = 0.25
REFUSE_SHARE = 0.8
WARN_EVENTS = 5 * 10 ** 7
# a derived limit on the event log: at most this share of the disk free,
# which a multiple of the estimate can pass
DISK_SHARE = 0.5


def machine_bytes():
    """This machine's memory (bytes)."""
    try:
        return os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')
    except (ValueError, OSError, AttributeError):
        return 24 << 30


def _ints(spec):
    """The numbers of a topology spec ``name,a,b,k=v``: (name, [positional],
    {keyword}); None for what is not a number (topology.parse_spec says
    what is wrong with it)."""
    try:
        return topo.split_spec(spec)
    except topo.TopologyError:
        return None


def topology_hosts(spec):
    """How many hosts topology ``spec`` has, from its numbers alone (no
    graph built); None where the spec is not one this counts (parse_spec
    then judges it)."""
    got = _ints(spec)
    if got is None:
        return None
    name, a, kw = got
    names = {'fattree': ('k',), 'leafspine': ('leaves', 'spines',
                                              'hosts_per_leaf'),
             'dumbbell': ('n',), 'bigswitch': ('n',),
             'hybrid': ('racks', 'hosts_per_rack')}.get(name)
    if names is None:
        return None
    vals = list(a) + [kw.get(n) for n in names[len(a):]]
    if len(vals) < len(names) or any(v is None for v in vals):
        return None
    try:
        v = [float(x) for x in vals[:len(names)]]
    except OverflowError:             # an integer past every float
        return float('inf')
    if any(not math.isfinite(x) or x < 0 for x in v):
        return None
    if name == 'fattree':
        return v[0] ** 3 / 4
    if name == 'leafspine':
        return v[0] * v[2]
    if name == 'dumbbell':
        return 2 * v[0]
    if name == 'bigswitch':
        return v[0]
    return v[0] * v[1]


def check_topology(spec, where):
    """A ConfigError for a topology too big to build here, naming it."""
    n = topology_hosts(spec)
    if n is not None and n > MAX_HOSTS:
        raise ConfigError('%s: topology: %s has %.0f hosts; at most %d here '
                          '(fattree,64) - it would take gigabytes before '
                          'the run starts' % (where, spec, n, MAX_HOSTS))


def check_time(where, key, value, what='a time'):
    """A ConfigError for a time (s) the simulator's clock cannot hold."""
    if value is not None and value > MAX_TIME_S:
        raise ConfigError('%s: %s: %g s is past %s the simulator can '
                          'hold (at most %g s, about 3 years)'
                          % (where, key, value, what, MAX_TIME_S))


@dataclass
class Estimate:
    """What a run will hold and do, counted before it starts."""
    tasks: int = 0
    flows: int = 0                   # network transfers (sends, trace flows)
    events: int = 0
    memory_bytes: int = 0
    log_bytes: int = 0
    ideal_s: float = 0.0             # the plan's ideal duration
    samples: int = 0                 # link samples (sample_s)
    packets: int = 0                 # ns-3: data packets sent
    packet_hops: int = 0
    wall_s: float = None             # ns-3: estimated wall time
    hosts: int = 0
    bytes: float = 0.0               # data-center bytes sent

    def text(self):
        """One line: the estimate."""
        out = '%s tasks, %s flows, %s events, %s of memory, %s of event ' \
            'log, ideal duration %s' % (
                _n(self.tasks), _n(self.flows), _n(self.events),
                _b(self.memory_bytes), _b(self.log_bytes), _t(self.ideal_s))
        if self.wall_s is not None:
            out += '; ns-3: %s packets, %s packet hops, about %s of wall ' \
                'time' % (_n(self.packets), _n(self.packet_hops),
                          _t(self.wall_s))
        return out


def _n(x):
    x = float(x)
    for unit, div in (('G', 1e9), ('M', 1e6), ('k', 1e3)):
        if abs(x) >= div:
            return '%.3g%s' % (x / div, unit)
    return '%d' % x


def _b(x):
    x = float(x)
    for unit, div in (('TiB', 2 ** 40), ('GiB', 2 ** 30), ('MiB', 2 ** 20)):
        if x >= div:
            return '%.3g %s' % (x / div, unit)
    return '%.3g KiB' % (x / 1024)


def _t(s):
    if s >= 86400 * 2:
        return '%.3g days' % (s / 86400)
    if s >= 7200:
        return '%.3g h' % (s / 3600)
    if s >= 120:
        return '%.3g min' % (s / 60)
    return '%.3g s' % s


def _job_counts(spec, model, iterations, partitions='equal', one=None):
    """(tasks, sends, bytes sent) of ``iterations`` of a job of ``spec``
    on ``model``, counted as workload.taskgraph builds them: every
    worker's forward and backward pass per layer, a mark per worker, and
    the sends of its pattern (ring: 2(N-1) steps of every worker per
    bucket; ps: a push and a pull per worker and piece). ``one``: a
    collective job's :func:`_one_iteration`, where already counted."""
    from . import taskgraph
    if spec.collective is not None:
        tasks, sends, sent, _ = one or _one_iteration(spec, model)
        return tasks * iterations, sends * iterations, sent * iterations
    n = spec.workers
    layers = len(model.layers)
    if spec.pattern == 'ps':
        slice_b = spec.slice_mb * 2 ** 20 if spec.slice_mb else None
        pieces = 0
        for layer in model.layers:
            for t in layer.tensors:
                pieces += taskgraph.slices(t.bytes, slice_b, partitions) \
                    if slice_b else 1
        sends = 2 * n * pieces
        sent = 2 * n * model.bytes
    else:
        cap = spec.bucket_mb * 2 ** 20
        buckets, size = 0, 0
        for layer in reversed(model.layers):
            size += layer.bytes
            if size >= cap:
                buckets, size = buckets + 1, 0
        buckets += size > 0
        steps = 2 * max(n - 1, 1)
        sends = steps * n * max(buckets, 1)
        sent = steps * model.bytes
    tasks = n * (2 * layers + 1) + sends
    return tasks * iterations, sends * iterations, float(sent) * iterations


# a collective job's counts by (spec, model): a simulator run estimates
# twice (admitted, then given its limits), and a sweep checks every run
# of the same jobs before any starts
_ITERATIONS = {}
_ITERATIONS_KEPT = 16


def _one_iteration(spec, model):
    """(tasks, sends, bytes sent, the most bytes one rank sends) of one
    iteration of a collective or model-parallel job, counted on the plan
    workload.parallelism builds for it (on stand-in hosts: placement does
    not change the counts). Its schedule has no closed form to count by;
    one iteration's plan is small, but a large job's takes a second, so
    the counts are kept for the next estimate of the same job."""
    key = (spec, model)
    got = _ITERATIONS.get(key)
    if got is None:
        got = _count_iteration(spec, model)
        if len(_ITERATIONS) >= _ITERATIONS_KEPT:
            _ITERATIONS.clear()
        _ITERATIONS[key] = got
    return got


class _Counted:
    """A task of a plan built only to be counted: what
    Plan.send_totals reads (its dependencies are not kept)."""
    __slots__ = ('kind', 'host', 'bytes')

    def __init__(self, kind, host, bytes):
        self.kind, self.host, self.bytes = kind, host, bytes

    @property
    def deps(self):
        return []


class _CountingPlan(Plan):
    """A Plan whose tasks are :class:`_Counted`: the same counts, at a
    fraction of a full task's cost (collectives.emit skips a counted
    send's dependencies and coflow)."""
    counting = True

    def add(self, kind, host, job, it, bytes=0, **kw):
        self.tasks.append(_Counted(kind, host, bytes))
        return len(self.tasks) - 1


def _count_iteration(spec, model):
    from . import parallelism
    plan = _CountingPlan()
    hosts = ['h%d' % i for i in range(spec.workers)]
    # one leaf holds them all: a hierarchical collective without its
    # group_size is counted as one group, the most transfers it can make
    plan.leaf_of.update((h, 'leaf') for h in hosts)
    # the collector paused: the plan's objects live until it is counted,
    # and a collection meanwhile would traverse them and free nothing
    was = gc.isenabled()
    gc.disable()
    try:
        parallelism.job(plan, spec, 'estimate', model, 0.0, hosts,
                        (1.0, 1.0, 0.0), 1)
        return plan.send_totals()
    finally:
        if was:
            gc.enable()


def _comm_s(spec, model, link_bps, one=None):
    from . import taskgraph
    if spec.collective is not None:
        return (one or _one_iteration(spec, model))[3] * 8 / link_bps
    return taskgraph.analytical_comm_s(model, spec.pattern, spec.workers,
                                       link_bps, max(spec.ps_shards, 1),
                                       spec.bucket_mb)


def _jobs(exp, est):
    """Count the jobs and tuning groups into ``est``; a ConfigError where
    one job's ideal time is past the clock's range (its key named)."""
    from . import models
    where = exp.path or exp.name
    arrivals = 0.0
    specs = [(i, 'jobs[%d]' % i, j, j.iterations)
             for i, j in enumerate(exp.jobs)]
    for i, (base, configs, stages) in enumerate(exp.tuning):
        specs.append((i, 'tuning[%d]' % i, base,
                      configs * sum(it for it, _ in stages)))
    if exp.poisson_rate and specs:
        arrivals = len(specs) / exp.poisson_rate * 3
    total_s = 0.0
    for _, key, spec, iterations in specs:
        if spec.chakra is not None:        # an ET trace: one iteration built
            from . import chakra
            tasks, sends, sent, most, compute_s = chakra.counts(spec)
            est.tasks += tasks * iterations
            est.flows += sends * iterations
            est.bytes += sent * iterations
            comm_s = most * 8 / exp.link_bps
            if (compute_s + comm_s) * iterations > MAX_TIME_S:
                raise ConfigError(
                    '%s: %s: the trace takes %.3g s an iteration, past the '
                    '%g s the simulator can hold over %d iterations'
                    % (where, key, compute_s + comm_s, MAX_TIME_S,
                       iterations))
            total_s += iterations * (compute_s + comm_s)
            arrivals = max(arrivals, spec.arrival_s or 0.0)
            continue
        model = models.get(spec.model, exp.base_dir)
        # a collective job's iteration is built to be counted: once,
        # for its counts and its communication time alike
        one = _one_iteration(spec, model) if spec.collective is not None \
            else None
        tasks, sends, sent = _job_counts(spec, model, iterations, one=one)
        est.tasks += tasks
        est.flows += sends
        est.bytes += sent
        compute_s = (model.forward_ms + model.backward_ms) / 1e3 \
            * spec.compute_scale
        if not math.isfinite(compute_s) or \
                compute_s * iterations > MAX_TIME_S:
            raise ConfigError(
                '%s: %s: compute_scale: %g x %s\'s %g ms of compute an '
                'iteration makes %d iterations take %.3g s, past the %g s '
                'the simulator can hold' % (
                    where, key, spec.compute_scale, spec.model,
                    model.forward_ms + model.backward_ms, iterations,
                    compute_s * iterations, MAX_TIME_S))
        comm_s = _comm_s(spec, model, exp.link_bps, one)
        if not math.isfinite(comm_s) or comm_s * iterations > MAX_TIME_S:
            raise ConfigError(
                '%s: %s: model: %s\'s %.3g bytes of gradients take %.3g s '
                'an iteration at link_bps %g, past the %g s the simulator '
                'can hold over %d iterations (a faster link_bps, a smaller '
                'model)' % (where, key, spec.model, float(model.bytes),
                            comm_s, exp.link_bps, MAX_TIME_S, iterations))
        total_s += iterations * (compute_s + comm_s)
        arrivals = max(arrivals, spec.arrival_s or 0.0)
    est.ideal_s = max(est.ideal_s, arrivals + total_s)


def _trace(exp, est, loaded=None):
    """Count the trace into ``est`` (every mapper-reducer pair a flow, the
    bytes over one host link)."""
    from . import trace
    if loaded is None:
        loaded = trace.load(exp.trace)
    _, cofs = loaded
    flows = sum(len(c.mappers) * len(c.reducers) for c in cofs)
    sent = sum(c.bytes for c in cofs)
    est.flows += flows
    est.tasks += flows
    est.bytes += sent
    last = cofs[-1].arrival_s if cofs else 0.0
    serial_s = sent * 8 / exp.link_bps
    if serial_s > MAX_TIME_S:
        raise ConfigError(
            '%s: trace: %.3g bytes take %.3g s at link_bps %g, past the %g s '
            'the simulator can hold (a faster link_bps, trace.size_scale, '
            'trace.limit)' % (exp.path or exp.name, sent, serial_s,
                              exp.link_bps, MAX_TIME_S))
    est.ideal_s = max(est.ideal_s, last + serial_s)


def estimate(exp, loaded_trace=None):
    """The Estimate of ``exp`` from its counts (no plan built);
    ``loaded_trace``: the trace's (ports, coflows), where already read.
    A ConfigError where a count puts the run past what the simulator's
    clock holds."""
    est = Estimate()
    hosts = topology_hosts(exp.topology) or 0
    est.hosts = int(hosts)
    if exp.jobs or exp.tuning:
        _jobs(exp, est)
    if exp.trace:
        _trace(exp, est, loaded_trace)
    ideal = est.ideal_s
    horizon = limit_time_s(exp, ideal)
    nodes = hosts * 1.25 + 2
    links = max(hosts * 1.5, 1)
    est.samples = int(min(horizon, ideal + 1) / exp.sample_s) + 1
    marks = sum(j.workers * j.iterations for j in exp.jobs)
    span = min(horizon, ideal + 1)
    circuit, policy = _timed_decisions(exp, span)
    est.events = int(2 * est.flows + est.tasks + est.samples + marks
                     + circuit + policy)
    busy_links = min(links, 2 * est.flows + 1)
    est.log_bytes = int(est.flows * FLOW_LINE_BYTES + marks * MARK_LINE_BYTES
                        + est.samples * (40 + SAMPLE_LINK_BYTES * busy_links)
                        + circuit * DECISION_LINE_BYTES)
    # the report reads the log back: a block of it parsed at once, and
    # the link samples kept as arrays
    read = min(est.log_bytes, READ_BLOCK_BYTES) * READ_FACTOR + \
        est.samples * (SAMPLE_BYTES + SAMPLE_LINK_KEPT_BYTES * busy_links)
    est.memory_bytes = int(BASE_BYTES + est.tasks * TASK_BYTES
                           + est.flows * FLOW_BYTES + nodes * NODE_BYTES
                           + read)
    if exp.backend == 'ns3':
        segment = max(exp.mtu - 52, 1)
        est.packets = int(est.bytes / segment)
        # links a packet crosses: up to 6 in a fat-tree, 4 elsewhere
        hops = 6 if exp.topology.startswith(('fattree', 'hybrid')) else 4
        est.packet_hops = int(est.packets * hops * 1.05)
        est.wall_s = est.packet_hops / NS3_HOPS_PER_S
    return est


def _timed_decisions(exp, span_s):
    """(circuit decisions, policy decisions) a run takes on a timer over
    ``span_s`` of simulated time: one each ``period_s`` of the hybrid
    fabric's circuit scheduler and of the policy, where they have one
    (each is an event; a circuit decision is a log line too). A
    period_s of 1e-6 made a 0.27 s run 200,000 events, not 973."""
    from .. import policies
    from ..circuits import registry
    out = []
    for made in ((lambda: registry.make(*exp.circuits))
                 if exp.circuits else None,
                 lambda: policies.make(exp.policy, exp.policy_params)):
        period = getattr(made(), 'period_s', None) if made else None
        ok = isinstance(period, (int, float)) and period > 0
        out.append(int(span_s / period) + 1 if ok else 0)
    return tuple(out)


def limit_time_s(exp, ideal_s):
    """The limit on simulated time: the experiment's ``timeout_s``, else
    TIME_FACTOR times the ideal duration, at least TIME_FLOOR_S, within
    the clock's range."""
    if exp.timeout_s is not None:
        return float(exp.timeout_s)
    return min(MAX_TIME_S, max(TIME_FLOOR_S, TIME_FACTOR * ideal_s))


@dataclass(frozen=True)
class Limits:
    """A run's limits, and for each whether the experiment set it."""
    time_s: float
    events: int
    log_bytes: int
    time_given: bool = False
    events_given: bool = False
    log_given: bool = False

    def time_text(self):
        return 'timeout_s %g%s' % (self.time_s, '' if self.time_given else
                                   ' (derived: %gx the plan\'s ideal '
                                   'duration, at least %g s; set timeout_s '
                                   'to change it)' % (TIME_FACTOR,
                                                      TIME_FLOOR_S))

    def events_text(self):
        return 'max_events %d%s' % (self.events, '' if self.events_given
                                    else ' (derived; set max_events to '
                                    'change it)')

    def log_text(self):
        return 'max_log_mb %g%s' % (self.log_bytes / 2 ** 20, ''
                                    if self.log_given else
                                    ' (derived; set max_log_mb to change '
                                    'it)')


def limits(exp, est=None, out_dir='.'):
    """The Limits of a run of ``exp`` (``est``: its Estimate, made here
    when not given) into ``out_dir``: a derived log limit is at most
    DISK_SHARE of the disk free there (never below the estimate, which
    admit refused past the free disk), so that it is a bound."""
    est = est or estimate(exp)
    events = exp.max_events if exp.max_events is not None else int(max(
        EVENTS_FLOOR, COUNT_FACTOR * est.events))
    log = int(exp.max_log_mb * 2 ** 20) if exp.max_log_mb is not None \
        else int(max(LOG_FLOOR_BYTES, COUNT_FACTOR * est.log_bytes))
    free = _free_bytes(out_dir)
    if exp.max_log_mb is None and free is not None:
        log = min(log, int(max(est.log_bytes, DISK_SHARE * free)))
    return Limits(limit_time_s(exp, est.ideal_s), events, log,
                  exp.timeout_s is not None, exp.max_events is not None,
                  exp.max_log_mb is not None)


def admit(exp, loaded_trace=None, force=False, out_dir=None):
    """The Estimate of ``exp`` and the warnings it is worth; a ConfigError
    that gives the estimate and the key to change where the run would
    not fit this machine: memory, disk (the event log at its limit), or
    an ns-3 run of over an hour without ``force``."""
    est = estimate(exp, loaded_trace)
    where = exp.path or exp.name
    mem = machine_bytes()
    keys = _keys(exp)
    if est.memory_bytes > REFUSE_SHARE * mem:
        raise ConfigError(
            '%s: the run would need about %s of memory; this machine has %s '
            '(estimate: %s); make it smaller: %s'
            % (where, _b(est.memory_bytes), _b(mem), est.text(), keys))
    lim = limits(exp, est)
    if exp.max_log_mb is None and est.log_bytes > lim.log_bytes:
        lim = Limits(lim.time_s, lim.events, est.log_bytes)
    free = _free_bytes(out_dir)
    if free is not None and est.log_bytes > free:
        raise ConfigError(
            '%s: the event log would take about %s; %s has %s free '
            '(estimate: %s); make it smaller: %s, or a longer sample_s'
            % (where, _b(est.log_bytes), out_dir or '.', _b(free),
               est.text(), keys))
    warnings = []
    if est.memory_bytes > WARN_SHARE * mem:
        warnings.append('the run needs about %s of memory (this machine: '
                        '%s)' % (_b(est.memory_bytes), _b(mem)))
    if est.events > WARN_EVENTS:
        warnings.append('about %s events: a long run (%s)'
                        % (_n(est.events), keys))
    if est.wall_s is not None and est.wall_s > NS3_LONG_S:
        msg = ('ns-3 would take about %s of wall time (%s packet hops at '
               'about %s a second)' % (_t(est.wall_s), _n(est.packet_hops),
                                       _n(NS3_HOPS_PER_S)))
        if not force:
            raise ConfigError('%s: %s; give --long to run it anyway, or '
                              'make it smaller: %s' % (where, msg, keys))
        warnings.append(msg)
    return est, warnings


def _keys(exp):
    keys = []
    if exp.jobs or exp.tuning:
        keys.append('jobs[*].iterations, workers')
    if exp.trace:
        keys.append('trace.limit')
    keys.append('the topology')
    return ', '.join(keys)


def _free_bytes(out_dir):
    path = os.path.abspath(out_dir or '.')
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
    try:
        u = shutil.disk_usage(path)
    except OSError:
        return None
    # no size at all (/proc, /sys): not a disk; the --out rule says what
    # is wrong with the folder
    return u.free if u.total else None



def bounded(exp, force=False, out_dir=None):
    """``exp`` admitted (:func:`admit`) and given its time limit: the
    emulator and ns-3 stop at ``timeout_s``, so a run without one gets
    the derived limit there (the simulator applies all its limits
    itself, sim.runner). Returns (experiment, warnings)."""
    est, warnings = admit(exp, force=force, out_dir=out_dir)
    if exp.timeout_s is None and exp.backend != 'sim':
        exp = dataclasses.replace(
            exp, timeout_s=limit_time_s(exp, est.ideal_s))
    return exp, warnings
