"""Experiment files: read, check, and turn into one validated Experiment
(the checks of its sections: pipeline.checker).

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
import os
from dataclasses import dataclass, field

from .. import ROOT, qos
from .. import topology as topo
from ..errors import ConfigError, TopologyError, read_text, yaml_loader
from . import knobs
from ..workload import bounds
from .checker import (  # noqa: F401 (the file's constants, as ever)
    BYTESCHEDULER_KNOBS, MAX_ITERATIONS, MODELS, NS3_CE_THRESHOLD_S,
    NS3_CONGESTION, NS3_CONTROL_DELAY_S, PATTERNS, PLACEMENTS,
    PROPHET_KNOBS, SEND_ORDERS, Checker, JobSpec, Ns3Config, read_circuits,
    read_faults, read_job, read_model, read_ns3, read_tuning)
from .knobs import Knobs

BACKENDS = ('emu', 'sim', 'ns3')
EMU_MAX_QUEUES = 8
INITIAL_WINDOW = 10          # packets: Linux's initial congestion window
# an experiment meant for the emulator decides on no less data than this
# many initial windows at its scale, on both backends (docs/fidelity.md)
THRESHOLD_FLOOR_WINDOWS = 2
# a link's rate (bit/s): from 1 kbit/s to 1 Pbit/s
MIN_LINK_BPS = 1e3
MAX_LINK_BPS = 1e15


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
    # an emulated run's packet forecast (pipeline.forecast), made before
    # it starts
    fidelity_forecast: dict = None
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


def load_yaml(path):
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


def load(path, backend=None, policy=None, trace=None, circuits=None,
         sim_packets=None, seed=None, sets=()):
    """Read and check an experiment file; CLI overrides win. ``sets``:
    (key path, value) pairs (pipeline.overrides, ``--set``) applied to
    the file's mapping first; ``seed`` overrides the file's seed."""
    d = load_yaml(path)
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
# One branch per top-level key
def from_dict(d, path=None, backend=None, policy=None, trace=None,  # noqa: C901
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
    c = Checker(where, d)
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
    read_model(c, backend)
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
        pc = Checker('%s: policy' % where, dict(pol))
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
    circuits = read_circuits(c, g, where, circuits)

    base = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
    jobs = []
    raw_jobs = c.get('jobs', [])
    if not isinstance(raw_jobs, list):
        c.fail('jobs', 'must be a list')
    for i, jd in enumerate(raw_jobs):
        jc, job = read_job('%s: jobs[%d]' % (where, i), jd, hosts, base, i)
        jc.done()
        jobs.append(job)
    tuning = []
    raw_t = c.get('tuning', [])
    if not isinstance(raw_t, list):
        c.fail('tuning', 'must be a list')
    for i, td in enumerate(raw_t):
        tuning.append(read_tuning('%s: tuning[%d]' % (where, i), td, hosts,
                              base, i))
    ids = [j.id for j in jobs] + [t[0].id for t in tuning]
    dup = sorted({x for x in ids if ids.count(x) > 1})
    if dup:
        c.fail('jobs', 'job id %r is used twice' % dup[0])

    poisson = None
    arr = c.get('arrivals')
    if arr is not None:
        ac = Checker('%s: arrivals' % where, arr)
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
        tc = Checker('%s: trace' % where, raw_tr)
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
    model = read_model(c, backend, big, tr, jobs or tuning, circuits,
                   sim_packets)
    fault_list = read_faults(c, g, where, big, tr is not None)
    measuring = knobs.parse(c, env_knobs)
    ns3 = read_ns3(c, where, backend, circuits, fault_list)
    c.done()
    return Experiment(name=name, path=path, topology=spec,
                      link_bps=float(link_bps), scale=float(scale),
                      queues=queues, backend=backend, seed=int(seed),
                      policy=pname, policy_params=params, jobs=tuple(jobs),
                      policy_label=label,
                      tuning=tuple(tuning), trace=tr, poisson_rate=poisson,
                      big_switch=big, mtu=int(mtu), queue_packets=int(qpk),
                      fair_queues=int(fq),
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
