"""An experiment's faults on ns-3 (workload.faults): a link or switch goes
down at once (its interfaces drop what is sent over them, and TCP finds
out as it does: timeouts); the controller reroutes ``control_delay_s``
later, as the emulator's controller reroutes on the ports' status; a
connection left with no path keeps its route and waits, its packets
lost, until a link comes back. The controller down holds the scheduler
(decisions wait, the fabric keeps what it had); an agent killed fails
its jobs (PlanDriver.fail_host), whose connections stop."""
from .. import topology as topo
from ..workload import faults as wf


def schedule(eng, faults, plan):
    """Put the faults' timeline on ns-3 engine ``eng`` (background
    timers: a link back after the workload ended keeps nothing going)."""
    all_faults = tuple(faults)
    g, fab, ctl = eng.fab.g, eng.fab, eng.control
    ends = {topo.link_id(u, v): (u, v) for u, v in g.edges}

    def change(t, what, fault):
        eng.log.write(eng.now, 'fault', what=what, kind=fault.kind,
                      target=fault.target, links=sorted(fault.links))
        if fault.kind == 'controller':
            ctl.hold(what == 'down')
            return
        if fault.kind == 'agent':
            plan.fail_host(fault.target, 'the agent on %s was killed at '
                           '%.3f s' % (fault.target, eng.now))
            return
        for lid in fault.links:
            fab.set_link(*ends[lid], up=(what == 'up'))
        eng.background(eng.now + ctl.delay_s, reroute, t)

    def reroute(t):
        down = wf.down_at(all_faults, t)
        if down == eng.net.down:
            return
        eng.net.set_down(down)
        moved, stranded = eng.reroute()
        eng.log.write(eng.now, 'reroute', links_down=sorted(down),
                      flows_moved=moved, stranded=stranded)

    for t, what, fault in wf.timeline(all_faults):
        eng.background(t, change, t, what, fault)
