"""The controller's side of a hybrid fabric: it asks the circuit
scheduler (netsched.circuits, the code the simulator runs) and carries
the decision out through the steps of a reconfiguration
(circuits.reconfig: ToRs leave the circuits that go, the OCS drops them,
the blackout, the OCS joins the new ones, ToRs enter them), each step a
batch of FlowMods whose barriers confirm it. Pure (FAUCET's shape): the
demand the agents registered and the time come in, FlowMods and
decision-log records go out.

What the scheduler sees (CircuitSnapshot): per ToR pair the bytes still
to go of the transfers in flight and of the coflows that have started
(their sends not yet begun), the jobs present with the bytes one
iteration sends between ToRs, the circuits and since when.
"""
import numpy as np

from . import openflow as of
from .. import topology as topo
from ..circuits import CircuitSnapshot, JobTraffic, check_circuits
from ..circuits.reconfig import Reconfig


class CircuitControl:
    """A hybrid fabric's circuits inside the controller: the simulator's
    circuit scheduler decides, and this carries each decision out step
    by step, the next only once the last one's barriers came back."""

    def __init__(self, g, scheduler, net):
        self.g, self.sched, self.net = g, scheduler, net
        f = topo.circuit_fabric(g)
        self.tors, self.planes = list(f.tors), list(f.planes)
        self.tor_index = f.tor_index
        self.reconfig = Reconfig(f.reconfig_s)
        self.circuit_bps = f.circuit_bps
        self.packet_bps = np.array(f.packet_bps)
        self.next_at = 0.0          # when to ask the scheduler again
        self.jobs_seen = None       # the jobs it last decided on
        self.decisions = 0
        self.requested = None       # circuits asked for by hand

    def start_at(self, t0):
        """The run starts at t0: the next decision is then (the
        simulator's first is at t = 0), and the period runs from it."""
        self.next_at = t0

    def request(self, circuits):
        """Circuits asked for on the control channel: the next step
        moves to them (once the reconfiguration under way, if any, ends)."""
        self.requested = frozenset(circuits)

    def status(self):
        """The circuits for the `decision` request: live, routed, and
        whether a reconfiguration is under way."""
        r = self.reconfig
        return {'scheduler': self.sched.name,
                'live': _listed(self.names(r.live)),
                'routed': _listed(self.names(r.routed)),
                'reconfiguring': not r.idle, 'step': r.state,
                'reconfigurations': r.reconfigurations,
                'decisions': self.decisions}

    # --- names -----------------------------------------------------------
    def names(self, circuits):
        """Scheduler circuits (plane, i, j) as topology.circuit tuples."""
        return frozenset(topo.circuit(self.planes[k], self.tors[i],
                                      self.tors[j]) for k, i, j in circuits)

    def program(self, switch):
        """A switch's program now: a ToR's routes over the circuits it
        sends over, a plane's live circuits."""
        if self.g.nodes[switch]['role'] == topo.OCS:
            return of.switch_program(self.g, switch,
                                     self.names(self.reconfig.live))
        return of.switch_program(self.g, switch,
                                 self.names(self.reconfig.routed))

    # --- what the scheduler sees -------------------------------------------
    def snapshot(self, now, demand):
        """The circuit scheduler's view, built from what the agents
        registered, as the simulator builds it from its flows, so both
        backends ask the same question."""
        T = len(self.tors)
        m = np.zeros((T, T))
        jobs = {}
        if demand is not None:
            sends = [demand.sends[i] for i in demand.in_flight]
            sends += [s for c in demand.arrival
                      for s in demand.unstarted.get(c, {}).values()]
            for s in sends:
                i, j = self._pair(s.host, s.dst)
                if i != j:
                    m[i, j] += s.bytes - s.sent
            for job, v in demand.views.items():
                pairs = {}
                for s in demand.first_sends.get(job, ()):
                    i, j = self._pair(s.host, s.dst)
                    if i != j:
                        pairs[(i, j)] = pairs.get((i, j), 0.0) + s.bytes
                jobs[job] = JobTraffic(job, v.arrival, pairs,
                                       max(v.iterations - v.done, 0))
        r = self.reconfig
        return CircuitSnapshot(
            t=now, tors=tuple(self.tors), planes=len(self.planes), demand=m,
            circuits=r.live, since=dict(r.since),
            circuit_bps=self.circuit_bps, packet_bps=self.packet_bps,
            reconfig_s=r.reconfig_s, jobs=jobs)

    def _pair(self, src, dst):
        return self.tor_index[src], self.tor_index[dst]

    # --- deciding and carrying out ------------------------------------------
    def _due(self, now, demand):
        s = self.sched
        if s.decides_on == 'never':
            return False
        jobs = frozenset(demand.views) if demand is not None else frozenset()
        if s.decides_on == 'jobs' and jobs != self.jobs_seen:
            return True
        return self.next_at is not None and now >= self.next_at

    def step(self, now, demand):
        """(mods {dpid: [FlowMod]}, decision-log records, token of the
        step awaiting its barriers or None)."""
        acts = self.reconfig.wake(now)
        log = []
        if not acts and self.reconfig.idle and self.requested is not None:
            wanted, self.requested = self.requested, None
            log.append({'kind': 'circuit_decision', 't': now,
                        'scheduler': 'request',
                        'circuits': _listed(self.names(wanted))})
            acts = self.reconfig.start(wanted, now)
        elif not acts and self.reconfig.idle and self._due(now, demand):
            snap = self.snapshot(now, demand)
            d = self.sched.decide(snap)
            wanted = check_circuits(d.circuits, len(self.tors),
                                    len(self.planes))
            self.decisions += 1
            self.jobs_seen = frozenset(snap.jobs)
            self.next_at = d.recheck_at
            log.append({'kind': 'circuit_decision', 't': now,
                        'scheduler': self.sched.name,
                        'circuits': _listed(self.names(wanted))})
            acts = self.reconfig.start(wanted, now)
        return self._carry_out(acts, now, demand, log)

    def confirmed(self, token, now, demand):
        """The switches confirmed a step: what follows."""
        return self._carry_out(self.reconfig.done(token, now), now, demand,
                               [])

    def _carry_out(self, acts, now, demand, log):
        mods = {}
        while acts:
            a = acts[0]
            mods = self._mods(a, demand)
            live = self.reconfig.live | a.circuits if a.kind == 'add' \
                else self.reconfig.live            # as the simulator logs
            log.append({'kind': 'circuits', 't': now, 'step': a.kind,
                        'circuits': _listed(self.names(a.circuits)),
                        'live': _listed(self.names(live))})
            if mods:
                return mods, log, a.token
            acts = self.reconfig.done(a.token, now)   # nothing to wait for
        return mods, log, None

    def _mods(self, a, demand):
        g = self.g
        dpid = lambda n: g.nodes[n]['dpid']          # noqa: E731
        mods = {}
        if a.kind == 'route':
            old = self.net.circuits
            new = self.names(a.circuits)
            for t in self.tors:
                d = of.rule_diff(of.route_rules(g, t, old),
                                 of.route_rules(g, t, new))
                if d:
                    mods[dpid(t)] = d
            self.net.set_circuits(new)
            if demand is not None:
                demand.reroute()
            return mods
        command = 'add' if a.kind == 'add' else 'delete_strict'
        for c in sorted(self.names(a.circuits)):
            mods.setdefault(dpid(c[0]), []).extend(
                of.circuit_rules(g, c, command))
        return mods


def _listed(circuits):
    return [list(c) for c in sorted(circuits, key=lambda c: [
        topo.natural(x) for x in c])]
