"""The packet-level backend: an experiment run in ns-3 at the topology's
data-center rates, with the simulator's plan executor (sim.drivers) and
the controller's scheduling core (control.scheduler) in the loop
(docs/ns3.md). ns-3 is imported only when a run starts (loader)."""
