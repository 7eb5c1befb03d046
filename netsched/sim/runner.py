"""Running an experiment on the simulator: the network, the policy, the
workload drivers (a coflow trace, DL jobs, or both; on a hybrid fabric
the circuit driver beside them) and the engine, writing the event log
as it goes."""
import contextlib
import gc
import os
import shutil
import tempfile
import time

from .drivers import PlanDriver, Together, TraceDriver
from .. import fluid, policies
from ..workload import bounds
from .. import topology as topo
from ..events import EventLog
from ..workload import taskgraph, trace
from .engine import Engine
from . import kernels


class Progress:
    """The run's progress: flows done of ``total`` to ``bar(done, total)``
    (a progress bar, where there is one) every ``bar_s``, else one log
    line every ``every_s`` of wall time. Another engine's runner
    (netsched.ns3) says what it counts in ``done`` and ``line``."""

    def __init__(self, log, total=0, bar=None, every_s=2.0, bar_s=0.2):
        self.log, self.total, self.bar = log, total, bar
        self.every_s, self.bar_s = every_s, bar_s
        self.t0 = self.last = time.monotonic()

    def __call__(self, eng):
        now = time.monotonic()
        if self.bar is not None:
            if now - self.last >= self.bar_s:
                self.last = now
                self.bar(self.done(eng), self.total)
        elif now - self.last >= self.every_s:
            self.last = now
            self.log(self.line(eng))

    def done(self, eng):
        """Flows finished so far."""
        return eng.flows.n - len(eng.a_id)

    def line(self, eng):
        """The log line."""
        return ('sim t=%.2f s: %d active flows, %d started, %d events'
                % (eng.now, len(eng.a_id), eng.flows.n, eng.events))


def run(exp, log_path, say, bar=None):
    """:func:`simulate` with the garbage collector paused: a run builds
    its plan's hundreds of thousands of objects and keeps them to its
    end, so each collection meanwhile traverses them all and frees
    nothing (the engine makes no reference cycles as it runs). What the
    run leaves for the collector is freed by one collection after it."""
    was = gc.isenabled()
    gc.disable()
    try:
        return simulate(exp, log_path, say, bar)
    finally:
        if was:
            gc.enable()
            gc.collect()


