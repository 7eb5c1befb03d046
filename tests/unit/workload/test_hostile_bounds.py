"""Issue 40's cases of runs without bounds, each re-run: what `netsched
check` refuses (one line naming the file, the key and the value) or
sizes, the limits a run stops at, faults that leave a job no
valley-free route, one sweep per folder and a sweep's runs dying with
it. Every experiment is a small file made here; no run is longer than a
few seconds."""
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from netsched import cli
from netsched.pipeline import experiment, sweep
from netsched.workload import bounds
from netsched.workload import trace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

BASE = {'name': 'h', 'backend': 'sim', 'topology': 'fattree,4',
        'jobs': [{'id': 'a', 'model': 'resnet50', 'pattern': 'ring',
                  'workers': 2, 'iterations': 2}]}


def write(tmp_path, doc, name='h.yaml'):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(doc))
    return str(p)


def job(**kw):
    return dict(BASE['jobs'][0], **kw)


def one_line(capsys, argv, *words):
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert 'Traceback' not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('netsched: error: '), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


# (what the file changes, words the error must hold: key and value)
REFUSED = [
    ({'topology': 'fattree,200'}, ['topology', 'fattree,200', '2000000']),
    ({'topology': 'fattree,254'}, ['topology', 'fattree,254']),
    ({'link_bps': 1}, ['link_bps', 'got 1']),
    ({'sample_s': 1e-9}, ['sample_s', '1e-09']),
    ({'timeout_s': 1e300}, ['timeout_s', '1e+300']),
    ({'jobs': [job(arrival_s=1e300)]}, ['jobs[0]', 'arrival_s', '1e+300']),
    ({'jobs': [job(compute_scale=1e300)]},
     ['jobs[0]', 'compute_scale', '1e+300']),
    ({'jobs': [job(iterations=10000, workers=16)]},
     ['memory', 'iterations', 'workers']),
    ({'policy': {'name': 'aalo', 'num_queues': 10 ** 12}},
     ['policy', 'num_queues', '1000000000000']),
    ({'arrivals': {'rate_per_s': 1e-300}}, ['rate_per_s', '1e-300']),
    ({'topology': 'hybrid,2,1,1',
      'circuits': {'scheduler': 'matching', 'period_s': 1e-300}},
     ['circuits', 'period_s', '1e-300']),
]


@pytest.mark.parametrize('change,words', REFUSED,
                         ids=[sorted(c)[0] + str(i)
                              for i, (c, _) in enumerate(REFUSED)])
def test_check_refuses_with_file_key_and_value(tmp_path, capsys, change,
                                               words):
    doc = dict(BASE, **change)
    path = write(tmp_path, doc)
    t0 = time.monotonic()
    one_line(capsys, ['check', path], path, *words)
    assert time.monotonic() - t0 < 20


def test_a_huge_model_is_refused_by_its_bytes(tmp_path, capsys):
    prof = {'name': 'huge', 'layers': [
        {'name': 'l', 'forward_ms': 1, 'backward_ms': 2,
         'tensors': [{'name': 't', 'bytes': 1e300}]}]}
    (tmp_path / 'huge.yaml').write_text(yaml.safe_dump(prof))
    path = write(tmp_path, dict(BASE, jobs=[job(model='huge.yaml')]))
    assert cli.main(['check', path]) == 2
    err = capsys.readouterr().err
    assert 'Traceback' not in err and len(err.strip().splitlines()) == 1


def test_a_huge_forward_ms_is_refused(tmp_path, capsys):
    prof = {'name': 'slow', 'layers': [
        {'name': 'l', 'forward_ms': 1e300, 'backward_ms': 1,
         'tensors': [{'name': 't', 'bytes': 1000}]}]}
    (tmp_path / 'slow.yaml').write_text(yaml.safe_dump(prof))
    path = write(tmp_path, dict(BASE, jobs=[job(model='slow.yaml')]))
    assert cli.main(['check', path]) == 2
    err = capsys.readouterr().err
    assert 'Traceback' not in err and 'jobs[0]' in err


def test_a_trace_line_of_nine_million_flows_is_refused(tmp_path, capsys):
    n = 3000
    line = '1 0 %d %s %d %s' % (n, ' '.join(['0'] * n), n,
                                ' '.join(['1:1'] * n))
    (tmp_path / 't.txt').write_text('2 1\n%s\n' % line)
    path = write(tmp_path, {'name': 't', 'backend': 'sim',
                            'topology': 'bigswitch,2', 'big_switch': True,
                            'trace': {'path': str(tmp_path / 't.txt')}})
    one_line(capsys, ['check', path], 't.txt:2', '9000000 flows')


