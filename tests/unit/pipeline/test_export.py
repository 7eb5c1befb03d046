"""netsched export RUN --format perfetto: the Chrome trace-event JSON
checked by its schema (the fields each phase needs, in microseconds),
with a track per host holding every flow's send and receive, a counter
per link, the jobs' iterations and the policy's decisions."""
import json
import os
import subprocess
import sys

import pytest

from netsched.errors import ConfigError
from netsched.pipeline import export
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
# each phase's fields beyond ph, name, pid, tid and ts (M has no ts)
NEEDS = {'X': ('dur',), 'b': ('cat', 'id2'), 'e': ('cat', 'id2'),
         'C': ('args',), 'i': ('s',), 'M': ('args',)}


@pytest.fixture(scope='module')
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp('export')
    # with compute, so that the hosts' tracks have it
    (d / 'tiny.yaml').write_text(TINY.replace('compute_scale: 0,',
                                              'compute_scale: 0.5,'))
    run = str(d / 'run')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'run',
                        str(d / 'tiny.yaml'), '--backend', 'sim', '--policy',
                        'sebf', '--out', run], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, '-m', 'netsched', 'export', run,
                        '--format', 'perfetto'], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    path = os.path.join(run, 'trace.perfetto.json')
    assert r.stdout.strip() == 'trace: %s' % path
    with open(path) as f:
        return run, json.load(f)


def test_every_event_has_what_its_phase_needs(traced):
    _, doc = traced
    assert doc['displayTimeUnit'] in ('ms', 'ns')
    evs = doc['traceEvents']
    assert evs
    for e in evs:
        assert e['ph'] in NEEDS, e
        assert isinstance(e['name'], str) and e['name']
        assert isinstance(e['pid'], int) and isinstance(e['tid'], int)
        for k in NEEDS[e['ph']]:
            assert k in e, (k, e)
        if e['ph'] != 'M':
            assert isinstance(e['ts'], (int, float)) and e['ts'] >= 0
        if e['ph'] == 'X':
            assert e['dur'] >= 0
        if e['ph'] == 'C':
            assert all(isinstance(v, (int, float))
                       for v in e['args'].values())
    # every async slice opened is closed, once, not before it opened
    opened = {}
    for e in evs:
        key = (e.get('pid'), e.get('cat'), json.dumps(e.get('id2')))
        if e['ph'] == 'b':
            assert key not in opened
            opened[key] = e['ts']
        elif e['ph'] == 'e':
            assert opened.pop(key) <= e['ts']
    assert opened == {}


def _names(doc, what):
    return {e['pid']: e['args']['name'] for e in doc['traceEvents']
            if e['ph'] == 'M' and e['name'] == what}


def test_tracks_hold_the_runs_flows_links_jobs_and_decisions(traced):
    run, doc = traced
    evs = doc['traceEvents']
    procs = _names(doc, 'process_name')
    with open(os.path.join(run, 'flows.csv')) as f:
        flows = f.read().splitlines()[1:]
    hosts = {p: n for p, n in procs.items() if n.startswith('host ')}
    assert set(hosts.values()) == {'host hl0', 'host hl1', 'host hr0',
                                   'host hr1'}
    sends = [e for e in evs if e['ph'] == 'b' and e['cat'] == 'send']
    recvs = [e for e in evs if e['ph'] == 'b' and e['cat'] == 'recv']
    assert len(sends) == len(recvs) == len(flows)
    first = sends[0]
    assert procs[first['pid']] == 'host %s' % next(
        ln.split(',')[2] for ln in flows
        if ln.split(',')[0] == str(first['args']['flow']))
    links = [e for e in evs if e['ph'] == 'C']
    assert {procs[e['pid']] for e in links} == {'links'}
    assert all(0 <= e['args']['util'] <= 1 for e in links)
    iters = [e for e in evs if e['ph'] == 'X' and e['cat'] == 'iteration']
    assert {procs[e['pid']] for e in iters} == {'job small', 'job large'}
    assert len(iters) == 2 * 2 + 2 * 1         # workers x iterations
    # each host's compute, as spans that end before its iteration does
    compute = [e for e in evs if e['ph'] == 'X' and e['cat'] == 'compute']
    assert {procs[e['pid']] for e in compute} == set(hosts.values())
    ends = {}
    with open(os.path.join(run, 'events.jsonl')) as f:
        for line in f:
            e = json.loads(line)
            if e['ev'] == 'iter':
                ends['%s/%s' % (e['job'], e['iter'])] = e['t'] * 1e6
    for e in compute:
        assert e['dur'] > 0
        assert e['ts'] + e['dur'] <= ends[e['name'].split(' ')[1]] + 1e-3
    decisions = [e for e in evs if e['ph'] == 'i']
    assert decisions and {e['name'] for e in decisions} == {'classes'}
    assert {procs[e['pid']] for e in decisions} == {'policy'}


def test_not_a_run_folder_is_named(tmp_path):
    with pytest.raises(ConfigError, match='not a run folder'):
        export.write(str(tmp_path))
