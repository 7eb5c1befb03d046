"""Experiment files: read, check, and turn into one validated Experiment.

An experiment is a YAML mapping; the keys are documented in
docs/experiment-format.md. Every problem is reported as a ConfigError that
names the file, the key path and the bad value, before anything starts.

Units. Everything in the file is in data-center units: link rates in
Gbit/s (``link_gbps``) or bit/s (``link_bps``), tensor sizes from the
model profiles in bytes, compute in ms, times in s. ``scale`` maps them
to the emulator: emulated bytes = bytes / scale, emulated rates =
rates / scale, and times are the same in both, so an emulated second is a
data-center second. Results are reported in data-center units with the
scale alongside (summary.json ``scale``; the CSVs carry both byte counts).
"""
import numbers
import os
import sys
import dataclasses
from dataclasses import dataclass, field

from .. import ROOT, qos
from ..spec import did_you_mean
from .. import topology as topo
from ..errors import ConfigError, TopologyError, read_text, yaml_loader
from . import knobs
from ..workload import bounds
from .knobs import Knobs

BACKENDS = ('emu', 'sim', 'ns3')
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
EMU_MAX_QUEUES = 8
INITIAL_WINDOW = 10          # packets: Linux's initial congestion window
# an experiment meant for the emulator decides on no less data than this
# many initial windows at its scale, on both backends (docs/fidelity.md)
THRESHOLD_FLOOR_WINDOWS = 2
# a job's iterations at most: the plan holds every iteration's tasks
# (10000 of a 2-worker ResNet-50 ring: 4.5 M tasks, 22 s and 1.8 GB to
# check; 2**63 raised ValueError in numpy, 10**5 ran for minutes)
MAX_ITERATIONS = 10000
# a link's rate (bit/s): from 1 kbit/s to 1 Pbit/s
MIN_LINK_BPS = 1e3
MAX_LINK_BPS = 1e15


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


@dataclass(frozen=True)
class TraceSpec:
    path: str
    limit: int = None                 # first N coflows only
    time_scale: float = 1.0           # arrival times multiplied by this
                                      # (0: every coflow at once)
    skip: int = 0                     # drop the file's first N coflows
    size_scale: float = 1.0           # bytes multiplied by this
    racks: str = 'strict'             # rack i on host i, or i mod hosts
    start_s: float = None             # first kept coflow's arrival (None:
                                      # 0 if skip > 0, else the file's)


# Where a trace is: ``--trace PATH`` wins; else the file's trace.path, an
# absolute path or a name looked for beside the experiment file, then in
# $NETSCHED_TRACE (the trace file, or a folder of traces), then in the
# checkout's data/ folder. Nothing else reads NETSCHED_TRACE.
TRACE_ENV = 'NETSCHED_TRACE'
TRACE_DIR = os.path.join(ROOT, 'data')
TRACE_HELP = ('give --trace PATH, or set %s to the trace file or its folder '
              '(experiments/README.md, "Traces")' % TRACE_ENV)


def trace_places(name, base):
    """Where the trace ``name`` (an experiment file's trace.path, the
    file in folder ``base``) is looked for, in order: [(path or None,
    what the place is)]; a path of None is a setting that cannot hold it
    (said in the second part)."""
    if os.path.isabs(name):
        return [(name, name)]
    here = os.path.join(base, name)
    out = [(here, here)]
    env = os.environ.get(TRACE_ENV)
    if not env:
        out.append((None, '$%s (not set)' % TRACE_ENV))
    elif os.path.isdir(env):
        out.append((os.path.join(env, name), '$%s=%s' % (TRACE_ENV, env)))
    elif os.path.basename(env) == os.path.basename(name):
        out.append((env, '$%s=%s' % (TRACE_ENV, env)))
    else:                 # a file of another name is another trace
        out.append((None, '$%s=%s (%s)' % (
            TRACE_ENV, env, 'another file name' if os.path.exists(env)
            else 'no such file or folder')))
    data = os.path.join(TRACE_DIR, name)
    out.append((data, data))
    return out


def find_trace(name, base, where='trace'):
    """The trace file an experiment names (``trace_places``), or a
    ConfigError that says where it looked and how to point at it."""
    places = trace_places(name, base)
    for path, _ in places:
        if path is not None and os.path.isfile(path):
            return path
    raise ConfigError('%s: no such file %r; looked in %s; %s' % (
        where, name, ', '.join(what for _, what in places), TRACE_HELP))


