"""Readers that never crash (issue 40): `report`, `compare` and the
sweep readers give one line naming the file and what is wrong for a
damaged run folder (a summary.json that is a list or null, a binary
events.jsonl, an object where a list belongs, ...), and a sweep marks a
run whose folder is gone as missing, not ok. Each case is a folder made
by hand from a finished run."""
import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from netsched import cli
from netsched.errors import ConfigError
from netsched.pipeline import metrics, report, shapes, sweep
from netsched.pipeline.sweep_plots import read_column
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


@pytest.fixture(scope='module')
def finished(tmp_path_factory):
    d = tmp_path_factory.mktemp('damaged')
    (d / 'tiny.yaml').write_text(TINY)
    out = str(d / 'run')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'run',
                        str(d / 'tiny.yaml'), '--out', out],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def copy(finished, tmp_path, name='run'):
    d = str(tmp_path / name)
    shutil.copytree(finished, d)
    return d


def one_line(capsys, argv, *words):
    """cli.main(argv) fails with one line naming ``words``."""
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert 'Traceback' not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('netsched: error: '), err
    assert len(lines[0]) < 400
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def edit_summary(d, change):
    p = os.path.join(d, 'summary.json')
    with open(p) as f:
        s = json.load(f)
    s = change(s)
    with open(p, 'w') as f:
        json.dump(s, f)


def _set(path, value):
    def change(s):
        node = s
        for k in path[:-1]:
            node = node[k] if not isinstance(node, dict) or k in node \
                else node[next(iter(node))]
        node[path[-1]] = value
        return s
    return change


# summary.json damaged: (what is done to it, the words of the error)
SUMMARIES = {
    'a list': (lambda s: [], 'not a netsched summary (it is [], not an '
               'object)'),
    'null': (lambda s: None, 'not a netsched summary (it is null'),
    'a number': (lambda s: 3, 'it is 3'),
    'no format': (lambda s: {k: v for k, v in s.items() if k != 'format'},
                  'not a netsched summary (format null)'),
    'jobs a list': (_set(['jobs'], [1, 2]), 'jobs: want an object, got a '
                    'list of 2'),
    'coflows null': (_set(['coflows'], None), 'coflows: want an object, '
                     'got null'),
    'a jct as text': (_set(['jobs', 'small', 'jct_s'], 'fast'),
                      "jobs.small.jct_s: want a number or null, got 'fast'"),
    'a coflow a list': (_set(['coflows', '_', ], []), 'want an object'),
    'totals a list': (_set(['totals'], []), 'totals: want an object'),
    'links a number': (_set(['links'], 7), 'links: want an object, got 7'),
    'incomplete a list': (lambda s: dict(s, complete=False, incomplete=[]),
                          'incomplete: want an object'),
    'policy_params a list': (_set(['policy_params'], [1]),
                             'policy_params: want an object, got a list'),
}


@pytest.mark.parametrize('case', list(SUMMARIES))
def test_a_damaged_summary_is_one_line_in_report_and_compare(
        finished, tmp_path, capsys, case):
    change, words = SUMMARIES[case]
    d = copy(finished, tmp_path)
    edit_summary(d, change)
    where = os.path.join(d, 'summary.json')
    one_line(capsys, ['report', d], where, words)
    one_line(capsys, ['compare', finished, d], where, words)
    one_line(capsys, ['compare', d, finished], where, words)


@pytest.mark.parametrize('data, words', [
    (b'', 'not JSON'), (b'{"format": ', 'not JSON'),
    (bytes(range(256)) * 4, 'not JSON'), (b'[' * 100000, 'not JSON')],
    ids=['empty', 'cut', 'binary', 'deep'])
def test_a_summary_that_is_not_json(finished, tmp_path, capsys, data, words):
    d = copy(finished, tmp_path)
    with open(os.path.join(d, 'summary.json'), 'wb') as f:
        f.write(data)
    one_line(capsys, ['report', d], 'summary.json', words)
    one_line(capsys, ['compare', d, finished], 'summary.json', words)


