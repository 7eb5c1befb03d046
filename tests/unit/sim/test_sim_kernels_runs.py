"""Whole simulator runs with the compiled kernels and with the numpy code
they replace write the same event log, byte for byte: the kernels are a
speed-up, never a change of model (benchmarks/sim_identity.py holds the
same check against a saved set, over more cases)."""
import os

import pytest

from netsched.fluid import kernels
from netsched.pipeline import experiment
from netsched.sim import kernels as sim_kernels
from netsched.sim import runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

needs_kernels = pytest.mark.skipif(
    kernels.lib() is None or sim_kernels.lib() is None,
    reason='no compiled kernels: %s' % (kernels.why_not()
                                        or sim_kernels.why_not()))


def _log(tmp_path, name, path, policy, kernels_off, monkeypatch):
    monkeypatch.setattr(kernels, 'OFF', kernels_off)
    monkeypatch.setattr(sim_kernels, 'OFF', kernels_off)
    exp = experiment.load(os.path.join(ROOT, path), backend='sim',
                          policy=policy)
    out = tmp_path / ('%s-%s.jsonl' % (name, 'numpy' if kernels_off
                                       else 'c'))
    info = runner.run(exp, str(out), lambda m: None)
    # run.json's backend_info says which ran
    assert info['kernels'] == ('numpy' if kernels_off else 'c')
    return out.read_bytes()


# strict priority and explicit (MADD) rates on a fat-tree with arrivals,
# the trace on a fat-tree, and Aalo's queues with its rate estimate
@needs_kernels
@pytest.mark.parametrize('path,policy', [
    ('experiments/fidelity/ft-arrivals.yaml', 'sincronia'),
    ('experiments/fidelity/d4-mixed.yaml', 'varys'),
    ('experiments/fidelity/d4-mixed.yaml', 'aalo'),
    ('experiments/fidelity/trace-slice.yaml', 'sebf'),
])
def test_kernels_and_numpy_write_the_same_log(tmp_path, monkeypatch, path,
                                              policy):
    name = os.path.basename(path)[:-5]
    c = _log(tmp_path, name, path, policy, False, monkeypatch)
    numpy_ = _log(tmp_path, name, path, policy, True, monkeypatch)
    assert c.count(b'\n') > 20          # a run, not an empty log
    assert c == numpy_
