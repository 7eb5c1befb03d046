"""run --force into a finished run's folder clears what it replaces
(issue 40, "Contained"): a rerun that fails or is interrupted can never
pass for the finished run in `report` and `compare`."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from netsched import cli
from netsched.errors import ConfigError
from netsched.pipeline import metrics, run
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


@pytest.fixture(scope='module')
def finished(tmp_path_factory):
    """A finished run folder (tiny on the simulator), its figures also
    as svg and pdf in figures/ (`report --format`)."""
    d = tmp_path_factory.mktemp('force')
    (d / 'tiny.yaml').write_text(TINY)
    out = str(d / 'run')
    for args in (['run', str(d / 'tiny.yaml'), '--out', out],
                 ['report', out, '--format', 'svg'],
                 ['report', out, '--format', 'pdf']):
        r = subprocess.run([sys.executable, '-m', 'netsched'] + args,
                           capture_output=True, text=True, cwd=ROOT,
                           timeout=300)
        assert r.returncode == 0, r.stderr
    return {'run': out, 'experiment': str(d / 'tiny.yaml')}


def files(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, fs in os.walk(folder) for f in fs)


def test_leftovers_are_everything_a_run_writes(finished):
    got = [os.path.relpath(p, finished['run'])
           for p in run.leftovers(finished['run'])]
    assert got[0] == 'summary.json'        # the mark of a finished run first
    assert sorted(got) == files(finished['run'])
    assert any(f.startswith('figures/') and f.endswith('.pdf') for f in got)


def _failing(exc):
    """A simulator run that starts (its log has begun) and then stops
    with ``exc``."""
    def fake(exp, log_path, say, bar=None):
        with open(log_path, 'w') as f:
            for e in ({'t': 0.0, 'ev': 'run_start', 'backend': 'sim',
                       'policy': 'fair', 'seed': 1},
                      {'t': 0.0, 'ev': 'job_start', 'job': 'small',
                       'workers': 2},
                      {'t': 0.001, 'ev': 'coflow', 'coflow': 'small-0',
                       'bytes': 1e6, 'job': 'small'}):
                f.write(json.dumps(e) + '\n')
        raise exc
    return fake


@pytest.mark.parametrize('exc, status', [
    (ConfigError('the rerun fails at t=0.001'), 2),
    (KeyboardInterrupt(), 130)], ids=['failed', 'interrupted'])
def test_a_rerun_that_stops_never_passes_for_the_finished_run(
        finished, tmp_path, capsys, monkeypatch, exc, status):
    out = str(tmp_path / 'run')
    shutil.copytree(finished['run'], out)
    with open(os.path.join(out, 'notes.txt'), 'w') as f:
        f.write('mine')
    from netsched.sim import runner
    monkeypatch.setattr(runner, 'run', _failing(exc))
    assert cli.main(['run', finished['experiment'], '--out', out,
                     '--force']) == status
    err = capsys.readouterr()
    assert 'removed the' in err.out and 'Traceback' not in err.err
    # the old run's results are gone; what is not a run's stays
    assert files(out) == ['events.jsonl', 'experiment.yaml', 'notes.txt',
                          'run.json']
    with open(os.path.join(out, 'run.json')) as f:
        assert json.load(f)['complete'] is False
    # report and compare see a run that did not finish
    s = metrics.load_summary(out)
    assert s['complete'] is False
    assert s['incomplete']['cause'] == ('failed' if status == 2
                                        else 'interrupted')
    assert cli.main(['compare', finished['run'], out]) == 0
    text = capsys.readouterr().out
    assert 'INCOMPLETE B:' in text and 'B\'s partial figures' in text
    assert cli.main(['report', out]) == 0
    assert 'INCOMPLETE' in capsys.readouterr().out
    with open(os.path.join(out, 'report.html')) as f:
        assert 'INCOMPLETE RUN' in f.read()


def test_a_bad_experiment_leaves_the_folder_as_it_was(finished, tmp_path,
                                                      capsys):
    """Refused before it starts (the file's own checks): nothing of the
    finished run is removed."""
    out = str(tmp_path / 'run')
    shutil.copytree(finished['run'], out)
    before = files(out)
    bad = tmp_path / 'bad.yaml'
    bad.write_text(TINY.replace('placement: [hl0, hr0]',
                                'placement: [hl0, nohost]'))
    assert cli.main(['run', str(bad), '--out', out, '--force']) == 2
    assert 'nohost' in capsys.readouterr().err
    assert files(out) == before


def test_clear_removes_only_a_runs_files(tmp_path):
    for name in ('summary.json', 'jct.png', 'agent-h1.log', 'mine.png',
                 'flows.csv', 'results.csv'):
        (tmp_path / name).write_text('x')
    (tmp_path / 'figures').mkdir()
    (tmp_path / 'figures' / 'jct.svg').write_text('x')
    gone = run.clear(str(tmp_path))
    assert os.path.basename(gone[0]) == 'summary.json'
    assert sorted(os.listdir(tmp_path)) == ['mine.png', 'results.csv']
