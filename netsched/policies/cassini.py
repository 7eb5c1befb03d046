"""CASSINI (NSDI 2024): the geometric abstraction and its solver.

Pure functions (issue 12's first part): a job's circle, a link's unified
circle and compatibility score, the best shifts per link, the affinity
graph's shifts by BFS, and the choice among candidate placements. The
policy that hands the shifts to the agents builds on these.

Times are in seconds on a grid of ``resolution`` seconds; a circle is an
array of bandwidth demand (bit/s) per grid step over one iteration.
"""
import math
from collections import deque

import numpy as np

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
    a = np.arange(perimeter)
    for j, (c, s) in enumerate(zip(circles, shifts)):
        out[j] = c[(a - int(s)) % len(c)]
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
    nothing (at most ``rounds``)."""
    p = perimeter or unified_perimeter(circles)
    shifts = [0] * len(circles)
    best = score(circles, shifts, capacity_bps, p)
    if len(circles) < 2:
        return shifts, best
    for _ in range(rounds if len(circles) > 2 else 1):
        changed = False
        for j in range(1, len(circles)):
            for s in range(len(circles[j])):
                trial = shifts[:j] + [s] + shifts[j + 1:]
                v = score(circles, trial, capacity_bps, p)
                if v > best + 1e-12:
                    best, shifts, changed = v, trial, True
        if not changed:
            break
    return shifts, best


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
