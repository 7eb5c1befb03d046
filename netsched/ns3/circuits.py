"""A hybrid fabric's circuits on ns-3: the simulator's circuit driver
(netsched.sim.circuits) -- the same circuit scheduler, asked at the same
moments, the same reconfiguration steps (circuits.reconfig), each
confirmed at once, and the same ``circuit_decision`` and ``circuits``
events -- with its steps carried out in the ns-3 fabric:

  route   the connections take their paths over the circuits the ToRs
          send over now (Engine.reroute), and the policy decides again;
  remove  the optical circuit switches drop the circuits that go: their
          ports go dark, and what was still queued for them is lost;
  add     after the blackout, they join the new circuits' ports.

What the scheduler sees of the transfers in flight is their bytes not
yet acknowledged (the engine's ``table``).
"""
from .. import topology as topo
from ..sim.circuits import CircuitDriver


class Circuits(CircuitDriver):
    """The simulator's circuit driver on an ns-3 engine (engine.Engine)."""

    def _apply(self, a):
        super()._apply(a)
        if a.kind == 'route':
            return
        live = self.reconfig.live | a.circuits if a.kind == 'add' \
            else self.reconfig.live
        self.eng.fab.set_circuits({topo.circuit(*n)
                                   for n in self.names(live)})