# events.jsonl damaged, a run without summary.json (report and compare
# make its summary from the log): (the log's text, the error's words)
LOGS = {
    'binary': (bytes(range(128, 256)) * 20, ':1: binary data, not a JSON '
               'line (byte 0x80)'),
    'binary later': (b'{"t": 0, "ev": "run_start"}\n\xff\xfe\n',
                     ':2: binary data'),
    'a list': (b'[1, 2]\n', ':1: an event needs t and ev'),
    'not JSON': (b'{"t": 0, "ev": "run_start"}\nhello\n{"t": 1}\n',
                 ':2: not a JSON event'),
    'a NUL': (b'{"t": 0, "ev": "run_start"}\n\0\0\0\n', ':2: not a JSON'),
    'a job a list': (b'{"t": 0, "ev": "job_start", "job": [1]}\n',
                     ":1: a 'job_start' event: job: want a name"),
    't as text': (b'{"t": "soon", "ev": "job_end", "job": "j"}\n',
                  ":1: a 'job_end' event: t: want a number, got 'soon'"),
    'util a list': (b'{"t": 0, "ev": "links", "dt": 0.1, "util": [1]}\n',
                    ":1: a 'links' event: util: want an object"),
    'a circuit of two': (b'{"t": 0, "ev": "circuits", "step": "add", '
                         b'"circuits": [["p0", "t0"]]}\n',
                         'circuits[0]: want a list of 3 items'),
    'start as text': (b'{"t": 1, "ev": "flow", "id": 1, "coflow": "c", '
                      b'"src": "a", "dst": "b", "bytes": 1, '
                      b'"start": "soon"}\n', ":1: a 'flow' event: start"),
    'a grid of one': (b'{"t": 0, "ev": "shifts", "shifts": {"j": [1]}}\n',
                      'shifts.j: want a list of 3 or more items'),
    'a fault a list': (b'{"t": 0, "ev": "fault", "what": "down", '
                       b'"kind": "link", "target": ["a"], "links": []}\n',
                       'target: want a name'),
    'writes by name': (b'{"t": 0, "ev": "writes", "host": "h", '
                       b'"wrote": {"x": 1.0}}\n', 'wrote.x: want a flow id'),
}


@pytest.mark.parametrize('case', list(LOGS))
def test_a_damaged_log_is_one_line_in_report_and_compare(
        finished, tmp_path, capsys, case):
    data, words = LOGS[case]
    d = copy(finished, tmp_path)
    os.unlink(os.path.join(d, 'summary.json'))     # made from the log
    with open(os.path.join(d, 'events.jsonl'), 'wb') as f:
        f.write(data)
    where = os.path.join(d, 'events.jsonl')
    one_line(capsys, ['report', d], where, words)
    one_line(capsys, ['compare', finished, d], where, words)


def test_a_damaged_log_beside_its_summary_is_named_by_report(
        finished, tmp_path, capsys):
    """The page's figures come from the log: its damage is named even
    where summary.json is whole."""
    d = copy(finished, tmp_path)
    with open(os.path.join(d, 'events.jsonl'), 'a') as f:
        f.write('{"t": 9, "ev": "iter", "job": "small", "iter": [0]}\n')
    one_line(capsys, ['report', d], 'events.jsonl:', "'iter' event: iter")
    # compare reads the summaries only: the same figures as before
    assert cli.main(['compare', finished, d]) == 0
    capsys.readouterr()


def test_a_finished_runs_own_files_pass_every_check(finished):
    assert metrics.check_log(os.path.join(finished, 'events.jsonl')) is None
    s = metrics.load_summary(finished)
    shapes.check(s, shapes.SUMMARY_PAGE, finished)
    assert metrics.damage(finished) is None


