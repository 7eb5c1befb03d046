"""An interrupted run keeps what it measured: a simulator run killed by
SIGKILL, one stopped by SIGINT and a log whose last line was cut
mid-write each give, from their event log, the coflows, iterations and
jobs that finished, marked incomplete with the cause, in the summary,
in `netsched report` and in `netsched compare`; a sweep or a study
whose runs did not all finish shows them as incomplete.

The runs stop at a point the test chooses: the child process wraps the
event log's writer, and on the N-th ``coflow_end`` it flushes the log
and sends itself the signal, so the log ends exactly there.

The tiny experiment's log (tests/support/tiny.py TINY, seed 1), in order,
leaving out flows and link samples::

    job_start small (2 workers); coflow small/0 (t=0)
    job_start large (2 workers); coflow large/0 (t=0.01)
    iter small worker 1 iter 0; coflow small/1 (arrives)
    coflow_end small/0                          <- the 1st coflow_end
    iter small worker 0 iter 0
    iter small worker 0 iter 1
    coflow_end small/1                          <- the 2nd
    iter small worker 1 iter 1; job_end small
    iter large worker 1 iter 0
    coflow_end large/0                          <- the 3rd
    iter large worker 0 iter 0; job_end large; run_end
"""
import contextlib
import csv
import io
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from netsched import cli
from netsched import events
from netsched.pipeline import experiment, metrics, report, reproduce, run
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

# a `netsched run` that stops itself with a signal right after the N-th
# coflow_end reaches its log
STOPPER = textwrap.dedent('''
    import os, signal, sys
    from netsched import cli, events
    n, sig = int(sys.argv[1]), getattr(signal, sys.argv[2])
    write, seen = events.EventLog.write, []

    def stop_at(self, t, ev, **fields):
        write(self, t, ev, **fields)
        if ev == 'coflow_end':
            seen.append(t)
            if len(seen) == n:
                self.flush()
                os.kill(os.getpid(), sig)
    events.EventLog.write = stop_at
    sys.exit(cli.main(sys.argv[3:]))
    ''')


