"""The simulator's rate step: what the policy sees (the snapshot), when it
is asked, how its decision becomes priority keys (Q classes mapped as the
emulator maps them) and per-flow rates (:func:`fluid.allocate`).

A policy whose ``decides_on`` is ``'coflows'`` is asked again only when
flows arrive, a coflow finishes, or at its recheck time; when a flow
finishes inside a coflow that goes on, its decision (class per coflow,
explicit rates per flow) stands and only the rates are recomputed
(back-filling what the flow freed). Policies that say ``'flows'`` (the
default) are asked at every change.
"""
from dataclasses import dataclass, field

import numpy as np

from .. import fluid
from . import kernels
from ..policies import (Snapshot, asks_per_flow, coflow_class,
                        flow_priority, one_capacity, with_flow_classes)


class _Later:
    """A snapshot field's value not computed yet: ``fn()`` gives it."""
    __slots__ = ('fn',)

    def __init__(self, fn):
        self.fn = fn


class _Deferred:
    """A SimSnapshot field given as :class:`_Later` and computed on first
    read (then kept). Like the flow table's arrays the snapshot shares,
    it is good within the decision it was made for."""

    def __init__(self, name):
        self.key = '_later_' + name

    def __get__(self, snap, cls=None):
        if snap is None:
            return self
        v = snap.__dict__[self.key]
        if isinstance(v, _Later):
            v = snap.__dict__[self.key] = v.fn()
        return v

    def __set__(self, snap, value):     # the dataclass's __init__ only
        snap.__dict__[self.key] = value


@dataclass(frozen=True)
class SimSnapshot(Snapshot):
    """The simulator's Snapshot: the same fields, its per-coflow sums
    compiled (:mod:`netsched.sim.kernels`: the same additions in the
    same order, so the same bits), numpy's where the kernels are not.
    ``flow_sent`` and ``flow_coflow`` are computed when a policy first
    reads them (Aalo, asked at every event, reads neither: its sums and
    keys per flow are taken from the engine's coflow indices)."""

    flow_sent = _Deferred('flow_sent')
    flow_coflow = _Deferred('flow_coflow')
    # the engine's coflow indices (see _engine); not a policy's to read
    _engine_cof: tuple = field(default=None, repr=False, compare=False)
    # one_capacity, as the RateSetter keeps it for its path table
    _one_capacity: tuple = field(default=None, repr=False, compare=False)
    # (the flow table's rate_sums, active flows per engine coflow index):
    # coflow_rate and coflow_flows without a pass over the flows
    _table_sums: tuple = field(default=None, repr=False, compare=False)

    def one_capacity(self):
        if self._one_capacity is None:
            return super().one_capacity()
        return self._one_capacity[0]

    def _engine(self):
        """While flow_coflow is not made: (the flows' engine coflow
        indices, engine index -> live position, the live coflows' engine
        indices); the per-coflow sums and gathers below work from them
        (the same numbers, without the (F,) remapped array)."""
        if isinstance(self.__dict__.get('_later_flow_coflow'), _Later) \
                and len(self.flow_path):
            return self._engine_cof
        return None

    def _port_sums(self, path, cof, v, C, L):
        out = kernels.port_bytes(self.path_links, path, cof, v, C, L)
        return super()._port_sums(path, cof, v, C, L) if out is None \
            else out

    def per_flow(self, per_coflow):
        e = self._engine()
        if e is None or len(per_coflow) != len(self.coflow_id):
            return super().per_flow(per_coflow)
        a_cof, remap, _ = e
        return np.take(np.take(per_coflow, remap), a_cof)

    def coflow_flows(self):
        out = self.__dict__.pop('_flows', None)     # coflow_rate's count
        if out is None:
            e = self._engine()
            if e is None:
                out = kernels.coflow_count(self.flow_coflow,
                                           len(self.coflow_id))
            else:
                out = kernels.coflow_count(e[0], len(e[1]))
                out = None if out is None else out[e[2]]
        return super().coflow_flows() if out is None else out

    def coflow_rate(self):
        # the flows per coflow counted in the same pass, for
        # coflow_flows (rate_estimate asks for both)
        e = self._engine()
        sums = None
        if e is not None and self._table_sums is not None:
            sums = self._table_sums[0]()
        if sums is not None:
            # the flow table's, made as it sent (coflows registered since
            # have only flows that joined since: no rate yet)
            live = e[2]
            out = np.zeros(len(live))
            old = live < len(sums)
            out[old] = sums[live[old]]
            self.__dict__['_flows'] = self._table_sums[1][live]
            return out
        if e is None:
            out = kernels.coflow_sum(self.flow_coflow, self.flow_rate,
                                     len(self.coflow_id), count=True)
        else:
            out = kernels.coflow_sum(e[0], self.flow_rate, len(e[1]),
                                     count=True)
            out = None if out is None else (out[0][e[2]], out[1][e[2]])
        if out is None:
            return super().coflow_rate()
        self.__dict__['_flows'] = out[1]
        return out[0]


