"""CASSINI's placement arms (issue 24, item 1): every arm of its paper's
comparison is a policy spec, ``place: score|first|random`` with
``shifts: solve|random|none``."""
import os

import numpy as np
import pytest

from netsched import ROOT, policies
from netsched.pipeline import experiment
from netsched.errors import ConfigError
from netsched.policies import JobView
from netsched.policies.registry import parse_spec

C = 10e9
MB = 1e6


def make(text):
    return policies.make(*parse_spec(text))


def job(jid, compute_s, first_send_s, load):
    return JobView(jid, 0.0, 10, iteration_load=np.asarray(load, float),
                   compute_s=compute_s, first_send_s=first_send_s)


def choice():
    """A (40 ms: 30 of compute, then 10 ms of 12.5 MB at 10 Gbit/s) on
    link 0; B (the same) either with A on link 0 (the first candidate),
    or alone on link 1."""
    a = job('a', 0.04, 0.03, [12.5 * MB, 0])
    with_a = job('b', 0.04, 0.03, [12.5 * MB, 0])
    alone = job('b', 0.04, 0.03, [0, 12.5 * MB])
    return {'a': a}, [with_a, alone], np.full(2, C)


def test_the_specs_carry_both_params():
    p = make('cassini:place=first:shifts=none')
    assert (p.placement, p.shifts) == ('first', 'none')
    assert callable(p.place)                    # the method, not the knob
    p = make('cassini:shifts=random:place=random:seed=3')
    assert (p.placement, p.shifts, p.seed) == ('random', 'random', 3)
    assert make('cassini').placement == 'score'
    # a comma does not separate parameters: the value is refused, named
    with pytest.raises(ConfigError, match='place'):
        make('cassini:place=first,shifts=none')
    with pytest.raises(ConfigError, match='place'):
        make('cassini:place=best')


def test_score_places_by_the_links_first_takes_the_first():
    placed, cands, cap = choice()
    # with A, B can take turns (same period, shift 10 of 40): score 1;
    # alone, nothing contended: 1. Equal: the first
    assert make('cassini').place(placed, cands, cap) == 0
    # B sending 40 MB (32 ms of its 40) cannot take turns with A's 10
    # ms (42 > 40): with A below 1, alone 1: the second
    heavy = [job('b', 0.04, 0.008, [40 * MB, 0]),
             job('b', 0.04, 0.008, [0, 40 * MB])]
    assert make('cassini').place(placed, heavy, cap) == 1
    for spec in ('cassini:place=first', 'cassini:place=first:shifts=none'):
        assert make(spec).place(placed, heavy, cap) == 0


def test_random_places_by_seed_and_job_the_same_every_time():
    placed, cands, cap = choice()
    got = {}
    for seed in range(1, 21):
        p = make('cassini:place=random:seed=%d' % seed)
        i = p.place(placed, cands, cap)
        assert i == p.place(placed, cands, cap) in (0, 1)
        got[seed] = i
    assert set(got.values()) == {0, 1}      # the seed decides
    # three candidates: every index drawn across seeds
    three = cands + [cands[1]]
    assert {make('cassini:place=random:seed=%d' % s).place(
        placed, three, cap) for s in range(1, 41)} == {0, 1, 2}
    # a one-candidate job needs no draw
    assert make('cassini:place=random').place(placed, cands[:1], cap) == 0


EXP = os.path.join(ROOT, 'experiments', 'cassini-fattree.yaml')


def chosen(policy):
    from netsched.workload import taskgraph
    plan = taskgraph.build(experiment.load(EXP, backend='sim',
                                           policy=policy))
    assert {p['by'] for p in plan.placements.values()} == \
        {policy.split(':')[0]}
    return {j: p['chosen'] for j, p in plan.placements.items()}


def test_the_fattree_arms_place_as_named():
    first = {'r2': 0, 'b1': 0, 'p1': 0}
    assert chosen('fair') == first
    assert chosen('cassini:place=first') == first
    assert chosen('cassini:place=first:shifts=none') == first
    assert chosen('cassini:shifts=none') == chosen('cassini') != first
    rnd = chosen('cassini:place=random')
    assert rnd == chosen('cassini:place=random:shifts=none')
    assert set(rnd) == set(first)
    assert all(0 <= i < 3 for i in rnd.values())
