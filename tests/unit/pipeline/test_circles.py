"""circles.png (issue 12): time-shifted jobs' coflows folded onto their
unified circle, from the event log alone; and the link plot under it."""
import os

import pytest

from netsched import ROOT
from netsched.pipeline import experiment, metrics, report, run


def arcs_s(c, job):
    """A job's arcs in seconds of the circle."""
    return [(a * c['perimeter_s'], b * c['perimeter_s'])
            for a, b in c['jobs'][job]['arcs']]


def close(got, want):
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, abs=1e-9), (got, want)


def coflow(cid, job, t, end):
    return [{'ev': 'coflow', 'coflow': cid, 'job': job, 'bytes': 1.0,
             't': t}] + ([] if end is None else
                         [{'ev': 'coflow_end', 'coflow': cid, 't': end}])


def test_coflows_fold_onto_the_lcm_circle():
    ev = coflow('a/0', 'a', 0.05, 0.15)            # before the grid: left out
    ev += [{'ev': 'shifts', 't': 0.2, 'shifts': {
        'a': [0.0, 0.4, 0.02, 0.2], 'b': [0.1, 0.6, 0.03, 0.3],
        'c': None}}]
    ev += coflow('a/1', 'a', 0.3, 0.4)
    ev += coflow('a/2', 'a', 0.7, 0.8)
    ev += coflow('a/3', 'a', 1.5, 1.62)     # one turn on: overlaps a/1
    ev += coflow('b/0', 'b', 0.6, 0.7)
    ev += coflow('b/1', 'b', 1.15, 1.25)    # crosses the circle's start
    ev += coflow('b/2', 'b', 2.5, None)     # never ends: until the log's
    ev += [{'ev': 'run_end', 't': 2.55}]    # end
    ev += coflow('c/0', 'c', 0.3, 0.4)      # c has no grid
    c = metrics.circle_arcs(metrics.compute(ev))
    assert c['perimeter_s'] == pytest.approx(1.2)   # LCM of 0.4 and 0.6
    assert not c['capped']
    assert sorted(c['jobs']) == ['a', 'b']
    close(arcs_s(c, 'a'), [(0.3, 0.42), (0.7, 0.8)])
    close(arcs_s(c, 'b'), [(0.0, 0.05), (0.1, 0.15), (0.6, 0.7),
                           (1.15, 1.2)])
    close(c['jobs']['a']['grid'], [0.0, 1 / 3, 2 / 3])
    close(c['jobs']['b']['grid'], [1 / 12, 7 / 12])
    assert (c['jobs']['b']['shift_s'], c['jobs']['b']['period_s']) == \
        (0.1, 0.6)


def test_a_long_coflow_covers_the_circle_and_the_perimeter_is_capped():
    ev = [{'ev': 'shifts', 't': 0.0, 'shifts': {
        'a': [0.0, 0.401, 0.02, 0.2], 'b': [0.1, 0.6, 0.03, 0.3]}}]
    ev += coflow('a/0', 'a', 1.0, 12.0)
    c = metrics.circle_arcs(metrics.compute(ev))
    assert c['capped'] and c['perimeter_s'] == 10.0
    assert c['lcm_s'] == pytest.approx(240.6)
    assert c['jobs']['a']['arcs'] == [(0.0, 1.0)]
    assert c['jobs']['b']['arcs'] == []
    # the grid points that fall on the capped circle
    assert len(c['jobs']['a']['grid']) == 25      # 24 x 0.401 < 10
    assert len(c['jobs']['b']['grid']) == 17      # 16 x 0.6 < 10
    assert metrics.circle_arcs(metrics.compute(coflow('a/0', 'a', 0, 1))) \
        is None                                 # nothing shifted


def overlap_s(c):
    return c['perimeter_s'] * sum(
        max(0.0, min(a1, b1) - max(a0, b0))
        for a0, a1 in c['jobs']['a']['arcs']
        for b0, b1 in c['jobs']['b']['arcs'])


def test_cassini_interleaves_the_pair_on_its_circle(tmp_path):
    path = os.path.join(ROOT, 'experiments', 'cassini-pair.yaml')
    out = {}
    for pol in ('cassini', 'cassini:shifts=random'):
        result = run.execute(experiment.load(path, backend='sim',
                                             policy=pol),
                             str(tmp_path / pol.replace(':', '_')),
                             say=lambda m: None)
        report.write_run(result)
        d = result[0]
        assert os.path.exists(os.path.join(d, 'circles.png'))
        assert os.path.exists(os.path.join(d, 'link_utilization.png'))
        out[pol] = metrics.circle_arcs(
            metrics.from_log(os.path.join(d, 'events.jsonl')))
    c = out['cassini']
    assert c['perimeter_s'] == pytest.approx(1.224)   # 0.408 and 0.612
    # a's three phases and b's two per turn, 100 ms each, take turns.
    # Not exactly: the 2% slack stretches the grid, not the phases in
    # it, so b's phase starts 2 ms before a's ends (4 ms shared once a
    # turn, and a's unheld second iteration lands 2 ms into b's arc)
    assert sum(b - a for a, b in arcs_s(c, 'a')) == pytest.approx(
        0.3, abs=0.02)
    assert sum(b - a for a, b in arcs_s(c, 'b')) == pytest.approx(
        0.2, abs=0.02)
    assert overlap_s(c) < 0.01 * c['perimeter_s']
    # random shifts: the phases meet on a fifth of the circle
    assert overlap_s(out['cassini:shifts=random']) > \
        0.1 * c['perimeter_s']