def test_a_damaged_run_record_is_left_aside(finished, tmp_path, capsys):
    """run.json only adds to the log: a list, or a meta or stopped of
    another shape, is as no record (the page says what the log says)."""
    for record in ([], {'meta': [1]}, {'stopped': 'x', 'meta': {
            'seed': 'one', 'topology': 5}}):
        d = copy(finished, tmp_path, 'r%d' % len(os.listdir(tmp_path)))
        os.unlink(os.path.join(d, 'summary.json'))
        with open(os.path.join(d, 'run.json'), 'w') as f:
            json.dump(record, f)
        with open(os.path.join(d, 'experiment.yaml'), 'w') as f:
            f.write('name: [1, 2]\nseed: {a: 1}\ntopology: [x]\n')
        assert cli.main(['report', d]) == 0
        s = metrics.load_summary(d)
        assert s['seed'] == 1                   # the log's run_start
        assert s['topology'] is None and s['experiment'] == \
            os.path.basename(d)
    capsys.readouterr()


# --- sweeps ------------------------------------------------------------------

def make_sweep(finished, root, rows, runs=('sim-fair-s1', 'sim-fair-s2')):
    os.makedirs(root)
    with open(os.path.join(root, 'sweep.json'), 'w') as f:
        json.dump({'experiment': '/x/tiny.yaml', 'policies': ['fair'],
                   'seeds': [1, 2], 'sets': [], 'backends': ['sim'],
                   'baseline': 'fair'}, f)
    with open(os.path.join(root, 'runs.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['run', 'backend', 'policy', 'seed', 'status', 'error',
                    'avg_jct_s'])
        w.writerows(rows)
    for name in runs:
        shutil.copytree(finished, os.path.join(root, name))
    return root


OK_ROWS = [['sim-fair-s1', 'sim', 'fair', 1, 'ok', '', 1.5],
           ['sim-fair-s2', 'sim', 'fair', 2, 'ok', '', 1.6]]


def test_a_deleted_run_is_missing_not_ok(finished, tmp_path, capsys):
    root = make_sweep(finished, str(tmp_path / 'sweep'), OK_ROWS)
    shutil.rmtree(os.path.join(root, 'sim-fair-s2'))
    rows = sweep.read_rows(os.path.join(root, 'runs.csv'), root)
    assert [r['status'] for r in rows] == ['ok', 'missing']
    assert 'sim-fair-s2/summary.json is gone' in rows[1]['error']
    # without the folder, runs.csv's rows as written
    assert [r['status'] for r in sweep.read_rows(
        os.path.join(root, 'runs.csv'))] == ['ok', 'ok']
    assert cli.main(['report', root]) == 0
    capsys.readouterr()
    with open(os.path.join(root, 'report.html')) as f:
        page = f.read()
    assert '1 runs ok, 0 failed, 0 interrupted, 1 missing' in page
    assert '<tr class="missing">' in page
    # a resumed sweep runs it again
    t = sweep.Table(os.path.join(root, 'runs.csv'))
    spec = sweep.RunSpec('sim-fair-s2', '/x/tiny.yaml', 'sim', 'fair', 2, ())
    assert not t.done(spec, root)


@pytest.mark.parametrize('text, words', [
    ('[]', 'sweep.json: not a sweep definition (it is [], not an object)'),
    ('null', 'it is null'),
    ('{"experiment": "/x/tiny.yaml"}', 'sweep.json: policies: missing'),
    ('{"experiment": 5, "policies": [], "seeds": [], "backends": []}',
     'experiment: want text, got 5'),
    ('{"experiment": "e", "policies": ["fair"], "seeds": [1], '
     '"backends": ["sim"], "sets": [["k"]]}', 'sets[0]: want a list of 2'),
    ('\x00\xff', 'sweep.json is not JSON')],
    ids=['list', 'null', 'no policies', 'experiment 5', 'set of one',
         'binary'])
def test_a_damaged_sweep_definition(finished, tmp_path, capsys, text, words):
    root = make_sweep(finished, str(tmp_path / 'sweep'), OK_ROWS)
    with open(os.path.join(root, 'sweep.json'), 'w',
              encoding='latin-1') as f:
        f.write(text)
    one_line(capsys, ['report', root], words)


