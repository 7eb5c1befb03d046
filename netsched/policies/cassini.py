"""CASSINI (NSDI 2024): time shifts that make jobs sharing a link take
turns communicating.

The geometric abstraction and its solver (pure functions: a job's circle,
a link's unified circle and compatibility score, the best shifts per
link, the affinity graph's shifts by BFS, the choice among candidate
placements), and the policy ``cassini`` that decides the shifts from
the jobs' profiles.

Times are in seconds on a grid of ``resolution`` seconds; a circle is an
array of bandwidth demand (bit/s) per grid step over one iteration.

From the paper (as POLICIES.md reads it, consistent across two
re-implementations): circles, the unified circle of LCM perimeter, the
score, exhaustive shifts for two jobs and coordinate search beyond, the
affinity graph with BFS from a reference job, loop-free placements,
agents that delay iteration starts and re-align on drift.
Reconstructed here: the circle is the job's profile (compute, then its
iteration's bytes at the bottleneck rate, starting when its first
gradient is ready), links whose jobs cannot exceed them are left out,
links carrying the same jobs count once (the most contended), a cycle
among the rest is broken by dropping the least contended links, and the
gate's tolerance and slack (below).
"""
import math
import zlib
from collections import deque

import numpy as np

from .base import Decision, Policy
from .registry import register
from ..errors import ConfigError

RESOLUTION_S = 0.001          # 1 ms grid
PERIMETER_CAP_S = 10.0        # a unified circle is at most this long


def steps(t, resolution=RESOLUTION_S):
    """Grid steps of a duration (rounded, at least 1)."""
    return max(1, int(round(t / resolution)))


def job_circle(iteration_s, comm_s, bw_bps, comm_start_s=None,
               resolution=RESOLUTION_S):
    """A job's circle: an iteration of ``iteration_s`` whose
    communication phase (``comm_s`` at ``bw_bps``) starts at
    ``comm_start_s`` (default: at the end, after the compute phase)."""
    n = steps(iteration_s, resolution)
    c = min(steps(comm_s, resolution), n)
    start = n - c if comm_start_s is None else steps(comm_start_s,
                                                     resolution) % n
    circle = np.zeros(n)
    circle[(start + np.arange(c)) % n] = bw_bps
    return circle


def unified_perimeter(circles, resolution=RESOLUTION_S,
                      cap_s=PERIMETER_CAP_S):
    """Grid steps of the unified circle: the LCM of the jobs' perimeters,
    capped at ``cap_s`` (beyond it, the cap: the patterns then do not
    close exactly, the price of a bounded search)."""
    lcm = 1
    for c in circles:
        lcm = lcm * len(c) // math.gcd(lcm, len(c))
    return min(lcm, steps(cap_s, resolution))


def unify(circles, shifts, perimeter):
    """(J, perimeter) demand of each job on the unified circle, its
    pattern repeated and delayed by its shift (grid steps):
    bw_j(a - shift_j)."""
    out = np.empty((len(circles), perimeter))
    for j, (c, s) in enumerate(zip(circles, shifts)):
        out[j] = np.resize(np.roll(c, int(s)), perimeter)
    return out


def score(circles, shifts, capacity_bps, perimeter=None):
    """A link's compatibility score: 1 - mean over the unified circle of
    max(0, total demand - C) / C. 1 = the jobs never together exceed
    the link."""
    p = perimeter or unified_perimeter(circles)
    total = unify(circles, shifts, p).sum(axis=0)
    return 1.0 - float(np.maximum(total - capacity_bps, 0.0).mean()
                       / capacity_bps)


def best_shifts(circles, capacity_bps, perimeter=None, rounds=4):
    """Shifts (grid steps, the first job fixed at 0) maximising the
    link's score, and the score. Two jobs: every shift of the second
    over its own perimeter (the smallest best one). More: coordinate
    search, one job at a time over its perimeter, until a round changes
    nothing (at most ``rounds``). A job's shifts are all scored at
    O(unified perimeter) (:func:`_best_shift`; scored one by one over
    the unified circle, 1000 jobs on a k=16 fat-tree needed 72,000
    searches of about 30 ms each)."""
    p = perimeter or unified_perimeter(circles)
    shifts = [0] * len(circles)
    best = score(circles, shifts, capacity_bps, p)
    if len(circles) < 2:
        return shifts, best
    each = unify(circles, shifts, p)
    total = each.sum(axis=0)
    moves, seen = 0, {}           # a job whose others did not move since
    for _ in range(rounds if len(circles) > 2 else 1):   # it was searched
        changed = False                                  # would not move
        for j in range(1, len(circles)):
            if seen.get(j) == moves:
                continue
            seen[j] = moves
            others = total - each[j]
            s, v = _best_shift(others, circles[j], capacity_bps, p,
                               above=best + TIE)
            if v is not None and v > best + TIE:
                best, changed = v, True
                shifts[j] = s
                each[j] = unify([circles[j]], [s], p)[0]
                total = each.sum(axis=0)
                moves += 1
                seen[j] = moves
        if not changed:
            break
    return shifts, best


