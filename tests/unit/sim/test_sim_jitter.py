"""The simulator's send jitter (``simulator: {send_jitter_ms,
send_jitter_seed}``, a measuring knob for benchmarks/sensitivity_bench.py;
``NETSCHED_SIM_SEND_JITTER_MS=MS[,SEED]`` overrides it): each send starts
a seeded uniform draw after its connection takes it."""
import json
import os

import pytest

from netsched.pipeline import experiment, run
from netsched.errors import ConfigError

ENV = 'NETSCHED_SIM_SEND_JITTER_MS'


def ring(tmp_path, name, jitter, monkeypatch, env=None):
    """Two 2-worker ResNet-50 rings on one dumbbell bottleneck, with the
    send jitter ``jitter`` ('MS,SEED' or None) in the file, or ``env`` in
    the environment; the summary and the flows of the event log."""
    d = {'topology': 'dumbbell,2', 'backend': 'sim', 'link_gbps': 10,
         'jobs': [dict(id='a', model='resnet50', pattern='ring', workers=2,
                       iterations=2, compute_scale=0,
                       placement=['hl0', 'hr0']),
                  dict(id='b', model='resnet50', pattern='ring', workers=2,
                       iterations=2, compute_scale=0, arrival_s=0.003,
                       placement=['hl1', 'hr1'])]}
    if jitter is not None:
        ms, seed = jitter.split(',')
        d['simulator'] = {'send_jitter_ms': float(ms),
                          'send_jitter_seed': int(seed)}
    if env is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, env)
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'))
    out, s = run.execute(exp, str(tmp_path / name), say=lambda m: None)
    with open(os.path.join(out, 'events.jsonl')) as f:
        events = [json.loads(line) for line in f]
    return s, events


def ccts(s):
    return {c: r['cct_s'] for c, r in s['coflows'].items()}


def test_sends_start_later_by_at_most_the_jitter_each(tmp_path,
                                                      monkeypatch):
    base, ev0 = ring(tmp_path, 'base', None, monkeypatch)
    one, ev1 = ring(tmp_path, 'one', '2,0', monkeypatch)
    again, _ = ring(tmp_path, 'again', '2,0', monkeypatch)
    other, _ = ring(tmp_path, 'other', '2,1', monkeypatch)
    assert ccts(one) == ccts(again)                   # seeded
    assert ccts(one) != ccts(other)
    assert ccts(one) != ccts(base)
    start = [e for e in ev1 if e['ev'] == 'run_start'][0]
    assert start['send_jitter_s'] == 0.002 and start['send_jitter_seed'] == 0
    assert 'send_jitter_s' not in [e for e in ev0
                                   if e['ev'] == 'run_start'][0]
    # every flow is still there; a coflow is no faster, and slower by at
    # most 2 ms per send it has (its sends may all wait in turn)
    def flows(ev):
        return sorted((e['coflow'], e['src'], e['dst'], e['bytes'])
                      for e in ev if e['ev'] == 'flow')
    assert flows(ev0) == flows(ev1)
    per = {}
    for c, *_ in flows(ev1):
        per[c] = per.get(c, 0) + 1
    b, j = ccts(base), ccts(one)
    for c in b:
        assert b[c] - 1e-6 <= j[c] <= b[c] + 0.002 * per[c], c
    # the job's first send waits: its first coflow is later by more
    # than nothing
    assert sum(j.values()) > sum(b.values())


def test_the_environment_overrides_the_file_and_the_run_says_so(
        tmp_path, monkeypatch):
    """NETSCHED_SIM_SEND_JITTER_MS=2,0 over a file without jitter runs
    as the file with 2 ms, seed 0 does; the run says it used the
    variable, and run.json and summary.json record it."""
    keyed, _ = ring(tmp_path, 'keyed', '2,0', monkeypatch)
    said = []
    monkeypatch.setenv(ENV, '2,0')
    d = {'topology': 'dumbbell,1', 'backend': 'sim', 'link_gbps': 10,
         'jobs': [dict(model='resnet50', pattern='ring', workers=2,
                       iterations=1, compute_scale=0)]}
    exp = experiment.from_dict(d, str(tmp_path / 'env.yaml'))
    assert (exp.knobs.send_jitter_ms, exp.knobs.send_jitter_seed) == (2.0, 0)
    out, s = run.execute(exp, str(tmp_path / 'env'), say=said.append)
    assert [m for m in said if ENV + '=2,0' in m]
    with open(os.path.join(out, 'run.json')) as f:
        rec = json.load(f)['knobs']
    assert rec['from_environment'] == {ENV: '2,0'}
    assert rec['simulator'] == {'send_jitter_ms': 2.0, 'send_jitter_seed': 0}
    assert s['knobs'] == rec
    enved, _ = ring(tmp_path, 'enved', None, monkeypatch, env='2,0')
    assert ccts(enved) == ccts(keyed)


@pytest.mark.parametrize('bad', ['x', '-1', '1,2,3', '1,x'])
def test_a_bad_jitter_names_the_variable(monkeypatch, bad):
    monkeypatch.setenv(ENV, bad)
    d = {'topology': 'dumbbell,1', 'backend': 'sim',
         'jobs': [dict(model='resnet50', pattern='ring', workers=2,
                       iterations=1)]}
    with pytest.raises(ConfigError, match=ENV):
        experiment.from_dict(d, 'exp.yaml')


def test_no_jitter_by_default(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    d = {'topology': 'dumbbell,1', 'backend': 'sim',
         'jobs': [dict(model='resnet50', pattern='ring', workers=2,
                       iterations=1)]}
    k = experiment.from_dict(d, 'exp.yaml').knobs
    assert (k.send_jitter_ms, k.send_jitter_seed) == (0.0, 0)
    monkeypatch.setenv(ENV, '1.5')
    k = experiment.from_dict(d, 'exp.yaml').knobs
    assert (k.send_jitter_ms, k.send_jitter_seed) == (1.5, 0)
    assert k.from_environment == ((ENV, '1.5'),)
