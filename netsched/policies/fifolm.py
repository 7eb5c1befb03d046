"""FIFO-LM (Baraat, SIGCOMM 2014): FIFO with limited multiplexing."""
import numpy as np

from .base import (Decision, Policy, arrival_order, next_crossing,
                   rate_estimate)
from .registry import register


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
    finest_param = 'threshold_mb'

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
