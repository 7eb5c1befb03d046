"""CASSINI's shift search over the full LCM without walking it (issues
12, 24): the same shifts, and the same scores to rounding, as scoring
every shift of every job step by step over the whole unified circle
(the dense search, kept here); beyond the budget, bounds that hold and
moves that surely gain."""
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


# periods whose LCM (720 ms) the dense search can walk
PERIODS = [0.02, 0.024, 0.03, 0.036, 0.04, 0.045, 0.048, 0.06, 0.072, 0.09,
           0.12]


def random_circle(rng):
    it = float(rng.choice(PERIODS))
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
        shifts, sc = cs.best_shifts(circles, cap)
        want, want_sc = dense_best_shifts(circles, cap)
        assert shifts == want
        assert sc == pytest.approx(want_sc, abs=1e-12)
        assert sc == pytest.approx(cs.score(circles, shifts, cap,
                                            cs.unified_perimeter(circles)),
                                   abs=1e-12)


def test_ties_go_to_the_smallest_shift_as_before():
    # b fits anywhere in a's 30 ms gap: every such shift scores 1
    a, b = cs.job_circle(0.04, 0.01, C), cs.job_circle(0.04, 0.01, C, 0.0)
    assert cs.best_shifts([a, b], C) == dense_best_shifts([a, b], C) \
        == ([0, 0], 1.0)
    # a circle of two rates (two layers)
    c = cs.job_circle(0.05, 0.02, C)
    c[:5] = C / 2
    got, want = cs.best_shifts([a, c], C), dense_best_shifts([a, c], C)
    assert got[0] == want[0] and got[1] == pytest.approx(want[1], abs=1e-12)


def dense_solve_link(circles, capacity_bps, budget=None, rounds=4):
    """solve_link by the dense search: the shifts, the score (exact:
    lo == hi), and whether the link holds its jobs (a shift moved, or
    some job's score varies with its own shift)."""
    shifts, best = dense_best_shifts(circles, capacity_bps)
    p = cs.unified_perimeter(circles)
    each = cs.unify(circles, shifts, p)
    spread = False
    for j, c in enumerate(circles):
        v = dense_scores(each.sum(axis=0) - each[j], c, capacity_bps, p)
        spread |= v.max() - v.min() > 1e-12
    return shifts, best, best, any(shifts) or spread


def test_the_policy_decides_as_with_the_dense_search(monkeypatch):
    # periods (its compute: first gradient early and at most 64 ms of
    # communication end before it) among 120..400 ms, LCM 3.6 s: the
    # dense search walks it
    rng = np.random.default_rng(7)
    links = 12
    jobs = []
    for j in range(16):
        load = np.zeros(links)
        on = rng.choice(links, size=int(rng.integers(1, 4)), replace=False)
        load[on] = rng.uniform(20, 80, size=len(on)) * 1e6
        compute = float(rng.choice([0.12, 0.15, 0.18, 0.2, 0.24, 0.3, 0.36,
                                    0.4]))
        jobs.append(JobView('j%d' % j, 0.0, 10, iteration_load=load,
                            compute_s=compute,
                            first_send_s=compute * rng.uniform(0.2, 0.45)))
    snap = jobs_only(jobs, links, C)
    pol = cs.Cassini(cap_s=10.0)
    fast = pol.solve(snap)
    assert len(fast[0]) > 4                    # jobs shifted on shared links
    assert {len(js) for js, _, _ in fast[1].values()} >= {2, 3}
    monkeypatch.setattr(cs, 'solve_link', dense_solve_link)
    slow = cs.Cassini(cap_s=10.0).solve(snap)
    assert slow[0] == fast[0]
    assert slow[1].keys() == fast[1].keys()
    for link, (js, sc, kept) in fast[1].items():
        assert slow[1][link][0] == js and slow[1][link][2] == kept
        assert slow[1][link][1] == pytest.approx(sc, abs=1e-12)


@pytest.mark.parametrize('seed', range(3))
def test_beyond_the_budget_the_bounds_hold_and_moves_surely_gain(seed):
    # four jobs on a link whose others' LCM exceeds a budget of 100
    # steps: jobs are left out and scores bounded; the exact score
    # (no budget) lies within, and the shifts chosen score at least as
    # well as none over the full LCM
    rng = np.random.default_rng(seed)
    bounded = 0
    for _ in range(25):
        circles = [random_circle(rng) for _ in range(4)]
        cap = C * rng.uniform(0.6, 1.5)
        shifts, lo, hi, _ = cs.solve_link(circles, cap, budget=100)
        exact = cs.score(circles, shifts, cap)
        assert lo - 1e-12 <= exact <= hi + 1e-12
        bounded += hi - lo > 1e-9
        assert exact >= cs.score(circles, [0] * 4, cap) - 1e-12
        rand = [int(rng.integers(len(c))) for c in circles]
        lo, hi = cs.score_bounds(circles, rand, cap, budget=100)
        assert lo - 1e-12 <= cs.score(circles, rand, cap) <= hi + 1e-12
    assert bounded > 5                  # the budget did leave jobs out