@dataclass(frozen=True)
class Experiment:
    name: str
    path: str
    topology: str
    link_bps: float
    scale: float
    queues: object                    # int, or None: exact (sim only)
    backend: str
    seed: int
    policy: str
    policy_params: dict
    jobs: tuple
    policy_label: str = None          # as named: geryon:classes=1
    tuning: tuple = ()
    trace: TraceSpec = None
    poisson_rate: float = None        # jobs/s for jobs without arrival_s
    big_switch: bool = False
    mtu: int = 9000
    queue_packets: int = qos.QUEUE_PACKETS
    fair_queues: int = 16
    # how ranks map onto the Q classes (policies.base.CLASS_MAPS)
    class_map: str = 'stable'
    sample_s: float = 0.1
    completion_tolerance: float = 1e-3
    timeout_s: float = None
    # the run's limits on events and event-log size (None: derived,
    # workload.bounds.limits)
    max_events: int = None
    max_log_mb: float = None
    # a hybrid fabric's circuit scheduler: (name, {parameter: value})
    circuits: tuple = None
    # the simulator's packets: none (fluid), dc (MTU-byte packets at
    # the topology's rates), emulated (the emulator's: MTU x scale)
    sim_packets: str = 'none'
    # the simulator's model (MODELS): maxmin, or another tool's rules
    model: str = 'maxmin'
    # the measuring knobs (emulator, scheduler, simulator blocks;
    # pipeline.knobs)
    knobs: Knobs = Knobs()
    # (windows, floor bytes, (param, old MB, new MB) or None): the
    # policy's finest threshold as raised for the emulator
    threshold_floor: tuple = (0.0, 0.0, None)
    # links and switches that fail during the run (workload.faults)
    faults: tuple = ()
    ns3: Ns3Config = Ns3Config()
    # scale: auto's choice (pipeline.autoscale): the scale and why
    scale_choice: dict = None
    raw: dict = field(default=None, compare=False, repr=False)

    def graph(self):
        """The topology, its hosts' links at ``link_bps`` (a hybrid
        fabric's uplinks and circuits at their rates from it)."""
        return topo.parse_spec(self.topology, link_bps=float(self.link_bps))

    @property
    def packet_bytes(self):
        """The simulator's store-and-forward packet size in the
        topology's bytes (fluid.Network.set_packets), None for the plain
        fluid model. ``emulated``: an MTU at the emulated link rate
        takes MTU x scale bytes' time at the topology's."""
        return {'none': None, 'dc': float(self.mtu),
                'emulated': float(self.mtu) * self.scale}[self.sim_packets]

    @property
    def base_dir(self):
        return os.path.dirname(os.path.abspath(self.path)) if self.path \
            else os.getcwd()


class _Checker:
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
    lc = _Checker('%s: loss' % c.where, v)
    b = (lc.num('beta0', required=True, positive=True),
         lc.num('beta1', required=True, positive=True),
         lc.num('beta2', required=True, minimum=0))
    lc.done()
    return tuple(float(x) for x in b)


def _job(where, d, hosts, models_dir, index, group=None):
    from ..workload import models
    c = _Checker(where, d)
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
        pc = _Checker('%s: candidates[%d]' % (c.where, i), {'placement': hs})
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
        bc = _Checker('%s: bytescheduler' % c.where, b)
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
    pc = _Checker('%s: prophet' % c.where, v)
    n = pc.num('profile_iterations', PROPHET_KNOBS['profile_iterations'],
               integer=True, minimum=1)
    credit = pc.num('credit_mb', PROPHET_KNOBS['credit_mb'], positive=True)
    pc.done()
    return (('profile_iterations', int(n)), ('credit_mb', float(credit)))


