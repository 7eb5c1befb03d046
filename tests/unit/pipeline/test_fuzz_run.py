"""Fuzzing that runs what it accepts (issue 40): every experiment the
parser accepts is also sized, planned and simulated, under a limit of
time and memory per example, and the result readers are fed damaged run
folders. An input gets a finished or limited run, or a NetschedError
naming what is wrong; never a traceback, a hang or more memory than
``netsched check`` said.

The ``@example`` lines are the cases the fuzzing found."""
import dataclasses
import json
import os
import resource
import shutil
import signal
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from netsched import cli
from netsched.errors import NetschedError
from netsched.pipeline import experiment, run
from netsched.workload import bounds
from netsched.sim import runner
from tests.support.fuzzing import EXAMPLES, fuzz, mangled, mutated
from tests.unit.pipeline.test_fuzz_experiment import SMALL, WHERE
from tests.support.tiny import TINY

# each example runs a simulation: fewer of them than the parsers get
RUNS = max(10, EXAMPLES // 8)
# what one example may take: wall seconds, events, log bytes
WALL_S = 60
EVENTS = 20000
LOG_MB = 8


class Hung(Exception):
    pass


def _alarm(signum, frame):
    raise Hung('an example ran past %d s' % WALL_S)


def _peak_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def simulate(doc, out):
    """Parse, size, plan and simulate ``doc`` (on the simulator); the
    Estimate, or the NetschedError that stopped it (naming the file)."""
    try:
        exp = experiment.from_dict(doc, WHERE, backend='sim')
        est, _ = bounds.admit(exp)
    except NetschedError as e:
        assert WHERE in str(e) or 'policy' in str(e) or 'circuits' in \
            str(e), e
        return e
    if est.memory_bytes > 1 << 30:       # admitted, but not for a test
        return est
    exp = dataclasses.replace(
        exp, max_events=min(exp.max_events or EVENTS, EVENTS),
        max_log_mb=min(exp.max_log_mb or LOG_MB, LOG_MB))
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(WALL_S)
    before = _peak_kb()
    try:
        run.check(exp)
        os.makedirs(out, exist_ok=True)
        runner.run(exp, os.path.join(out, 'events.jsonl'), lambda m: None)
    except NetschedError as e:
        return e
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    grown = (_peak_kb() - before) * 1024
    # the peak only grows, so this holds the example to what was counted
    assert grown <= max(est.memory_bytes, 256 << 20), (grown, est.text())
    assert os.path.getsize(os.path.join(out, 'events.jsonl')) <= \
        LOG_MB * 2 ** 20 + (1 << 20)
    return est


@fuzz(examples=RUNS)
@given(doc=mutated(SMALL))
# a huge rate and compute_scale from the strategies' near misses
@example(doc=dict(SMALL[0], link_gbps=1e300))
@example(doc={**SMALL[0], 'jobs': [dict(SMALL[0]['jobs'][0],
                                         compute_scale=1e300)]})
@example(doc=dict(SMALL[0], sample_s=1e-9))
@example(doc=dict(SMALL[0], link_bps=1e3, link_gbps=None))
# decisions on a timer at the least period accepted (issue 40): events
# check did not count, and matching's cycles kept with the collector off
@example(doc=dict(SMALL[3], circuits={'scheduler': 'matching',
                                      'period_s': 1e-6}))
@example(doc=dict(SMALL[3], policy={'name': 'jpas', 'period_s': 1e-6}))
def test_accepted_experiments_are_simulated_within_limits(tmp_path_factory,
                                                          doc):
    out = str(tmp_path_factory.mktemp('run'))
    try:
        simulate(doc, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope='module')
def finished(tmp_path_factory):
    d = tmp_path_factory.mktemp('readers')
    (d / 'tiny.yaml').write_text(TINY)
    out = str(d / 'run')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'run',
                        str(d / 'tiny.yaml'), '--out', out],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


FILES = ('summary.json', 'events.jsonl', 'run.json', 'jobs.csv')


@fuzz(examples=max(10, EXAMPLES // 10))
@given(data=st.data(), name=st.sampled_from(FILES),
       drop_summary=st.booleans())
def test_damaged_run_folders_get_a_report_or_one_line(
        finished, tmp_path_factory, capsys, data, name, drop_summary):
    d = str(tmp_path_factory.mktemp('damaged') / 'run')
    shutil.copytree(finished, d)
    p = os.path.join(d, name)
    with open(p, 'rb') as f:
        raw = f.read()
    with open(p, 'wb') as f:
        f.write(data.draw(mangled(raw[:4000])) + raw[4000:])
    if drop_summary and name != 'summary.json':
        os.remove(os.path.join(d, 'summary.json'))
    rc = cli.main(['report', d])
    err = capsys.readouterr().err
    assert 'Traceback' not in err
    if rc != 0:
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and d in lines[0], err
    shutil.rmtree(os.path.dirname(d), ignore_errors=True)


def test_a_limited_run_says_why(tmp_path):
    doc = json.loads(json.dumps(SMALL[0]))
    doc['max_events'] = 3
    out = str(tmp_path)
    exp = experiment.from_dict(doc, WHERE)
    runner.run(exp, os.path.join(out, 'events.jsonl'), lambda m: None)
    with open(os.path.join(out, 'events.jsonl')) as f:
        events = [json.loads(x) for x in f]
    stop = [e for e in events if e['ev'] == 'run_incomplete']
    assert stop and stop[0]['cause'] == 'limit'
    assert 'max_events 3' in stop[0]['why']
