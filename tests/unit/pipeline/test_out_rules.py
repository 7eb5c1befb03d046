"""--out follows one set of rules (issue 40, "Contained"): `run`'s and
`compare`'s --out is a new folder that can be made, an empty one, or
with --force one that is not empty; `compare --out` never writes over a
run's (or a sweep's) folder; an --out under a file or where nothing can
be written is a one-line error, not a traceback, and writes nothing."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from netsched import cli
from netsched.errors import ConfigError
from netsched.pipeline import paths, report, run
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


@pytest.fixture(scope='module')
def finished(tmp_path_factory):
    """A finished run folder (tiny on the simulator)."""
    d = tmp_path_factory.mktemp('out-rules')
    (d / 'tiny.yaml').write_text(TINY)
    out = str(d / 'run')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'run',
                        str(d / 'tiny.yaml'), '--out', out],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return {'run': out, 'experiment': str(d / 'tiny.yaml')}


def main(capsys, *argv):
    """cli.main in this process: (status, stdout, stderr)."""
    rc = cli.main(list(argv))
    got = capsys.readouterr()
    return rc, got.out, got.err


def one_line_error(err, *words):
    assert 'Traceback' not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('netsched: error: '), err
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_compare_out_never_replaces_a_runs_report(finished, capsys):
    a = finished['run']
    page = os.path.join(a, 'report.html')
    before = open(page, 'rb').read()
    for force in ([], ['--force']):
        rc, out, err = main(capsys, 'compare', a, a, '--out', a, *force)
        assert rc == 2 and out == ''          # refused before a word
        one_line_error(err, '--out %s: holds a run (summary.json)' % a,
                       'choose another folder')
    assert open(page, 'rb').read() == before
    assert not os.path.exists(os.path.join(a, 'compare.json'))


def test_compare_out_refuses_a_folder_that_is_not_empty(finished, tmp_path,
                                                        capsys):
    a = finished['run']
    out = tmp_path / 'cmp'
    out.mkdir()
    (out / 'notes.txt').write_text('mine')
    rc, _, err = main(capsys, 'compare', a, a, '--out', str(out))
    assert rc == 2
    one_line_error(err, 'exists and is not empty', '--force')
    assert os.listdir(out) == ['notes.txt']
    # --force: into it, the notes kept; again into the compare folder
    for _ in range(2):
        rc, _, err = main(capsys, 'compare', a, a, '--out', str(out),
                          '--force')
        assert rc == 0, err
    assert sorted(os.listdir(out)) == ['compare.json', 'notes.txt',
                                       'report.html']


@pytest.mark.parametrize('held', ['sweep.json', 'crosscheck.json',
                                  'reproduce.json', 'events.jsonl'])
def test_compare_and_run_out_keep_off_other_results(finished, tmp_path,
                                                    capsys, held):
    out = tmp_path / 'x'
    out.mkdir()
    (out / held).write_text('{}')
    rc, _, err = main(capsys, 'compare', finished['run'], finished['run'],
                      '--out', str(out), '--force')
    assert rc == 2
    one_line_error(err, 'holds a', held)
    if held != 'events.jsonl':          # a run's own folder: --force
        rc, _, err = main(capsys, 'run', finished['experiment'], '--out',
                          str(out), '--force')
        assert rc == 2
        one_line_error(err, 'holds a', held)
    assert os.listdir(out) == [held]


@pytest.mark.parametrize('cmd', ['run', 'compare'])
def test_an_out_under_a_file_is_one_line(finished, tmp_path, capsys, cmd):
    f = tmp_path / 'afile'
    f.write_text('x')
    argv = ['run', finished['experiment']] if cmd == 'run' else \
        ['compare', finished['run'], finished['run']]
    rc, out, err = main(capsys, *argv, '--out', str(f / 'sub' / 'deeper'))
    assert rc == 2 and out == ''
    one_line_error(err, 'cannot be made: %s is a file, not a folder' % f)
    assert f.read_text() == 'x'


@pytest.mark.parametrize('cmd', ['run', 'compare'])
def test_an_out_that_cannot_be_written_is_one_line(finished, capsys, cmd):
    """/proc takes no new folder, for root too."""
    argv = ['run', finished['experiment']] if cmd == 'run' else \
        ['compare', finished['run'], finished['run']]
    rc, _, err = main(capsys, *argv, '--out', '/proc/netsched-out/x')
    assert rc == 2
    one_line_error(err, '--out /proc/netsched-out')
    assert not os.path.exists('/proc/netsched-out')


def test_report_into_a_folder_it_cannot_write_is_one_line(finished,
                                                          tmp_path, capsys):
    d = str(tmp_path / 'run')
    shutil.copytree(finished['run'], d)
    os.unlink(os.path.join(d, 'report.html'))
    os.mkdir(os.path.join(d, 'report.html.tmp'))   # unwritable, for root
    rc, _, err = main(capsys, 'report', d)
    assert rc == 2
    one_line_error(err, os.path.join(d, 'report.html'), 'cannot be written')
    assert not os.path.exists(os.path.join(d, 'report.html'))
    # the figures' folder a file: --format cannot write it
    os.rmdir(os.path.join(d, 'report.html.tmp'))
    with open(os.path.join(d, 'figures'), 'w') as f:
        f.write('x')
    rc, _, err = main(capsys, 'report', d, '--format', 'svg')
    assert rc == 2
    one_line_error(err, 'cannot be written')


def test_check_out_by_hand(tmp_path):
    paths.check_out(None)
    paths.check_out(str(tmp_path / 'new' / 'deeper'))
    paths.check_out(str(tmp_path))                       # empty
    (tmp_path / 'summary.json').write_text('{}')
    with pytest.raises(ConfigError, match='not empty'):
        paths.check_out(str(tmp_path))
    run.check_out(str(tmp_path), force=True, own='run')  # a run: its own
    with pytest.raises(ConfigError, match='holds a run'):
        paths.check_out(str(tmp_path), True, own='compare')
    with pytest.raises(ConfigError, match='NUL'):
        paths.check_out('a\0b')
    assert report.kind(str(tmp_path)) == 'run'
    assert json.loads((tmp_path / 'summary.json').read_text()) == {}
