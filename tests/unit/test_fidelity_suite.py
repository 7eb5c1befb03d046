"""The fidelity suite loads on both backends under every baseline, and
the fidelity benchmark's matrix (errors, targets, ranking agreement) from
hand-made records."""
import glob
import importlib.util
import os

import pytest

from netsched import experiment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SUITE = sorted(glob.glob(os.path.join(ROOT, 'experiments', 'fidelity',
                                      '*.yaml')))


def bench():
    spec = importlib.util.spec_from_file_location(
        'fidelity_bench', os.path.join(ROOT, 'benchmarks',
                                       'fidelity_bench.py'))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_the_suite_has_at_least_six_experiments():
    assert len(SUITE) >= 5          # + the trace slice, when it lands


@pytest.mark.parametrize('path', SUITE, ids=os.path.basename)
def test_every_suite_experiment_loads_on_both_backends(path):
    for backend in ('sim', 'emu'):
        for p in bench().POLICIES:
            exp = experiment.load(path, backend=backend, policy=p)
            assert exp.policy == p and exp.backend == backend


def test_matrix_marks_targets_and_counts_agreeing_reps():
    b = bench()
    sims = {'x': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}

    def rec(p, rep, total, jobs, cof):
        return {'experiment': 'x', 'policy': p, 'rep': rep, 'total': total,
                'errors': {'job jct_s': jobs, 'coflow cct_s': cof},
                'diag': {'retransmits': 4, 'timeouts': 0}}
    records = [rec('fair', 0, 1.02, 0.01, 0.02),
               rec('sebf', 0, 0.55, 0.05, 0.10),
               rec('fair', 1, 1.01, 0.02, 0.03),
               # rep 1: SEBF after fair beyond the tie: a disagreement
               rec('sebf', 1, 1.20, 0.12, 0.30)]
    m = b.matrix(records, sims, ['fair', 'sebf'])['x']
    assert m['reps'] == 2 and m['ranking_agrees'] == 1
    fair, sebf = m['policies']['fair'], m['policies']['sebf']
    assert fair['meets'] == {'job jct_s': True, 'coflow cct_s': True}
    assert sebf['meets'] == {'job jct_s': False, 'coflow cct_s': False}
    assert sebf['coflows'] == {'mean': pytest.approx(0.2), 'min': 0.10,
                               'max': 0.30, 'n': 2}
    text = b.table(b.matrix(records, sims, ['fair', 'sebf']),
                   ['fair', 'sebf'])
    assert 'agree in 1 of 2 reps' in text and '!' in text


def test_a_trace_experiment_has_no_job_errors():
    """A coflow trace has no jobs: its job error is None, which the
    progress lines show as '-' and the matrix as '-?' (no target)."""
    b = bench()
    sims = {'t': {'fair': {'avg_cct_s': 1.0}, 'sebf': {'avg_cct_s': 0.5}}}
    records = [{'experiment': 't', 'policy': p, 'rep': 0, 'total': v,
                'errors': {'job jct_s': None, 'coflow cct_s': 0.1},
                'diag': {}} for p, v in (('fair', 1.0), ('sebf', 0.5))]
    m = b.matrix(records, sims, ['fair', 'sebf'])['t']
    assert m['policies']['fair']['jobs'] is None
    assert m['policies']['fair']['meets']['job jct_s'] is None
    assert b._pct(None) == '-'
    assert '-?' in b.table(b.matrix(records, sims, ['fair', 'sebf']),
                           ['fair', 'sebf'])