TIE = 1e-12        # scores this close are equal: the smallest shift wins


def _scores_over_shifts(others, circle, capacity_bps, perimeter,
                        chunk=256, shifts=None):
    """The link's score for every shift of one job (its circle) against
    the others' summed demand on the unified circle (or for ``shifts``
    only, with the same arithmetic)."""
    a = np.arange(perimeter)
    n = len(circle)
    shifts = np.arange(n) if shifts is None else np.asarray(shifts)
    out = np.empty(len(shifts))
    for lo in range(0, len(shifts), chunk):
        s = shifts[lo:lo + chunk]
        demand = others[None, :] + circle[(a[None, :] - s[:, None]) % n]
        over = np.maximum(demand - capacity_bps, 0.0).mean(axis=1)
        out[lo:lo + len(s)] = 1.0 - over / capacity_bps
    return out


def _best_shift(others, circle, capacity_bps, perimeter, above=-np.inf):
    """The first shift of one job whose score is within TIE of the best,
    and its score, or None for a score surely at most ``above``: exactly
    what :func:`_scores_over_shifts` over every shift gives, at
    O(perimeter) instead of O(perimeter x period) for a circle of one
    rate (a job's). All shifts are scored by folding the overload the
    job adds onto its circle and summing it over its sending steps
    (prefix sums); only the shifts whose score the rounding could place
    either side of the tie are scored the slow way (rare), and the
    chosen one, so that its score is the same float."""
    approx = _approx_scores(others, circle, capacity_bps, perimeter)
    if approx is None:                       # not one rate: every shift
        v = _scores_over_shifts(others, circle, capacity_bps, perimeter)
        s = int(np.flatnonzero(v >= v.max() - TIE)[0])
        return s, float(v[s])
    v, err = approx

    def exact(s):
        return _scores_over_shifts(others, circle, capacity_bps,
                                   perimeter, shifts=s)
    top, best = v.max(), None
    for s in np.flatnonzero(v >= top - TIE - 2 * err):
        if v[s] >= top - TIE + 2 * err:
            break                            # within the tie, surely
        if best is None:                     # the exact best is near top
            best = exact(np.flatnonzero(v >= top - 2 * err)).max()
        if exact([s])[0] >= best - TIE:
            break
    else:                          # cannot happen if err bounds the error
        v = _scores_over_shifts(others, circle, capacity_bps, perimeter)
        s = int(np.flatnonzero(v >= v.max() - TIE)[0])
        return s, float(v[s])
    if v[s] + err <= above:
        return int(s), None
    return int(s), float(exact([s])[0])