def _stopped_run(folder, n, sig):
    """Run the tiny experiment into ``folder`` in a child process that
    stops itself with ``sig`` after the ``n``-th coflow_end; returns the
    child (exited)."""
    exp = os.path.join(os.path.dirname(folder), 'tiny.yaml')
    with open(exp, 'w') as f:
        f.write(TINY)
    p = subprocess.run([sys.executable, '-c', STOPPER, str(n), sig, 'run',
                        exp, '--out', folder], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    p.folder = folder
    return p


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """The tiny run three ways: finished (in this process, no figures),
    killed by SIGKILL after the 2nd coflow_end, stopped by SIGINT after
    the 3rd."""
    d = tmp_path_factory.mktemp('interrupted')
    exp = experiment.load(_write(d / 'tiny.yaml', TINY))
    full, _ = run.execute(exp, str(d / 'full'), say=lambda *_: None)
    return {'full': full,
            'killed': _stopped_run(str(d / 'killed'), 2, 'SIGKILL'),
            'sigint': _stopped_run(str(d / 'sigint'), 3, 'SIGINT')}


def _write(path, text):
    path.write_text(text)
    return str(path)


def _cli(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = cli.main(list(argv))
    return rc, out.getvalue()


def _full(runs):
    return metrics.load_summary(runs['full'])


# --- what a stopped run leaves ---------------------------------------------

def test_a_killed_run_leaves_its_log_and_a_record_that_says_running(runs):
    k = runs['killed']
    assert k.returncode == -signal.SIGKILL
    files = set(os.listdir(k.folder))
    assert {'events.jsonl', 'run.json', 'experiment.yaml'} <= files
    assert 'summary.json' not in files        # only a finished run has one
    with open(os.path.join(k.folder, 'run.json')) as f:
        rec = json.load(f)
    assert rec['status'] == 'running' and rec['host'] == platform.node()
    assert rec['meta']['experiment'] == 'tiny'
    # the child is gone: the record's process is not alive
    assert metrics.process_alive(rec) is False
    evs = events.read(os.path.join(k.folder, 'events.jsonl'))
    assert evs[-1]['ev'] == 'coflow_end' and evs[-1]['coflow'] == 'small/1'


def test_a_sigint_run_ends_its_log_and_record_with_the_cause(runs):
    s = runs['sigint']
    assert s.returncode == 130, s.stderr
    assert 'interrupted (SIGINT)' in s.stdout
    assert not os.path.exists(os.path.join(s.folder, 'summary.json'))
    evs = events.read(os.path.join(s.folder, 'events.jsonl'))
    assert evs[-1]['ev'] == 'run_incomplete'
    assert evs[-1]['cause'] == 'interrupted'
    # stamped with the time of the last event before it: large/0's end
    assert evs[-1]['t'] == evs[-2]['t'] and evs[-2]['coflow'] == 'large/0'
    with open(os.path.join(s.folder, 'run.json')) as f:
        rec = json.load(f)
    assert rec['complete'] is False
    assert rec['stopped'] == {'cause': 'interrupted',
                              'reason': 'interrupted (SIGINT)'}


# --- the figures -----------------------------------------------------------

def test_killed_counts_what_finished_and_drops_the_cut_iteration(runs):
    s = metrics.load_summary(runs['killed'].folder)
    full = _full(runs)
    assert s['complete'] is False
    inc = s['incomplete']
    assert inc['cause'] == 'killed' and 'is gone' in inc['reason']
    assert inc['last_event'] == 'coflow_end' and inc['cut_line'] is None
    # stopped at small/1's end: small/0 ended, small/1 ended, large/0 not
    assert inc['stopped_s'] == pytest.approx(
        full['jobs']['small']['jct_s'])        # small/1 ends small's run
    done = {c for c, r in s['coflows'].items() if r['cct_s'] is not None}
    assert done == {'small/0', 'small/1'}
    for c in done:                             # as in the finished run
        assert s['coflows'][c]['cct_s'] == full['coflows'][c]['cct_s']
    assert s['coflows']['large/0']['cct_s'] is None
    # small's iteration 0 was reported by both workers, iteration 1 by
    # worker 0 only (worker 1's iter event comes after small/1's end): 1
    # iteration; its time, from the arrival (0) to its end, as finished
    small = s['jobs']['small']
    assert small['finished'] is False and small['jct_s'] is None
    assert small['iterations'] == 1
    assert small['iteration_time_s']['mean'] == pytest.approx(
        s['coflows']['small/0']['cct_s'])      # both end at t=0.1536
    assert s['jobs']['large']['iterations'] == 0
    tot = s['totals']
    assert (tot['jobs_done'], tot['jobs_unfinished']) == (0, 2)
    assert (tot['coflows_done'], tot['coflows_unfinished']) == (2, 1)
    assert tot['iterations_done'] == 1
    # small's iteration counts for small, but a job cut off is not averaged
    assert tot['avg_iteration_s'] is None and tot['avg_jct_s'] is None
    assert tot['avg_cct_s'] == pytest.approx(
        (full['coflows']['small/0']['cct_s']
         + full['coflows']['small/1']['cct_s']) / 2)


def test_sigint_counts_the_finished_job_alone(runs):
    s = metrics.load_summary(runs['sigint'].folder)
    full = _full(runs)
    assert s['incomplete']['cause'] == 'interrupted'
    assert s['incomplete']['reason'] == 'interrupted (SIGINT)'
    assert s['incomplete']['last_event'] == 'coflow_end'
    # small finished (job_end before large/0's end), large did not: its
    # only iteration has worker 1's iter event and not worker 0's
    assert s['jobs']['small']['finished'] is True
    assert s['jobs']['small']['jct_s'] == full['jobs']['small']['jct_s']
    assert s['jobs']['small']['iterations'] == 2
    assert s['jobs']['large']['finished'] is False
    assert s['jobs']['large']['iterations'] == 0
    tot = s['totals']
    assert (tot['jobs_done'], tot['coflows_done'], tot['coflows_unfinished'],
            tot['iterations_done']) == (1, 3, 0, 2)
    # the totals are small's: large is left out, not averaged in as slow
    assert tot['avg_jct_s'] == full['jobs']['small']['jct_s']
    assert tot['avg_iteration_s'] == pytest.approx(
        full['jobs']['small']['iteration_time_s']['mean'])
    assert s['incomplete']['unfinished_jobs'] == ['large']


def test_a_cut_last_line_is_left_out_and_named(runs, tmp_path):
    d = str(tmp_path / 'cut')
    shutil.copytree(runs['killed'].folder, d)
    log = os.path.join(d, 'events.jsonl')
    with open(log) as f:
        n = sum(1 for _ in f)
    with open(log, 'a') as f:                 # the next event, half written
        f.write('{"job":"small","worker":1,"it')
    cut = []
    assert len(events.read(log, cut)) == n and cut == [n + 1]
    s = metrics.load_summary(d)
    assert s['incomplete']['cut_line'] == n + 1
    assert s['totals'] == metrics.load_summary(runs['killed'].folder)[
        'totals']
    assert 'line %d cut mid-write, left out' % (n + 1) in \
        metrics.incomplete_text(s)


def test_a_finished_run_is_as_it_was(runs):
    """No completeness keys where the run finished: summary.json keeps
    its format (a finished sim run's file is byte-identical)."""
    s = _full(runs)
    assert 'complete' not in s and 'incomplete' not in s
    assert all('finished' not in j for j in s['jobs'].values())
    assert 'iterations_done' not in s['totals']
    assert metrics.stop_state(metrics.from_log(
        os.path.join(runs['full'], 'events.jsonl'))) is None
    with open(os.path.join(runs['full'], 'run.json')) as f:
        rec = json.load(f)
    assert 'status' not in rec and 'complete' not in rec


# --- the cause -------------------------------------------------------------

def _m(*evs):
    return metrics.compute([dict(e, t=0.0) for e in evs])


def test_the_cause_from_the_log_and_the_record():
    start = {'ev': 'run_start'}
    assert metrics.stop_state(_m(start, {'ev': 'run_end'})) is None
    # the emulator's timeout: a run_incomplete before its run_end
    st = metrics.stop_state(_m(start, {'ev': 'run_incomplete',
                                       'why': 'timeout_s 60 reached'},
                               {'ev': 'run_end'}))
    assert st['cause'] == 'timeout'
    me = {'status': 'running', 'pid': os.getpid(), 'host': platform.node(),
          'pid_start': metrics.process_start(os.getpid())}
    assert metrics.stop_state(_m(start), me)['cause'] == 'running'
    # the same pid, started at another time: a later process, not the run
    other = dict(me, pid_start=me['pid_start'] - 1)
    assert metrics.stop_state(_m(start), other)['cause'] == 'killed'
    elsewhere = dict(me, host=platform.node() + '-not')
    assert 'not on this machine' in metrics.stop_state(
        _m(start), elsewhere)['reason']
    assert 'no run record' in metrics.stop_state(_m(start))['reason']


def test_the_causes_a_run_names():
    assert run.stop_cause(KeyboardInterrupt()) == (
        'interrupted', 'interrupted (SIGINT)')
    assert run.stop_cause(SystemExit(128 + signal.SIGTERM)) == (
        'terminated', 'terminated (SIGTERM)')
    assert run.stop_cause(ValueError('x'))[0] == 'failed'


# --- what the commands say -------------------------------------------------

def test_report_on_a_killed_run_says_incomplete(runs, tmp_path):
    d = str(tmp_path / 'killed')
    shutil.copytree(runs['killed'].folder, d)
    assert report.kind(d) == 'run'
    rc, out = _cli('report', d)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith('INCOMPLETE: killed')
    assert 'finished: 0 of the 2 jobs and 2 of the 3 coflows it began, ' \
        '1 iterations' in lines[0]
    assert any(x.startswith('small') and 'unfinished' in x for x in lines)
    with open(os.path.join(d, 'report.html')) as f:
        html = f.read()
    assert 'INCOMPLETE RUN.' in html and 'tiny (sim, policy fair), ' \
        'INCOMPLETE' in html
    assert html.count('>unfinished</strong>') == 2
    assert not os.path.exists(os.path.join(d, 'summary.json'))


def test_compare_flags_the_partial_figures(runs, tmp_path):
    out = str(tmp_path / 'cmp')
    rc, text = _cli('compare', runs['full'], runs['sigint'].folder, '--out',
                    out)
    assert rc == 0
    lines = text.splitlines()
    assert lines[1].startswith('INCOMPLETE B: interrupted (SIGINT)')
    stats = [x for x in lines if ' n=' in x]
    # coflows: all 3 in both, equal; jobs: small only (large unfinished)
    assert stats and all(x.endswith('[partial: B incomplete]')
                         for x in stats)
    assert any(x.startswith('coflow cct_s     n=3 ') for x in stats)
    assert any(x.startswith('job jct_s        n=1 ') and '(1 only in one '
               'run)' in x for x in stats)
    assert lines[-2].startswith('INCOMPLETE: these errors compare B\'s '
                                'partial figures')
    with open(os.path.join(out, 'compare.json')) as f:
        rep = json.load(f)
    assert list(rep['incomplete']) == ['B']
    assert ['job iter_mean_s', 'large',
            _full(runs)['jobs']['large']['iteration_time_s']['mean'], None,
            None] in rep['rows']
    with open(os.path.join(out, 'report.html')) as f:
        assert 'B IS INCOMPLETE.' in f.read()
    # two finished runs: nothing flagged
    rc, text = _cli('compare', runs['full'], runs['full'])
    assert 'INCOMPLETE' not in text and 'partial' not in text


# --- sweeps and studies ----------------------------------------------------

def _sweep(root, runs, rows):
    """A sweep folder by hand: its sweep.json, runs.csv's ``rows`` and
    the run folders copied from ``runs``."""
    os.makedirs(root)
    with open(os.path.join(root, 'sweep.json'), 'w') as f:
        json.dump({'experiment': '/x/tiny.yaml', 'policies': ['fair'],
                   'seeds': [1, 2, 3], 'sets': [], 'backends': ['sim'],
                   'baseline': 'fair'}, f)
    with open(os.path.join(root, 'runs.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['run', 'backend', 'policy', 'seed', 'status', 'error'])
        w.writerows(rows)
    for name, src in (('sim-fair-s1', runs['full']),
                      ('sim-fair-s2', runs['sigint'].folder),
                      ('sim-fair-s3', runs['killed'].folder)):
        shutil.copytree(src, os.path.join(root, name))


def test_a_sweep_shows_its_runs_that_did_not_finish(runs, tmp_path):
    root = str(tmp_path / 'sweep')
    # s3 has no row: the sweep itself was killed while it ran
    _sweep(root, runs, [['sim-fair-s1', 'sim', 'fair', 1, 'ok', ''],
                        ['sim-fair-s2', 'sim', 'fair', 2, 'interrupted',
                         'interrupted by the sweep']])
    notes = []
    report.write(root, notes=notes)
    assert [x.split(':')[0] for x in notes] == [
        'INCOMPLETE run sim-fair-s2', 'INCOMPLETE run sim-fair-s3']
    assert 'interrupted (SIGINT)' in notes[0] and 'killed' in notes[1]
    with open(os.path.join(root, 'report.html')) as f:
        html = f.read()
    assert '2 RUNS INCOMPLETE' in html
    assert '1 runs ok, 0 failed, 2 interrupted' in html
    assert 'not in runs.csv: the sweep stopped while this run went on; ' \
        'INCOMPLETE: killed' in html


def test_a_study_names_the_runs_it_does_not_count(runs, tmp_path):
    from tests.unit.pipeline.test_reproduce import _study
    st = reproduce.load(_study(tmp_path))
    out = str(tmp_path / 'out')
    root = reproduce.folder(out, st['studies'][0], 'sim')
    _sweep(root, runs, [['sim-fair-s1', 'sim', 'fair', 1, 'ok', ''],
                        ['sim-fair-s2', 'sim', 'fair', 2, 'interrupted',
                         '']])
    left = reproduce.unfinished(st, out)
    assert [r['run'] for r in left] == ['sim-fair-s2', 'sim-fair-s3']
    reproduce.write(st, out)
    report.write(out)
    with open(os.path.join(out, 'reproduction.md')) as f:
        md = f.read()
    assert 'Not counted: 2 run(s) did not finish (tiny/sim/sim-fair-s2 ' \
        'interrupted, tiny/sim/sim-fair-s3 interrupted)' in md
    with open(os.path.join(out, 'report.html')) as f:
        assert '2 RUNS DID NOT FINISH' in f.read()


def test_the_simulators_timeout_marks_the_run_incomplete(tmp_path):
    # as the emulator's: the resnet ring's iterations take 0.1425 s, so
    # timeout_s 0.5 stops it in its 4th with work left
    from netsched.pipeline import experiment, run
    d = {'topology': 'fattree,4', 'backend': 'sim', 'timeout_s': 0.5,
         'jobs': [{'id': 'a', 'model': 'resnet50', 'pattern': 'ring',
                   'workers': 4, 'iterations': 10}]}
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'))
    _, s = run.execute(exp, str(tmp_path / 'out'), say=lambda m: None)
    assert s['complete'] is False and s['incomplete']['cause'] == 'timeout'
    assert s['jobs']['a']['finished'] is False
    assert s['jobs']['a']['iterations'] == 3
    # a timeout the run does not reach changes nothing
    d['timeout_s'] = 100
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'))
    _, s = run.execute(exp, str(tmp_path / 'out2'), say=lambda m: None)
    assert 'complete' not in s and s['jobs']['a']['iterations'] == 10
