import subprocess
import sys


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