def snapshot(now_s, queues, net, flows, view=None, clairvoyant=False,
             one=None):
    """The policy's view of a FlowTable at ``now_s``; with ``view`` (the
    workload driver's: what it knows of the jobs, the flows' urgency and,
    for clairvoyant policies, the sends not yet started), those too.
    ``one``: (one_capacity,) of net's table now, where the caller keeps
    it."""
    coflows = flows.coflows
    cof = coflows.live()
    cl = cof.tolist()
    remap = np.zeros(len(coflows.active_flows), np.int64)
    remap[cof] = np.arange(len(cof))
    size, a_id, a_rem = flows.record['size'], flows.a_id, flows.a_rem
    pend = {}
    if view is not None:
        pend = view(cof, flows.a_id, clairvoyant)
        if 'pending_coflow' in pend:
            pend['pending_coflow'] = remap[np.asarray(pend['pending_coflow'],
                                                      np.int64)]
    a_cof = flows.a_cof
    return SimSnapshot(
        t=now_s, queues=queues, link_capacity=net.capacity,
        path_links=net.table(), flow_path=flows.a_path,
        flow_coflow=_Later(lambda: remap[a_cof]), flow_remaining=a_rem,
        flow_sent=_Later(lambda: size[a_id] - a_rem),
        flow_rate=flows.a_rate,
        coflow_id=tuple(map(coflows.names.__getitem__, cl)),
        coflow_arrival=coflows.arrival[cof],
        coflow_sent=coflows.sent_bytes[cof],
        coflow_job=tuple(map(coflows.jobs.__getitem__, cl)),
        _engine_cof=(a_cof, remap, cof), _one_capacity=one,
        _table_sums=(flows.rate_sums, coflows.active_flows), **pend)


