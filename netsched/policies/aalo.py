"""Aalo (SIGCOMM 2015): non-clairvoyant D-CLAS queues."""
import numpy as np

from .base import (Decision, Policy, arrival_order, next_crossing,
                   rate_estimate)
from .registry import register


@register
class Aalo(Policy):
    """Aalo (SIGCOMM 2015), D-CLAS: non-clairvoyant. A coflow starts in
    queue 0 and moves down one queue each time the bytes it has sent
    cross a threshold (first_mb, then x multiplier per queue, K queues);
    FIFO by arrival inside a queue; queues in strict priority."""
    name = 'aalo'
    params = {'first_mb': 10.0, 'multiplier': 10.0, 'num_queues': 10}
    progress = True                    # queues by bytes sent
    finest_param = 'first_mb'

    def thresholds(self):
        return self.first_mb * 2 ** 20 * self.multiplier ** np.arange(
            int(self.num_queues) - 1)

    def finest_bytes(self):
        return super().finest_bytes() if self.num_queues > 1 else None

    def decide(self, snap):
        thr = self.thresholds()
        q = np.searchsorted(thr, snap.coflow_sent, side='right')
        # decide again when the next coflow may cross its next threshold;
        # a coflow whose flows have no rate yet (just started) is taken
        # at its paths' capacity, so the crossing is never missed
        nxt = np.where(q < len(thr), thr[np.minimum(q, len(thr) - 1)], np.inf)
        return Decision(coflow_rank=q, coflow_order=arrival_order(snap),
                        recheck_at=next_crossing(
                            snap, nxt - snap.coflow_sent,
                            rate_estimate(snap)))