def _tuning(where, d, hosts, models_dir, index):
    per_config = None
    if isinstance(d, dict) and isinstance(d.get('placement'), list) and \
            d['placement'] and all(isinstance(p, list)
                                   for p in d['placement']):
        per_config = d['placement']          # one host list per config
        d = dict(d, placement='packed')
    c, base = _job(where, d, hosts, models_dir, index,
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
            pc = _Checker('%s: placement[%d]' % (where, i),
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
        sc = _Checker('%s: stages[%d]' % (where, i), sd)
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


def _load_yaml(path):
    import io
    import yaml
    f = io.StringIO(read_text(path))
    f.name = path                 # what YAML's error marks call the file
    try:                          # no aliases (errors.yaml_loader)
        return yaml.load(f, Loader=yaml_loader())
    except yaml.YAMLError as e:
        raise ConfigError('%s: not valid YAML: %s' % (path, e)) from None
    except RecursionError:        # the parser recurses once per level
        raise ConfigError('%s: not valid YAML: nested too deeply'
                          % path) from None


def _circuits(c, g, where, override=None):
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


def _faults(c, g, where, big, has_trace):
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


def load(path, backend=None, policy=None, trace=None, circuits=None,
         sim_packets=None, seed=None, sets=()):
    """Read and check an experiment file; CLI overrides win. ``sets``:
    (key path, value) pairs (pipeline.overrides, ``--set``) applied to
    the file's mapping first; ``seed`` overrides the file's seed."""
    d = _load_yaml(path)
    if not sets and seed is None:
        return from_dict(d, path, backend, policy, trace, circuits,
                         sim_packets)
    from . import overrides
    if seed is not None:
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ConfigError('--seed must be an integer >= 0, got %r'
                              % (seed,))
    d = overrides.apply(d, tuple(sets) + (
        ((('seed',), seed),) if seed is not None else ()), policy)
    try:
        return from_dict(d, path, backend, policy, trace, circuits,
                         sim_packets)
    except ConfigError as e:
        if not sets:
            raise
        shown = ' '.join('%s=%s' % (overrides.key_name(k),
                                    overrides.value_text(v))
                         for k, v in sets)
        raise ConfigError('%s (with --set %s)' % (e, shown)) from None


SIM_PACKETS = ('none', 'dc', 'emulated')
# the simulator's model: its own (max-min, work-conserving) or another
# tool's rules for a coflow trace on a big switch (netsched.sim.reference,
# whose MODELS is the same tuple)
MODELS = ('maxmin', 'coflowsim', 'sincronia')


def _ns3(c, where, backend, circuits, faults):
    """The ``ns3`` section, checked whatever the backend (a sweep may run
    the file on ns-3 later). A hybrid fabric's ``circuits`` and the
    ``faults`` run on ns-3 as on the simulator, so nothing else is
    refused here (``big_switch`` is, where it is read)."""
    raw = c.get('ns3', {})
    nc = _Checker('%s: ns3' % where, raw)
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


def _model(c, backend, big=True, tr=True, jobs=(), circuits=None,
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


def from_dict(d, path=None, backend=None, policy=None, trace=None,
              circuits=None, sim_packets=None, environ=None):
    """The experiment of mapping ``d``, checked. ``environ``: where the
    measuring knobs' environment overrides are read (pipeline.knobs;
    None: os.environ). ``scale: auto`` is chosen for this machine
    (pipeline.autoscale)."""
    if isinstance(d, dict) and d.get('scale') == 'auto':
        from . import autoscale
        return autoscale.resolve(d, lambda dd: from_dict(
            dd, path, backend, policy, trace, circuits, sim_packets,
            environ))
    d, env_knobs = knobs.apply_environment(d, environ)
    where = path or 'experiment'
    c = _Checker(where, d)
    name = c.string('name', os.path.splitext(os.path.basename(path))[0]
                    if path else 'experiment')
    c.string('expect')
    c.string('description')
    spec = c.string('topology', required=True)
    bounds.check_topology(spec, where)
    try:
        g = topo.parse_spec(spec)
    except TopologyError as e:
        c.fail('topology', str(e))
    hosts = topo.hosts(g)
    if 'link_gbps' in d and 'link_bps' in d:
        c.fail('link_bps', 'give link_gbps or link_bps, not both')
    # below a kbit/s a tensor takes days and the run's link samples fill
    # the disk; past a Pbit/s no fabric exists
    link_bps = c.num('link_bps', None, positive=True, minimum=MIN_LINK_BPS,
                     maximum=MAX_LINK_BPS)
    if link_bps is None:
        link_bps = c.num('link_gbps', 10, positive=True,
                         minimum=MIN_LINK_BPS / 1e9,
                         maximum=MAX_LINK_BPS / 1e9) * 1e9
    scale = c.num('scale', 1000, minimum=1)
    backend = backend or c.choice('backend', BACKENDS, 'emu')
    if backend not in BACKENDS:
        raise ConfigError('backend must be one of %s, got %r'
                          % (', '.join(BACKENDS), backend))
    c.used.add('backend')
    if d.get('queues') == 'exact':
        if backend != 'sim':
            c.fail('queues', "'exact' (no quantisation of policy ranks) is "
                   "for the simulator; the emulator and ns-3 have 1..%d "
                   "classes" % EMU_MAX_QUEUES)
        c.used.add('queues')
        queues = None
    else:
        queues = c.num('queues', 8, integer=True, minimum=1)
    if backend in ('emu', 'ns3') and queues > EMU_MAX_QUEUES:
        c.fail('queues', 'the %s has at most %d priority classes per port, '
               'got %d' % ('emulator' if backend == 'emu' else 'ns-3 backend',
                           EMU_MAX_QUEUES, queues))
    from ..policies.base import CLASS_MAPS, DEFAULT_CLASS_MAP
    class_map = c.choice('class_map', CLASS_MAPS, DEFAULT_CLASS_MAP)
    seed = c.num('seed', 1, integer=True, minimum=0)
    mtu = c.num('mtu', 9000, integer=True, minimum=576, maximum=9000)
    qpk = c.num('queue_packets', qos.QUEUE_PACKETS, integer=True,
                minimum=1)
    fq = c.num('fair_queues', 16, integer=True, minimum=0)
    if qos.bucket_error(fq):
        c.fail('fair_queues', qos.bucket_error(fq))
    # a sample every microsecond is the clock's resolution (sample_s:
    # 1e-9 grew the event log by megabytes a second)
    sample_s = c.num('sample_s', 0.1, positive=True,
                     minimum=bounds.MIN_TIME_S,
                     maximum=bounds.MAX_TIME_S)
    tol = c.num('completion_tolerance', 1e-3, minimum=0, maximum=0.1)
    if sim_packets is not None and sim_packets not in SIM_PACKETS:
        raise ConfigError('--sim-packets must be one of %s, got %r'
                          % (', '.join(SIM_PACKETS), sim_packets))
    sim_packets = sim_packets or c.choice('sim_packets', SIM_PACKETS,
                                          'none')
    c.choice('sim_packets', SIM_PACKETS)     # the file's, checked anyway
    timeout_s = c.num('timeout_s', None, positive=True,
                      maximum=bounds.MAX_TIME_S)
    max_events = c.num('max_events', None, integer=True, minimum=1)
    max_log_mb = c.num('max_log_mb', None, positive=True)
    _model(c, backend)
    big = c.get('big_switch', False)
    if not isinstance(big, bool):
        c.fail('big_switch', 'must be true or false, got %r' % (big,))
    if big and backend in ('emu', 'ns3'):
        c.fail('big_switch', "is the simulator's model (only host ports are "
               "bottlenecks); the %s runs the topology's switches: "
               "use --backend sim, or drop big_switch"
               % ('emulator' if backend == 'emu' else 'ns-3 backend'))

    from .. import policies
    pol = c.get('policy', 'fair')
    if isinstance(pol, dict):
        pc = _Checker('%s: policy' % where, dict(pol))
        pname = pc.string('name', required=True)
        params = {k: v for k, v in pol.items() if k != 'name'}
    elif isinstance(pol, str):
        pname, params = pol, {}
    else:
        c.fail('policy', 'must be a name or a mapping with name, got %r'
               % (pol,))
    label = None
    if policy:                         # --policy NAME[:key=value...]
        oname, oparams = policies.parse_spec(policy)
        if oname != pname:             # the file's own keeps its params
            params = {}
        pname, params = oname, dict(params, **oparams)
        label = policy if oparams else None
    # parameters per policy, for whichever runs (crosscheck runs several)
    per = c.get('policy_params', {})
    if not isinstance(per, dict):
        c.fail('policy_params', 'must map policy names to parameters, got '
               '%r' % (per,))
    for name, ps in per.items():
        if not isinstance(ps, dict):
            c.fail('policy_params', '%s: must be a mapping of parameters, '
                   'got %r' % (name, ps))
        policies.make(name, ps, where='%s: policy_params: %s'
                      % (where, name))
    if pname in per:
        # a display, not dict(..., **params): a key that is not a string
        # (YAML's 0: or null:) raised TypeError
        params = {**per[pname], **params}
    label = label or pname
    made = policies.make(pname, params, where='%s: policy' % where)
    windows = c.num('threshold_floor_windows', THRESHOLD_FLOOR_WINDOWS,
                    minimum=0)
    # the file's own backend, not --backend: the simulator's run of an
    # emulator experiment is its reference and must decide alike
    floor = windows * INITIAL_WINDOW * mtu * scale \
        if d.get('backend', 'emu') == 'emu' else 0.0
    params, raised = type(made).floor_params(params, floor)
    circuits = _circuits(c, g, where, circuits)

    base = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
    jobs = []
    raw_jobs = c.get('jobs', [])
    if not isinstance(raw_jobs, list):
        c.fail('jobs', 'must be a list')
    for i, jd in enumerate(raw_jobs):
        jc, job = _job('%s: jobs[%d]' % (where, i), jd, hosts, base, i)
        jc.done()
        jobs.append(job)
    tuning = []
    raw_t = c.get('tuning', [])
    if not isinstance(raw_t, list):
        c.fail('tuning', 'must be a list')
    for i, td in enumerate(raw_t):
        tuning.append(_tuning('%s: tuning[%d]' % (where, i), td, hosts,
                              base, i))
    ids = [j.id for j in jobs] + [t[0].id for t in tuning]
    dup = sorted({x for x in ids if ids.count(x) > 1})
    if dup:
        c.fail('jobs', 'job id %r is used twice' % dup[0])

    poisson = None
    arr = c.get('arrivals')
    if arr is not None:
        ac = _Checker('%s: arrivals' % where, arr)
        ac.choice('process', ('poisson',), 'poisson')
        # a rate of 1e-300 puts the arrivals past the clock's range
        poisson = float(ac.num('rate_per_s', required=True, positive=True,
                               minimum=1.0 / bounds.MAX_TIME_S))
        ac.done()

    tr = None
    raw_tr = c.get('trace')
    if isinstance(raw_tr, str):            # trace: NAME, no other keys
        raw_tr = {'path': raw_tr}
    if trace is not None:
        raw_tr = dict(raw_tr or {}, path=trace)
    if raw_tr is not None:
        tc = _Checker('%s: trace' % where, raw_tr)
        tpath = tc.string('path', required=True)
        if trace is not None:              # --trace: as given, no search
            tpath = os.path.abspath(tpath)
            if not os.path.isfile(tpath):
                raise ConfigError('--trace %s: no such file' % trace)
        else:
            tpath = find_trace(tpath, base, '%s: trace: path' % where)
        start = tc.num('start_s', None, minimum=0,
                       maximum=bounds.MAX_TIME_S)
        tr = TraceSpec(tpath, tc.num('limit', None, integer=True, minimum=1),
                       float(tc.num('time_scale', 1.0, minimum=0)),
                       tc.num('skip', 0, integer=True, minimum=0),
                       float(tc.num('size_scale', 1.0, positive=True)),
                       tc.choice('racks', ('strict', 'wrap'), 'strict'),
                       None if start is None else float(start))
        if tr.racks == 'wrap' and big:
            tc.fail('racks', "'wrap' puts several racks on one host, and "
                    "big_switch gives every rack a port of its own; use "
                    "racks: strict with big_switch")
        tc.done()
    if not jobs and not tuning and tr is None:
        c.fail('jobs', 'the experiment has no jobs, tuning groups or trace')
    model = _model(c, backend, big, tr, jobs or tuning, circuits,
                   sim_packets)
    fault_list = _faults(c, g, where, big, tr is not None)
    measuring = knobs.parse(c, env_knobs)
    ns3 = _ns3(c, where, backend, circuits, fault_list)
    c.done()
    return Experiment(name=name, path=path, topology=spec,
                      link_bps=float(link_bps), scale=float(scale),
                      queues=queues, backend=backend, seed=int(seed),
                      policy=pname, policy_params=params, jobs=tuple(jobs),
                      policy_label=label,
                      tuning=tuple(tuning), trace=tr, poisson_rate=poisson,
                      big_switch=big, mtu=int(mtu), queue_packets=int(qpk), fair_queues=int(fq),
                      class_map=class_map,
                      sample_s=float(sample_s),
                      completion_tolerance=float(tol),
                      timeout_s=timeout_s, circuits=circuits,
                      max_events=max_events, max_log_mb=max_log_mb,
                      knobs=measuring,
                      sim_packets=sim_packets, model=model,
                      threshold_floor=(float(windows), float(floor), raised),
                      faults=fault_list, ns3=ns3,
                      raw=d)
