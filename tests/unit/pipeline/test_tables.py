"""A sweep's tidy tables (pipeline.tables): one row per (run, job),
(run, iteration), (run, coflow), (run, stage) and (run, link) with the
sweep's axes as typed columns, the runs' own CSVs unchanged in them,
and ratios.csv holding the numbers the sweep page shows. Made from the
session's tiny sweep (tests/unit/conftest.py)."""
import csv
import math
import os
import shutil
import subprocess
import sys

import pytest

from netsched.pipeline import stats, sweep, tables

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _csv(path):
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def test_each_table_is_the_runs_own_rows_with_the_axes(tiny_sweep):
    out = tiny_sweep['out']
    runs = sweep.read_rows(os.path.join(out, 'runs.csv'))
    assert len(runs) == 8
    for name in ('jobs', 'iterations', 'coflows', 'stages', 'links'):
        fname = tables.RUN_TABLES[name][0]
        rows = _csv(os.path.join(out, 'tables', name + '.csv'))
        head = list(rows[0]) if rows else []
        if rows:
            assert head[:5] == ['run', 'backend', 'policy', 'seed',
                                'link_gbps']
        for r in runs:
            own = _csv(os.path.join(out, r['run'], fname))
            mine = [x for x in rows if x['run'] == r['run']]
            assert len(mine) == len(own), (name, r['run'])
            for x, y in zip(mine, own):
                assert (x['policy'], int(x['seed']), x['link_gbps']) == \
                    (r['policy'], r['seed'], r['link_gbps'])
                for k, v in y.items():
                    assert v == x[k] or float(v) == float(x[k]), (name, k)
    assert len(_csv(os.path.join(out, 'tables', 'jobs.csv'))) == 16


def test_ratios_csv_holds_the_pages_ratios(tiny_sweep):
    out = tiny_sweep['out']
    ok = [r for r in sweep.read_rows(os.path.join(out, 'runs.csv'))
          if r['status'] == 'ok']
    metrics = [m for m in sweep.HEADLINE if any(r.get(m) for r in ok)]
    want = stats.against_baseline(ok, 'fair', metrics, ['link_gbps'])
    got = _csv(os.path.join(out, 'ratios.csv'))
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert (g['backend'], g['link_gbps'], g['policy'], g['baseline'],
                g['metric'], g['verdict']) == (
            'sim', w['group']['link_gbps'], w['policy'], 'fair',
            w['metric'], w['verdict'])
        for k in ('ratio', 'low', 'high'):
            assert float(g[k]) == pytest.approx(w[k], rel=1e-12)
        assert int(g['n']) == w['n'] == 2
    with open(os.path.join(out, 'report.html'), encoding='utf-8') as f:
        page = f.read()
    r = next(x for x in got if x['metric'] == 'avg_jct_s')
    assert '%.3f×' % float(r['ratio']) in page
    means = _csv(os.path.join(out, 'means.csv'))
    assert {m['policy'] for m in means} == {'fair', 'sebf'}
    assert all(float(m['low']) > 0 for m in means if m['low'])


def test_parquet_has_typed_columns(tiny_sweep):
    pd = pytest.importorskip('pandas')
    pytest.importorskip('pyarrow')
    d = os.path.join(tiny_sweep['out'], 'tables')
    for name in ('runs', 'jobs', 'coflows', 'links', 'iterations'):
        df = pd.read_parquet(os.path.join(d, name + '.parquet'))
        assert len(df) == len(_csv(os.path.join(d, name + '.csv')))
    df = pd.read_parquet(os.path.join(d, 'coflows.parquet'))
    assert str(df['seed'].dtype) == 'int64'
    assert str(df['link_gbps'].dtype) == 'int64'
    assert str(df['cct_s'].dtype) == 'float64'
    assert not df['cct_s'].isna().any()


def test_axis_types():
    rows = [{'a': '10', 'b': '2.5', 'c': 'exact', 'd': '1e3'},
            {'a': '40', 'b': '3', 'c': '8', 'd': None}]
    assert tables.axis_kinds(rows, 'abcd') == {
        'a': int, 'b': float, 'c': str, 'd': float}


def test_a_sweep_without_its_report_still_writes_the_tables(tiny_sweep,
                                                            tmp_path):
    out = str(tmp_path / 'sweep')
    shutil.copytree(tiny_sweep['out'], out)
    shutil.rmtree(os.path.join(out, 'tables'))
    os.unlink(os.path.join(out, 'ratios.csv'))
    args = list(tiny_sweep['args'])
    args[args.index('--out') + 1] = out
    r = subprocess.run([sys.executable, '-m', 'netsched'] + args +
                       ['--no-report'], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert 'tables: %s' % os.path.join(out, 'tables') in r.stdout
    assert os.path.isfile(os.path.join(out, 'ratios.csv'))
    assert not math.isnan(float(_csv(os.path.join(out, 'ratios.csv'))[0]
                                ['ratio']))
