"""Sincronia (SIGCOMM 2018): BSSI ordering."""
import numpy as np

from .base import Decision, Policy
from .registry import register


def bssi_order(load, weight=None):
    """Sincronia's Bottleneck-Select-Scale-Iterate on a (C, L) load matrix
    (bytes per coflow per port). Returns the rank of each coflow (0 =
    first). Repeatedly: the most loaded port b among unscheduled coflows;
    of the coflows on b, the one with the smallest weight / load-on-b
    goes last; the others' weights drop by its weight times their load
    ratio on b."""
    C = load.shape[0]
    w = np.ones(C) if weight is None else np.asarray(weight, float).copy()
    left = np.ones(C, dtype=bool)
    rank = np.empty(C, dtype=np.int64)
    # only ports some coflow uses matter; the unscheduled coflows' load
    # per port is kept up to date as coflows are placed
    used = np.flatnonzero(load.any(axis=0))
    if not len(used):                       # no bytes left anywhere: as
        rank[:] = np.arange(C)              # given (Beamer's idle stages)
        return rank
    load = load[:, used]
    port_load = load.sum(axis=0)
    for pos in range(C - 1, -1, -1):
        while True:
            b = int(np.argmax(port_load))
            on_b = left & (load[:, b] > 0)
            if on_b.any() or port_load[b] <= 0:
                break
            port_load[b] = 0.0              # rounding left by placed ones
        if not on_b.any():                  # nothing left carries bytes
            rest = np.flatnonzero(left)
            rank[rest] = np.arange(pos - len(rest) + 1, pos + 1)
            break
        cand = np.flatnonzero(on_b)
        ratio = w[cand] / load[cand, b]
        k = cand[np.argmin(ratio)]          # ties: lowest index first
        rank[k] = pos
        left[k] = False
        port_load -= load[k]
        others = np.flatnonzero(on_b & left)
        w[others] -= w[k] * load[others, b] / load[k, b]
    return rank


@register
class Sincronia(Policy):
    """Sincronia (SIGCOMM 2018): BSSI ordering of coflows on their
    remaining per-port bytes, then any priority-respecting work-conserving
    allocation (here strict priority in that order)."""
    name = 'sincronia'
    clairvoyant = True
    decides_on = 'coflows'

    def decide(self, snap):
        return Decision(coflow_rank=bssi_order(snap.coflow_port_bytes()))
