"""The checks of an experiment file's sections: a Checker reads the keys
of one mapping and names file, key path and value in every ConfigError;
the jobs, tuning groups, circuits, faults, ns-3 section and simulator
model are read with it here (pipeline.experiment puts them together,
pipeline.knobs reads the measuring knobs with it).
"""
import dataclasses
import numbers
import sys
from dataclasses import dataclass

from .. import topology as topo
from ..errors import ConfigError
from ..spec import did_you_mean
from ..workload import bounds

PATTERNS = ('ring', 'ps')
PLACEMENTS = ('random', 'packed')
# the order in which a connection's ready sends go: as they became ready
# (back-propagation order), front layers first (P3), in Prophet's
# gradient blocks, or through a ByteScheduler-like per-worker queue
# under a byte credit (the last two: host.prophet)
SEND_ORDERS = ('ready', 'priority', 'prophet', 'bytescheduler')
# a job's Prophet knobs (``prophet: {...}``) and their defaults
# (host.prophet; the policy prophet has the same)
PROPHET_KNOBS = {'profile_iterations': 2, 'credit_mb': 4.0}
# a job's ByteScheduler knobs (``bytescheduler: {...}``; the partition
# size is its slice_mb); the policy bytescheduler has the same default
BYTESCHEDULER_KNOBS = {'credit_mb': 4.0}


# a job's iterations at most: the plan holds every iteration's tasks
# (10000 of a 2-worker ResNet-50 ring: 4.5 M tasks, 22 s and 1.8 GB to
# check; 2**63 raised ValueError in numpy, 10**5 ran for minutes)
MAX_ITERATIONS = 10000


# the ns-3 backend's section (``ns3: {...}``) and its defaults
NS3_CONGESTION = ('bbr', 'cubic', 'newreno')
# the controller's latency on the emulator: rules in the switches a
# median 3.2 ms after the decision (docs/fidelity.md)
NS3_CONTROL_DELAY_S = 0.003
# DCTCP's marking threshold as queueing delay: K = 65 packets of 1,500
# bytes at 10 Gbit/s, the DCTCP paper's setting
NS3_CE_THRESHOLD_S = 78e-6


@dataclass(frozen=True)
class Ns3Config:
    """How the ns-3 backend runs (docs/ns3.md)."""
    control_delay_s: float = NS3_CONTROL_DELAY_S
    congestion_control: str = 'cubic'
    ecn: bool = False                 # DCTCP, switches mark CE
    ce_threshold_s: float = NS3_CE_THRESHOLD_S


@dataclass(frozen=True)
class JobSpec:
    id: str
    model: str
    pattern: str
    workers: int
    iterations: int
    ps_shards: int = 1
    arrival_s: float = None
    placement: object = 'packed'      # 'random' | 'packed' | list of hosts
    bucket_mb: float = 25.0
    loss: tuple = None                # (beta0, beta1, beta2) or None
    compute_scale: float = 1.0        # multiplies the profile's compute
    # coefficient of variation of a worker's iteration compute (drawn
    # per worker and iteration from the experiment's seed): stragglers
    compute_jitter: float = 0.0
    group: str = None                 # tuning group id
    stages: tuple = ()                # ((iterations, keep), ...) for tuning
    slice_mb: float = None            # ps: tensors sent in slices of this
    send_order: str = 'ready'         # or 'priority': front layers first
    # send_order prophet: {'profile_iterations', 'credit_mb'}, send_order
    # bytescheduler: {'credit_mb'}, as a tuple of (key, value) pairs;
    # None: the policy's, else the defaults
    prophet: tuple = None
    # candidate placements (host tuples) the policy chooses among as the
    # plan is built (Policy.place; CASSINI's placement); () = none
    candidates: tuple = ()
    # collective: and parallelism: (workload.parallelism.Parallel);
    # None for a ring or parameter-server job
    collective: object = None
    # what picks a ps send's connection among its pair's lanes (a
    # policy's workload(): 'urgency', Geryon's bytes, or 'position',
    # the tensor's place in the consumption order); not a file key
    lanes_by: str = 'urgency'
    # workload: {chakra: DIR}: the job's Chakra trace
    # (workload.chakra.Source); None for a model profile's job
    chakra: object = None


