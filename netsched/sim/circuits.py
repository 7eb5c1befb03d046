"""A hybrid fabric's circuits in the simulator: the circuit driver that
runs a circuit scheduler (netsched.circuits) beside the workload.

It asks the scheduler for the circuits it wants at the start, at the
decision's ``recheck_at`` and, for schedulers that decide on jobs, when
the set of jobs changes; only when no reconfiguration is under way (a
decision due meanwhile waits for its end). The snapshot comes from the
engine: the demand between ToRs (the active flows' bytes left plus the
sends of the plan's arrived coflows not yet started), the jobs (what
each one's first iteration sends between ToRs, iterations left), the
circuits now, the rates and the reconfiguration delay of the graph.

The decision is carried out by :class:`~netsched.circuits.reconfig.
Reconfig`, the sequence both backends share, every step confirmed at
once: ``route`` sets the network's circuits (``fluid.Network.
set_circuits``) and moves the active flows whose paths change
(``Engine.reroute``, after which the policy decides again);
``remove``/``add`` are the OCS's own state (no flow is on its ports
then: ToRs leave and enter circuits in the ``route`` steps); the
blackout ends by a timer. Logged: a ``circuit_decision`` event per
decision, a ``circuits`` event per step (docs/experiment-format.md).
Circuits are (plane, ToR, ToR) names in the events and the network,
(plane, i, j) indices in the scheduler and the Reconfig.
"""
import numpy as np

from .. import circuits as circ
from .. import topology as topo
from ..circuits.reconfig import Reconfig


