"""CASSINI's geometry and solver (issue 12), hand-worked."""
import numpy as np
import pytest

from netsched.policies import cassini as cs

C = 10e9                               # a 10 Gbit/s link


def worked():
    """The worked example: job A 40 ms (30 compute + 10 comm), job B 60 ms
    (50 + 10), each saturating the link while it communicates."""
    return cs.job_circle(0.040, 0.010, C), cs.job_circle(0.060, 0.010, C)


def test_the_worked_example_shifts_b_by_10_ms_for_a_score_of_1():
    a, b = worked()
    assert cs.unified_perimeter([a, b]) == 120          # 1 ms steps
    # unshifted, both communicate in [110, 120): 10 of 120 ms at 2x C
    assert cs.score([a, b], [0, 0], C) == pytest.approx(1 - 10 / 120)
    shifts, best = cs.best_shifts([a, b], C)
    assert shifts == [0, 10] and best == pytest.approx(1.0)
    u = cs.unify([a, b], shifts, 120).sum(axis=0)
    assert u.max() == C                     # they take turns


def test_a_chain_of_three_jobs_gets_consistent_shifts():
    # A-B share link 1 (B's shift 10 against A), B-C share link 2 (C's
    # shift 5 against B, B at 2 there): from A at 0, B at 10 and C at
    # (10 - 2 + 7) mod 60 = 15
    per = {'A': 40, 'B': 60, 'C': 60}
    got = cs.affinity_shifts({'l1': {'A': 0, 'B': 10},
                              'l2': {'B': 2, 'C': 7}}, per)
    assert got == {'A': 0, 'B': 10, 'C': 15}
    # on every link the jobs keep their relative shift (mod the period)
    assert (got['B'] - got['A']) % 60 == 10
    assert (got['C'] - got['B']) % 60 == 5
    # a job on no shared link is not shifted
    got = cs.affinity_shifts({'l1': {'A': 0, 'B': 10}, 'l3': {'D': 4}},
                             dict(per, D=30))
    assert got['D'] == 0


def test_a_cyclic_affinity_graph_is_rejected():
    # A-B on two links with different shifts: a cycle A-l1-B-l2-A
    per = {'A': 40, 'B': 60}
    assert cs.affinity_shifts({'l1': {'A': 0, 'B': 10},
                               'l2': {'A': 0, 'B': 30}}, per) is None


def test_placement_skips_cycles_and_takes_the_best_average_score():
    per = {'A': 40, 'B': 60, 'N': 60}
    cyclic = {'links': {'l1': (1.0, {'A': 0, 'N': 10}),
                        'l2': (1.0, {'A': 0, 'N': 20})}, 'periods': per}
    worse = {'links': {'l1': (0.8, {'A': 0, 'N': 10})}, 'periods': per}
    better = {'links': {'l1': (0.95, {'B': 0, 'N': 5}),
                        'l4': (0.9, {'A': 0, 'B': 3})}, 'periods': per}
    assert cs.choose_placement([cyclic, worse, better]) == 2
    assert cs.choose_placement([cyclic]) is None


def test_three_jobs_by_coordinate_search():
    # three jobs of 30 ms with 10 ms of communication each at full rate
    # fit exactly in turn on one link
    c = [cs.job_circle(0.030, 0.010, C) for _ in range(3)]
    shifts, best = cs.best_shifts(c, C)
    assert best == pytest.approx(1.0)
    assert sorted(np.array(shifts) % 30 // 10) == [0, 1, 2]
