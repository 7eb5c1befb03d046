"""``matching``: max-weight matching of the ToR-to-ToR demand matrix,
re-decided every ``period_s``, one matching per OCS plane, with a minimum
hold time (the c-Through/Helios family of hybrid-fabric schedulers).

The rule, per decision (all amounts in bytes):

1. **Held circuits stay.** A circuit set up less than ``hold_s`` ago
   (``snap.since``; a circuit with no entry counts as old) is kept
   whatever the demand: its two ports on its plane are not rematched.
2. **The window.** A decision stands for at least ``period_s`` and a new
   circuit for at least ``hold_s``, so the scheduler weighs what a
   circuit carries over the window ``H = max(period_s, hold_s)`` after
   its set-up: one direction of a new circuit carries at most
   ``circuit_bps / 8 * H`` bytes; a circuit that exists already has no
   blackout to sit through, so over the same span (``H`` plus the
   reconfiguration delay ``r``) it carries ``circuit_bps / 8 * (H + r)``.
3. **The weight of a ToR pair** {i, j} is the bytes a circuit between
   them would carry in the window, both directions:
   ``min(d[i,j], cap) + min(d[j,i], cap)``. Both directions count
   because a circuit carries both at full rate (the sum, not the max:
   a pair sending both ways takes twice the bytes off the packet core),
   and each is capped by what the circuit can carry, so a pair with
   more demand than one circuit moves does not crowd out a second pair.
   An existing circuit's weight is multiplied by ``1 + margin``.
4. **Planes in order.** Plane 0 takes the max-weight matching
   (networkx.max_weight_matching) of the ToRs whose plane-0 port is not
   held; every circuit chosen (or held) on it then takes what it carries
   in the window off its pair's demand, each direction; plane 1 matches
   on what is left; and so on. A pair with much demand thus gets
   circuits on several planes.
5. **No reconfiguration for nothing.** Matchings are compared
   lexicographically: first the bytes carried (the weights above), then
   the number of circuits kept from now, then the pairs' uncapped
   demand. So a circuit is torn down only if the matching that replaces
   it on its ports carries strictly more bytes: a replacement with
   equal demand loses (ties keep what is there), and with a
   reconfiguration delay a newcomer must beat the existing circuit by
   what the blackout costs it (with ``margin``, by that fraction more
   again). An existing circuit whose pair has no demand left stays as
   long as no pair wants its ports (tearing it down gains nothing, and
   DL traffic between two racks comes back at the next iteration).
   Among pairs whose demand exceeds the cap, the one with more demand
   wins.

Weights are whole numbers of bytes, combined into one exact integer per
edge so that the matching's lexicographic order holds without floating
point ties; networkx keeps integer weights exact. ``recheck_at`` is
``t + period_s``.
"""
import math

import networkx as nx

from .base import (CircuitDecision, CircuitScheduler, check_circuits,
                   clean_demand)
from .registry import register


@register
class Matching(CircuitScheduler):
    name = 'matching'
    params = {'period_s': 0.1, 'hold_s': 0.2, 'margin': 0.0}
    zero_ok = ('hold_s', 'margin')
    decides_on = 'period'
    needs = ('demand',)

    def decide(self, snap):
        T, P = snap.n_tors, int(snap.planes)
        now = check_circuits(snap.circuits, T, P)
        recheck = snap.t + self.period_s
        if T < 2 or P < 1 or not snap.circuit_bps > 0:
            return CircuitDecision(frozenset(), recheck)
        rate = snap.circuit_bps / 8.0
        window = max(self.period_s, self.hold_s)
        cap_new = rate * window
        cap_old = rate * (window + max(float(snap.reconfig_s), 0.0))
        left = clean_demand(snap.demand, T)
        held = self.held(snap, now)
        for c in sorted(held):
            carry(left, c, cap_old)
        out = set(held)
        for k in range(P):
            taken = {t for kk, i, j in held if kk == k for t in (i, j)}
            old = {(i, j) for kk, i, j in now - held if kk == k}
            for i, j in sorted(plane_matching(left, taken, old, cap_new,
                                              cap_old, self.margin)):
                carry(left, (k, i, j), cap_old if (i, j) in old else cap_new)
                out.add((k, i, j))
        return CircuitDecision(check_circuits(out, T, P), recheck)

    def held(self, snap, now):
        """The circuits set up less than hold_s ago."""
        return {c for c in now
                if snap.t - snap.since.get(c, -math.inf) < self.hold_s}


def carry(left, circuit, cap):
    """Take what a circuit carries in the window (``cap`` bytes each
    direction) off its pair's demand."""
    _, i, j = circuit
    left[i, j] = max(left[i, j] - cap, 0.0)
    left[j, i] = max(left[j, i] - cap, 0.0)


def plane_matching(left, taken, old, cap_new, cap_old, margin=0.0):
    """One plane's new matching, {(i, j)} with i < j, over the ToRs not in
    ``taken``, on the demand ``left``; ``old``: the pairs with a circuit
    on this plane now (not held). See the module docstring, 3 and 5."""
    T = len(left)
    free = [t for t in range(T) if t not in taken]
    edges = []
    for a, i in enumerate(free):
        for j in free[a + 1:]:
            ex = (i, j) in old
            cap = cap_old if ex else cap_new
            carried = min(left[i, j], cap) + min(left[j, i], cap)
            raw = left[i, j] + left[j, i]
            if ex:
                carried *= 1.0 + margin
            elif raw <= 0:
                continue
            edges.append((i, j, int(round(carried)), int(ex),
                          int(round(raw))))
    K = sum(e[4] for e in edges) + 1          # > any matching's raw sum
    G = nx.Graph()
    for i, j, carried, ex, raw in edges:
        w = (carried * (T + 1) + ex) * K + raw    # T + 1 > circuits kept
        if w > 0:
            G.add_edge(i, j, weight=w)
    return {(min(u, v), max(u, v)) for u, v in nx.max_weight_matching(G)}
