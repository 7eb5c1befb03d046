"""CASSINI (NSDI 2024): time shifts that make jobs sharing a link take
turns communicating.

The geometric abstraction and its solver (pure functions: a job's circle,
a link's unified circle and compatibility score, the best shifts per
link, the affinity graph's shifts by BFS, the choice among candidate
placements), and the policy ``cassini`` that decides the shifts from
the jobs' profiles.

Times are in seconds on a grid of ``resolution`` seconds; a circle is an
array of bandwidth demand (bit/s) per grid step over one iteration.
A link's score is over the full LCM of its jobs' periods, exactly, by
pairing phases per residue modulo the gcd (:func:`overloads`), not on a
circle cut short: a cut circle misses pairs of phases and can report a
gain the full LCM does not have (jobs of coprime periods meet in every
phase whatever their shifts), which then chose shifts and placements.

From the paper (as read here, consistent across two
re-implementations): circles, the unified circle of LCM perimeter, the
score, exhaustive shifts for two jobs and coordinate search beyond, the
affinity graph with BFS from a reference job, loop-free placements,
agents that delay iteration starts and re-align on drift.
Reconstructed here: the circle is the job's profile (compute, then its
iteration's bytes at the bottleneck rate, starting when its first
gradient is ready), links whose jobs cannot exceed them are left out,
links carrying the same jobs count once (the most contended), links
whose score does not depend on the shifts hold nobody, nor do links
whose best shifts gain too little over none to pay for the gate
(``min_gain``), a cycle among the rest is broken by dropping the least
contended links, where the others of a job on a link repeat only beyond
``cap_s`` the score is bounded and shifts and placements are taken only
for gains beyond the bound, and the gate's tolerance and slack (below).
"""
import math
import zlib
from collections import deque, namedtuple

import numpy as np

from .base import Decision, Policy
from .registry import register
from ..errors import ConfigError

RESOLUTION_S = 0.001          # 1 ms grid


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


def lcm(periods):
    """The least common multiple of whole numbers (1 for none)."""
    out = 1
    for n in periods:
        out = out * int(n) // math.gcd(out, int(n))
    return out


