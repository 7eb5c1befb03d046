"""The command line's manners (issue 25): where the coflow trace is
found, `status` without --socket, --out that will not write over a
folder, a closed pipe, what run.json records, the headline metric,
compare's words, check's warning and every command's example."""
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading

import pytest

from netsched import cli
from netsched.control import channel
from netsched.emulator import runstate
from netsched.errors import ConfigError
from netsched.pipeline import experiment, run
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
TRACE2 = '2 1\n1 0 1 0 1 1:1.0\n'        # one coflow, rack 0 -> rack 1


def netsched(*args, env=None, **kw):
    return subprocess.run([sys.executable, '-m', 'netsched', *args],
                          capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env, **kw)


def trace_experiment(folder, name):
    e = folder / 'e.yaml'
    e.write_text('backend: sim\ntopology: bigswitch,2\nbig_switch: true\n'
                 'trace: %s\n' % name)
    return str(e)


# --- the trace's location ----------------------------------------------------

def test_a_missing_trace_says_where_it_looked_and_how_to_point(tmp_path):
    e = trace_experiment(tmp_path, 'absent.txt')
    env = {k: v for k, v in os.environ.items()
           if k != experiment.TRACE_ENV}
    r = netsched('check', e, env=env)
    assert r.returncode == 2 and 'Traceback' not in r.stderr
    err = r.stderr.strip()
    assert err.count('\n') == 0, err
    # beside the experiment, the setting, the checkout's data/ folder
    assert str(tmp_path / 'absent.txt') in err
    assert '$NETSCHED_TRACE (not set)' in err
    assert os.path.join(ROOT, 'data', 'absent.txt') in err
    assert '--trace PATH' in err and 'NETSCHED_TRACE to the trace file' in err


def test_the_trace_is_found_beside_the_file_then_by_the_setting(
        tmp_path, monkeypatch):
    exp_dir, store = tmp_path / 'exp', tmp_path / 'store'
    exp_dir.mkdir()
    store.mkdir()
    (store / 't.txt').write_text(TRACE2)
    e = trace_experiment(exp_dir, 't.txt')
    monkeypatch.delenv(experiment.TRACE_ENV, raising=False)
    with pytest.raises(ConfigError, match=r"no such file 't.txt'"):
        experiment.load(e)
    # the setting as a folder of traces, then as the file itself
    for setting in (store, store / 't.txt'):
        monkeypatch.setenv(experiment.TRACE_ENV, str(setting))
        assert experiment.load(e).trace.path == str(store / 't.txt')
    # a file of another name is another trace: not taken
    (store / 'other.txt').write_text(TRACE2)
    monkeypatch.setenv(experiment.TRACE_ENV, str(store / 'other.txt'))
    with pytest.raises(ConfigError, match=r'other.txt \(another file name'):
        experiment.load(e)
    # one beside the experiment wins over the setting
    (exp_dir / 't.txt').write_text(TRACE2)
    monkeypatch.setenv(experiment.TRACE_ENV, str(store))
    assert experiment.load(e).trace.path == str(exp_dir / 't.txt')
    # --trace wins over both, relative to the current folder
    monkeypatch.chdir(store)
    assert experiment.load(e, trace='other.txt').trace.path == \
        str(store / 'other.txt')


def test_shipped_trace_experiments_name_only_the_file():
    for rel in ('fb-trace.yaml', os.path.join('fidelity',
                                              'trace-slice.yaml')):
        with open(os.path.join(ROOT, 'experiments', rel)) as f:
            text = f.read()
        assert 'path: FB2010-1Hr-150-0.txt' in text, rel
        assert '..' not in re.findall(r'path: (\S+)', text)[0], rel


def test_crosscheck_takes_trace_and_stops_on_a_missing_one(tmp_path):
    e = trace_experiment(tmp_path, 'absent.txt')
    out = tmp_path / 'cc'
    r = netsched('crosscheck', e, '--trace', str(tmp_path / 'no.txt'),
                 '--out', str(out))
    assert r.returncode == 2 and 'Traceback' not in r.stderr
    assert '--trace %s: no such file' % (tmp_path / 'no.txt') in r.stderr
    assert not out.exists()