@pytest.mark.parametrize('rows, words', [
    ([['../../etc', 'sim', 'fair', 1, 'ok', '', 1.5]],
     "runs.csv:2: run: not a run folder name: '../../etc'"),
    ([['/etc', 'sim', 'fair', 1, 'ok', '', 1.5]], "'/etc'"),
    ([['', 'sim', 'fair', 1, 'ok', '', 1.5]], 'not a run folder name'),
    ([['sim-fair-s1', 'sim', 'fair', 'one', 'ok', '', 1.5]],
     "runs.csv:2: seed: not a seed: 'one'"),
    ([OK_ROWS[0], ['sim-fair-s2', 'sim', 'fair', 2, 'ok', '', 'fast']],
     "runs.csv:3: avg_jct_s: not a number: 'fast'"),
    ([OK_ROWS[0] + ['extra']], 'runs.csv:2: more fields than the header')],
    ids=['dotdot', 'absolute', 'empty', 'seed', 'metric', 'extra'])
def test_a_damaged_runs_csv(finished, tmp_path, capsys, rows, words):
    root = make_sweep(finished, str(tmp_path / 'sweep'), rows)
    one_line(capsys, ['report', root], words)
    # the sweep's own table (a resume) reads it the same way
    if 'folder name' in words or 'more fields' in words:
        with pytest.raises(ConfigError, match='runs.csv:2'):
            sweep.Table(os.path.join(root, 'runs.csv'))


def test_a_binary_runs_csv(finished, tmp_path, capsys):
    root = make_sweep(finished, str(tmp_path / 'sweep'), OK_ROWS)
    with open(os.path.join(root, 'runs.csv'), 'wb') as f:
        f.write(b'run,status\n\xff\xfe\x00\n')
    one_line(capsys, ['report', root], 'runs.csv')


def test_a_runs_damaged_csv_in_a_sweep_is_named(finished, tmp_path,
                                                capsys):
    """The sweep's CDFs read each run's jobs.csv and coflows.csv."""
    root = make_sweep(finished, str(tmp_path / 'sweep'), OK_ROWS)
    p = os.path.join(root, 'sim-fair-s2', 'jobs.csv')
    with open(p, 'a') as f:
        f.write('x,0,soon,1,1,1,1\n')
    one_line(capsys, ['report', root], p + ':', 'jct_s: not a number')
    assert read_column(os.path.join(root, 'nothing'), 'jobs.csv',
                       'jct_s') == []


@pytest.mark.parametrize('record, words', [
    ([], 'compare.json: not a compare record (it is []'),
    ({'a': 'x', 'b': 'y', 'a_label': 'l', 'b_label': 'l', 'rows': [[1]]},
     'rows[0]: want a list of 5 items'),
    ({'a': 'x', 'b': 'y', 'a_label': 'l', 'b_label': 'l',
      'rows': [['job jct_s', 'j', 'a', 1.0, 0.1]]},
     'rows[0][2]: want a number or null'),
    ({'a': 'x', 'b': 'y', 'a_label': 'l', 'b_label': 'l', 'rows': [],
      'incomplete': {'A': 3}}, 'incomplete.A: want text')],
    ids=['list', 'short row', 'text value', 'incomplete'])
def test_a_damaged_compare_folder(tmp_path, capsys, record, words):
    with open(tmp_path / 'compare.json', 'w') as f:
        json.dump(record, f)
    one_line(capsys, ['report', str(tmp_path)], words)


def test_a_sweep_of_good_runs_still_reports(finished, tmp_path):
    root = make_sweep(finished, str(tmp_path / 'sweep'), OK_ROWS)
    path = report.write(root)
    with open(path) as f:
        assert '2 runs ok, 0 failed, 0 interrupted.' in f.read()


def test_report_of_a_file_or_nothing_says_which(tmp_path, capsys):
    f = tmp_path / 'afile'
    f.write_text('x')
    for path, words in ((str(f), 'a file, not a folder'),
                        (str(tmp_path / 'gone'), 'no such folder')):
        assert cli.main(['report', path]) == 2
        err = capsys.readouterr().err
        assert err == 'netsched: error: %s: %s\n' % (path, words)