class CircuitDriver:
    """Runs one circuit scheduler on one hybrid fabric (``g``) beside the
    workload; ``plan``: the PlanDriver, if the run has DL jobs (their
    known sends and traffic)."""

    def __init__(self, g, spec, plan=None):
        self.name, params = spec
        self.sched = circ.make(self.name, params)
        self.plan = plan
        f = topo.circuit_fabric(g)
        self.planes, self.tors = list(f.planes), list(f.tors)
        self.host_tor = f.tor_index
        self.circuit_bps = f.circuit_bps
        self.packet_bps = np.array(f.packet_bps)
        self.reconfig_s = f.reconfig_s
        self.reconfig = Reconfig(self.reconfig_s)
        self.pair_bytes = self._first_iterations()
        self.waiting = False          # a decision is due once idle
        self.recheck_at = None
        self.jobs_seen = None
        self.decisions = 0

    def _first_iterations(self):
        """{job: {(i, j): bytes its first iteration sends from ToR i to
        ToR j}} (i != j) from the plan."""
        out = {}
        if self.plan is None:
            return out
        for t in self.plan.plan.tasks:
            if t.kind == 'send' and t.iter == 0 and t.job is not None:
                i, j = self.host_tor[t.host], self.host_tor[t.dst]
                if i != j:
                    per = out.setdefault(t.job, {})
                    per[(i, j)] = per.get((i, j), 0.0) + float(t.bytes)
        return out

    # --- the engine's side ---------------------------------------------------
    def start(self, eng):
        self.eng = eng
        hosts = eng.net.hosts
        self.tor_of = np.array([self.host_tor[h] for h in hosts], np.int64)
        eng.background(0.0, self.ask)     # after the workload's own t=0

    def settle(self):
        """At every event: a scheduler that decides on jobs is asked again
        when the set of jobs changed."""
        if (self.sched.decides_on == 'jobs' and self.plan is not None
                and self.plan.seen.jobs.keys() != self.jobs_seen):
            self.ask()

    def ask(self):
        """A decision now, or once the reconfiguration under way ends."""
        if not self.reconfig.idle:
            self.waiting = True
            return
        self.waiting = False
        eng = self.eng
        snap = self.snapshot()
        d = self.sched.decide(snap)
        wanted = circ.check_circuits(d.circuits, len(self.tors),
                                     len(self.planes))
        self.decisions += 1
        self.jobs_seen = set(self.plan.seen.jobs) if self.plan is not None \
            else set()
        eng.log.write(eng.now, 'circuit_decision', scheduler=self.name,
                      circuits=self.names(wanted))
        self.recheck_at = None
        if d.recheck_at is not None and d.recheck_at > eng.now:
            self.recheck_at = d.recheck_at
            eng.background(d.recheck_at, self._recheck, d.recheck_at)
        self._carry_out(self.reconfig.start(wanted, eng.now))

    def _recheck(self, at):
        if at == self.recheck_at:          # else a later decision's is due
            self.recheck_at = None
            self.ask()

    def _wake(self):
        self._carry_out(self.reconfig.wake(self.eng.now))

    def _carry_out(self, actions):
        """Apply the Reconfig's actions, confirming each at once, until it
        waits for the blackout's end (a timer) or is done."""
        r, eng = self.reconfig, self.eng
        while actions:
            a = actions[0]
            self._apply(a)
            actions = r.done(a.token, eng.now)
        if r.wake_at is not None:
            eng.background(r.wake_at, self._wake)
        elif r.idle and self.waiting:
            self.ask()

    def _apply(self, a):
        eng, r = self.eng, self.reconfig
        if a.kind == 'route':
            eng.net.set_circuits({topo.circuit(*n)
                                  for n in self.names(a.circuits)})
            if self.plan is not None:
                self.plan.seen.conn_path.clear()    # its cached paths moved
            eng.reroute()
        live = r.live | a.circuits if a.kind == 'add' else r.live
        eng.log.write(eng.now, 'circuits', step=a.kind,
                      circuits=self.names(a.circuits), live=self.names(live))

    # --- what the scheduler sees -----------------------------------------------
    def names(self, circuits):
        """Index circuits as sorted [plane, ToR, ToR] names."""
        return [[self.planes[k], self.tors[i], self.tors[j]]
                for k, i, j in sorted(circuits)]

    def snapshot(self):
        eng, needs = self.eng, self.sched.needs
        T = len(self.tors)
        return circ.CircuitSnapshot(
            t=eng.now, tors=tuple(self.tors), planes=len(self.planes),
            demand=self.demand() if 'demand' in needs else np.zeros((T, T)),
            circuits=self.reconfig.live, since=dict(self.reconfig.since),
            circuit_bps=self.circuit_bps, packet_bps=self.packet_bps.copy(),
            reconfig_s=self.reconfig_s,
            jobs=self.jobs() if 'jobs' in needs else {})

    def demand(self):
        """(T, T) bytes ToR i has still to send to ToR j: the active
        flows' bytes left and the plan's arrived coflows' sends not yet
        started."""
        T = len(self.tors)
        d = np.zeros((T, T))
        fl = self.eng.table
        if len(fl.a_id):
            rec = self.eng.flows
            np.add.at(d, (self.tor_of[rec['src'][fl.a_id]],
                          self.tor_of[rec['dst'][fl.a_id]]),
                      np.maximum(fl.a_rem, 0.0))
        if self.plan is not None:
            for c in self.plan.open_coflows:
                for t in self.plan.seen.unstarted.get(c, {}).values():
                    d[self.host_tor[t.host], self.host_tor[t.dst]] += t.bytes
        np.fill_diagonal(d, 0.0)
        return d

    def jobs(self):
        """{job: JobTraffic} of the jobs present (the plan driver's)."""
        if self.plan is None:
            return {}
        return {j: circ.JobTraffic(
            j, float(v.arrival), dict(self.pair_bytes.get(j, {})),
            max(int(v.iterations) - int(v.done), 0))
            for j, v in sorted(self.plan.seen.jobs.items())}


class WithCircuits:
    """A workload driver (a PlanDriver, TraceDriver or Together) and the
    circuit driver on one engine: the workload's hooks are the
    workload's, ``settle`` the circuit driver's."""

    def __init__(self, workload, circuits):
        self.workload, self.circuits = workload, circuits

    def start(self, eng):
        self.workload.start(eng)
        self.circuits.start(eng)

    view = property(lambda self: getattr(self.workload, 'view', None))
    set_shifts = property(lambda self: getattr(self.workload, 'set_shifts',
                                               None))
    flow_fields = property(lambda self: getattr(self.workload,
                                                'flow_fields', None))

    on_flows_sent = property(lambda self: getattr(self.workload,
                                                  'on_flows_sent', None))

    def on_flows_done(self, ids):
        self.workload.on_flows_done(ids)

    def settle(self):
        self.circuits.settle()
