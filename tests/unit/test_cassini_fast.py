"""CASSINI's shift search at O(perimeter) per job (issue 12): the same
shifts and the same scores, to the last bit, as scoring every shift on
the unified circle (the solver as first written, kept here)."""
import numpy as np
import pytest

from netsched.policies import JobView
from netsched.policies import cassini as cs

from .test_cassini_policy import snap as jobs_only

C = 10e9


def dense_scores(others, circle, capacity_bps, perimeter, chunk=256):
    a = np.arange(perimeter)
    n = len(circle)
    out = np.empty(n)
    for lo in range(0, n, chunk):
        s = np.arange(lo, min(lo + chunk, n))
        demand = others[None, :] + circle[(a[None, :] - s[:, None]) % n]
        over = np.maximum(demand - capacity_bps, 0.0).mean(axis=1)
        out[lo:lo + len(s)] = 1.0 - over / capacity_bps
    return out


def dense_best_shifts(circles, capacity_bps, perimeter=None, rounds=4):
    p = perimeter or cs.unified_perimeter(circles)
    shifts = [0] * len(circles)
    best = cs.score(circles, shifts, capacity_bps, p)
    if len(circles) < 2:
        return shifts, best
    each = cs.unify(circles, shifts, p)
    for _ in range(rounds if len(circles) > 2 else 1):
        changed = False
        for j in range(1, len(circles)):
            others = each.sum(axis=0) - each[j]
            v = dense_scores(others, circles[j], capacity_bps, p)
            s = int(np.flatnonzero(v >= v.max() - 1e-12)[0])
            if v[s] > best + 1e-12:
                best, changed = float(v[s]), True
                shifts[j] = s
                each[j] = cs.unify([circles[j]], [s], p)[0]
        if not changed:
            break
    return shifts, best


def random_circle(rng):
    it = float(rng.choice([0.04, 0.06, 0.1, 0.12])) \
        if rng.random() < 0.3 else rng.uniform(0.02, 0.3)
    comm = it if rng.random() < 0.1 else rng.uniform(0.02, 1.0) * it
    bw = C * float(rng.choice([1.0, 0.5])) if rng.random() < 0.5 \
        else rng.uniform(0.05, 1.0) * C
    start = rng.uniform(0, it) if rng.random() < 0.7 else None
    return cs.job_circle(it, comm, bw, start)


@pytest.mark.parametrize('seed', range(4))
def test_the_fast_search_gives_the_dense_searchs_shifts_and_scores(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        circles = [random_circle(rng)
                   for _ in range(int(rng.integers(2, 6)))]
        cap = C if rng.random() < 0.5 else C * rng.uniform(0.3, 1.5)
        p = cs.unified_perimeter(circles, cap_s=float(rng.choice([0.5, 2.0])))
        assert cs.best_shifts(circles, cap, p) == \
            dense_best_shifts(circles, cap, p)


def test_ties_go_to_the_smallest_shift_as_before():
    # b fits anywhere in a's 30 ms gap: every such shift scores 1
    a, b = cs.job_circle(0.04, 0.01, C), cs.job_circle(0.04, 0.01, C, 0.0)
    assert cs.best_shifts([a, b], C) == dense_best_shifts([a, b], C) \
        == ([0, 0], 1.0)
    # a circle of two rates is searched densely
    c = cs.job_circle(0.05, 0.02, C)
    c[:5] = C / 2
    assert cs.best_shifts([a, c], C) == dense_best_shifts([a, c], C)


def test_the_policy_decides_as_with_the_dense_search(monkeypatch):
    rng = np.random.default_rng(7)
    links = 12
    jobs = []
    for j in range(16):
        load = np.zeros(links)
        on = rng.choice(links, size=int(rng.integers(1, 4)), replace=False)
        load[on] = rng.uniform(20, 150, size=len(on)) * 1e6
        compute = rng.uniform(0.1, 0.4)
        jobs.append(JobView('j%d' % j, 0.0, 10, iteration_load=load,
                            compute_s=compute,
                            first_send_s=compute * rng.uniform(0.6, 1.0)))
    snap = jobs_only(jobs, links, C)
    pol = cs.Cassini(cap_s=2.0)
    fast = pol.solve(snap)
    assert len(fast[0]) > 4                    # jobs shifted on shared links
    monkeypatch.setattr(cs, 'best_shifts', dense_best_shifts)
    assert cs.Cassini(cap_s=2.0).solve(snap) == fast
