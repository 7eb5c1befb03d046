"""netsched sweep on the simulator: the cross product, runs.csv, resuming,
failures, Ctrl-C, and the report at the end. Each run is a real `netsched
run` child process of a tiny two-job experiment (about a second)."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from netsched.errors import ConfigError
from netsched.pipeline import sweep
from tests.support.tiny import interrupt_when

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _sweep(*args, env=None):
    return subprocess.run([sys.executable, '-m', 'netsched', 'sweep']
                          + list(args), capture_output=True, text=True,
                          cwd=ROOT, timeout=600,
                          env=dict(os.environ, **(env or {})))


def _rows(out):
    with open(os.path.join(out, 'runs.csv'), newline='') as f:
        return list(csv.DictReader(f))


def test_parse_seeds():
    assert sweep.parse_seeds('1-3,7') == [1, 2, 3, 7]
    assert sweep.parse_seeds('5') == [5]
    for bad in ('3-1', 'x', '1-', '-2'):
        with pytest.raises(ConfigError, match='--seeds'):
            sweep.parse_seeds(bad)


def test_plan_is_the_checked_cross_product(tiny):
    specs = sweep.plan(tiny, ['fair', 'sebf'], [1, 2],
                       [('link_gbps', [10, 40]), ('queues', [8, 'exact'])],
                       ['sim'])
    assert len(specs) == 2 * 2 * 2 * 2
    assert len({s.key for s in specs}) == len(specs)
    assert 'sim-sebf-link_gbps=40-queues=exact-s2' in {s.key for s in specs}
    with pytest.raises(ConfigError, match='--set link_gbps=0'):
        sweep.plan(tiny, ['fair'], [1], [('link_gbps', [10, 0])], ['sim'])
    with pytest.raises(ConfigError, match="unknown policy 'nope'"):
        sweep.plan(tiny, ['fair', 'nope'], [1], [], ['sim'])


def test_every_value_reaches_the_run_as_it_was_checked():
    from netsched.pipeline import overrides
    for v in ('10', 'a,b', 'x: y', 'exact', 10, 2.5, 1e-5, True, None,
              [1, 'a,b'], {'a': 1}):
        assert overrides.parse('k=' + overrides.argv_text(v))[1] == [v], v
    spec = sweep.RunSpec('k', '/e.yaml', 'sim', 'fair', 1,
                         (('name', '10'), ('jobs.0.workers', 4)))
    argv = spec.argv('/out')
    assert argv[argv.index('--set') + 1] == 'name="10"'


def test_axes_that_would_not_change_the_run_are_refused(tiny):
    for key, flag in (('seed', '--seeds'), ('policy', '--policies'),
                      ('backend', '--backend')):
        with pytest.raises(ConfigError, match='sweep %ss with %s'
                           % (key, flag)):
            sweep.plan(tiny, ['fair'], [1], [(key, [1, 2])], ['sim'])
    # the policy's own parameter wins over the axis: identical runs
    with pytest.raises(ConfigError, match='policy_params.classes=4 gives '
                       'the same experiment as policy_params.classes=2'):
        sweep.plan(tiny, ['geryon:classes=1'], [1],
                   [('policy_params.classes', [2, 4])], ['sim'])
    # checked as netsched check checks it: the plan, not only the file
    with pytest.raises(ConfigError, match='host'):
        sweep.plan(tiny, ['fair'], [1], [('jobs.0.workers', [2, 3])],
                   ['sim'])


def test_sweep_writes_runs_csv_resumes_and_reports(tiny_sweep, tmp_path):
    out = str(tmp_path / 'sw')
    shutil.copytree(tiny_sweep['out'], out)
    rows = _rows(out)
    assert len(rows) == 8 and {x['status'] for x in rows} == {'ok'}
    cols = set(rows[0])
    assert {'run', 'backend', 'policy', 'seed', 'link_gbps', 'status',
            'wall_s', 'avg_jct_s', 'p95_jct_s', 'avg_iteration_s',
            'avg_cct_s', 'commit', 'jct_s[small]', 'jct_s[large]',
            'iter_mean_s[small]'} <= cols
    for x in rows:
        run = os.path.join(out, x['run'])
        with open(os.path.join(run, 'run.json')) as f:
            assert json.load(f)['commit'] == x['commit'] != ''
        # the row is the run's own summary
        with open(os.path.join(run, 'summary.json')) as f:
            s = json.load(f)
        assert float(x['avg_jct_s']) == pytest.approx(
            s['totals']['avg_jct_s'])
        assert float(x['link_gbps']) * 1e9 == s['link_bps']
        assert s['seed'] == int(x['seed'])
    assert os.path.isfile(os.path.join(out, 'report.html'))
    # again: every run is skipped, the table unchanged
    args = tiny_sweep['args'][:-1] + [out, '--no-report']
    r = _sweep(*args[1:])
    assert r.returncode == 0
    assert '8 runs, 8 already done' in r.stderr
    assert _rows(out) == rows
    # a run whose folder went is run again, alone, to the same result
    gone = rows[3]['run']
    os.remove(os.path.join(out, gone, 'summary.json'))
    r = _sweep(*args[1:])
    assert '8 runs, 7 already done' in r.stderr and gone in r.stderr
    assert os.path.isfile(os.path.join(out, gone, 'summary.json'))
    assert [x['avg_jct_s'] for x in _rows(out)] == \
        [x['avg_jct_s'] for x in rows]
    # --force runs them all again
    r = _sweep(*(args[1:] + ['--force']))
    assert '8 runs, 0 already done' in r.stderr


def test_a_bad_axis_is_named_before_anything_starts(tiny, tmp_path):
    out = str(tmp_path / 'sw')
    r = _sweep(tiny, '--set', 'lnk_gbps=10,20', '--out', out)
    assert r.returncode == 2
    assert "unknown key 'lnk_gbps'" in r.stderr and 'Traceback' not in \
        r.stderr
    assert not os.path.exists(out)
    r = _sweep(tiny, '--set', 'jobs.7.workers=2,4', '--out', out)
    assert r.returncode == 2 and 'jobs has 2 item(s); no index 7' in r.stderr
    assert not os.path.exists(out)
    # a folder with something else in it is not taken over
    os.makedirs(out)
    open(os.path.join(out, 'notes.txt'), 'w').close()
    r = _sweep(tiny, '--out', out)
    assert r.returncode == 2 and 'holds no sweep' in r.stderr
    assert os.listdir(out) == ['notes.txt']
    r = _sweep(tiny, '--policies', 'sebf,fifo', '--baseline', 'fair',
               '--out', str(tmp_path / 'other'))
    assert r.returncode == 2 and '--baseline fair: not among' in r.stderr


def test_failed_runs_are_recorded_and_the_sweep_goes_on(tiny, tmp_path):
    out = str(tmp_path / 'sw')
    # a run that fails after the sweep checked it: every `netsched run`
    # child dies at start-up (the interpreter's sitecustomize hook, put
    # on the children's path), the sweep itself does not
    hook = tmp_path / 'hook'
    hook.mkdir()
    (hook / 'sitecustomize.py').write_text(
        'import os, sys\n'
        'if sys.argv[:2] == ["-m", "run"]:\n'
        '    sys.stderr.write("netsched: the run crashed (test hook)\\n")\n'
        '    sys.stderr.flush()\n'
        '    os._exit(1)\n')
    r = _sweep(tiny, '--policies', 'fair,sebf', '--out', out, '-j', '1',
               env={'PYTHONPATH': str(hook)})
    assert r.returncode == 1
    rows = _rows(out)
    assert [x['status'] for x in rows] == ['failed', 'failed']
    assert all('the run crashed' in x['error'] for x in rows)
    assert os.path.isfile(os.path.join(out, 'logs', rows[0]['run'] + '.log'))
    assert os.path.isfile(os.path.join(out, 'report.html'))


def test_a_bad_measuring_knob_in_the_environment_stops_the_sweep_first(
        tiny, tmp_path):
    """The environment's measuring knobs are checked with the file,
    before any run starts, and the error names the variable."""
    out = str(tmp_path / 'sw')
    r = _sweep(tiny, '--policies', 'fair', '--out', out,
               env={'NETSCHED_SIM_SEND_JITTER_MS': 'bad'})
    assert r.returncode == 2
    assert 'NETSCHED_SIM_SEND_JITTER_MS=bad' in r.stderr
    assert 'simulator: send_jitter_ms' in r.stderr
    assert not os.path.exists(os.path.join(out, 'runs.csv'))


def _children_of(out):
    """Processes still running a run of this sweep (read-only look)."""
    found = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                cmd = f.read().decode(errors='replace')
        except OSError:
            continue
        if out in cmd:
            found.append(int(pid))
    return found


def test_ctrl_c_keeps_finished_runs_and_leaves_nothing_running(tiny,
                                                               tmp_path):
    out = str(tmp_path / 'sw')
    args = [sys.executable, '-m', 'netsched', 'sweep', tiny, '--policies',
            'fair,sebf', '--seeds', '1-3', '-j', '1', '--out', out,
            '--no-report']
    # in a session of its own: Ctrl-C at a terminal signals the whole
    # foreground process group, which this reproduces
    p = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    was, err = interrupt_when(
        p, lambda: os.path.isfile(os.path.join(out, 'runs.csv')) and
        len(_rows(out)) >= 2, lambda: os.killpg(p.pid, signal.SIGINT))
    assert was and p.returncode == 130, err
    rows = _rows(out)
    ok = [x for x in rows if x['status'] == 'ok']
    assert 2 <= len(ok) < 6
    assert {x['status'] for x in rows} <= {'ok', 'interrupted'}
    assert _children_of(out) == []
    # the same command finishes the rest
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert '6 runs, %d already done' % len(ok) in r.stderr
    assert [x['status'] for x in _rows(out)] == ['ok'] * 6
