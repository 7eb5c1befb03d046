"""Reference models: the simulator run by another tool's rules, so that
netsched reproduces that tool's published numbers (experiment key
``model``; docs/experiment-format.md).

``maxmin`` is netsched's own simulator (netsched.sim.engine: max-min
fair, work-conserving, event-driven) and has no module here. Every other
model is one module ``<model>.py`` with ``POLICIES`` ({netsched policy
name: which of the tool's schedulers it runs}) and ``run(exp, coflows,
racks, log, say)``, which writes the same event log a trace run on the
engine writes and returns the run's end time (s). A model runs a
coflow trace on a big switch only (pipeline.experiment checks that).
"""
import importlib

import numpy as np

from ...errors import ConfigError
from ...policies import base as pbase

MODELS = ('maxmin', 'coflowsim', 'sincronia')
DEFAULT = 'maxmin'


def module(name):
    """The module of reference model ``name`` (imported on first use)."""
    if name not in MODELS or name == DEFAULT:
        raise ConfigError('model: no reference module for %r (the reference '
                          'models are %s)' % (name, ', '.join(MODELS[1:])))
    try:
        return importlib.import_module('.' + name, __name__)
    except ModuleNotFoundError as e:
        if e.name != '%s.%s' % (__name__, name):
            raise
        raise ConfigError('model: %s is not available in this build (no '
                          'module netsched/sim/reference/%s.py)'
                          % (name, name)) from None


def check(exp):
    """The experiment's policy is one its model implements (a
    ConfigError naming the model's list otherwise), and whatever else
    the model's own ``check(exp)`` asks, if it has one: ``netsched
    check`` and every run say it before anything starts."""
    if exp.model == DEFAULT:
        return
    mod = module(exp.model)
    if exp.policy not in mod.POLICIES:
        raise ConfigError(
            '%s: policy: model %s implements the policies %s; got %r'
            % (exp.path or exp.name, exp.model, ', '.join(mod.POLICIES),
               exp.policy))
    more = getattr(mod, 'check', None)      # the model's own, if any
    if more is not None:
        more(exp)


def big_switch_snapshot(ports, src, dst, coflow, remaining, ids, link_bps):
    """What a policy sees of a trace's coflows on a big switch, all of
    their bytes ``remaining`` to go: rack i's uplink is link i, its
    downlink link ``ports`` + i; flows by source and destination rack
    and coflow index; arrival is the admission order (the trace's).
    The models order coflows with netsched's own policy code on it."""
    P = ports
    r = np.arange(P)
    paths = np.stack([np.repeat(r, P), P + np.tile(r, P)], axis=1)
    n, F = len(ids), len(remaining)
    return pbase.Snapshot(
        t=0.0, queues=None, link_capacity=np.full(2 * P, float(link_bps)),
        path_links=paths, flow_path=src * P + dst, flow_coflow=coflow,
        flow_remaining=remaining, flow_sent=np.zeros(F),
        flow_rate=np.zeros(F), coflow_id=tuple(ids),
        coflow_arrival=np.arange(n, dtype=float), coflow_sent=np.zeros(n))


class TraceFlows:
    """A coflow trace's flows as another tool reads them, in the trace's
    order: per coflow a contiguous range of flows (``first``), its width
    (``width``); per flow its racks (``src``, ``dst``), size (``size``,
    in ``unit`` bytes) and coflow index (``job``). ``ports``: the trace's
    racks. A model says in :meth:`flows_of` how its tool turns a coflow's
    mappers and reducers into flows."""

    unit = 1.0                  # bytes per unit of ``size``

    def __init__(self, coflows, ports):
        self.ports = ports
        self.ids = [c.id for c in coflows]
        src, dst, size, first = [], [], [], [0]
        self.width = []
        for c in coflows:
            runs, width = self.flows_of(c)
            for maps, rack, share in runs:
                src.extend(maps)
                dst.extend([rack] * len(maps))
                size.extend([share] * len(maps))
            first.append(len(size))
            self.width.append(width)
        self.src = np.array(src, np.int64)
        self.dst = np.array(dst, np.int64)
        self.size = np.array(size, float)
        self.first = np.array(first, np.int64)
        self.job = np.repeat(np.arange(len(coflows)), np.diff(self.first))

    def flows_of(self, c):
        """Coflow ``c``'s flows as runs (mapper racks, reducer rack, size
        of each of those flows), and its width."""
        raise NotImplementedError

    def snapshot(self, link_bps):
        """Every coflow with all its bytes to go on a big switch
        (:func:`big_switch_snapshot`; arrival is the trace's order)."""
        return big_switch_snapshot(self.ports, self.src, self.dst, self.job,
                                   self.size * self.unit, self.ids, link_bps)
