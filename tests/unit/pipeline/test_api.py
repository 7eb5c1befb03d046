"""The Python API on the simulator: netsched.run with an override,
netsched.sweep, netsched.load of a run's and a sweep's tables, and
docs/analysis.md's figure block run as written."""
import os
import re

import pytest

import netsched
from netsched.errors import ConfigError
from tests.support.tiny import TINY, TINY_RANDOM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
pd = pytest.importorskip('pandas')


def test_run_with_an_override_and_load_its_tables(tmp_path):
    exp = tmp_path / 'tiny.yaml'
    exp.write_text(TINY)
    out = netsched.run(str(exp), backend='sim', out=str(tmp_path / 'r'),
                       seed=3, report=False, quiet=True, link_gbps=20,
                       **{'jobs.0.iterations': 3})
    assert out == str(tmp_path / 'r')
    jobs = netsched.load(out, table='jobs')
    assert list(jobs.columns[:4]) == ['run', 'backend', 'policy', 'seed']
    assert set(jobs['job']) == {'small', 'large'}
    assert (jobs['seed'] == 3).all() and (jobs['backend'] == 'sim').all()
    assert int(jobs.set_index('job').loc['small', 'iterations']) == 3
    links = netsched.load(out, table='links')
    assert links['peak_util'].between(0, 1).all()
    with pytest.raises(ConfigError, match="did you mean 'coflows'"):
        netsched.load(out, table='coflow')
    with pytest.raises(ConfigError, match='no_such_key'):
        netsched.run(str(exp), out=str(tmp_path / 'r2'), quiet=True,
                     no_such_key=1)


def test_sweep_in_python_and_its_coflows_in_pandas(tmp_path):
    exp = tmp_path / 'tiny.yaml'
    exp.write_text(TINY_RANDOM)
    out = netsched.sweep(str(exp), policies=['fair', 'sebf'], seeds='1-2',
                         sets={'link_gbps': [10]}, jobs=2,
                         out=str(tmp_path / 'sw'), report=False)
    cof = netsched.load(out, table='coflows')
    assert set(cof['policy']) == {'fair', 'sebf'}
    assert sorted(set(cof['seed'])) == [1, 2]
    assert str(cof['link_gbps'].dtype) == 'int64'
    assert cof.groupby('run').size().eq(3).all()     # 3 coflows a run
    ratios = netsched.load(out, table='ratios')
    assert set(ratios['policy']) == {'sebf'}
    assert (ratios['low'] <= ratios['ratio']).all()
    runs = netsched.load(out, table='runs')
    assert len(runs) == 4 and (runs['status'] == 'ok').all()


def _figure_block():
    with open(os.path.join(ROOT, 'docs', 'analysis.md')) as f:
        text = f.read()
    blocks = re.findall(r'```python\n(.*?)```', text, re.S)
    return next(b for b in blocks if 'savefig' in b)


def test_the_docs_figure_block_runs(tiny_sweep, tmp_path):
    code = _figure_block()
    assert len(code.strip().splitlines()) <= 16
    code = code.replace("'results/first-sweep'", repr(tiny_sweep['out'])) \
        .replace("'cct.pdf'", repr(str(tmp_path / 'cct.pdf')))
    import matplotlib
    matplotlib.use('Agg')
    exec(compile(code, 'docs/analysis.md', 'exec'), {})
    assert (tmp_path / 'cct.pdf').stat().st_size > 1000