def unified_perimeter(circles, resolution=RESOLUTION_S, cap_s=None):
    """Grid steps of the unified circle: the LCM of the jobs' perimeters,
    or, given ``cap_s``, that circle cut there (as the solver once
    scored: a cut circle misses pairs of phases, see :func:`score`)."""
    p = lcm(len(c) for c in circles)
    return p if cap_s is None else min(p, steps(cap_s, resolution))


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
    the link. Over the full LCM of the perimeters, exactly
    (:func:`score_bounds` without a budget: its cost is the LCM of all
    jobs' perimeters but one); given ``perimeter``, on the unified
    circle cut there, step by step."""
    if perimeter is None:
        return score_bounds(circles, shifts, capacity_bps)[0]
    total = unify(circles, shifts, perimeter).sum(axis=0)
    return 1.0 - float(np.maximum(total - capacity_bps, 0.0).mean()
                       / capacity_bps)


TIE = 1e-12        # scores this close are equal: the smallest shift wins


def overloads(others, circle):
    """The mean overload of a link of capacity 1 over the full LCM of P
    and n, for each shift in [0, g) (g = gcd(P, n)) of a job (its
    ``circle``, n steps) against the others' summed demand (``others``,
    over their own period P). A shift's score is 1 minus it; it depends
    on the shift mod g only.

    Exact at O(P + g x runs) per level of the job's demand, however long
    the LCM: as a runs over the LCM, (a mod P, a mod n) takes every pair
    (b, x) with b = x (mod g) exactly once (Chinese remainder theorem),
    so the overload summed over the LCM pairs the others' steps b = r
    with the job's steps x = r - shift, residue by residue. The job's
    circle is cut into layers (demand at least each of its levels
    v_1 < v_2 < ...); where layer i is on it adds phi_i(o) = max(0, o +
    v_i - 1) - max(0, o + v_(i-1) - 1), summed per residue (Phi_i) and
    over the layer's runs of steps, shifted, by prefix sums."""
    P, n = len(others), len(circle)
    g = math.gcd(P, n)
    ld = np.longdouble              # ties are told apart at 1e-12
    extra = np.zeros(g, ld)
    s = np.arange(g)
    below = 0.0
    for level in np.unique(circle[circle > 0]).tolist():
        phi = (np.maximum(others + level - 1.0, 0.0)
               - np.maximum(others + below - 1.0, 0.0))
        per = phi.reshape(P // g, g).sum(axis=0)
        prefix = np.concatenate([[ld(0)],
                                 np.cumsum(np.tile(per.astype(ld), 2))])
        for start, length in zip(*_runs(circle >= level)):
            turns, rem = divmod(int(length), g)
            at = (start + s) % g
            extra += turns * prefix[g] + prefix[at + rem] - prefix[at]
        below = level
    base = float(np.maximum(others - 1.0, 0.0).mean())
    return base + (extra * ld(g) / ld(P * n)).astype(float)


def _runs(mask):
    """The runs of a circular mask with some step on: (starts,
    lengths)."""
    n = len(mask)
    if mask.all():
        return np.array([0]), np.array([n])
    starts = np.flatnonzero(mask & ~np.roll(mask, 1))
    ends = np.flatnonzero(mask & ~np.roll(mask, -1))
    ends = ends[np.searchsorted(ends, starts) % len(ends)]
    return starts, (ends - starts) % n + 1


def _others(periods, means, j, budget):
    """Which jobs but j to sum step by step (the LCM of their periods at
    most ``budget`` steps; None: no limit), and the sum of the mean
    demands of those left out: the most the overload, so the score, can
    be off without them (max(0, x + y - C) <= max(0, x - C) + y, y >=
    0). The others are kept in order of demand, most first, each if
    their LCM stays within the budget (the first always: its circle is
    at hand), so that what is left out, and the bound, is small."""
    rest, left, p = [], 0.0, 1
    for k in sorted((k for k in range(len(periods)) if k != j),
                    key=lambda k: (-means[k], k)):
        q = p * periods[k] // math.gcd(p, periods[k])
        if budget is None or q <= budget or not rest:
            rest.append(k)
            p = q
        else:
            left += means[k]
    return sorted(rest), left


def _total(circles, shifts, jobs):
    """The summed demand of ``jobs`` over the LCM of their periods."""
    p = lcm(len(circles[k]) for k in jobs)
    out = np.zeros(p)
    for k in jobs:
        out += np.resize(np.roll(circles[k], int(shifts[k])), p)
    return out


def _plans(circles, budget):
    periods = [len(c) for c in circles]
    means = [float(c.mean()) for c in circles]
    return [_others(periods, means, j, budget) for j in range(len(circles))]


def _bounds(circles, shifts, plans, folds=None, spread=False):
    """(lo, hi) of the score at ``shifts`` (circles over a capacity of
    1), from a job whose others are summed with the least left out;
    and whether the score depends on the shifts (some job's shifts
    score more than its bound apart; taken as ``spread`` if true).
    ``folds``: {job: its :func:`overloads`} still true at ``shifts``
    (from the search), used rather than computed again."""
    folds = dict(folds or {})

    def fold(j):
        if j not in folds:
            folds[j] = overloads(_total(circles, shifts, plans[j][0]),
                                 circles[j])
        return folds[j]

    def cost(j):
        rest, left = plans[j]
        return left, j not in folds, lcm(len(circles[k]) for k in rest), j
    j = min(range(len(plans)), key=cost)
    over, left = float(fold(j)[shifts[j] % len(fold(j))]), plans[j][1]
    for k in sorted(range(len(plans)), key=lambda k: k not in folds):
        if spread:
            break
        v = fold(k)
        spread = float(v.max() - v.min()) > plans[k][1] + TIE
    return 1.0 - over - left, 1.0 - over, spread


def score_bounds(circles, shifts, capacity_bps, budget=None):
    """Bounds (lo, hi) on a link's score over the full LCM, with the
    demand of some jobs but one summed step by step over at most
    ``budget`` steps (None: all, and lo == hi, the exact score)."""
    cs = [np.asarray(c, float) / capacity_bps for c in circles]
    lo, hi, _ = _bounds(cs, list(shifts), _plans(cs, budget))
    return lo, hi


def solve_link(circles, capacity_bps, budget=None, rounds=4):
    """Shifts (grid steps, the first job fixed at 0) maximising a link's
    score over the full LCM of the perimeters; bounds (lo, hi) on the
    score there; and whether the link should hold its jobs to them (a
    shift moved, or the score depends on the shifts).

    Two jobs: the smallest best shift of the second over [0, g), g the
    gcd of the periods (the score repeats with period g; coprime periods
    meet in every phase whatever the shift, and nothing is shifted).
    More: coordinate search, one job at a time, until a round changes
    nothing (at most ``rounds``). A job moves only for a gain sure over
    the full LCM: beyond the bound of the jobs left out when its others'
    LCM exceeds ``budget`` steps (:func:`_others`; none left out, and
    the scores exact, within the budget)."""
    cs = [np.asarray(c, float) / capacity_bps for c in circles]
    plans = _plans(cs, budget)
    shifts = [0] * len(cs)
    moves, seen = 0, {}           # a job whose others did not move since
    folds = {}                    # it was searched would not move; its
    for _ in range(rounds if len(cs) > 2 else 1):   # fold still holds
        changed = False
        for j in range(1, len(cs)):
            if seen.get(j) == moves:
                continue
            seen[j] = moves
            rest, left = plans[j]
            v = overloads(_total(cs, shifts, rest), cs[j])
            s = int(np.flatnonzero(v <= v.min() + TIE)[0])
            if v[s] + left < v[shifts[j] % len(v)] - TIE:
                shifts[j], changed = s, True
                moves += 1
                seen[j] = moves
            folds[j] = (v, moves)
        if not changed:
            break
    lo, hi, held = _bounds(cs, shifts, plans, {
        j: v for j, (v, at) in folds.items() if at == moves}, moves > 0)
    return shifts, lo, hi, held


def best_shifts(circles, capacity_bps, budget=None, rounds=4):
    """Shifts maximising a link's score over the full LCM (the first job
    at 0), and the score (its lower bound beyond ``budget``):
    :func:`solve_link`."""
    shifts, lo, _, _ = solve_link(circles, capacity_bps, budget, rounds)
    return shifts, lo


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
    """Among candidate placements of an arriving job, the index of the
    one whose affinity graph has no cycle and whose links' average score
    is best (None if every one has a cycle). A candidate is a dict with
    'links' ({link: (score, {job: shift})}: the links that hold their
    jobs to shifts, for the BFS), 'periods' ({job: T}), and optionally
    'score' (its average score, else the links') and 'err' (how far
    above 'score' its true average may be, 0 if exact): a later
    candidate is preferred only if its score is above the best's by
    more than the best's 'err' (the first of equals)."""
    best, best_hi = None, -np.inf
    for i, cand in enumerate(candidates):
        links = cand['links']
        shifts = affinity_shifts({lk: js for lk, (_, js) in links.items()},
                                 cand['periods'])
        if shifts is None:
            continue
        avg = cand.get('score')
        if avg is None:
            avg = np.mean([s for s, _ in links.values()]) if links else 1.0
        if avg > best_hi + 1e-12:
            best, best_hi = i, avg + cand.get('err', 0.0)
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


class _Link(namedtuple('_Link', 'score neg_peak jobs link shifts err '
                                'held')):
    """A contended link, solved: its score (a lower bound, ``err`` below
    the most it may be), minus its peak demand over capacity, its jobs,
    its id, {job: shift steps}, whether it holds its jobs to them."""
    __slots__ = ()


SHIFT_MODES = ('solve', 'random', 'none')
PLACE_MODES = ('score', 'first', 'random')


@register
class Cassini(Policy):
    """CASSINI: per job a time shift, so that jobs sharing a link take
    turns communicating (no priorities: the network shares fairly).

    Every job whose profile is known (its compute, when its first
    gradient is ready, its iteration's bytes per link) is rolled onto a
    circle of its iteration time (:func:`profile`, :func:`job_circle`).
    On each link the profiled jobs can overload, the shifts that
    maximise the link's score over the full LCM of their periods are
    found (:func:`solve_link`); links carrying the same jobs count once
    (the most contended one); a link whose score does not depend on the
    shifts (coprime periods: the jobs meet in every phase whatever
    their shifts) holds nobody; the others are added to the affinity
    graph most contended first and one that would close a cycle is left
    out; BFS over the graph from a reference job gives each job its
    shift (:func:`affinity_shifts`). Jobs on no such link are not held.

    The decision is ``job_shift``: per job (shift, period, tolerance,
    max_wait) for the executors' gate (host.shifts.gate). Shift and
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

    A link holds its jobs only if its score gain over the jobs unshifted
    (the sure gain: the best shifts' lower bound less the upper bound at
    none) exceeds ``min_gain`` (default: ``slack``); a job none of whose
    links pays is not held, and such a link is scored with its jobs
    unshifted (as it runs unless other links move them; so also for
    placement). The gain is the overload removed per unit of circle
    time (in C): under fair sharing the n jobs overloading a link lose
    together about n times it in delay, while the gate stretches each
    of the n held jobs' periods by ``slack``, so a gain at most
    ``slack`` cannot pay (and a drifting job's waits to re-align come
    on top). Reconstructed; measured: shifts gaining 0.0002 on the
    fat-tree mix cost 4% of its average JCT.

    Scores are over the full LCM, exactly, whatever its length
    (:func:`overloads`), where the others of each job on a link repeat
    within ``cap_s`` (two jobs: always). Beyond it, some of them are
    left out and the score is known within their mean demand
    (:func:`_others`): a shift is taken only for a gain beyond that
    bound, and a placement preferred only for one.

    Baselines, each a spec: ``shifts: random`` gives every job held a
    pseudo-random shift in its period instead (``seed``; the same for
    the same job on every decision and backend); ``shifts: none`` holds
    nobody (with ``place: score``, the placement's share of the gain).
    ``place: first`` takes each job's first candidate placement (as a
    scheduler whose placement is not network-aware, Themis' or
    Pollux's, would for CASSINI: its paper's comparison), ``place:
    random`` a pseudo-random one (``seed``; per job); so
    ``place=first:shifts=none`` is that scheduler alone and
    ``place=first`` that scheduler with CASSINI's shifts.

    Knobs: ``resolution_ms`` (grid), ``cap_s`` (the longest circle
    summed step by step, see above), ``slack``, ``tolerance``,
    ``max_wait``, ``min_gain``, ``shifts`` (solve, random, none),
    ``place`` (score, first, random), ``seed``. A decision is memoised
    on the jobs' profiles and the links' capacities (it depends on
    nothing else)."""
    name = 'cassini'
    params = {'resolution_ms': 1.0, 'cap_s': 100.0, 'slack': 0.02,
              'tolerance': 0.05, 'max_wait': 0.5, 'min_gain': None,
              'shifts': 'solve', 'place': 'score', 'seed': 1}
    decides_on = 'coflows'
    classes = False                    # the network shares fairly

    def __init__(self, **params):
        super().__init__(**params)
        # the parameter would hide the method place(): kept apart
        self.placement = vars(self).pop('place')
        if self.shifts not in SHIFT_MODES:
            raise ConfigError('cassini: shifts must be one of %s, got %r'
                              % (', '.join(SHIFT_MODES), self.shifts))
        if self.placement not in PLACE_MODES:
            raise ConfigError('cassini: place must be one of %s, got %r'
                              % (', '.join(PLACE_MODES), self.placement))
        if not 0 < self.tolerance < 0.5:
            raise ConfigError('cassini: tolerance is a share of the period '
                              'below 0.5, got %r' % self.tolerance)
        if not self.tolerance < self.max_wait <= 1:
            raise ConfigError('cassini: max_wait is a share of the period '
                              'above the tolerance and at most 1, got %r'
                              % self.max_wait)
        if self.min_gain is None:      # the gate's stretch, see above
            self.min_gain = self.slack
        if (isinstance(self.min_gain, bool)
                or not isinstance(self.min_gain, (int, float))
                or not 0 <= self.min_gain < 1):
            raise ConfigError('cassini: min_gain is a score gain in [0, 1), '
                              'got %r' % (self.min_gain,))
        self._memo = {}

    def solve(self, snap):
        """Per profiled job on a contended link: (shift steps, period
        steps); per link group ({link: (jobs, best score, kept in the
        affinity graph)}); the grid (s)."""
        prof, scored, res = self._links(snap.jobs, snap.link_capacity)
        kept = _forest([(x.score, x.jobs, x.link) for x in scored
                        if x.held])
        kept_links = {link for _, _, link in kept}
        link_shifts = {x.link: x.shifts for x in scored
                       if x.link in kept_links}
        periods = {j: steps(prof[j][0], res) for j in prof}
        on_links = {j for _, jobs, _ in kept for j in jobs}
        by_bfs = affinity_shifts(link_shifts, periods)
        shifts = {j: (by_bfs[j], periods[j]) for j in sorted(on_links)}
        circles = {x.link: (x.jobs, x.score, x.link in kept_links)
                   for x in scored}
        return shifts, circles, res

    def _links(self, jobs, capacity_bps):
        """The jobs' profiles, and per group of links carrying the same
        profiled jobs that they can overload, its most contended link
        (:class:`_Link`), most contended first; the grid (s)."""
        res = self.resolution_ms / 1e3
        cap = np.asarray(capacity_bps, float)
        prof = {j: p for j, p in ((j, profile(v, cap))
                                  for j, v in sorted(jobs.items()))
                if p is not None}
        groups = _link_groups(prof, cap)

        def circle(j, link):
            it, start, comm, demand = prof[j]
            return job_circle(it, comm, demand[link], start, res)
        budget = steps(self.cap_s, res)
        scored = []
        for jobs, links in groups.items():
            best = None
            for link in links:
                cs = [circle(j, link) for j in jobs]
                sh, lo, hi, held = solve_link(cs, cap[link], budget)
                peak = sum(prof[j][3][link] for j in jobs) / cap[link]
                cand = _Link(lo, -peak, jobs, link, dict(zip(jobs, sh)),
                             hi - lo, held)
                if best is None or cand[:2] < best[:2]:
                    best, best_cs = cand, cs
            scored.append(self._paying(best, best_cs, cap[best.link],
                                       budget))
        # most contended first: the lowest score (as held or not), then
        # the highest peak demand over capacity
        scored.sort(key=lambda x: x[:3])
        return prof, scored, res

    def _paying(self, x, circles, capacity_bps, budget):
        """A solved link (:class:`_Link`) as it will run: held to its
        shifts if their sure gain over none exceeds ``min_gain``, else
        unshifted and scored so."""
        if not x.held:
            return x
        lo0, hi0 = score_bounds(circles, [0] * len(circles), capacity_bps,
                                budget)
        if x.score - hi0 > self.min_gain + TIE:
            return x
        return x._replace(score=lo0, shifts=dict.fromkeys(x.jobs, 0),
                          err=hi0 - lo0, held=False)

    def place(self, jobs, candidates, capacity_bps):
        """CASSINI's placement (``place: score``): among the candidates,
        those whose affinity graph (with the jobs placed before; links
        that hold their jobs) has no cycle, the one whose contended links
        score best on average (a candidate that contends nowhere scores
        1; a later one only if surely better, see
        :func:`choose_placement`). If every candidate has a cycle
        (reconstructed), the same choice among all: the shifts then hold
        on all but its least contended links. ``place: first`` takes the
        first; ``place: random`` one drawn per job and ``seed``."""
        if self.placement == 'first' or len(candidates) < 2:
            return 0
        if self.placement == 'random':
            return _random_step(self.seed, candidates[0].id,
                                len(candidates), stream=1)
        descs = []
        for cand in candidates:
            prof, scored, res = self._links(dict(jobs, **{cand.id: cand}),
                                            capacity_bps)
            descs.append({
                'links': {x.link: (x.score, x.shifts) for x in scored
                          if x.held},
                'periods': {j: steps(prof[j][0], res) for j in prof},
                'score': (float(np.mean([x.score for x in scored]))
                          if scored else 1.0),
                'err': (float(np.mean([x.err for x in scored]))
                        if scored else 0.0)})
        i = choose_placement(descs)
        if i is None:
            i = choose_placement([dict(d, links={}) for d in descs])
        return i

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


def _random_step(seed, job, period, stream=0):
    """A pseudo-random grid step in [0, period), the same for a job and
    seed wherever it is drawn (a local generator: no global state);
    ``stream`` 1 draws apart from 0 (placements apart from shifts)."""
    key = [int(seed), zlib.crc32(str(job).encode())] + [stream] * bool(stream)
    return int(np.random.default_rng(key).integers(period))
