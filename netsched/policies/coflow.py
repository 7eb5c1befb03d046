"""Coflow baselines: per-flow fair, FIFO, Varys (SEBF + MADD), Aalo
(D-CLAS) and Sincronia (BSSI). Ports are directed links: on a big-switch
fabric these are exactly the host up- and downlinks of the papers; on a
multi-tier fabric every link a coflow crosses counts as a port."""
import numpy as np

from . import Decision, Policy, register


def _arrival_order(snap):
    """Dense FIFO position per coflow: arrival time, then name."""
    idx = sorted(range(len(snap.coflow_id)),
                 key=lambda c: (snap.coflow_arrival[c], snap.coflow_id[c]))
    pos = np.empty(len(idx), dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    return pos


@register
class Fair(Policy):
    """Per-flow fair sharing: no decision, every flow in one class; TCP
    (emulator) or max-min fairness (simulator) shares the links."""
    name = 'fair'
    decides_on = 'coflows'

    def decide(self, snap):
        return Decision()


@register
class Fifo(Policy):
    """Coflows served in arrival order (FIFO), each at full priority over
    later ones; flows of one coflow share fairly."""
    name = 'fifo'
    decides_on = 'coflows'

    def decide(self, snap):
        return Decision(coflow_rank=_arrival_order(snap))


def effective_bottleneck(snap, load=None):
    """Varys' Gamma per coflow: max over ports of remaining bytes * 8 /
    port capacity, in seconds."""
    load = snap.coflow_port_bytes() if load is None else load
    return (load * 8.0 / snap.link_capacity).max(axis=1, initial=0.0)


def sebf_order(snap, load=None):
    gamma = effective_bottleneck(snap, load)
    pos = _arrival_order(snap)
    idx = np.lexsort((pos, gamma))
    rank = np.empty(len(idx), dtype=np.int64)
    rank[idx] = np.arange(len(idx))
    return rank


def madd(snap, rank, load):
    """Minimum-allocation-for-desired-duration: in rank order, each coflow
    gets the rates that finish all its flows together at its Gamma on the
    capacity the coflows before it left; a coflow that meets a full port
    gets 0 (back-filling then gives it what is left)."""
    residual = snap.link_capacity.astype(float).copy()
    gamma = np.full(len(rank), np.inf)
    bits = load * 8.0
    for c in np.argsort(rank, kind='stable'):
        need = bits[c]
        used = need > 0
        if not used.any():
            continue
        if (residual[used] <= 0).any():
            continue
        g = (need[used] / residual[used]).max()
        gamma[c] = g
        residual[used] = np.maximum(residual[used] - need[used] / g, 0.0)
    with np.errstate(divide='ignore'):
        return snap.flow_remaining * 8.0 / gamma[snap.flow_coflow]


@register
class Varys(Policy):
    """Varys (SIGCOMM 2014): Smallest-Effective-Bottleneck-First order,
    MADD rates inside that order, back-filling of spare capacity
    (clairvoyant: needs every flow's remaining size)."""
    name = 'varys'
    clairvoyant = True
    decides_on = 'coflows'

    def decide(self, snap):
        load = snap.coflow_port_bytes()
        rank = sebf_order(snap, load)
        return Decision(coflow_rank=rank, flow_rate=madd(snap, rank, load))


@register
class Sebf(Varys):
    """SEBF ordering alone (no MADD rates): strict priority by Gamma."""
    name = 'sebf'

    def decide(self, snap):
        return Decision(coflow_rank=sebf_order(snap))


@register
class Aalo(Policy):
    """Aalo (SIGCOMM 2015), D-CLAS: non-clairvoyant. A coflow starts in
    queue 0 and moves down one queue each time the bytes it has sent
    cross a threshold (first_mb, then x multiplier per queue, K queues);
    FIFO by arrival inside a queue; queues in strict priority."""
    name = 'aalo'
    params = {'first_mb': 10.0, 'multiplier': 10.0, 'num_queues': 10}

    def thresholds(self):
        return self.first_mb * 2 ** 20 * self.multiplier ** np.arange(
            int(self.num_queues) - 1)

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
        return Decision(coflow_rank=q, coflow_order=_arrival_order(snap),
                        recheck_at=snap.t + max(soon, 1e-9)
                        if np.isfinite(soon) else None)


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
    for pos in range(C - 1, -1, -1):
        port_load = load[left].sum(axis=0)
        b = int(np.argmax(port_load))
        on_b = left & (load[:, b] > 0)
        if not on_b.any():                  # nothing left carries bytes
            rest = np.flatnonzero(left)
            rank[rest] = np.arange(pos - len(rest) + 1, pos + 1)
            break
        cand = np.flatnonzero(on_b)
        ratio = w[cand] / load[cand, b]
        k = cand[np.argmin(ratio)]          # ties: lowest index first
        rank[k] = pos
        left[k] = False
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
