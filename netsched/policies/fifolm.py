"""FIFO-LM (Baraat, SIGCOMM 2014): FIFO with limited multiplexing."""
import numpy as np

from .base import Decision, Policy, arrival_order
from .registry import register


def rate_estimate(snap):
    """Per coflow, the rate (bytes/s) at which it is sending now, or, for
    a coflow sending nothing yet (just arrived, or held back by the last
    decision), an upper bound: the sum over its flows of their paths'
    smallest capacity. Used to tell when it may next cross a threshold:
    the bound makes that guess early, never late, and asking early only
    costs a decision."""
    C = len(snap.coflow_id)
    now = snap.coflow_rate() / 8.0
    fl = snap.flow_links
    cap = np.where(fl >= 0, snap.link_capacity[np.maximum(fl, 0)], np.inf)
    slowest = cap.min(axis=1, initial=np.inf)
    slowest[~np.isfinite(slowest)] = 0.0       # a flow crossing no link
    top = np.bincount(snap.flow_coflow, weights=slowest, minlength=C) / 8.0
    return np.where(now > 0, now, top)


def next_crossing(snap, gap, rate):
    """The absolute time at which the first of the coflows (or jobs)
    still ``gap`` bytes short of a threshold at ``rate`` bytes/s crosses
    it, or None if none is moving toward one."""
    gap, rate = np.asarray(gap, float), np.asarray(rate, float)
    ok = (rate > 0) & np.isfinite(gap) & (gap > 0)
    if not ok.any():
        return None
    return snap.t + max(float((gap[ok] / rate[ok]).min()), 1e-9)


@register
class FifoLm(Policy):
    """FIFO-LM (Baraat, SIGCOMM 2014): tasks (here coflows) are served one
    at a time in arrival order, which cuts both average and tail
    completion times against fair sharing; but a task found to be heavy
    (its bytes sent so far beyond a threshold, known from the workload's
    task-size history) would block every task behind it, so the level of
    multiplexing is raised: the heavy task is served together with the
    task after it rather than ahead of it. Heavy tasks are thus neither
    starved (they keep a share) nor blocking (from the paper's abstract
    and its description of FIFO-LM; Beamer's and Varys' papers compare
    with it).

    (reconstructed) Walk the coflows in arrival order: the first has rank
    0; each next coflow shares the rank of the one before it if that one
    is heavy (``coflow_sent`` >= ``threshold_mb`` MB), else takes the next
    rank. A run of heavy coflows therefore shares one rank with the first
    light coflow after it: the multiplexing level is one plus the number
    of heavy coflows at the head of that group. No tie-break is given
    inside a rank, so the coflows of a rank share by max-min fairness
    (Baraat's switches share a priority between the tasks multiplexed):
    under ``queues: exact`` always; with Q classes wherever the later
    coflow is classed after its heavy predecessor became heavy, while one
    already running in a class below keeps it (the backends'
    stable_classes lets a tie stay apart rather than re-mark a running
    connection, so there the heavy coflow keeps its strict priority until
    it ends). Heaviness is the
    coflow's bytes sent on all its links, where Baraat's switches each
    count the bytes they forward; a coflow is a Baraat task, so a DL
    job's every iteration starts light. The policy asks again when the
    next coflow should cross the threshold at the rate it sends now (or
    could send, if it sends nothing yet)."""
    name = 'fifo-lm'
    params = {'threshold_mb': 100.0}
    progress = True                    # heaviness is bytes sent

    def finest_bytes(self):
        return self.threshold_mb * 2 ** 20

    def decide(self, snap):
        thr = self.finest_bytes()
        sent = np.asarray(snap.coflow_sent, float)
        heavy = sent >= thr
        idx = np.argsort(arrival_order(snap), kind='stable')
        rank = np.empty(len(idx), dtype=np.int64)
        r, prev_heavy = -1, False
        for c in idx.tolist():
            r += 0 if prev_heavy else 1
            rank[c] = r
            prev_heavy = bool(heavy[c])
        gap = np.where(heavy, np.inf, thr - sent)
        return Decision(coflow_rank=rank,
                        recheck_at=next_crossing(snap, gap,
                                                 rate_estimate(snap)))
