"""compute_jitter: per worker and iteration compute drawn from the seed,
the same under every policy, none by default."""
import numpy as np
import pytest

from netsched.pipeline import experiment
from netsched.errors import ConfigError
from netsched.workload import taskgraph

EXP = """
name: jit
backend: sim
topology: dumbbell,2
link_gbps: 10
jobs:
  - {id: a, model: resnet50, pattern: ring, workers: 2, iterations: 4,
     compute_jitter: JIT, placement: [hl0, hr0]}
"""


def _plan(tmp_path, jitter, seed=1, policy=None):
    p = tmp_path / 'jit.yaml'
    p.write_text(EXP.replace('JIT', str(jitter)))
    exp = experiment.load(str(p), backend='sim', seed=seed, policy=policy)
    return taskgraph.build(exp)


def _durations(plan):
    """(iteration, worker) -> that iteration's total compute."""
    out = {}
    for t in plan.tasks:
        if t.kind == 'compute':
            out[(t.iter, t.worker)] = out.get((t.iter, t.worker), 0) + t.dur
    return out


def test_no_jitter_is_the_profile(tmp_path):
    d = _durations(_plan(tmp_path, 0))
    nominal = _plan(tmp_path, 0).jobs['a'].compute_s
    assert all(v == pytest.approx(nominal) for v in d.values())


def test_jitter_varies_per_worker_and_iteration(tmp_path):
    plan = _plan(tmp_path, 0.1)
    d = _durations(plan)
    nominal = plan.jobs['a'].compute_s          # the profile stays nominal
    f = np.array([v / nominal for v in d.values()])
    assert len(set(np.round(f, 9))) == len(f) == 8
    # cut at 3 coefficients of variation either side
    assert f.min() >= 0.7 - 1e-9 and f.max() <= 1.3 + 1e-9
    # every layer of one worker's iteration is scaled by the same factor
    per_layer = {}
    for t in plan.tasks:
        if t.kind == 'compute' and t.iter == 0 and t.worker == 0:
            per_layer[t.label] = t.dur
    base = {t.label: t.dur for t in _plan(tmp_path, 0).tasks
            if t.kind == 'compute' and t.iter == 0 and t.worker == 0}
    ratios = {round(per_layer[k] / base[k], 9) for k in base if base[k]}
    assert len(ratios) == 1


def test_the_same_draws_under_every_policy_and_a_new_seed_others(tmp_path):
    fair = _durations(_plan(tmp_path, 0.1, policy='fair'))
    assert _durations(_plan(tmp_path, 0.1, policy='sebf')) == fair
    assert _durations(_plan(tmp_path, 0.1, policy='p3')) == fair
    assert _durations(_plan(tmp_path, 0.1, seed=2)) != fair


def test_a_bad_jitter_is_named(tmp_path):
    p = tmp_path / 'jit.yaml'
    p.write_text(EXP.replace('JIT', '0.5'))
    with pytest.raises(ConfigError, match=r'compute_jitter: must be <= 0.3'):
        experiment.load(str(p))