def simulate(exp, log_path, say, bar=None):
    """Run exp on the simulator, the event log into ``log_path``.
    ``bar(done, total)``: the run's progress in flows, where a bar shows
    it. Of the measuring knobs (``exp.knobs``) the simulator takes the
    send jitter (sim.drivers.PlanDriver; benchmarks/sensitivity_bench.py
    sets it) and the floor release (sim.rates.RateSetter). A model
    other than maxmin (``exp.model``) runs the trace by that tool's
    rules instead (:func:`run_reference`)."""
    if exp.model != 'maxmin':
        return run_reference(exp, log_path, say)
    jitter = exp.knobs.send_jitter_ms / 1e3
    jitter_seed = exp.knobs.send_jitter_seed
    g = exp.graph()
    net = fluid.Network(g, big_switch=exp.big_switch)
    net.set_packets(exp.packet_bytes)
    policy = policies.make(exp.policy, exp.policy_params)
    parts, total = [], 0
    if exp.trace:
        ports, cofs = trace.load(exp.trace)
        racks = trace.rack_hosts(ports, topo.hosts(g), exp.trace.racks,
                                 '%s: trace' % (exp.path or exp.name))
        if exp.faults:        # the plan's are checked as it is built
            from ..workload import faults
            faults.check_traffic(exp.faults, g, faults.trace_senders(
                exp, cofs, racks), exp.path or exp.name)
        parts.append(TraceDriver(cofs, racks, exp.big_switch))
        total += sum(len(c.mappers) * len(c.reducers) for c in cofs)
        say('trace %s: %d coflows, %d flows'
            % (os.path.basename(exp.trace.path), len(cofs), total))
    plan = plan_driver = None
    if exp.jobs or exp.tuning:
        plan = taskgraph.build(exp, with_trace=False)
        plan_driver = PlanDriver(plan, jitter, jitter_seed)
        parts.append(plan_driver)
        total += sum(1 for t in plan.tasks if t.kind == 'send')
        say('%d jobs, %d tasks, %d connections'
            % (len(plan.jobs), len(plan.tasks), len(plan.conns)))
    driver = parts[0] if len(parts) == 1 else Together(*parts)
    if exp.circuits is not None:
        from .circuits import CircuitDriver, WithCircuits
        driver = WithCircuits(driver, CircuitDriver(g, exp.circuits,
                                                    plan_driver))
    with EventLog(log_path) as log:
        log.write(0.0, 'run_start', backend='sim', policy=exp.policy,
                  seed=exp.seed, sim_packets=exp.sim_packets,
                  **({'send_jitter_s': jitter, 'send_jitter_seed': jitter_seed}
                     if jitter else {}))
        for j, p in sorted(getattr(plan, 'placements', {}).items()):
            log.write(0.0, 'placement', job=j, **p)
        eng = Engine(net, policy, log, queues=exp.queues,
                     sample_s=exp.sample_s, rel_tol=exp.completion_tolerance,
                     progress=Progress(say, total, bar),
                     class_map=exp.class_map,
                     release_floor=exp.knobs.floor_release)
        if exp.faults:
            from .faults import schedule
            schedule(eng, exp.faults, plan_driver)
        eng.limits = bounds.limits(exp, bounds.estimate(
            exp, (ports, cofs) if exp.trace else None),
            os.path.dirname(os.path.abspath(log_path)))
        eng.run(driver, until=exp.timeout_s)
        if eng.stopped is not None:
            say('stopped: %s' % eng.stopped)
            log.write(eng.now, 'run_incomplete', cause='limit',
                      why=eng.stopped)
        elif exp.timeout_s is not None and eng.busy():
            # as the emulator says when its timeout_s stops it
            log.write(eng.now, 'run_incomplete', cause='timeout',
                      why='timeout_s %g reached' % exp.timeout_s)
        log.write(eng.now, 'run_end', events=eng.events,
                  decisions=eng.decisions)
    eng.release()
    return {'events': eng.events, 'decisions': eng.decisions,
            'allocations': eng.allocations, 'kernels': kernels.name()}


@contextlib.contextmanager
def scratch(exp, prefix):
    """``exp`` simulated without a word into a log in a folder of its
    own, removed after: yields the log's path (what the pipeline's
    estimates read before a run of another backend)."""
    d = tempfile.mkdtemp(prefix='netsched-%s-' % prefix)
    try:
        log = os.path.join(d, 'events.jsonl')
        run(exp, log, lambda *a: None)
        yield log
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run_reference(exp, log_path, say):
    """Run exp's trace by the rules of reference model ``exp.model``
    (sim.reference): the same event log a trace run writes, between
    ``run_start`` and ``run_end`` lines that name the model."""
    from . import reference
    reference.check(exp)
    mod = reference.module(exp.model)
    ports, cofs = trace.load(exp.trace)
    racks = trace.rack_hosts(ports, topo.hosts(exp.graph()), exp.trace.racks,
                             '%s: trace' % (exp.path or exp.name))
    say('trace %s: %d coflows, model %s'
        % (os.path.basename(exp.trace.path), len(cofs), exp.model))
    t0 = time.monotonic()
    with EventLog(log_path) as log:
        log.write(0.0, 'run_start', backend='sim', policy=exp.policy,
                  seed=exp.seed, sim_packets=exp.sim_packets,
                  model=exp.model)
        end = mod.run(exp, cofs, racks, log, say)
        log.write(end, 'run_end', model=exp.model)
    return {'model': exp.model, 'model_s': time.monotonic() - t0}
