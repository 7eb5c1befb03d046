"""An experiment's faults on the simulator (workload.faults): at each
change of the set of links down, the network routes around them
(fluid.Network.set_down) and the flows on a path that changed move to
their new one at once, as the emulator's flows do once its controller
has rerouted. The event log gets the fault and the reroute, as on the
emulator."""
from ..workload import faults as wf


def schedule(eng, faults, plan=None):
    """Put the faults' timeline on the engine ``eng``: background timers,
    so that a link coming back after the workload has ended does not
    keep the run going. An agent killed fails the jobs of the plan
    driver ``plan`` on its host (PlanDriver.fail_host)."""
    all_faults = tuple(faults)

    def change(t, what, fault):
        net = eng.net
        eng.log.write(eng.now, 'fault', what=what, kind=fault.kind,
                      target=fault.target, links=sorted(fault.links))
        if fault.kind == 'controller':
            eng.rates.hold(what == 'down')
            return
        if fault.kind == 'agent':
            if plan is not None:
                plan.fail_host(fault.target, 'the agent on %s was killed '
                               'at %.3f s' % (fault.target, eng.now))
            return
        down = wf.down_at(all_faults, t)
        if down == net.down:
            return
        before = eng.table.a_path.copy()
        net.set_down(down)
        eng.reroute()
        moved = int((eng.table.a_path != before).sum()) \
            if len(before) == len(eng.table.a_path) else len(before)
        eng.log.write(eng.now, 'reroute', links_down=sorted(down),
                      flows_moved=moved)

    for t, what, fault in wf.timeline(all_faults):
        eng.background(t, change, t, what, fault)
