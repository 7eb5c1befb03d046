"""An experiment's faults on the simulator (workload.faults): at each
change of the set of links down, the network routes around them
(fluid.Network.set_down) and the flows on a path that changed move to
their new one at once, as the emulator's flows do once its controller
has rerouted. The event log gets the fault and the reroute, as on the
emulator."""
from ..workload import faults as wf


def schedule(eng, faults):
    """Put the faults' timeline on the engine ``eng``: background timers,
    so that a link coming back after the workload has ended does not
    keep the run going."""
    all_faults = tuple(faults)

    def change(t, what, fault):
        net = eng.net
        eng.log.write(eng.now, 'fault', what=what, kind=fault.kind,
                      target=fault.target, links=sorted(fault.links))
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
