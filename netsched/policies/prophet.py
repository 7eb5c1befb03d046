"""Prophet (ICPP 2021): gradient blocks from a profiled iteration.

The planning half of issue 12's Prophet, pure: from one iteration's
profile (when each gradient partition became ready during the backward
pass, its bytes, its priority) and the measured bandwidth, the blocks a
host sends and when. The agents and the simulator's driver are to carry
the plan out (not yet wired).

From the public code (a BytePS fork), as POLICIES.md reads it:
  - a gap between two ready times larger than twice the average gap ends
    a group of gradients;
  - in the gap after a group, the budget is gap x bandwidth bytes: the
    ready partitions, highest priority (front layers) first, go out back
    to back while they fit in it; that is one block;
  - once layer 0's gradient is ready, the rest go in strict priority
    order, at most ``credit`` bytes outstanding at a time.
"""
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Block:
    start: float                  # s after the backward pass began
    parts: tuple                  # partition indices, in sending order
    budget: float                 # bytes the gap allows (inf: the tail)


@dataclass(frozen=True)
class Plan:
    blocks: tuple = ()            # in the gaps, in time order
    tail: tuple = ()              # after layer 0: strict priority order
    credit: float = 0.0           # bytes outstanding at most in the tail
    groups: tuple = field(default=())   # partition indices per group


def groups(ready):
    """Partition indices grouped by ready time: a gap larger than twice
    the mean gap between consecutive ready times ends a group."""
    order = np.argsort(np.asarray(ready, float), kind='stable')
    r = np.asarray(ready, float)[order]
    if len(r) < 2:
        return (tuple(order.tolist()),) if len(r) else ()
    gaps = np.diff(r)
    cut = gaps > 2.0 * gaps.mean()
    out, cur = [], [int(order[0])]
    for i in range(1, len(r)):
        if cut[i - 1]:
            out.append(tuple(cur))
            cur = []
        cur.append(int(order[i]))
    out.append(tuple(cur))
    return tuple(out)


def plan(ready, size, priority, bandwidth_Bps, credit_bytes):
    """Prophet's plan for one iteration: ``ready`` (s after the backward
    pass began), ``size`` (bytes) and ``priority`` (lower first: front
    layers) per gradient partition; the bandwidth measured (bytes/s);
    the tail's credit (bytes). Layer 0's partitions are those of the
    lowest priority value: the tail starts when the last of them is
    ready (the end of back-propagation)."""
    ready = np.asarray(ready, float)
    size = np.asarray(size, float)
    prio = np.asarray(priority, float)
    gs = groups(ready)
    front = prio.min() if len(prio) else 0.0
    tail_at = ready[prio == front].max() if len(prio) else 0.0
    sent = np.zeros(len(ready), bool)
    blocks = []
    for k, g in enumerate(gs[:-1]):
        t = ready[list(g)].max()                 # the group is ready
        if t >= tail_at:
            break
        gap = ready[list(gs[k + 1])].min() - t
        budget = gap * bandwidth_Bps
        pool = [i for i in range(len(ready))
                if not sent[i] and ready[i] <= t]
        pool.sort(key=lambda i: (prio[i], ready[i], i))
        used, parts = 0.0, []
        for i in pool:
            if used + size[i] > budget:
                break
            used += size[i]
            parts.append(i)
            sent[i] = True
        if parts:
            blocks.append(Block(float(t), tuple(parts), float(budget)))
    rest = sorted((i for i in range(len(ready)) if not sent[i]),
                  key=lambda i: (prio[i], ready[i], i))
    return Plan(tuple(blocks), tuple(rest), float(credit_bytes), gs)
