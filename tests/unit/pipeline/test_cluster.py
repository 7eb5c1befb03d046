"""``netsched sweep --cluster``: a real Dask scheduler and two workers on
loopback, each a subprocess of this test, running a small simulated sweep
through the CLI as a user would."""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

try:
    import distributed
except ImportError:
    # under CI a missing prerequisite is a failure, never a silent skip
    if os.environ.get('CI') == 'true':
        raise
    pytest.skip('needs distributed (pip install "netsched[cluster]")',
                allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
DEMO = os.path.join(ROOT, 'experiments', 'demo.yaml')


def netsched(*args, **kw):
    return subprocess.run([sys.executable, '-m', 'netsched', *args],
                          capture_output=True, text=True, cwd=ROOT, **kw)


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    """(scheduler address, the two workers' addresses)."""
    tmp = tmp_path_factory.mktemp('cluster')
    sched_file = str(tmp / 'scheduler.json')
    procs = []
    # no nanny: each worker is exactly the process we started, so
    # terminating it by its Popen leaves nothing behind
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                 stdin=subprocess.DEVNULL, cwd=ROOT)
    try:
        procs.append(subprocess.Popen(
            [sys.executable, '-m', 'distributed.cli.dask_scheduler',
             '--host', '127.0.0.1', '--port', '0', '--no-dashboard',
             '--scheduler-file', sched_file], **quiet))
        deadline = time.monotonic() + 60
        while not os.path.isfile(sched_file):
            assert procs[0].poll() is None, 'the scheduler exited'
            assert time.monotonic() < deadline, 'no scheduler file'
            time.sleep(0.1)
        for i in range(2):
            procs.append(subprocess.Popen(
                [sys.executable, '-m', 'distributed.cli.dask_worker',
                 '--scheduler-file', sched_file, '--host', '127.0.0.1',
                 '--nworkers', '1', '--nthreads', '1', '--no-nanny',
                 '--resources', 'emulator=1', '--no-dashboard',
                 '--local-directory', str(tmp / ('w%d' % i))], **quiet))
        with open(sched_file) as f:
            address = json.load(f)['address']
        with distributed.Client(address, timeout=30,
                                set_as_default=False) as c:
            c.wait_for_workers(2, timeout=60)
            workers = set(c.scheduler_info(n_workers=-1)['workers'])
        yield address, workers
    finally:
        _stop(procs[1:])
        _stop(procs[:1])


def test_sweep_runs_on_both_workers_like_a_local_run(cluster, tmp_path):
    from tests.support.tiny import TINY
    address, workers = cluster
    exp = tmp_path / 'tiny.yaml'
    exp.write_text(TINY)
    out = tmp_path / 'sw'
    local = tmp_path / 'local'
    # the local reference run alongside the sweep (the simulator is
    # deterministic, so the two must agree)
    ref = subprocess.Popen(
        [sys.executable, '-m', 'netsched', 'run', str(exp), '--backend',
         'sim', '--policy', 'sebf', '--seed', '2', '--out', str(local)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        cwd=ROOT)
    try:
        r = netsched('sweep', str(exp), '--backend', 'sim', '--policies',
                     'fair,sebf', '--seeds', '1-2', '--cluster', address,
                     '--out', str(out), '--no-report', timeout=300)
        assert ref.wait(120) == 0, ref.stderr.read()
    finally:
        if ref.poll() is None:
            ref.kill()
            ref.wait()
    assert r.returncode == 0, r.stdout + r.stderr
    from netsched.pipeline import sweep
    rows = sweep.read_rows(str(out / 'runs.csv'))
    assert len(rows) == 4
    assert {r['status'] for r in rows} == {'ok'}, rows
    served = set()
    for row in rows:
        run = out / row['run']
        assert (run / 'summary.json').is_file()
        assert (run / 'events.jsonl').is_file()
        log = (out / 'logs' / (row['run'] + '.log')).read_text()
        head = log.splitlines()[0]
        assert head.startswith('dask worker: tcp://'), head
        served.add(head.split()[2])
        assert 'results:' in log
    assert served == workers

    def avg_jct(folder):
        with open(folder / 'summary.json') as f:
            return json.load(f)['totals']['avg_jct_s']
    there, here = avg_jct(out / 'sim-sebf-s2'), avg_jct(local)
    assert there == pytest.approx(here, rel=1e-9)


def test_a_file_missing_on_the_worker_fails_that_run(cluster, tmp_path):
    from netsched.pipeline import cluster as clustermod, sweep
    # an emu spec too: it takes the worker's emulator resource, and fails
    # on the missing file before anything is emulated
    gone = str(tmp_path / 'gone.yaml')
    specs = [sweep.RunSpec('%s-fair-s1' % b, gone, b, 'fair', 1, ())
             for b in ('sim', 'emu')]
    done = []
    clustermod.ClusterExecutor(cluster[0]).run(
        specs, str(tmp_path), lambda *a: done.append(a))
    assert sorted(s.key for s, *_ in done) == ['emu-fair-s1', 'sim-fair-s1']
    for spec, status, err, _ in done:
        assert status == 'failed'
        assert 'no such file on worker tcp://' in err and gone in err
        assert (tmp_path / 'logs' / (spec.key + '.log')).read_text() \
            .startswith('dask worker: tcp://')


def test_unreachable_or_malformed_address_is_one_clear_line(tmp_path):
    with socket.socket() as s:              # a port nothing listens on
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    closed = 'tcp://127.0.0.1:%d' % port
    addresses = [closed, '127.0.0.1:8786', 'tcp://127.0.0.1', 'http://h:1']
    t0 = time.monotonic()
    # all at once: each waits mostly on its own interpreter's imports
    procs = [subprocess.Popen(
        [sys.executable, '-m', 'netsched', 'sweep', DEMO, '--backend', 'sim',
         '--cluster', a, '--out', str(tmp_path / ('sw%d' % i))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        for i, a in enumerate(addresses)]
    try:
        results = [p.communicate(timeout=60) + (p.returncode,)
                   for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    took = time.monotonic() - t0
    assert took < 30, took                  # 10 s to connect, then give up
    for i, (a, (_, err, rc)) in enumerate(zip(addresses, results)):
        assert rc == 2, err
        assert 'Traceback' not in err and not (tmp_path / ('sw%d' % i)) \
            .exists()
        if a == closed:
            assert err.startswith('netsched: error: --cluster %s: cannot '
                                  'reach the Dask scheduler' % closed), err
        else:
            assert err.startswith('netsched: error: --cluster'), err
            assert 'want the Dask scheduler as tcp://HOST:PORT' in err