class Checker:
    """Reads keys out of one mapping, naming file and key path on error."""

    def __init__(self, where, d):
        if not isinstance(d, dict):
            raise ConfigError('%s: must be a mapping, got %s'
                              % (where, type(d).__name__))
        self.where, self.d, self.used = where, d, set()

    def fail(self, key, msg):
        raise ConfigError('%s: %s: %s' % (self.where, key, msg))

    def get(self, key, default=None, required=False):
        self.used.add(key)
        if key not in self.d or self.d[key] is None:
            if required:
                raise ConfigError('%s: missing key %r' % (self.where, key))
            return default
        return self.d[key]

    def num(self, key, default=None, required=False, minimum=None,
            positive=False, integer=False, maximum=None):
        v = self.get(key, default, required)
        if v is None:
            return v
        kind = numbers.Integral if integer else numbers.Real
        if not isinstance(v, kind) or isinstance(v, bool):
            self.fail(key, 'must be %s, got %r'
                      % ('an integer' if integer else 'a number', v))
        # NaN passes every bound and inf every minimum; runs compute in
        # floating point, where 10**400 overflows
        if v != v or not -sys.float_info.max <= v <= sys.float_info.max:
            self.fail(key, 'must be a finite number, got %r' % (v,))
        if positive and not v > 0:
            self.fail(key, 'must be > 0, got %r' % v)
        if minimum is not None and v < minimum:
            self.fail(key, 'must be >= %s, got %r' % (minimum, v))
        if maximum is not None and v > maximum:
            self.fail(key, 'must be <= %s, got %r' % (maximum, v))
        return v

    def choice(self, key, options, default=None, required=False):
        v = self.get(key, default, required)
        if v is not None and v not in options:
            self.fail(key, 'must be one of %s, got %r'
                      % (', '.join(options), v))
        return v

    def string(self, key, default=None, required=False):
        v = self.get(key, default, required)
        if v is not None and not isinstance(v, str):
            self.fail(key, 'must be a string, got %r' % (v,))
        return v

    def flag(self, key, default=False):
        v = self.get(key, default)
        if not isinstance(v, bool):
            self.fail(key, 'must be true or false, got %r' % (v,))
        return v

    def items(self, key, what='', default=None, required=False):
        """A non-empty list (``what``: of what, for the message)."""
        v = self.get(key, default, required)
        if not isinstance(v, list) or not v:
            self.fail(key, 'must be a non-empty list%s, got %r'
                      % (' of ' + what if what else '', v))
        return v

    def done(self):
        extra = sorted(set(self.d) - self.used, key=str)
        if extra:
            raise ConfigError('%s: unknown key %r (known: %s)%s'
                              % (self.where, extra[0],
                                 ', '.join(sorted(self.used)),
                                 did_you_mean(extra[0], self.used)))


def _placement(c, key, hosts):
    v = c.get(key, 'packed')
    if isinstance(v, str):
        if v not in PLACEMENTS:
            c.fail(key, 'must be random, packed or a list of hosts, got %r'
                   % v)
        return v
    if not isinstance(v, list) or not v:
        c.fail(key, 'must be random, packed or a list of hosts, got %r'
               % (v,))
    for h in v:
        if h not in hosts:
            c.fail(key, 'host %r does not exist in the topology (hosts: %s)'
                   % (h, ', '.join(hosts[:4]) + (' ...' if len(hosts) > 4
                                                  else '')))
    if len(set(v)) != len(v):
        c.fail(key, 'lists a host twice: %r' % (v,))
    return tuple(v)


def _loss(c):
    v = c.get('loss')
    if v is None:
        return None
    lc = Checker('%s: loss' % c.where, v)
    b = (lc.num('beta0', required=True, positive=True),
         lc.num('beta1', required=True, positive=True),
         lc.num('beta2', required=True, minimum=0))
    lc.done()
    return tuple(float(x) for x in b)