def test_a_trace_time_scale_near_1e300_is_refused(tmp_path, capsys):
    (tmp_path / 't.txt').write_text('2 1\n1 1000 1 0 1 1:1\n')
    path = write(tmp_path, {'name': 't', 'backend': 'sim',
                            'topology': 'bigswitch,2', 'big_switch': True,
                            'trace': {'path': str(tmp_path / 't.txt'),
                                      'time_scale': 1e300}})
    one_line(capsys, ['check', path], 't.txt:2', 'time_scale')


def test_seeds_past_the_cap_are_refused_before_listing():
    t0 = time.monotonic()
    with pytest.raises(Exception, match='at most'):
        sweep.parse_seeds('1-100000000000')
    assert time.monotonic() - t0 < 1


def test_check_says_how_big_a_run_is(tmp_path, capsys):
    path = write(tmp_path, BASE)
    assert cli.main(['check', path]) == 0
    out = capsys.readouterr().out
    assert 'estimate: 892 tasks' in out
    assert 'limits: timeout_s 60 (derived' in out


def test_the_estimate_counts_the_plan_it_does_not_build():
    from netsched.workload import taskgraph
    for j in (job(workers=4), job(model='vgg16', pattern='ps', workers=3,
                                  slice_mb=4),
              job(model='bert-base', workers=3, bucket_mb=5)):
        exp = experiment.from_dict(dict(BASE, jobs=[j]))
        est = bounds.estimate(exp)
        plan = taskgraph.build(exp)
        assert len(plan.tasks) <= est.tasks <= 2 * len(plan.tasks), j


def test_the_estimate_counts_collective_and_parallel_jobs_as_built():
    """A collective or model-parallel job is counted on one iteration's
    plan, not as a ring: tasks within 10% of the plan, the same sends,
    and a hierarchical collective without group_size counted at most."""
    from netsched.workload import taskgraph

    def coll(**kw):
        j = job(**kw)
        del j['pattern']
        return j
    for j in (coll(workers=8, collective='tree'),
              coll(workers=8, collective='all-to-all'),
              coll(workers=8, collective='hierarchical'),
              coll(model='gpt3-1.3b', workers=8, iterations=2,
                  parallelism={'tp': 2, 'pp': 2, 'dp': 2,
                               'micro_batches': 2})):
        exp = experiment.from_dict(dict(BASE, jobs=[j]))
        est = bounds.estimate(exp)
        plan = taskgraph.build(exp)
        sends = sum(t.kind == 'send' for t in plan.tasks)
        # hierarchical: counted as one group of 8 (a ring's transfers),
        # built as 4 leaves of 2
        over = 2.0 if j.get('collective') == 'hierarchical' else 1.1
        assert len(plan.tasks) <= est.tasks <= over * len(plan.tasks), j
        assert sends <= est.flows <= over * sends, j


def test_a_long_ns3_run_wants_long(tmp_path, capsys):
    path = write(tmp_path, dict(BASE, backend='ns3',
                                jobs=[job(iterations=1000, workers=16)]))
    one_line(capsys, ['check', path], 'ns-3', '--long')
    exp = experiment.load(path)
    _, warnings = bounds.admit(exp, force=True)
    assert any('ns-3 would take' in w for w in warnings)


def test_a_derived_limit_stops_the_simulator(tmp_path):
    path = write(tmp_path, dict(BASE, max_events=5))
    out = str(tmp_path / 'run')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'run', path,
                        '--out', out], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, 'events.jsonl')) as f:
        text = f.read()
    assert '"cause":"limit"' in text and 'max_events 5' in text


def test_link_time_limit_derived_from_the_ideal_duration():
    exp = experiment.from_dict(dict(BASE, link_bps=1e6))
    est = bounds.estimate(exp)
    lim = bounds.limits(exp, est)
    assert lim.time_s == pytest.approx(10 * est.ideal_s)
    assert not lim.time_given


FAULTS = [{'link': ['a0_0', 'c0'], 'at': 0.1, 'until': 0.5},
          {'link': ['a0_0', 'c1'], 'at': 0.1, 'until': 0.5},
          {'link': ['a1_1', 'c2'], 'at': 0.1, 'until': 0.5},
          {'link': ['a1_1', 'c3'], 'at': 0.1, 'until': 0.5}]


ACROSS = job(id='across', placement=['h0_0_0', 'h1_0_0'])