def _approx_scores(others, circle, capacity_bps, perimeter):
    """The score of every shift of a job whose circle sends at one rate
    w (else None), and a bound on how far those of
    :func:`_scores_over_shifts` are from them. Where the job sends, the
    overload grows by f(a) = max(0, o(a) + w - C) - max(0, o(a) - C);
    step a of the unified circle is step a mod n of the job's circle
    whatever its shift, so f folds onto the job's circle and a shift's
    score needs f summed over its sending steps, shifted."""
    n = len(circle)
    on = circle != 0
    if not on.any() or (circle[on] != circle[on][0]).any():
        return None
    w = float(circle[on][0])
    m = -(-perimeter // n)                  # turns of the circle in p
    base = np.maximum(others - capacity_bps, 0.0)
    f = np.zeros(m * n)
    f[:perimeter] = np.maximum(others + w - capacity_bps, 0.0) - base
    g = f.reshape(m, n).sum(axis=0)                 # f by step of the circle
    ld = np.longdouble
    prefix = np.concatenate([[ld(0)], np.cumsum(np.tile(g, 2).astype(ld))])
    # the sending steps, as runs [start, start + length) on the circle
    starts = np.flatnonzero(on & ~np.concatenate([on[-1:], on[:-1]]))
    if len(starts) == 0:
        starts, lengths = np.array([0]), np.array([n])
    else:
        ends = np.flatnonzero(on & ~np.concatenate([on[1:], on[:1]]))
        ends = ends[np.searchsorted(ends, starts) % len(ends)]
        lengths = (ends - starts) % n + 1
    s = np.arange(n)
    extra = np.zeros(n, ld)
    for b, length in zip(starts, lengths):
        at = (b + s) % n
        extra += prefix[at + length] - prefix[at]
    v = (1 - (ld(base.sum()) + extra) / ld(perimeter)
         / ld(capacity_bps)).astype(float)
    # |rounding|, twice over, of _scores_over_shifts' (its terms, at
    # most the largest demand over the capacity d, their pairwise mean,
    # at most the overload ov) and this one's (the terms, f at most w,
    # the pairwise sum, sums of m terms, prefix sums in extended
    # precision), and their last operations
    eps, el = np.finfo(float).eps, float(np.finfo(ld).eps)
    d = (float(np.max(others, initial=0.0)) + w) / capacity_bps
    wc, ov = w / capacity_bps, 1 - float(v.min()) + 1e-6
    err = 2 * (eps * (8 * d + (np.log2(perimeter + 1) + 16) * ov + m * wc
                      + 2 * (1 + float(np.abs(v).max())))
               + el * 16 * n * wc)
    return v, err


def affinity_shifts(link_shifts, periods, reference=None):
    """Time shifts per job from per-link shifts, by BFS over the affinity
    graph (jobs and links; an edge (j, l) weighted by j's shift on l,
    for links carrying two jobs or more): from a reference job at 0,
    t_k = (t_j - w(j, l) + w(k, l)) mod T_k. ``link_shifts``: {link:
    {job: shift}}; ``periods``: {job: T}. Returns {job: shift} (jobs on
    no shared link get 0), or None when the graph has a cycle (the
    links' shifts cannot all hold)."""
    adj = {}
    for link, js in link_shifts.items():
        if len(js) < 2:
            continue
        for j in js:
            adj.setdefault(('j', j), []).append(('l', link))
            adj.setdefault(('l', link), []).append(('j', j))
    if _has_cycle(adj):
        return None
    out = {j: 0 for j in periods}
    seen = set()
    roots = sorted(j for kind, j in adj if kind == 'j')
    if reference is not None and ('j', reference) in adj:
        roots.remove(reference)
        roots.insert(0, reference)
    for r in roots:
        if ('j', r) in seen:
            continue
        out[r] = 0
        seen.add(('j', r))
        q = deque([r])
        while q:
            j = q.popleft()
            for _, link in adj[('j', j)]:
                w = link_shifts[link]
                for _, k in adj[('l', link)]:
                    if ('j', k) in seen:
                        continue
                    seen.add(('j', k))
                    out[k] = (out[j] - w[j] + w[k]) % periods[k]
                    q.append(k)
    return out


def _has_cycle(adj):
    """Whether an undirected graph ({node: [nodes]}) has a cycle."""
    seen = set()
    for start in adj:
        if start in seen:
            continue
        stack = [(start, None)]
        seen.add(start)
        while stack:
            node, parent = stack.pop()
            for nxt in adj[node]:
                if nxt == parent:
                    continue
                if nxt in seen:
                    return True
                seen.add(nxt)
                stack.append((nxt, node))
    return False


def choose_placement(candidates):
    """Among candidate placements of an arriving job, each {link:
    (score, {job: shift})} with ``periods`` for the BFS, the index of the
    one whose affinity graph has no cycle and whose links' average score
    is best (None if every one has a cycle). A candidate is a dict with
    'links' ({link: (score, {job: shift})}) and 'periods' ({job: T})."""
    best, best_avg = None, -np.inf
    for i, cand in enumerate(candidates):
        links = cand['links']
        shifts = affinity_shifts({lk: js for lk, (_, js) in links.items()},
                                 cand['periods'])
        if shifts is None:
            continue
        avg = np.mean([s for s, _ in links.values()]) if links else 1.0
        if avg > best_avg + 1e-12:
            best, best_avg = i, avg
    return best


# --- the policy -------------------------------------------------------------
def profile(view, capacity_bps):
    """A job's communication pattern alone on the fabric, from its
    profile (``JobView``): (iteration_s, comm_start_s, comm_s, demand
    (L,) bit/s while it communicates), or None (no profile, or no bytes
    on the network). Its iteration's bytes cross each link at the rate
    that lets the bottleneck link carry its share in the shortest time:
    the communication lasts comm_s = max over links of bytes x 8 / C and
    starts when its first gradient is ready; the iteration lasts its
    compute or until the communication ends, whichever is later."""
    load = view.iteration_load
    if load is None or view.compute_s is None or view.first_send_s is None:
        return None
    bits = np.asarray(load, float) * 8.0
    comm_s = float((bits / capacity_bps).max()) if len(bits) else 0.0
    if comm_s <= 0:
        return None
    iteration_s = max(float(view.compute_s), view.first_send_s + comm_s)
    return iteration_s, float(view.first_send_s), comm_s, bits / comm_s


def _link_groups(prof, capacity_bps):
    """Links on which the profiled jobs together can exceed the capacity,
    grouped by the set of jobs on them: {jobs: [links]}."""
    ids = sorted(prof)
    if not ids:
        return {}
    demand = np.array([prof[j][3] for j in ids])          # (J, L)
    on = demand > 0
    contended = (on.sum(axis=0) >= 2) & \
        (demand.sum(axis=0) > capacity_bps * (1 + 1e-9))
    groups = {}
    for link in np.flatnonzero(contended).tolist():
        key = tuple(ids[i] for i in np.flatnonzero(on[:, link]))
        groups.setdefault(key, []).append(link)
    return groups


def _forest(scored):
    """Of the link groups ((score, jobs, link), most contended first),
    those that keep the affinity graph free of cycles: a link joins the
    graph only if its jobs are not yet connected (Kruskal)."""
    parent = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    kept = []
    for sc, jobs, link in scored:
        roots = {root(j) for j in jobs}
        if len(roots) < len(jobs):
            continue                       # two of its jobs already linked
        for r in roots:
            parent[r] = link
        parent[link] = link
        kept.append((sc, jobs, link))
    return kept


SHIFT_MODES = ('solve', 'random', 'none')


@register
class Cassini(Policy):
    """CASSINI: per job a time shift, so that jobs sharing a link take
    turns communicating (no priorities: the network shares fairly).

    Every job whose profile is known (its compute, when its first
    gradient is ready, its iteration's bytes per link) is rolled onto a
    circle of its iteration time (:func:`profile`, :func:`job_circle`).
    On each link the profiled jobs can overload, the shifts that
    maximise the link's score on the unified circle are found
    (:func:`best_shifts`); links carrying the same jobs count once (the
    most contended one); links are added to the affinity graph most
    contended first and one that would close a cycle is left out; BFS
    over the graph from a reference job gives each job its shift
    (:func:`affinity_shifts`). Jobs on no contended link are not held.

    The decision is ``job_shift``: per job (shift, period, tolerance,
    max_wait) for the executors' gate (workload.shifts.gate). Shift and
    period are stretched by ``slack`` (every job alike, so the
    interleaving is unchanged): a job whose iterations run a little
    longer than its profile (a backend's per-hop or TCP costs) would
    otherwise drift late every iteration and re-align every few.
    ``tolerance`` (of the period) is the lateness an iteration may start
    with; ``max_wait`` (of the period) the longest it waits to re-align
    (reconstructed: where its links' scores are below 1 a job's
    iterations outrun its grid, and waiting for the next grid point
    lost most of a period each time; beyond it the iteration starts at
    once and drifts until its phase comes round).

    Baselines: ``shifts: random`` gives every job a pseudo-random shift
    in its period instead (``seed``; the same for the same job on every
    decision and backend); ``shifts: none`` places jobs as CASSINI does
    and shifts none (the placement's share of the gain).

    Knobs: ``resolution_ms`` (grid), ``cap_s`` (longest unified circle),
    ``slack``, ``tolerance``, ``max_wait``, ``shifts`` (solve, random,
    none), ``seed``. A decision is memoised on the jobs' profiles and the
    links' capacities (it depends on nothing else)."""
    name = 'cassini'
    params = {'resolution_ms': 1.0, 'cap_s': 10.0, 'slack': 0.02,
              'tolerance': 0.05, 'max_wait': 0.5, 'shifts': 'solve',
              'seed': 1}
    decides_on = 'coflows'
    classes = False                    # the network shares fairly

    def __init__(self, **params):
        super().__init__(**params)
        if self.shifts not in SHIFT_MODES:
            raise ConfigError('cassini: shifts must be one of %s, got %r'
                              % (', '.join(SHIFT_MODES), self.shifts))
        if not 0 < self.tolerance < 0.5:
            raise ConfigError('cassini: tolerance is a share of the period '
                              'below 0.5, got %r' % self.tolerance)
        if not self.tolerance < self.max_wait <= 1:
            raise ConfigError('cassini: max_wait is a share of the period '
                              'above the tolerance and at most 1, got %r'
                              % self.max_wait)
        self._memo = {}

    def solve(self, snap):
        """Per profiled job on a contended link: (shift steps, period
        steps); per link group ({link: (jobs, best score, kept in the
        affinity graph)}); the grid (s)."""
        prof, scored, res = self._links(snap.jobs, snap.link_capacity)
        kept = _forest([(sc, jobs, link) for sc, _, jobs, link, _ in scored])
        kept_links = {link for _, _, link in kept}
        link_shifts = {link: sh for _, _, _, link, sh in scored
                       if link in kept_links}
        periods = {j: steps(prof[j][0], res) for j in prof}
        on_links = {j for _, jobs, _ in kept for j in jobs}
        by_bfs = affinity_shifts(link_shifts, periods)
        shifts = {j: (by_bfs[j], periods[j]) for j in sorted(on_links)}
        circles = {link: (jobs, sc, link in kept_links)
                   for sc, _, jobs, link, _ in scored}
        return shifts, circles, res

    def _links(self, jobs, capacity_bps):
        """The jobs' profiles, and per group of links carrying the same
        profiled jobs that they can overload, its most contended link's
        (best score, -peak demand over capacity, jobs, link, {job: shift
        steps}), most contended first; the grid (s)."""
        res = self.resolution_ms / 1e3
        cap = np.asarray(capacity_bps, float)
        prof = {j: p for j, p in ((j, profile(v, cap))
                                  for j, v in sorted(jobs.items()))
                if p is not None}
        groups = _link_groups(prof, cap)

        def circle(j, link):
            it, start, comm, demand = prof[j]
            return job_circle(it, comm, demand[link], start, res)
        scored = []                 # (score, -peak, jobs, link, shifts)
        for jobs, links in groups.items():
            best = None
            for link in links:
                cs = [circle(j, link) for j in jobs]
                p = unified_perimeter(cs, res, self.cap_s)
                sh, sc = best_shifts(cs, cap[link], p)
                peak = sum(prof[j][3][link] for j in jobs) / cap[link]
                cand = (sc, -peak, jobs, link, dict(zip(jobs, sh)))
                if best is None or cand[:2] < best[:2]:
                    best = cand
            scored.append(best)
        # most contended first: the lowest best score, then the highest
        # peak demand over capacity
        scored.sort(key=lambda x: x[:3])
        return prof, scored, res

    def place(self, jobs, candidates, capacity_bps):
        """CASSINI's placement: among the candidates, those whose
        affinity graph (with the jobs placed before) has no cycle, the one
        whose contended links score best on average (a candidate that
        contends nowhere scores 1). If every candidate has a cycle
        (reconstructed), the best average all the same: the shifts then
        hold on all but its least contended links."""
        descs, avgs = [], []
        for cand in candidates:
            prof, scored, res = self._links(dict(jobs, **{cand.id: cand}),
                                            capacity_bps)
            links = {link: (sc, sh) for sc, _, _, link, sh in scored}
            descs.append({'links': links, 'periods': {
                j: steps(prof[j][0], res) for j in prof}})
            avgs.append(np.mean([sc for sc, _ in links.values()])
                        if links else 1.0)
        i = choose_placement(descs)
        return int(np.argmax(avgs)) if i is None else i

    def decide(self, snap):
        key = _key(snap)
        grid = self._memo.get(key)
        if grid is None:                # the jobs changed: solve again
            grid = self._memo[key] = self._grid(snap)
            if len(self._memo) > 64:
                self._memo.pop(next(iter(self._memo)))
        return Decision(job_shift=dict(grid))

    def _grid(self, snap):
        if self.shifts == 'none':
            return {}
        shifts, _, res = self.solve(snap)
        if self.shifts == 'random':
            shifts = {j: (_random_step(self.seed, j, per), per)
                      for j, (_, per) in shifts.items()}
        k = res * (1.0 + self.slack)
        return {j: (s * k, per * k, self.tolerance * per * k,
                    self.max_wait * per * k)
                for j, (s, per) in shifts.items()}


def _key(snap):
    """What CASSINI's decision depends on: the links' capacities and
    the jobs' profiles (their decisions are memoised on it)."""
    jobs = tuple((j, v.compute_s, v.first_send_s,
                  None if v.iteration_load is None
                  else np.asarray(v.iteration_load, float).tobytes())
                 for j, v in sorted(snap.jobs.items()))
    return np.asarray(snap.link_capacity, float).tobytes(), jobs


def _random_step(seed, job, period):
    """A pseudo-random grid step in [0, period), the same for a job and
    seed wherever it is drawn (a local generator: no global state)."""
    rng = np.random.default_rng([int(seed), zlib.crc32(str(job).encode())])
    return int(rng.integers(period))