def read_job(where, d, hosts, models_dir, index, group=None):
    from ..workload import models
    c = Checker(where, d)
    jid = c.get('id', group or 'job%d' % index)
    if isinstance(jid, bool) or not isinstance(jid, (str, int)):
        c.fail('id', 'must be a string, got %r' % (jid,))
    jid = str(jid)
    if 'workload' in d:
        return c, _chakra_job(c, jid, hosts, models_dir, group)
    model = c.string('model', required=True)
    try:
        models.get(model, models_dir)
    except ConfigError as e:
        c.fail('model', str(e))
    from ..workload import parallelism
    collective = any(k in d for k in parallelism.KEYS)
    c.used.update(parallelism.KEYS)
    if collective and 'pattern' in d:
        c.fail('pattern', 'a job with %s has no pattern' % ' or '.join(
            k for k in parallelism.KEYS if k in d))
    pattern = 'collective' if collective else \
        c.choice('pattern', PATTERNS, required=True)
    workers = c.num('workers', required=True, integer=True, minimum=1)
    if collective:
        collective = parallelism.read(c.where, d, workers,
                                      models.get(model, models_dir))
    if pattern == 'ring' and workers < 2:
        c.fail('workers', 'ring all-reduce needs at least 2 workers, got %d'
               % workers)
    shards = c.num('ps_shards', 1, integer=True, minimum=1)
    if pattern != 'ps' and 'ps_shards' in d:
        c.fail('ps_shards', 'only a ps job has parameter-server shards')
    iterations = None if group else c.num('iterations', required=True,
                                          integer=True, minimum=1,
                                          maximum=MAX_ITERATIONS)
    arrival = c.num('arrival_s', None, minimum=0)
    bounds.check_time(where, 'arrival_s', arrival, 'the arrival')
    placement = _placement(c, 'placement', hosts)
    need = workers + (shards if pattern == 'ps' else 0)
    if isinstance(placement, tuple) and len(placement) != need:
        c.fail('placement', 'lists %d hosts; this job needs %d (%d workers'
               '%s)' % (len(placement), need, workers,
                        ' + %d parameter servers' % shards
                        if pattern == 'ps' else ''))
    if need > len(hosts):
        c.fail('workers', 'the job needs %d hosts; the topology has %d'
               % (need, len(hosts)))
    candidates = _candidates(c, hosts, need, group)
    bucket = c.num('bucket_mb', 25.0, positive=True)
    if pattern not in ('ring', 'collective') and 'bucket_mb' in d:
        c.fail('bucket_mb', 'only a ring job fuses gradients into buckets')
    slice_mb = c.num('slice_mb', None, positive=True)
    if pattern != 'ps' and slice_mb is not None:
        c.fail('slice_mb', 'only a ps job sends its tensors in slices')
    order = c.choice('send_order', SEND_ORDERS, 'ready')
    prophet = _prophet(c, order)
    loss = _loss(c)
    cscale = c.num('compute_scale', 1.0, minimum=0)
    jitter = c.num('compute_jitter', 0.0, minimum=0, maximum=0.3)
    return c, JobSpec(jid, model, pattern, workers, iterations or 0,
                      shards if pattern == 'ps' else 0,
                      None if arrival is None else float(arrival), placement,
                      float(bucket), loss, float(cscale),
                      compute_jitter=float(jitter),
                      slice_mb=None if slice_mb is None else float(slice_mb),
                      send_order=order, prophet=prophet,
                      candidates=candidates, collective=collective or None)


def _chakra_job(c, jid, hosts, base, group):
    """A job that runs a Chakra trace (``workload: {chakra: DIR}``,
    workload.chakra): a worker per rank file."""
    from ..workload import chakra
    if group is not None:
        c.fail('workload', 'a tuning group runs a model profile, not a '
               'Chakra trace')
    src = chakra.source(c.where, c.get('workload'), base)
    workers = c.num('workers', src.ranks, integer=True, minimum=1)
    if workers != src.ranks:
        c.fail('workers', 'the trace has %d ranks, got %d'
               % (src.ranks, workers))
    iterations = c.num('iterations', 1, integer=True, minimum=1,
                       maximum=MAX_ITERATIONS)
    arrival = c.num('arrival_s', None, minimum=0)
    bounds.check_time(c.where, 'arrival_s', arrival, 'the arrival')
    placement = _placement(c, 'placement', hosts)
    if isinstance(placement, tuple) and len(placement) != workers:
        c.fail('placement', 'lists %d hosts; the trace has %d ranks'
               % (len(placement), workers))
    if workers > len(hosts):
        c.fail('workers', 'the trace has %d ranks; the topology has %d '
               'hosts' % (workers, len(hosts)))
    cscale = c.num('compute_scale', 1.0, minimum=0)
    jitter = c.num('compute_jitter', 0.0, minimum=0, maximum=0.3)
    return JobSpec(jid, src.name, 'chakra', workers, int(iterations),
                   0, None if arrival is None else float(arrival),
                   placement, loss=_loss(c), compute_scale=float(cscale),
                   compute_jitter=float(jitter), chakra=src)


def _candidates(c, hosts, need, group):
    """A job's candidate placements (``candidates: [[hosts], ...]``):
    each a list of ``need`` distinct hosts of the topology; the policy
    picks one as the plan is built. Not with ``placement``, nor in a
    tuning group."""
    v = c.get('candidates')
    if v is None:
        return ()
    if group is not None:
        c.fail('candidates', 'a tuning group places its configurations '
               'with placement')
    if 'placement' in c.d:
        c.fail('candidates', 'give placement or candidates, not both')
    if not isinstance(v, list) or len(v) < 2 or \
            not all(isinstance(x, list) for x in v):
        c.fail('candidates', 'must be a list of two or more host lists, '
               'got %r' % (v,))
    out = []
    for i, hs in enumerate(v):
        pc = Checker('%s: candidates[%d]' % (c.where, i), {'placement': hs})
        placed = _placement(pc, 'placement', hosts)
        if len(placed) != need:
            c.fail('candidates', '[%d] lists %d hosts; this job needs %d'
                   % (i, len(placed), need))
        out.append(placed)
    return tuple(out)