def test_a_run_folder_records_the_trace_it_found_with_its_keys(
        tmp_path, monkeypatch):
    (tmp_path / 't.txt').write_text(TRACE2)
    e = tmp_path / 'e.yaml'
    e.write_text('backend: sim\ntopology: bigswitch,2\nbig_switch: true\n'
                 'trace: {path: t.txt, skip: 0, size_scale: 3}\n')
    run.prepare(experiment.load(str(e)), str(tmp_path / 'o'))
    import yaml
    with open(tmp_path / 'o' / 'experiment.yaml') as f:
        tr = yaml.safe_load(f)['trace']
    assert tr['path'] == str(tmp_path / 't.txt') and tr['size_scale'] == 3


# --- status finds the live run -----------------------------------------------

class FakeController:
    """Answers status and decision on a Unix socket as the controller
    does (one JSON object per line)."""

    def __init__(self, path, switches):
        self.switches = switches
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn, conn.makefile('rb') as f:
                for line in f:
                    op = json.loads(line)['op']
                    reply = {'ok': True, 'ready': self.switches,
                             'switches': self.switches} if op == 'status' \
                        else {'ok': True, 'policy': None, 'links': [
                            {'link': 's1->s2', 'bps': 5e9, 'util': 0.5}]}
                    conn.sendall(channel.encode(reply))

    def close(self):
        self.sock.close()


def record(runs, run_id, pid, start):
    d = os.path.join(runs, run_id)
    os.makedirs(d)
    with open(os.path.join(d, 'state.json'), 'w') as f:
        json.dump({'run_id': run_id, 'owner_pid': pid, 'owner_start': start,
                   'bridges': [], 'interfaces': [], 'pids': [],
                   'files': []}, f)
    return os.path.join(d, runstate.SOCKET_NAME)


def test_status_finds_the_newest_live_run_from_the_records():
    # a short folder: a Unix socket's path has at most 107 bytes
    with tempfile.TemporaryDirectory(dir='/tmp') as runs:
        env = dict(os.environ, NETSCHED_RUNS_DIR=runs)
        r = netsched('status', env=env)
        assert r.returncode == 2 and 'Traceback' not in r.stderr
        assert 'no live run with a controller in %s: no run recorded' \
            % runs in r.stderr
        # a run whose owner is gone: this pid, another start time
        me = os.getpid()
        record(runs, 'r0-dead', me, -1)
        # this process (older) and a child started after it (newer)
        child = subprocess.Popen(['sleep', '60'])
        fakes = []
        try:
            fakes.append(FakeController(record(
                runs, 'r1-older', me, runstate.proc_start(me)), 3))
            fakes.append(FakeController(record(
                runs, 'r2-newer', child.pid,
                runstate.proc_start(child.pid)), 5))
            r = netsched('status', env=env)
            assert r.returncode == 0, r.stderr
            lines = r.stdout.splitlines()
            assert lines[0] == 'run r2-newer (%s); also live: r1-older ' \
                '(--run ID)' % os.path.join(runs, 'r2-newer', 'ctl.sock')
            assert lines[1] == 'controller up: 5/5 switches ready, ' \
                'policy none'
            # 5e9 bit/s = 5 Gbit/s, util 0.5 = 50%
            assert lines[2] == '  link s1->s2                  5 Gbit/s   50%'
            r = netsched('status', '--run', 'r1-older', '--json', env=env)
            assert r.returncode == 0, r.stderr
            got = json.loads(r.stdout)
            assert (got['run'], got['switches']['switches']) == \
                ('r1-older', 3)
            r = netsched('status', '--run', 'r0-dead', env=env)
            assert r.returncode == 2
            assert 'run r0-dead: not live' in r.stderr
        finally:
            for f in fakes:
                f.close()
            child.kill()
            child.wait()
        # the child gone: its run is left; the error names it
        r = netsched('status', '--run', 'r2-newer', env=env)
        assert 'run r2-newer: not live' in r.stderr