def test_faults_that_leave_a_job_no_route_are_refused(tmp_path, capsys):
    path = write(tmp_path, dict(BASE, jobs=[ACROSS], faults=FAULTS))
    one_line(capsys, ['check', path], path, 'faults[0]', 'a0_0-c0',
             'job across', 'h0_0_0 to h1_0_0', 'valley-free',
             'jobs[0].placement')
    # the same faults, but the job's hosts keep their route (both on e0_0)
    ok = write(tmp_path, dict(BASE, faults=FAULTS), 'ok.yaml')
    assert cli.main(['check', ok]) == 0
    ok = write(tmp_path, dict(BASE, jobs=[ACROSS], faults=FAULTS[:2]),
               'ok2.yaml')
    assert cli.main(['check', ok]) == 0


def test_netsched_check_names_the_fault_and_the_job(tmp_path):
    path = write(tmp_path, dict(BASE, jobs=[ACROSS], faults=FAULTS))
    r = subprocess.run([sys.executable, '-m', 'netsched', 'check', path],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and r.stdout == ''
    assert 'Traceback' not in r.stderr
    assert r.stderr == (
        'netsched: error: %s: faults[0]: with link a0_0-c0 down (and the '
        'other faults of that moment), job across sends from h0_0_0 to '
        'h1_0_0 and the router has no route for it (it takes valley-free '
        'paths only, climbing then descending, and these hosts stay '
        'connected only through a valley); fail fewer links at once '
        '(faults[0]) or place it on other hosts (jobs[0].placement)\n'
        % path)


SLOW = dict(BASE, jobs=[job(workers=4, iterations=400)])


def _sweep(root, exp):
    return subprocess.Popen([sys.executable, '-m', 'netsched', 'sweep', exp,
                             '--seeds', '1-2', '-j', '1', '--out', root],
                            cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _wait_for(cond, s=60):
    deadline = time.monotonic() + s
    while time.monotonic() < deadline and not cond():
        time.sleep(0.1)
    return cond()


def test_one_sweep_per_folder_and_runs_die_with_it(tmp_path):
    exp = write(tmp_path, SLOW)
    root = str(tmp_path / 'sw')
    first = _sweep(root, exp)
    try:
        time.sleep(0.5)
        assert first.poll() is None, first.communicate()[1]
        lock = os.path.join(root, sweep.LOCK)
        assert _wait_for(lambda: os.path.isfile(lock) and open(
            lock).read().strip())
        second = subprocess.run(
            [sys.executable, '-m', 'netsched', 'sweep', exp, '--seeds',
             '1-2', '--out', root], cwd=ROOT, capture_output=True,
            text=True, timeout=120)
        assert second.returncode == 2
        assert 'another sweep (pid %d)' % first.pid in second.stderr
        import psutil
        me = psutil.Process(first.pid)
        running = []

        def live_run():
            # the run it is on now: the first may have finished (a zombie
            # until the sweep reaps it) while the second was refused
            for c in me.children():
                try:
                    running[:] = [c, c.cmdline()]
                    return True
                except (psutil.ZombieProcess, psutil.NoSuchProcess):
                    continue
            return False
        assert _wait_for(live_run)
        child, argv = running
        run_dir = argv[argv.index('--out') + 1]
        os.kill(first.pid, signal.SIGKILL)
        first.wait(30)
        assert _wait_for(lambda: not child.is_running() or
                         child.status() == psutil.STATUS_ZOMBIE, 30)
        # it stopped as a run stops on SIGTERM, saying so, unless it was
        # killed before its log began or after its log ended (writing
        # the CSVs and summary, which `report` makes again from the log)
        log = os.path.join(run_dir, 'events.jsonl')
        if os.path.isfile(log):
            with open(log) as f:
                text = f.read()
            assert 'SIGTERM' in text or text.endswith('"ev":"run_end"}\n')
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    # the lock went with the sweep: the folder takes the next one
    held = sweep.lock(root)
    sweep.unlock(held)


def test_trace_cap_is_a_constant_the_docs_give():
    assert trace.MAX_COFLOW_FLOWS == 2 ** 20


def test_a_held_sweep_folder_is_refused_before_the_plan(tmp_path, capsys):
    """A sweep holds its folder before it plans and checks its runs (a
    minute for a large sweep; the folder made for it): a second sweep's
    line comes at once, here before it finds that its experiment file is
    missing, also while the first is still planning in a folder of
    nothing but its lock."""
    root = str(tmp_path / 'sw')
    with sweep.holding(root):
        assert os.listdir(root) == [sweep.LOCK]
        t0 = time.monotonic()
        one_line(capsys, ['sweep', str(tmp_path / 'missing.yaml'),
                          '--seeds', '1', '--out', root],
                 'another sweep (pid %d)' % os.getpid())
        assert time.monotonic() - t0 < 5
    # the folder made for a sweep refused before any run goes again
    assert not os.path.exists(root)
    one_line(capsys, ['sweep', str(tmp_path / 'missing.yaml'), '--seeds',
                      '1', '--out', root], 'missing.yaml')
    assert not os.path.exists(root)
    # a stale lock (a sweep killed outright) does not hold the folder
    os.makedirs(root)
    with open(os.path.join(root, sweep.LOCK), 'w') as f:
        f.write('999999\n')
    with sweep.holding(root):
        pass
    assert os.listdir(root) == []


def test_a_lock_file_unlinked_as_it_is_taken_is_taken_again(tmp_path,
                                                             monkeypatch):
    """A sweep that ends unlinks its lock file; one that opened that file
    just before would lock a file no later sweep sees. lock() checks
    that the file it locked is still the folder's, and else starts
    over."""
    root = str(tmp_path)
    real, calls = sweep._flock, []

    def flock_then_unlink(f, r):
        real(f, r)
        calls.append(f.name)
        if len(calls) == 1:
            os.unlink(f.name)
    monkeypatch.setattr(sweep, '_flock', flock_then_unlink)
    held = sweep.lock(root)
    try:
        assert len(calls) == 2
        path = os.path.join(root, sweep.LOCK)
        assert os.stat(path).st_ino == os.fstat(held.fileno()).st_ino
    finally:
        sweep.unlock(held)


@pytest.mark.parametrize('change', [
    {'topology': 'hybrid,2,1,1',
     'circuits': {'scheduler': 'matching', 'period_s': 1e-6}},
    {'policy': {'name': 'jpas', 'period_s': 1e-6}}],
    ids=['circuits', 'policy'])
def test_the_estimate_counts_decisions_on_a_timer(change):
    """A period_s of 1e-6 (the least accepted) made the run of a job of
    0.27 s 140,000-200,000 events where check said 973: each decision is
    an event (a circuit decision a log line too), counted over the
    span the link samples are."""
    exp = experiment.from_dict(dict(BASE, **change))
    plain = bounds.estimate(experiment.from_dict(BASE))
    est = bounds.estimate(exp)
    span = min(bounds.limit_time_s(exp, est.ideal_s), est.ideal_s + 1)
    assert est.events >= plain.events + span / 1e-6
    if 'circuits' in change:
        assert est.log_bytes >= span / 1e-6 * bounds.DECISION_LINE_BYTES


# VmHWM, not ru_maxrss: Linux carries a process's ru_maxrss over exec,
# so a child of a big pytest would report the parent's peak
PEAK = ('import re, sys\n'
        'from netsched import cli\n'
        'rc = cli.main(sys.argv[1:])\n'
        "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status')"
        '.read())\n'
        'print(int(hwm.group(1)) * 1024)\n'
        'sys.exit(rc)\n')


def test_a_run_of_many_link_samples_stays_within_the_estimate(tmp_path):
    """sample_s 2e-6 (100,000 samples of a 0.2 s run): reading its log
    back for the report peaked well past the 150 MiB check said, which
    counted the run and not the reading."""
    path = write(tmp_path, dict(BASE, sample_s=2e-6))
    est = bounds.estimate(experiment.load(path))
    r = subprocess.run([sys.executable, '-c', PEAK, 'run', path, '--out',
                        str(tmp_path / 'run')], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    peak = int(r.stdout.strip().splitlines()[-1])
    assert peak <= est.memory_bytes, (peak, est.text())


def test_a_derived_log_limit_fits_the_disk(monkeypatch):
    """link_bps 1000, the least accepted: its log is estimated at 9.4 GiB
    and 20 times that (188 GiB) was the limit, past the disk's 71 GiB
    free: no bound at all. A derived limit is at most half the disk
    free, never below the estimate; one the file sets stands."""
    exp = experiment.from_dict(dict(BASE, link_bps=1000))
    est = bounds.estimate(exp)
    gib = 2 ** 30
    monkeypatch.setattr(bounds, '_free_bytes', lambda d: 40 * gib)
    assert bounds.limits(exp, est).log_bytes == 20 * gib
    monkeypatch.setattr(bounds, '_free_bytes', lambda d: 10 * gib)
    assert bounds.limits(exp, est).log_bytes == est.log_bytes
    monkeypatch.setattr(bounds, '_free_bytes', lambda d: None)
    assert bounds.limits(exp, est).log_bytes == int(
        bounds.COUNT_FACTOR * est.log_bytes)
    monkeypatch.setattr(bounds, '_free_bytes', lambda d: 40 * gib)
    given = experiment.from_dict(dict(BASE, link_bps=1000,
                                      max_log_mb=100000))
    assert bounds.limits(given, est).log_bytes == 100000 * 2 ** 20