def _prophet(c, order):
    """A job's Prophet knobs (``prophet: {profile_iterations: N,
    credit_mb: X}``), checked; only with ``send_order: prophet`` (under
    the policy prophet they go in ``policy_params: prophet``). Or its
    ByteScheduler knobs (``bytescheduler: {credit_mb: X}``), only with
    ``send_order: bytescheduler``."""
    b = c.get('bytescheduler')
    if b is not None:
        if order != 'bytescheduler':
            c.fail('bytescheduler', 'ByteScheduler\'s knobs are for a job '
                   'with send_order: bytescheduler (this one has %s); under '
                   'the policy bytescheduler give them in policy_params: '
                   'bytescheduler' % order)
        if c.get('prophet') is not None:
            c.fail('prophet', 'Prophet\'s knobs are for a job with '
                   'send_order: prophet (this one has bytescheduler)')
        bc = Checker('%s: bytescheduler' % c.where, b)
        credit = bc.num('credit_mb', BYTESCHEDULER_KNOBS['credit_mb'],
                        positive=True)
        bc.done()
        return (('credit_mb', float(credit)),)
    v = c.get('prophet')
    if v is None:
        return None
    if order != 'prophet':
        c.fail('prophet', 'Prophet\'s knobs are for a job with send_order: '
               'prophet (this one has %s); under the policy prophet give '
               'them in policy_params: prophet' % order)
    pc = Checker('%s: prophet' % c.where, v)
    n = pc.num('profile_iterations', PROPHET_KNOBS['profile_iterations'],
               integer=True, minimum=1)
    credit = pc.num('credit_mb', PROPHET_KNOBS['credit_mb'], positive=True)
    pc.done()
    return (('profile_iterations', int(n)), ('credit_mb', float(credit)))


def read_tuning(where, d, hosts, models_dir, index):
    per_config = None
    if isinstance(d, dict) and isinstance(d.get('placement'), list) and \
            d['placement'] and all(isinstance(p, list)
                                   for p in d['placement']):
        per_config = d['placement']          # one host list per config
        d = dict(d, placement='packed')
    c, base = read_job(where, d, hosts, models_dir, index,
                   group=d.get('id', 'tuning%d' % index)
                   if isinstance(d, dict) else None)
    if isinstance(base.placement, tuple):
        c.fail('placement', 'a tuning group takes random, packed or a list '
               'of host lists, one per configuration')
    configs = c.num('configs', required=True, integer=True, minimum=2)
    if per_config is not None:
        if len(per_config) != configs:
            c.fail('placement', 'lists %d host lists for %d configurations'
                   % (len(per_config), configs))
        placed = []
        for i, hs in enumerate(per_config):
            pc = Checker('%s: placement[%d]' % (where, i),
                          {'placement': hs})
            placed.append(_placement(pc, 'placement', hosts))
            need = base.workers + (base.ps_shards if base.pattern == 'ps'
                                   else 0)
            if len(hs) != need:
                c.fail('placement', '[%d] lists %d hosts; a configuration '
                       'needs %d' % (i, len(hs), need))
        base = dataclasses.replace(base, placement=tuple(placed))
    stages = c.items('stages', '{iterations, keep}', required=True)
    out = []
    for i, sd in enumerate(stages):
        sc = Checker('%s: stages[%d]' % (where, i), sd)
        it = sc.num('iterations', required=True, integer=True, minimum=1,
                    maximum=MAX_ITERATIONS)
        last = i == len(stages) - 1
        keep = sc.num('keep', None if last else 0.5, positive=True,
                      maximum=1)
        if last and keep is not None:
            sc.fail('keep', 'the last stage ends the group; it keeps none')
        sc.done()
        out.append((it, keep))
    c.done()
    return base, configs, tuple(out)


