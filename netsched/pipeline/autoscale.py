"""``scale: auto``: the smallest scale (the fastest emulated links) at
which the run's busiest moment stays within what this machine's datapath
carries.

What a run asks of the datapath is packet hops a second: every packet a
switch port receives. The simulator, over the same topology graph and
policy, says how busy every directed link is in every sampling window;
at a scale s a link of c bit/s busy u of the window carries u c / s / (8
MTU) data packets a second, and ACKS more for the acknowledgements that
come back over the same switches (one per two segments). The demand is
the busiest window's sum over the links that end in a switch. The
capacity is measured on the experiment's own topology
(emulator.calibrate, cached per machine). The scale is the smallest
that keeps the demand within BUDGET of the capacity, and no smaller
than what keeps the fastest link within Mininet's 1 Gbit/s, rounded up
to a round number (LADDER) so the emulated rates read plainly.

Without a measurement (not root, no Open vSwitch) the scale is the
default, and the choice says why. The choice and its reason go into the
experiment (``scale_choice``) and from there into run.json.
"""
import dataclasses
import json
import math

from .. import topology as topo

# the share of the measured capacity a run may ask at its busiest: the
# rest is the agents', the controller's and tc's (the datapath thread
# shares two cores with them); the fat-tree suite stays faithful at half
# and is degraded by the datapath near all of it (docs/fidelity.md)
BUDGET = 0.5
ACKS = 1.5
MININET_MAX_BPS = 1e9
DEFAULT_SCALE = 1000.0
LADDER = (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8)


def round_up(x):
    """The smallest value of LADDER times a power of ten that is >= x."""
    if x <= 1:
        return 1.0
    p = 10.0 ** math.floor(math.log10(x))
    for m in LADDER + (10,):
        if m * p >= x * (1 - 1e-12):
            return float(m * p)
    return float(10 * p)


def demand_bps(exp):
    """(the busiest sampling window's bits a second over the links into
    switches, at data-center rates, and its time): the simulator's run
    of ``exp`` (its packets off), in a folder removed after."""
    from ..sim import runner as sim_runner
    g = exp.graph()
    into_switch = {'%s->%s' % (u, v): d['capacity_bps']
                   for u, v, d in g.to_directed().edges(data=True)
                   if g.nodes[v]['role'] != topo.HOST}
    best, when = 0.0, 0.0
    with sim_runner.scratch(dataclasses.replace(exp, backend='sim',
                                                sim_packets='none'),
                            'autoscale') as log, open(log) as f:
        for line in f:
            if '"ev":"links"' not in line:
                continue
            e = json.loads(line)
            bps = sum(u * into_switch.get(k, 0.0)
                      for k, u in e['util'].items())
            if bps > best:
                best, when = bps, e['t']
    return best, when


def choose(exp, hops_per_s):
    """The scale for ``exp`` on a datapath that carries ``hops_per_s``
    packet hops a second, and the figures behind it."""
    bps, when = demand_bps(exp)
    per_packet = 8.0 * exp.mtu
    need = bps / per_packet * ACKS / (BUDGET * hops_per_s)
    fastest = max(d['capacity_bps'] for _, _, d in
                  exp.graph().edges(data=True))
    floor = fastest / MININET_MAX_BPS
    scale = round_up(max(need, floor, 1.0))
    return scale, {
        'scale': scale, 'capacity_hops_per_s': hops_per_s,
        'budget': BUDGET, 'busiest_bps': round(bps, 1), 'busiest_t': when,
        'asked_hops_per_s': round(bps / scale / per_packet * ACKS, 1),
        'reason': 'the busiest moment (t=%.2f s, %.3g bit/s over the links '
                  'into switches) asks %.0f packet hops a second at scale '
                  '%g, within %d%% of the %.0f this datapath carries%s' % (
                      when, bps, bps / scale / per_packet * ACKS, scale,
                      round(BUDGET * 100), hops_per_s,
                      ' (the fastest link held to 1 Gbit/s)'
                      if floor >= need and floor > 1 else '')}


def resolve(d, build, say=print):
    """The experiment of dict ``d`` whose ``scale`` is ``auto``:
    ``build(d)`` makes an Experiment of a dict. Built once at the default
    scale to simulate it, then at the chosen one."""
    from ..emulator import calibrate
    first = build(dict(d, scale=DEFAULT_SCALE))
    rec = calibrate.cached(first.topology, first.mtu)
    if rec is None and calibrate.can_measure():
        rec = calibrate.measure(first.topology, first.mtu, say=say)
    if rec is None:
        choice = {'scale': DEFAULT_SCALE, 'reason': (
            'this machine\'s datapath is not measured (that needs root and '
            'Open vSwitch): the default scale %g' % DEFAULT_SCALE)}
        return dataclasses.replace(first, scale_choice=choice)
    scale, choice = choose(first, rec['hops_per_s'])
    choice['measured'] = rec.get('when')
    exp = build(dict(d, scale=scale))
    return dataclasses.replace(exp, scale_choice=choice)
