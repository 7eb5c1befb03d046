"""JPAS (JNCA 2020): job-progress-aware flow scheduling."""
import functools
import math

import numpy as np

from .base import Decision, Policy, arrival_order
from .registry import register
from ..errors import ConfigError

KEYS = ('maif', 'progress')


def fit_loss(points):
    """:func:`fit_curve` of a job's (k, loss) points, memoised: between
    two period boundaries a job's known points do not change, so every
    decision in between reuses the fit (a pure function's cache)."""
    return fit_curve(tuple((float(k), float(v)) for k, v in points))


@functools.lru_cache(maxsize=8192)
def fit_curve(points):
    """Fit l(k) = 1 / (b0 k + b1) + b2 to (k, loss) points: for b2 on a
    grid below the smallest loss, 1 / (l - b2) is linear in k (least
    squares gives b0, b1); keep the b2 with the least squared error in
    loss, then search a finer grid around it. Returns (b0, b1, b2) with
    b0 > 0 (a falling loss), or None. Vectorised over the grid."""
    k = np.array([p[0] for p in points], float)
    y = np.array([p[1] for p in points], float)
    if len(k) < 2 or np.ptp(k) == 0 or not np.all(np.isfinite(y)):
        return None
    lo = float(y.min())
    if lo <= 0:
        return None
    grid = lo * (1.0 - np.r_[np.linspace(0.0, 1.0, 64)[1:],
                             np.geomspace(1e-4, 1.0 / 64, 16)])
    best = None
    for _ in range(3):                       # coarse, then finer twice
        fit = _fit_on(k, y, grid)
        if fit is None:
            return best
        best, b2 = fit[:3], fit[2]
        step = np.abs(np.diff(np.sort(grid))).max() if len(grid) > 1 \
            else lo / 64
        grid = np.clip(b2 + step * np.linspace(-1, 1, 41), 0.0,
                       lo * (1 - 1e-6))
    return best


def _fit_on(k, y, b2):
    """The best (b0, b1, b2, err) over the candidate b2 values."""
    z = 1.0 / (y[None, :] - b2[:, None])          # (G, n)
    km = k.mean()
    dk = k - km
    b0 = (z * dk).sum(axis=1) / (dk ** 2).sum()
    b1 = z.mean(axis=1) - b0 * km
    den = b0[:, None] * k[None, :] + b1[:, None]
    ok = (b0 > 0) & (den > 0).all(axis=1)
    if not ok.any():
        return None
    with np.errstate(divide='ignore', invalid='ignore'):
        err = ((1.0 / den + b2[:, None] - y[None, :]) ** 2).sum(axis=1)
    err = np.where(ok, err, np.inf)
    i = int(np.argmin(err))
    return float(b0[i]), float(b1[i]), float(b2[i]), float(err[i])


def loss_at(beta, k):
    b0, b1, b2 = beta
    return 1.0 / (b0 * k + b1) + b2


@register
class Jpas(Policy):
    """JPAS (JNCA 2020): a central coordinator with an agent per server
    ranks jobs by their training progress, read from the jobs' own logs,
    preferring early-stage jobs (MAIF), and the priority-enabled network
    serves their flows in that order; no change to the DL frameworks
    (from the abstract).

    (reconstructed) Every ``period_s`` the jobs are ranked on what their
    agents had reported by the period's start (loss per iteration done):
    MAIF fits l(k) = 1/(b0 k + b1) + b2 to each job's losses and ranks by
    the expected loss reduction per byte of its next ``lookahead``
    iterations, (l(k) - l(k + lookahead)) / bytes per iteration, highest
    first; a job with fewer than ``min_points`` usable reports (new,
    early-stage) goes ahead of every fitted job, by arrival; one whose
    reports no falling curve fits (a plateaued or rising loss) expects no
    gain and goes after every fitted job, by arrival (ranking it first
    would promote converged jobs, the opposite of preferring early-stage
    ones). The
    ``progress`` key ranks least progress first (iterations done over
    planned, then arrival). A job's rank is the rank of all its coflows
    (so of all its connections); flows of no job rank after every job,
    by arrival (``coflow_order``); ranks are dense over the coflows
    present.
    Ranking only on reports at or before the period's start keeps the
    policy a pure function of the snapshot that changes ranks once per
    period. Strict priority between ranks is work-conserving: lower
    ranks use what higher ones leave."""
    name = 'jpas'
    params = {'period_s': 1.0, 'key': 'maif', 'lookahead': 1,
              'min_points': 3}
    decides_on = 'coflows'

    def __init__(self, **params):
        super().__init__(**params)
        if self.key not in KEYS:
            raise ConfigError('jpas: key must be one of %s, got %r'
                              % (', '.join(KEYS), self.key))
        # l(k) = 1/(b0 k + b1) + b2 has three parameters: through two
        # points a curve passes for every b2, and the fit's gain is the
        # grid's pick, not the job's
        if int(self.min_points) < 3:
            raise ConfigError('jpas: min_points must be at least 3 (the '
                              'loss curve has three parameters), got %r'
                              % self.min_points)

    def job_keys(self, snap):
        """Per job id, its sort key (lower first) as of the last period
        boundary, and that boundary."""
        b = math.floor(snap.t / self.period_s) * self.period_s
        keys = {}
        for j, v in snap.jobs.items():
            known = [(k, loss) for k, loss, t in v.losses
                     if t is not None and t <= b and loss is not None]
            done = max([k for k, _ in known], default=0)
            if self.key == 'progress':
                keys[j] = (0, done / max(v.iterations, 1), v.arrival, j)
                continue
            if len(known) < self.min_points:     # early stage: first
                keys[j] = (0, v.arrival, 0.0, j)
                continue
            beta = fit_loss(known)
            if beta is None:                     # flat or rising: no gain
                keys[j] = (2, 0.0, v.arrival, j)
            else:
                gain = (loss_at(beta, done)
                        - loss_at(beta, done + self.lookahead)) \
                    / max(v.bytes_per_iteration, 1.0)
                keys[j] = (1, -gain, v.arrival, j)
        return keys, b

    def decide(self, snap):
        keys, b = self.job_keys(snap)
        order = sorted(keys, key=lambda j: keys[j])
        job_rank = {j: r for r, j in enumerate(order)}
        last = len(order)
        cj = snap.coflow_job if len(snap.coflow_job) == len(snap.coflow_id) \
            else (None,) * len(snap.coflow_id)
        rank = np.array([job_rank.get(j, last) for j in cj], np.int64)
        # dense over the coflows present (a job computing has none now);
        # a monotone relabelling, so the classes are the same
        rank = np.unique(rank, return_inverse=True)[1].reshape(-1) \
            .astype(np.int64)
        return Decision(coflow_rank=rank, coflow_order=arrival_order(snap),
                        recheck_at=b + self.period_s)
