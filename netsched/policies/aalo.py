"""Aalo (SIGCOMM 2015): non-clairvoyant D-CLAS queues."""
import numpy as np

from .base import Decision, Policy, arrival_order
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

    def thresholds(self):
        return self.first_mb * 2 ** 20 * self.multiplier ** np.arange(
            int(self.num_queues) - 1)

    def finest_bytes(self):
        return float(self.thresholds()[0]) if self.num_queues > 1 else None

    def decide(self, snap):
        thr = self.thresholds()
        q = np.searchsorted(thr, snap.coflow_sent, side='right')
        # when will the next coflow cross its next threshold at the
        # current rates? Decide again then.
        rate = snap.coflow_rate() / 8.0
        nxt = np.where(q < len(thr), thr[np.minimum(q, len(thr) - 1)], np.inf)
        with np.errstate(divide='ignore', invalid='ignore'):
            dt = np.where(rate > 0, (nxt - snap.coflow_sent) / rate, np.inf)
        soon = dt.min(initial=np.inf)
        return Decision(coflow_rank=q, coflow_order=arrival_order(snap),
                        recheck_at=snap.t + max(soon, 1e-9)
                        if np.isfinite(soon) else None)
