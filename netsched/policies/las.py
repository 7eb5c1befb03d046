"""LAS: least attained service per job (the Tiresias-style baseline)."""
import numpy as np

from .base import Decision, Policy, next_crossing, rate_estimate
from .registry import register


def dense(keys):
    """Dense rank (0 first) of a list of sortable keys; equal keys share."""
    order = sorted(set(keys))
    at = {k: i for i, k in enumerate(order)}
    return np.array([at[k] for k in keys], dtype=np.int64)


@register
class Las(Policy):
    """Least attained service per job, the non-clairvoyant baseline a
    job-priority scheduler such as JPAS is measured against: Tiresias
    (NSDI 2019) serves the DL jobs that have received the least service
    first, discretised onto a few priority queues with exponentially
    spaced thresholds (its 2D-LAS counts GPU time; here, as on a network,
    the service is bytes), FIFO inside a queue.

    (reconstructed) A job's attained service is the bytes it has sent:
    its finished iterations' (``JobView.done`` x ``bytes_per_iteration``)
    plus its live coflows' ``coflow_sent``; a coflow of no job (or of a
    job not in the snapshot) is a job of its own, its service its own
    bytes sent. With Q classes a job is in class k where k thresholds
    ``first_mb`` x ``multiplier``^i MB (i = 0 .. Q-2) are at or below its
    service; classes in strict priority, FIFO inside one (the job's
    arrival, then the coflow's). Under ``queues: exact`` the order is the
    exact LAS one: fewest bytes first, the service counted in steps of
    ``quantum_mb`` MB, jobs within one step sharing (as LAS shares among
    the least served) rather than flip order at every byte; the policy
    asks again when a job is due to reach the step of the next job or to
    leave the step it shares. Every coflow of a job has its job's rank.
    Where a worker's iteration mark arrives before the iteration's coflow
    ends, that coflow's bytes are counted twice until it ends (done
    already includes it): the service errs high by at most one
    iteration."""
    name = 'las'
    params = {'first_mb': 10.0, 'multiplier': 10.0, 'quantum_mb': 1.0}
    progress = True                    # service is bytes sent
    finest_param = 'first_mb'

    def thresholds(self, q):
        return self.first_mb * 2 ** 20 * float(self.multiplier) ** \
            np.arange(max(int(q) - 1, 0))

    def service(self, snap):
        """Per coflow: its job's key (id), the job's attained service
        (bytes) and arrival; and per job key the coflows' indices."""
        C = len(snap.coflow_id)
        cj = snap.coflow_job if len(snap.coflow_job) == C else (None,) * C
        sent = np.asarray(snap.coflow_sent, float)
        members = {}
        for c, j in enumerate(cj):
            key = ('job', j) if j in snap.jobs else ('coflow', c)
            members.setdefault(key, []).append(c)
        att, arr = {}, {}
        for key, cs in members.items():
            own = float(sent[cs].sum())
            if key[0] == 'job':
                v = snap.jobs[key[1]]
                att[key] = v.done * float(v.bytes_per_iteration) + own
                arr[key] = float(v.arrival)
            else:
                att[key] = own
                arr[key] = float(snap.coflow_arrival[cs[0]])
        return members, att, arr

    def decide(self, snap):
        C = len(snap.coflow_id)
        members, att, arr = self.service(snap)
        keys = list(members)
        service = np.array([att[k] for k in keys])
        rate = np.zeros(len(keys))
        est = rate_estimate(snap)
        for i, k in enumerate(keys):
            rate[i] = est[members[k]].sum()
        if snap.queues is None:
            step = self.quantum_mb * 2 ** 20
            level = np.floor(service / step).astype(np.int64)
            job_rank = dense(level.tolist())
            rank = np.empty(C, dtype=np.int64)
            for i, k in enumerate(keys):
                rank[members[k]] = job_rank[i]
            # the next step at which some job's level meets another's (a
            # new tie) or leaves one it shares (the tie breaks)
            gap = np.full(len(keys), np.inf)
            for i in range(len(keys)):
                others = np.delete(level, i)
                above = others[others >= level[i]]
                if len(above):
                    target = level[i] + 1 if above.min() == level[i] \
                        else above.min()
                    gap[i] = target * step - service[i]
            return Decision(coflow_rank=rank,
                            recheck_at=next_crossing(snap, gap, rate))
        thr = self.thresholds(snap.queues)
        cls = np.searchsorted(thr, service, side='right')
        rank = np.empty(C, dtype=np.int64)
        order_key = [None] * C
        for i, k in enumerate(keys):
            for c in members[k]:
                rank[c] = cls[i]
                name = k[1] if k[0] == 'job' else snap.coflow_id[c]
                order_key[c] = (arr[k], str(name), float(
                    snap.coflow_arrival[c]), snap.coflow_id[c])
        nxt = np.where(cls < len(thr), thr[np.minimum(cls, len(thr) - 1)]
                       if len(thr) else np.inf, np.inf)
        return Decision(coflow_rank=rank, coflow_order=dense(order_key),
                        recheck_at=next_crossing(snap, nxt - service, rate))