def read_circuits(c, g, where, override=None):
    """The circuit scheduler of a hybrid fabric (``circuits: NAME`` or
    ``circuits: {scheduler: NAME, PARAM: VALUE, ...}``; default ``none``:
    the packet core only), checked; None on a fabric without circuit
    switches, where the key is an error. ``override``: NAME or
    NAME:key=value:... from the command line (parameters the file gives
    for the same scheduler are kept unless overridden)."""
    from .. import circuits
    v = c.get('circuits')
    if override is not None:
        name, params = circuits.parse_spec(override)
        if isinstance(v, dict) and v.get('scheduler') == name:
            params = dict({k: x for k, x in v.items() if k != 'scheduler'},
                          **params)
        if not topo.planes(g):
            raise ConfigError('--circuits: %s: the topology has no optical '
                              'circuit switch (use hybrid,...)' % where)
        v = dict(params, scheduler=name)
    if not topo.planes(g):
        if v is not None:
            c.fail('circuits', 'the topology has no optical circuit switch '
                   '(use hybrid,...)')
        return None
    if v is None:
        v = 'none'
    if isinstance(v, str):
        v = {'scheduler': v}
    if not isinstance(v, dict) or not isinstance(v.get('scheduler'), str):
        c.fail('circuits', 'must be a scheduler name or a mapping with '
               'scheduler and its parameters, got %r' % (v,))
    params = {k: x for k, x in v.items() if k != 'scheduler'}
    sched = circuits.make(v['scheduler'], params,
                          where='%s: circuits' % where)
    check = getattr(sched, 'check', None)
    if check is not None:
        try:
            check(topo.tors(g), len(topo.planes(g)))
        except ConfigError as e:
            c.fail('circuits', str(e))
    return v['scheduler'], params


def read_faults(c, g, where, big, has_trace):
    raw = c.get('faults')
    if raw is None:
        return ()
    if has_trace and isinstance(raw, list) and any(
            isinstance(f, dict) and 'agent' in f for f in raw):
        c.fail('faults', "an agent fault fails the jobs on its host, and a "
               "trace's coflows are not jobs: drop the trace or the fault")
    if big:
        c.fail('faults', 'a big switch has no links between switches to '
               'fail; drop big_switch')
    if any(r == topo.OCS for _, r in g.nodes(data='role')):
        c.fail('faults', 'faults on a hybrid fabric (circuit switches) are '
               'not supported; use a packet fabric')
    from ..workload import faults
    return faults.parse(raw, g, where)


# the simulator's model: its own (max-min, work-conserving) or another
# tool's rules for a coflow trace on a big switch (netsched.sim.reference,
# whose MODELS is the same tuple)
MODELS = ('maxmin', 'coflowsim', 'sincronia')


def read_ns3(c, where, backend, circuits, faults):
    """The ``ns3`` section, checked whatever the backend (a sweep may run
    the file on ns-3 later). A hybrid fabric's ``circuits`` and the
    ``faults`` run on ns-3 as on the simulator, so nothing else is
    refused here (``big_switch`` is, where it is read)."""
    raw = c.get('ns3', {})
    nc = Checker('%s: ns3' % where, raw)
    delay = nc.num('control_delay_ms', NS3_CONTROL_DELAY_S * 1e3, minimum=0,
                   maximum=10000)
    cc = nc.choice('congestion_control', NS3_CONGESTION, 'cubic')
    ecn = nc.get('ecn', False)
    if not isinstance(ecn, bool):
        nc.fail('ecn', 'must be true or false, got %r' % (ecn,))
    k = nc.num('ce_threshold_us', NS3_CE_THRESHOLD_S * 1e6, positive=True,
               maximum=1e6)
    nc.done()
    return Ns3Config(control_delay_s=float(delay) / 1e3,
                     congestion_control=cc, ecn=ecn,
                     ce_threshold_s=float(k) / 1e6)


def read_model(c, backend, big=True, tr=True, jobs=(), circuits=None,
           sim_packets='none'):
    """The ``model`` key, checked: another tool's model runs a coflow
    trace alone on a big switch, on the simulator, as a fluid (the
    policies it implements are checked by pipeline.run.check). Called
    once the backend is known (the defaults pass the rest), and again
    with the rest."""
    model = c.choice('model', MODELS, 'maxmin')
    if model == 'maxmin':
        return model
    why = None
    if backend != 'sim':
        why = 'runs on the simulator only (backend sim), got backend %s' \
            % backend
    elif tr is None:
        why = 'runs a coflow trace: the experiment has no trace section'
    elif jobs:
        why = 'runs a coflow trace alone: drop the jobs and tuning groups'
    elif circuits is not None:
        why = 'runs on a big switch: drop circuits'
    elif not big:
        why = 'runs on a big switch (only host ports are bottlenecks): ' \
            'set big_switch: true'
    elif sim_packets != 'none':
        why = 'is a fluid model: sim_packets must be none, got %s' \
            % sim_packets
    if why:
        c.fail('model', '%s %s' % (model, why))
    return model