# --- --out -------------------------------------------------------------------

@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / 'tiny.yaml'
    p.write_text(TINY)
    return str(p)


def test_run_refuses_a_folder_that_is_not_empty_unless_forced(tiny,
                                                                tmp_path):
    out = tmp_path / 'out'
    out.mkdir()
    (out / 'keep.txt').write_text('mine')
    r = netsched('run', tiny, '--out', str(out))
    assert r.returncode == 2 and 'Traceback' not in r.stderr
    assert r.stderr.strip() == (
        'netsched: error: --out %s: exists and is not empty; choose another '
        'folder, or give --force to write into it' % out)
    assert os.listdir(out) == ['keep.txt']
    r = netsched('run', tiny, '--out', str(out), '--force')
    assert r.returncode == 0, r.stderr
    assert (out / 'keep.txt').read_text() == 'mine'
    with open(out / 'run.json') as f:
        rec = json.load(f)
    # the command line as typed, the checkout's commit, the versions
    assert rec['command'] == ['netsched', 'run', tiny, '--out', str(out),
                              '--force']
    assert re.fullmatch(r'[0-9a-f]{40}(-dirty)?', rec['commit'])
    import numpy
    import networkx
    assert rec['versions']['numpy'] == numpy.__version__
    assert rec['versions']['networkx'] == networkx.__version__
    assert {'python', 'matplotlib', 'netsched'} <= set(rec['versions'])
    # the simulator asks nothing of Open vSwitch
    assert 'openvswitch' not in rec['versions']
    # tiny: two jobs, the headline beside the per-job table
    assert re.search(r'^jobs: 2 done of 2, average JCT \d+\.\d{3} s$',
                     r.stdout, re.M), r.stdout


def test_an_empty_or_new_folder_is_fine_and_a_file_is_not(tmp_path):
    run.check_out(str(tmp_path))                       # empty
    run.check_out(str(tmp_path / 'new'))
    (tmp_path / 'f').write_text('x')
    with pytest.raises(ConfigError, match='exists and is not a folder'):
        run.check_out(str(tmp_path / 'f'), force=True)


def test_crosscheck_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / 'x').write_text('x')
    r = netsched('crosscheck', os.path.join(ROOT, 'experiments',
                                            'crosscheck.yaml'),
                 '--out', str(tmp_path))
    assert r.returncode == 2
    assert '--out %s: exists and is not empty' % tmp_path in r.stderr


def test_reproduce_resumes_its_own_folder_and_refuses_another(tmp_path):
    planned = [str(tmp_path / 'geryon' / 'sim')]
    cli.batch._check_study_out(str(tmp_path / 'new'), planned)
    cli.batch._check_study_out(str(tmp_path), planned)         # empty
    (tmp_path / 'notes.txt').write_text('x')
    from netsched.errors import NetschedError
    with pytest.raises(NetschedError, match='holds no reproduction'):
        cli.batch._check_study_out(str(tmp_path), planned)
    os.makedirs(planned[0])
    (tmp_path / 'geryon' / 'sim' / 'sweep.json').write_text('{}')
    cli.batch._check_study_out(str(tmp_path), planned)         # its sweep
    r = netsched('reproduce', os.path.join(
        ROOT, 'experiments', 'reproduce', 'study.yaml'), '--only', 'geryon',
        '--out', str(tmp_path / 'geryon'))
    assert r.returncode == 2 and 'holds no reproduction' in r.stderr


# --- a closed pipe -----------------------------------------------------------

def test_output_into_a_closed_pipe_ends_quietly():
    # fattree,12: about 250 KB of JSON, more than a pipe holds
    p = subprocess.Popen([sys.executable, '-m', 'netsched', 'topo',
                          'fattree,12', '--json'], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=ROOT)
    assert p.stdout.readline().strip() == b'{'
    p.stdout.close()                     # as `| head -1` does
    err = p.stderr.read().decode()
    assert p.wait(60) == 141 and err == ''


# --- run.json without git, the headline, compare, check, --help --------------