class RateSetter:
    """Sets a FlowTable's rates (``a_key``, ``a_explicit``, ``a_rate``)
    and the links' load (``load_bps``), asking the policy when it must.
    ``release_floor``: the experiment's ``scheduler.floor_release``, a
    measuring knob (policies.coflow_class)."""

    def __init__(self, net, policy, flows, queues=8, class_map=None,
                 release_floor=False):
        self.net, self.policy, self.flows = net, policy, flows
        self.queues = queues
        self.class_map = class_map       # policies.CLASS_MAPS, None: default
        self.per_flow = asks_per_flow(policy)
        self.must_decide = True          # ask the policy again
        self.must_allocate = False       # same decision, new rates
        self.recheck_s = None
        self.decisions = 0
        self.allocations = 0
        self.load_bps = np.zeros(len(net.capacity))   # per link, now
        self.on_shifts = None            # the driver's, for time shifts
        # told (now, {coflow name: class}) when coflows change class, as
        # the emulator's controller logs them (the engine's event log)
        self.on_classes = None
        self.release_floor = bool(release_floor)
        self.held = False                # the controller is down (faults)
        # whether the last decision gave explicit rates (else every
        # a_explicit is NaN, as flows join, and none is looked at) and
        # whether a_key holds a decision's keys (else all 0, as flows join
        # and a static policy's decision gives them): the flow table's
        # ``uniform`` says, which columns it then truncates
        self._first = None               # the allocation's first finish
        self._one = None                 # (table, capacity, one_capacity)
        self._last = None                # what the last allocation was of
        # FlowTable.joins when a_key was last made of the coflows' classes
        # alone (None: it was not)
        self._class_keys = None

    def hold(self, on):
        """The controller is down (a fault): the policy is not asked; the
        flows keep the classes and rates of its last decision, and flows
        that start meanwhile go in the top class (key 0), as the
        emulator's agents send a coflow the controller has not
        classified. Back (``on`` False), it decides at once."""
        self.held = bool(on)
        if not on:
            self.must_decide = True

    def flows_started(self):
        self.must_decide = True

    def flows_finished(self, coflow_ended):
        if self.per_flow or coflow_ended:
            self.must_decide = True      # a coflow ended: decide again
        else:
            self.must_allocate = True

    def update(self, now_s, view=None):
        """Decide or reallocate at ``now_s`` if anything asks for it."""
        self._first = None               # first_finish_s: not made now
        if self.held:
            if self.must_decide or self.must_allocate:
                self.must_decide = False
                self._allocate()
            return
        if self.must_decide or (self.recheck_s is not None
                                and self.recheck_s <= now_s):
            self._decide(now_s, view)
        elif self.must_allocate:
            self._allocate()

    def _decide(self, now_s, view):
        self.must_decide = False
        self.recheck_s = None
        fl = self.flows
        if len(fl.a_id) == 0:
            fl.a_rate = np.zeros(0)
            self.load_bps[:] = 0.0
            return
        if getattr(self.policy, 'static', False):
            # a static policy decides nothing (policies.base.Policy):
            # what its empty decision gives, without building the
            # snapshot (at scale the costliest part of an event)
            self.decisions += 1
            if 'a_key' not in fl.uniform:
                fl.a_key = np.zeros(len(fl.a_id), np.int64)
                fl.uniform.add('a_key')
                self._class_keys = None
            self._no_explicit()
            self._allocate()
            return
        snap = snapshot(now_s, self.queues, self.net, fl, view,
                        getattr(self.policy, 'clairvoyant', False),
                        self._one_capacity())
        d = self.policy.decide(snap)
        self.decisions += 1
        if d.job_shift is not None and self.on_shifts is not None:
            self.on_shifts(d.job_shift)
        fl.a_key = self._keys(snap, d)
        fl.uniform.discard('a_key')
        if d.flow_rate is None:
            self._no_explicit()
        else:
            # a copy: the flow table compacts its arrays in place
            fl.a_explicit = np.array(d.flow_rate, float)
            fl.uniform.discard('a_explicit')
        if d.recheck_at is not None and d.recheck_at > now_s:
            self.recheck_s = d.recheck_at
        self._allocate()

    def _one_capacity(self):
        """(Snapshot.one_capacity,) of the net's path table and
        capacities, made again only when either is another array (the
        table is a new one when paths are added)."""
        pl, cap = self.net.table(), self.net.capacity
        c = self._one
        if c is None or c[0] is not pl or c[1] is not cap:
            c = self._one = (pl, cap, (one_capacity(pl, cap),))
        return c[2]

    def _no_explicit(self):
        """A decision without explicit rates: a_explicit all NaN again
        (it already is unless the last decision gave some)."""
        fl = self.flows
        if 'a_explicit' not in fl.uniform:
            fl.a_explicit = np.full(len(fl.a_id), np.nan)
            fl.uniform.add('a_explicit')

    def _keys(self, snap, d):
        """Priority key per active flow: its coflow's class out of Q, or
        the policy's exact order."""
        if self.queues is not None and d.coflow_rank is not None:
            coflows = self.flows.coflows
            cof = coflows.live()
            old = coflows.queue_class[cof]
            cls = coflow_class(snap, d, old, self.release_floor,
                               self.class_map)
            coflows.queue_class[cof] = cls
            moved = np.flatnonzero(cls != old)
            if len(moved) and self.on_classes is not None:
                self.on_classes(snap.t, {coflows.names[cof[i]]: int(cls[i])
                                         for i in moved.tolist()})
            fl = self.flows
            if d.flow_class is None and not len(moved) and \
                    self._class_keys == fl.joins:
                # every coflow in its class, and no flow joined since
                # a_key was made of those classes (flows that left took
                # their keys with them): the keys stand
                return fl.a_key
            self._class_keys = fl.joins if d.flow_class is None else None
            return with_flow_classes(snap.per_flow(cls), d)
        self._class_keys = None
        return flow_priority(snap, d)

    def _allocate(self):
        self.must_allocate = False
        self.allocations += 1
        fl = self.flows
        explicit = None if 'a_explicit' in fl.uniform else fl.a_explicit
        key = fl.a_key                   # (flows started join it first)
        table, cap = self.net.table(), self.net.capacity
        last = self._last
        if last is not None and explicit is None and \
                last[0] == fl.changes and last[1] is table and \
                np.array_equal(last[2], cap) and \
                (last[3] is key or np.array_equal(last[3], key)):
            # the same flows on the same paths with the same keys (a
            # decision at the policy's recheck time that moved no coflow):
            # the filling would give the same rates, so they stand; the
            # first finish is made from the bytes left now
            return
        fl.a_rate, self.load_bps, self._first = fluid.allocate(
            table, fl.a_path, key, cap, explicit, remaining=fl.a_rem)
        # (keys: the decision's own array, which nothing changes in place
        # while the flows stay the same)
        self._last = None if explicit is not None else (
            fl.changes, table, cap.copy(), key)

    def first_finish_s(self):
        """FlowTable.first_finish_s, right after :meth:`update`: made with
        the rates where they were just allocated (the same value)."""
        first, self._first = self._first, None
        if first is None:
            return self.flows.first_finish_s()
        return np.float64(first[1]) if first[0] else None
