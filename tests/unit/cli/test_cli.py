import os
import subprocess
import sys

CROSSCHECK = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))), 'experiments',
    'crosscheck.yaml')


def run(*args):
    return subprocess.run([sys.executable, '-m', 'netsched', *args],
                          capture_output=True, text=True, timeout=60)


def test_bad_topology_is_one_clear_line():
    r = run('topo', 'fattree,3')
    assert r.returncode == 2
    assert r.stderr.strip() == ('netsched: error: fat_tree: k must be an even '
                                'integer in 2..254, got 3')
    assert 'Traceback' not in r.stderr


def test_topo_summary():
    r = run('topo', 'fattree,4')
    assert r.returncode == 0
    assert '16 host' in r.stdout and '4 core' in r.stdout


def test_selftest_rejects_bad_rate_before_touching_anything():
    r = run('selftest', '--link-mbps', '5000')
    assert r.returncode == 2 and 'link_mbps must be in' in r.stderr


def test_attach_errors_are_clear_and_write_nothing(tmp_path):
    out = tmp_path / 'out'
    r = run('run', CROSSCHECK, '--attach',
            str(tmp_path / 'no.sock'), '--out', str(out))
    assert r.returncode == 2 and 'cannot reach the controller' in r.stderr
    r = run('run', CROSSCHECK, '--backend', 'sim',
            '--attach', str(tmp_path / 'no.sock'), '--out', str(out))
    assert r.returncode == 2
    assert '--attach runs on the emulator, not on backend sim' in r.stderr
    assert 'Traceback' not in r.stderr and not out.exists()


def test_status_without_a_controller_is_one_clear_line(tmp_path):
    r = run('status', '--socket', str(tmp_path / 'ctl.sock'))
    assert r.returncode == 2
    assert r.stderr.startswith('netsched: error: cannot reach the controller')


def test_check_warns_where_the_emulator_cannot_resolve_the_policy():
    exp = CROSSCHECK
    r = run('check', exp, '--policy', 'aalo')
    assert r.returncode == 0, r.stderr
    assert 'emulated packet time 3.60 ms' in r.stdout
    # an emulator experiment raises Aalo's 10 MB first queue to 2
    # windows at scale 500: 2 x 10 x 9000 B x 500 = 90e6 B = 85.8 MB
    assert 'aalo: first_mb raised from 10 to 85.8 MB' in r.stdout
    assert 'warning' not in r.stdout
    # half a window (22.5 KB emulated) is below what TCP resolves
    r = run('check', exp, '--policy', 'aalo', '--set',
            'threshold_floor_windows=0.5')
    assert 'warning: aalo decides on 45000 emulated bytes' in r.stdout
    r = run('check', exp, '--policy', 'sebf')
    assert r.returncode == 0 and 'warning' not in r.stdout


def test_check_says_when_a_seed_policy_has_nothing_to_work_on():
    # crosscheck.yaml: two ring jobs, no tuning group
    r = run('check', CROSSCHECK, '--policy', 'geryon')
    assert r.returncode == 0, r.stderr
    assert 'warning: geryon schedules parameter-server traffic: no job ' \
        'here is ps' in r.stdout
    r = run('check', CROSSCHECK, '--policy', 'beamer')
    assert 'warning: beamer orders tuning stages: no job here is in a ' \
        'tuning group' in r.stdout
    r = run('check', CROSSCHECK, '--policy', 'jpas:key=progress')
    assert r.returncode == 0 and 'warning' not in r.stdout
    r = run('check', CROSSCHECK, '--policy', 'jpas:key=fastest')
    assert r.returncode == 2
    assert "key must be one of maif, progress, got 'fastest'" in r.stderr
    assert 'Traceback' not in r.stderr
