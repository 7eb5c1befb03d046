"""Beamer (IEEE TNSM 2022): stage-aware coflow scheduling for
hyper-parameter tuning."""
import numpy as np

from .base import Decision, Policy, arrival_order
from .registry import register
from .sincronia import bssi_order
from .varys import effective_bottleneck
from ..errors import ConfigError

INNER = ('stage', 'iteration')


@register
class Beamer(Policy):
    """Beamer (TNSM 2022): hyper-parameter tuning evaluates many
    configurations in stages, stopping the unpromising ones after each;
    Beamer orders the configurations' coflows with the stages in view to
    minimise the average stage completion time (SCT), within 20/3 of the
    optimum (from the abstract).

    (reconstructed) A stage is a tuning group's configurations now in the
    same stage (a job outside any group is a stage of its own). Its load
    on each port is L_s(p) = sum over its jobs j of R_j D_j(p): the
    iterations j has left in the stage times the bytes one of its
    iterations puts on p (``JobView.iteration_load``; where unknown, its
    coflows' remaining bytes now). Stages are ordered by Sincronia's BSSI
    on those loads; every coflow inherits its stage's rank. Inside a
    stage (``inner``):

    - ``stage`` (Beamer's, as reconstructed): the job with the least
      work left in the stage first, its bottleneck over the stage
      W_j = max_p R_j D_j(p) / C(p) (its own term of L_s, so the order
      inside a stage and the order of stages read one model of the
      stage; where D_j is unknown, R_j (at least 1) times its coflow's
      remaining bytes, as for L_s); equal W (a stage's configurations
      in lockstep) falls back to the coflow's remaining effective
      bottleneck (Varys' Gamma, pending sends counted), then arrival.
      The abstract has the whole algorithm order coflows by stage
      information; one iteration's bottleneck inside a stage is the
      one-iteration view it argues Sincronia is limited by.
    - ``iteration``: the smallest remaining Gamma of the coflow now (one
      iteration's bottleneck), then arrival.

    Coflows of no job come after every stage, by Gamma (their W is their
    Gamma). A coflow's rank is (stage rank, inner order) made dense:
    coflows of one stage ranked apart get classes apart, as
    the order inside a stage asks (the backends class on the dense
    (rank, order) pair, so stage rank with a Gamma ``coflow_order``
    would give the same classes; the combined rank says it in the rank
    itself). Two coflows of one job are ordered by Gamma too (their W is
    the same); the backends' stable_classes lets a job's next coflow
    share its running one's class rather than push other jobs down.
    Re-ordering on stage start and end, job arrival and early stop needs
    no trigger of its own: the backends
    ask again whenever coflows arrive or end, and the snapshot's jobs
    (their stage, iterations left, the stopped ones gone) are what the
    stages are built from."""
    name = 'beamer'
    params = {'inner': 'stage'}
    clairvoyant = True
    decides_on = 'coflows'

    def __init__(self, **params):
        super().__init__(**params)
        if self.inner not in INNER:
            raise ConfigError('beamer: inner must be one of %s, got %r'
                              % (', '.join(INNER), self.inner))

    def warnings(self, jobs):
        if not any(j['group'] for j in jobs):
            return ['beamer orders tuning stages: no job here is in a tuning '
                    'group, so every job is a stage of its own (a BSSI order '
                    'of whole jobs)']
        return []

    def stages(self, snap, load):
        """Per coflow, the index of its stage in ``keys`` (None: no job),
        the stage keys, and the (S, L) stage-load matrix."""
        C = len(snap.coflow_id)
        cj = snap.coflow_job if len(snap.coflow_job) == C else (None,) * C
        keys, index, rows = [], {}, []

        def stage_of(j):
            v = snap.jobs.get(j)
            if v is None:
                return None
            key = (v.group, v.stage) if v.group is not None else (j, None)
            if key not in index:
                index[key] = len(keys)
                keys.append(key)
                rows.append(np.zeros(snap.n_links))
            return index[key]
        # jobs' loads first (all running jobs count, even while computing)
        for j in sorted(snap.jobs):
            v = snap.jobs[j]
            s = stage_of(j)
            if v.iteration_load is not None:
                rows[s] = rows[s] + v.stage_left * np.asarray(
                    v.iteration_load, float)
        of = [stage_of(j) if j is not None else None for j in cj]
        for c, j in enumerate(cj):                 # where no load is known
            v = snap.jobs.get(j)
            if v is not None and v.iteration_load is None:
                rows[of[c]] = rows[of[c]] + max(v.stage_left, 1) * load[c]
        mat = np.array(rows) if rows else np.zeros((0, snap.n_links))
        return of, keys, mat

    def stage_work(self, snap, gamma):
        """Per coflow, W_j of its job (s): R_j times the bottleneck of
        one iteration's bytes, or, without them, max(R_j, 1) times the
        coflow's Gamma; a coflow of no job: its Gamma."""
        C = len(snap.coflow_id)
        cj = snap.coflow_job if len(snap.coflow_job) == C else (None,) * C
        work = np.asarray(gamma, float).copy()
        for c, j in enumerate(cj):
            v = snap.jobs.get(j)
            if v is None:
                continue
            if v.iteration_load is None:
                work[c] = max(v.stage_left, 1) * gamma[c]
            else:
                one = np.asarray(v.iteration_load, float) * 8.0 \
                    / snap.link_capacity
                work[c] = v.stage_left * one.max(initial=0.0)
        return work

    def decide(self, snap):
        load = snap.coflow_port_bytes()
        of, keys, mat = self.stages(snap, load)
        srank = bssi_order(mat) if len(keys) else np.zeros(0, np.int64)
        gamma = effective_bottleneck(snap, load)
        last = len(keys)
        outer = np.array([srank[s] if s is not None else last for s in of],
                         np.int64)
        pos = arrival_order(snap)
        if self.inner == 'stage':
            idx = np.lexsort((pos, gamma, self.stage_work(snap, gamma),
                              outer))
        else:
            idx = np.lexsort((pos, gamma, outer))
        rank = np.empty(len(idx), dtype=np.int64)
        rank[idx] = np.arange(len(idx))
        return Decision(coflow_rank=rank, coflow_order=pos)