def test_commit_is_the_version_outside_a_checkout(tmp_path, monkeypatch):
    from netsched import __version__
    monkeypatch.setattr(run, 'ROOT', str(tmp_path))
    assert run.commit() == __version__


def test_stages_print_their_average_sct():
    s = {'jobs': {}, 'coflows': {}, 'links': {},
         'stages': {'g/s0': {'sct_s': 1.0}, 'g/s1': {'sct_s': 2.5}},
         'totals': {'avg_sct_s': 1.75}}     # (1.0 + 2.5) / 2
    assert run.table(s) == 'stages: average SCT 1.750 s (g/s0 1.000 s, ' \
        'g/s1 2.500 s)'


def summary(folder, backend, policy, jct, circuits=None):
    os.makedirs(folder)
    with open(os.path.join(folder, 'summary.json'), 'w') as f:
        json.dump({'format': 'netsched-summary/1', 'backend': backend,
                   'policy': policy, 'policy_params': {},
                   'circuit_scheduler': circuits,
                   'jobs': {'j': {'jct_s': jct, 'iteration_time_s': {}}},
                   'coflows': {}}, f)
    return folder


def test_compare_says_difference_between_policies_error_between_backends(
        tmp_path, capsys):
    a = summary(str(tmp_path / 'a'), 'emu', 'fair', 2.0, 'matching')
    b = summary(str(tmp_path / 'b'), 'emu', 'sebf', 2.5, 'matching')
    c = summary(str(tmp_path / 'c'), 'sim', 'fair', 1.5, 'matching')
    assert cli.main(['compare', a, b]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == 'A: %s (emu, fair, circuits matching)   ' \
        'B: %s (emu, sebf, circuits matching)' % (a, b)
    # (2.5 - 2.0) / 2.0 = +25%
    assert 'job jct_s        n=1     mean |difference|  25.0%  max ' \
        '|difference|  25.0%  mean difference +25.0%' in out
    assert not [ln for ln in out.splitlines()[1:] if 'err' in ln]
    assert cli.main(['compare', a, c]) == 0
    # (1.5 - 2.0) / 2.0 = -25%: the simulator's error against the emulator
    assert 'mean |error|  25.0%  max |error|  25.0%  mean error -25.0%' \
        in capsys.readouterr().out


def test_checks_resolution_warning_is_one_short_line():
    r = netsched('check', os.path.join(ROOT, 'experiments', 'demo.yaml'))
    assert r.returncode == 0, r.stderr
    warn = [ln for ln in r.stdout.splitlines() if 'median transfer' in ln]
    assert len(warn) == 1 and len(warn[0].split()) < 30, warn


def test_check_warns_of_streams_too_short_for_tcp():
    """The trace slice runs each flow on a connection of its own, 28
    emulated packets: check says what the verdict will; the demo's
    connections carry their jobs' every step, and it says nothing."""
    r = netsched('check', os.path.join(ROOT, 'experiments', 'fidelity',
                                       'trace-slice.yaml'))
    assert r.returncode == 0, r.stderr
    assert '  warning: 100% of the bytes go on connections of at most 70 ' \
        'emulated packets' in r.stdout
    r = netsched('check', os.path.join(ROOT, 'experiments', 'demo.yaml'))
    assert 'emulated packets, too short' not in r.stdout


def test_every_command_shows_an_example_that_parses():
    ap = cli.build_parser()
    sub = ap._subparsers._group_actions[0]
    for name, p in sub.choices.items():
        text = p.format_help()
        m = re.search(r'(?im)^examples?:\s*(.*)', text)
        assert m and 'netsched %s' % name in text[m.start(1):], (name, text)
    # the examples written here (a command may bring its own epilog)
    for name, lines in cli.EXAMPLES.items():
        assert re.match(r'(sudo )?netsched %s( |$)' % name, lines[0]), name
        for ln in lines:
            if not re.match(r'(sudo )?netsched ', ln):
                continue                  # mn, the other half of one
            argv = shlex.split(ln.split(' #')[0])
            argv = argv[argv.index('netsched') + 1:]
            assert ap.parse_args(argv).command == argv[0], ln
