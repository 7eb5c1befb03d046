"""`netsched check`: an experiment validated and described, nothing
run (no root needed)."""
from .. import topology as topo
from . import common


def cmd_check(a):
    """Validate an experiment without running it (no root needed)."""
    from ..pipeline import run
    from ..workload import bounds
    exp = common.load_experiment(a)
    # everything that can fail, before a word is printed; the size first,
    # so that a run too big to plan is not planned
    est, warnings = bounds.admit(exp, force=a.long)
    g, traced, plan = run.check(exp)
    print('%s: ok' % a.experiment)
    print('  estimate: %s' % est.text())
    lim = bounds.limits(exp, est)
    print('  limits: %s; %s; %s' % (lim.time_text(), lim.events_text(),
                                   lim.log_text()))
    for w in warnings:
        print('  warning: %s' % w)
    for line in exp.knobs.environment_lines():
        print('  %s' % line)
    if exp.knobs.changed():
        print('  measuring knobs: %s' % ', '.join(exp.knobs.changed()))
    print('  backend %s, policy %s, seed %d, topology %s (%d hosts), '
          'links %.4g Gbit/s, scale %g (emulated links %.4g Mbit/s), '
          'queues %s' % (exp.backend, exp.policy, exp.seed, exp.topology,
                         len(topo.hosts(g)), exp.link_bps / 1e9, exp.scale,
                         exp.link_bps / exp.scale / 1e6,
                         'exact' if exp.queues is None else exp.queues))
    if exp.circuits is not None:
        _print_circuits(exp, g)
    for f in exp.faults:
        print('  fault: %s %s down at %g s, %s' % (
            f.kind, f.target, f.at_s, 'back at %g s' % f.until_s
            if f.until_s is not None else 'for the rest of the run'))
    if exp.backend == 'emu':
        _resolution(exp, plan)
    if plan is not None:
        _print_plan(exp, plan)
    if exp.trace:
        _print_trace(exp, g, *traced)
    return 0


def _print_circuits(exp, g):
    """A hybrid fabric's circuits: scheduler, ports, rates."""
    planes, tors = topo.planes(g), topo.tors(g)
    up = sum(d['capacity_bps'] for m, d in g[tors[0]].items()
             if g.nodes[m]['role'] == 'spine')
    print('  circuits: scheduler %s%s; %d ToRs, %d circuit(s) each of '
          '%.4g Gbit/s, packet uplinks %.4g Gbit/s per ToR, '
          'reconfiguration %g ms'
          % (exp.circuits[0], ' %s' % exp.circuits[1]
             if exp.circuits[1] else '', len(tors), len(planes),
             g[tors[0]][planes[0]]['capacity_bps'] / 1e9, up / 1e9,
             g.graph['reconfig_s'] * 1e3))


def _print_plan(exp, plan):
    """The policy's warnings on the plan's jobs, and the jobs, stages,
    tasks and connections planned."""
    from .. import policies
    pol = policies.make(exp.policy, exp.policy_params)
    for w in pol.warnings([{'id': j, 'pattern': jp.pattern,
                            'group': jp.group, 'iterations': jp.iterations}
                           for j, jp in plan.jobs.items()]):
        print('  warning: %s' % w)
    for jid, jp in plan.jobs.items():
        print('  job %-12s %-9s %-4s %d workers%s, %d iterations, '
              'arrives %.2f s, %.1f MB gradients, %.1f MB per iteration'
              % (jid, jp.model, jp.pattern, len(jp.workers),
                 ' + %d PS' % len(jp.servers) if jp.servers else '',
                 jp.iterations, jp.arrival_s, jp.gradient_bytes / 2 ** 20,
                 jp.bytes_per_iteration / 2 ** 20))
    for st in plan.stages:
        print('  stage %s: %d configurations, %d go on'
              % (st.id, len(st.jobs), len(st.survivors)))
    print('  %d tasks, %d connections' % (len(plan.tasks), len(plan.conns)))


def _print_trace(exp, g, ports, cofs, racks):
    """A trace's coflows and flows, and what of them the network carries."""
    from ..workload import trace
    net = [trace.network_flows(c, racks, exp.big_switch)[2] for c in cofs]
    print('  trace %s: %d ports, %d coflows, %d flows'
          % (exp.trace.path, ports, len(cofs),
             sum(len(c.mappers) * len(c.reducers) for c in cofs)))
    print('  racks %s on %d hosts: %d flows cross the network, %.1f MB '
          '(%.2f MB emulated); arrivals %.3g..%.3g s'
          % (exp.trace.racks, len(topo.hosts(g)),
             sum(len(x) for x in net), sum(x.sum() for x in net) / 2**20,
             sum(x.sum() for x in net) / exp.scale / 2**20,
             cofs[0].arrival_s, cofs[-1].arrival_s))


def _longest_path(exp, plan):
    """Links on the longest path any of the plan's connections takes (its
    ECMP path, from the same path table both backends use)."""
    from .. import fluid
    net = fluid.Network(exp.graph())
    pids = {net.path_id(c.src, c.dst, c.sport, c.dport) for c in plan.conns}
    table = net.table()
    return max(int((table[p] >= 0).sum()) for p in pids) if pids else 0


def _resolution(exp, plan):
    """What the emulator resolves: one packet's time on an emulated link;
    a warning where most transfers are a few packets (each busy hop of
    their path adds a packet time the fluid model does not have), where
    most bytes go on connections too short for congestion control
    (pipeline.forecast.short_streams), and where the policy decides on
    less data than TCP's initial window carries."""
    from .. import policies
    from ..pipeline import forecast, verdict
    from ..pipeline.experiment import INITIAL_WINDOW
    link = exp.link_bps / exp.scale
    pkt_s = exp.mtu * 8 / link
    print('  emulated packet time %.2f ms (MTU %d at %.4g Mbit/s)'
          % (pkt_s * 1e3, exp.mtu, link / 1e6))
    sends = sorted(t.bytes / exp.scale for t in plan.tasks
                   if t.kind == 'send') if plan is not None else []
    if sends:
        median = sends[len(sends) // 2] / exp.mtu          # packets
        hops = _longest_path(exp, plan)
        if hops - 1 > median:
            print('  warning: median transfer %.1f emulated packets: busy '
                  'hops may add %.0f ms per transfer that the fluid model '
                  'lacks (docs/emulation.md)'
                  % (median, (hops - 1) * pkt_s * 1e3))
    short = forecast.short_streams(exp, plan) if plan is not None else {}
    if (short.get('short_share') or 0) > verdict.LIMITS['streams']:
        print('  warning: %.0f%% of the bytes go on connections of at most '
              '%d emulated packets, too short for TCP to find its share: '
              'the verdict will say degraded (streams; docs/fidelity.md)'
              % (100 * short['short_share'], short['short_packets']))
    windows, _, raised = exp.threshold_floor
    if raised:
        print('  %s: %s raised from %.3g to %.3g MB, %g initial windows at '
              'scale %g (threshold_floor_windows)'
              % (exp.policy, raised[0], raised[1], raised[2], windows,
                 exp.scale))
    finest = policies.make(exp.policy, exp.policy_params).finest_bytes()
    if finest is not None and finest / exp.scale < INITIAL_WINDOW * exp.mtu:
        print('  warning: %s decides on %.0f emulated bytes, less than '
              'TCP\'s initial window: the emulator cannot follow it '
              '(docs/fidelity.md)' % (exp.policy, finest / exp.scale))

