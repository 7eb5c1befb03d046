"""The ByteScheduler-like sender (issue 24): partitions released per
worker highest priority first under a byte credit, on its own and on the
simulator; the policy and the job's knobs; TensorExpress without host
ordering."""
import json
import os
import subprocess
import sys

import pytest

from netsched import policies
from netsched.pipeline import experiment
from netsched.errors import ConfigError
from netsched.host import prophet
from netsched.workload import taskgraph
from netsched.policies.tensorexpress import TensorExpress


def send(i, prio, size, it=0):
    return prophet.Send(i, it, 's%d' % i, float(size), float(prio), 0.0, 0.0)


def test_strict_priority_under_the_credit_by_hand():
    s = prophet.Sender(credit_bytes=2.0, mode='bytescheduler')
    a, b, c, d = send(1, 3, 1), send(2, 2, 1), send(3, 1, 1), send(4, 0, 2)
    # no profiling: iteration 0 is scheduled. a goes (nothing out), b too
    # (1 + 1 = 2, within 2), c would make 3: it waits, and so does d
    assert s.ready(a, 0.0) == [a] and s.ready(b, 0.0) == [b]
    assert s.ready(c, 0.0) == [] and s.ready(d, 0.0) == []
    assert s.outstanding == 2.0 and s.next_wake() is None
    # a done: 1 out; d (front, 2 B) would make 3 and c (1 B) would fit,
    # but c may not pass d: nothing goes
    assert s.done(1, 0.0, 1.0) == []
    # b done: nothing out, d goes (2 B: the credit), then c would make 3
    assert s.done(2, 0.0, 2.0) == [d] and s.outstanding == 2.0
    assert s.done(4, 2.0, 3.0) == [c]
    assert s.done(3, 3.0, 4.0) == [] and s.outstanding == 0.0
    # a send larger than the credit goes when nothing is out, alone
    e, f = send(5, 1, 3), send(6, 0, 1)
    assert s.ready(e, 5.0) == [e] and s.ready(f, 5.0) == []
    assert s.done(5, 5.0, 6.0) == [f]


def test_an_earlier_iteration_goes_first_and_holds_later_ones():
    s = prophet.Sender(credit_bytes=1.0, mode='bytescheduler')
    x, y = send(1, 0, 1), send(2, 5, 1)
    z = send(3, 0, 1, it=1)                 # front layer, next iteration
    assert s.ready(x, 0.0) == [x]
    assert s.ready(y, 0.0) == [] and s.ready(z, 0.0) == []
    assert s.done(1, 0.0, 1.0) == [y]       # iteration 0's back layer
    assert s.done(2, 1.0, 2.0) == [z]


def test_a_prophet_field_names_its_sender():
    s = prophet.sender_for({'mode': 'bytescheduler', 'credit_mb': 2,
                            'anchor': 0})
    assert (s.mode, s.credit, s.profile_iterations) == (
        'bytescheduler', 2.0 * 2 ** 20, 0)
    s = prophet.sender_for({'profile_iterations': 3, 'credit_mb': 1,
                            'anchor': 0})
    assert (s.mode, s.credit, s.profile_iterations) == (
        'prophet', 2.0 ** 20, 3)
    with pytest.raises(ValueError, match='mode must be one of'):
        prophet.Sender(mode='fifo')


# --- on the simulator, by hand ---------------------------------------------

# forward order L0 (t0, 2 MiB), L1 (t1, 1 MiB), L2 (t2, 3 MiB); 1 MiB
# partitions; one worker, one shard, 1 MiB per ms on the link
MODEL = """
name: three
layers:
  - {name: L0, forward_ms: 1, backward_ms: 1,
     tensors: [{name: t0, bytes: 2097152}]}
  - {name: L1, forward_ms: 1, backward_ms: 1.5,
     tensors: [{name: t1, bytes: 1048576}]}
  - {name: L2, forward_ms: 1, backward_ms: 1,
     tensors: [{name: t2, bytes: 3145728}]}
"""
EXP = """
name: bs
backend: sim
topology: dumbbell,1
link_gbps: 8.388608
policy: fair
jobs:
  - {id: j, model: three.yaml, pattern: ps, workers: 1, ps_shards: 1,
     iterations: 1, placement: [hl0, hr0], slice_mb: 1}
"""


def _pushes(tmp_path, policy, monkeypatch):
    """The worker's pushes in the order they started (as partitions of
    sixths of the model: t0 = 0, 1; t1 = 2; t2 = 3, 4, 5) and the most
    bytes its sender had out at once."""
    from netsched.pipeline import run as nrun
    (tmp_path / 'three.yaml').write_text(MODEL)
    (tmp_path / 'e.yaml').write_text(EXP)
    most = [0.0]
    real = prophet.Sender._release

    def spy(self, sends):
        out = real(self, sends)
        most[0] = max(most[0], self.outstanding)
        if self.outstanding > self.credit:          # only one alone
            assert len(self.out) == 1
        return out
    monkeypatch.setattr(prophet.Sender, '_release', spy)
    e = experiment.load(str(tmp_path / 'e.yaml'), backend='sim',
                        policy=policy)
    nrun.execute(e, str(tmp_path / policy), say=lambda m: None)
    with open(tmp_path / policy / 'events.jsonl') as f:
        flows = [json.loads(x) for x in f if '"ev":"flow"' in x]
    push = sorted((f['start'], f['urgency']) for f in flows
                  if f['src'] == 'hl0')
    return [round(u * 6) for _, u in push], most[0]


def test_the_release_order_and_the_credit_on_the_simulator(tmp_path,
                                                           monkeypatch):
    """Backward from 3 ms: t2's three partitions ready at 4 ms, t1 at
    5.5 ms, t0's two at 6.5 ms; a send takes 1 ms (and 0.5 us).
    Credit 2 MiB: t2[0] and t2[1] go at 4 (2 MiB out), t2[2] waits; t2[0]
    done at 5: t2[2] is all that waits, it goes (2 out again); t1 ready at
    5.5 waits; t2[1] done at 6: t1; t2[2] done at 7: t0[0]; t1 done at 8:
    t0[1]. The connection sends them in that order: 3 4 5 2 0 1.
    Credit 1 MiB: one at a time, each chosen when the last is done: t2[0]
    at 4, t2[1] at 5 (t1 not ready yet), t1 at 6, t0[0] at 7, t0[1] at 8,
    t2[2] last: 3 4 2 0 1 5, as p3 picks them on the one connection."""
    order, most = _pushes(tmp_path, 'bytescheduler:partition_mb=1:'
                          'credit_mb=2', monkeypatch)
    assert order == [3, 4, 5, 2, 0, 1] and most == 2 * 2 ** 20
    order, most = _pushes(tmp_path, 'bytescheduler:partition_mb=1:'
                          'credit_mb=1', monkeypatch)
    assert order == [3, 4, 2, 0, 1, 5] and most == 2 ** 20
    # a credit of 1.5 MiB holds a second 1 MiB partition as 1 MiB does
    order, most = _pushes(tmp_path, 'bytescheduler:partition_mb=1:'
                          'credit_mb=1.5', monkeypatch)
    assert order == [3, 4, 2, 0, 1, 5] and most == 2 ** 20
    order, _ = _pushes(tmp_path, 'p3:slice_mb=1', monkeypatch)
    assert order == [3, 4, 2, 0, 1, 5]


# --- the policy, the job's knobs, netsched check ---------------------------

def _exp(policy='fair', params=None, **job):
    j = dict(id='p', model='resnet50', pattern='ps', workers=2,
             iterations=4, placement=['hl0', 'hl1', 'hr0'])
    j.update(job)
    d = {'topology': 'dumbbell,2', 'policy': policy, 'jobs': [j]}
    if params is not None:
        d['policy_params'] = params
    return experiment.from_dict(d, 'e.yaml', backend='sim')


def _knobs(e):
    return {json.dumps({k: v for k, v in t.prophet.items()
                        if k not in ('anchor', 'gradient', 'part')},
                       sort_keys=True)
            for t in taskgraph.build(e).tasks if t.prophet}


def test_the_policy_asks_for_the_sender_with_its_knobs():
    p = policies.make('bytescheduler')
    assert 'bytescheduler' in policies.REGISTRY and p.static
    assert p.workload() == {'send_order': 'bytescheduler',
                            'slice_mb': 3.90625, 'partitions': 'byteps',
                            'bytescheduler': {'credit_mb': 4.0}}
    assert experiment.BYTESCHEDULER_KNOBS == {'credit_mb': prophet.CREDIT_MB}
    e = _exp('bytescheduler', {'bytescheduler': {'partition_mb': 2,
                                                 'credit_mb': 8}})
    plan = taskgraph.build(e)
    push = [t for t in plan.tasks if t.kind == 'send'
            and t.label.startswith('push')]
    # every push, in 2 MiB partitions (numbered within their tensor)
    assert all(t.prophet for t in push) and max(t.bytes for t in push) == \
        2 * 2 ** 20
    assert _knobs(e) == {'{"credit_mb": 8.0, "mode": "bytescheduler"}'}
    split = [t.prophet['part'] for t in push
             if t.label.startswith('push fc.weight[') and t.worker == 0
             and t.iter == 0]
    assert split == [0, 1, 2, 3]            # 7.8 MiB in 4 partitions
    # a job's own: send_order bytescheduler under any policy, its block
    # winning over the policy's; under another order the policy's alone
    e = _exp('fair', send_order='bytescheduler', slice_mb=4,
             bytescheduler={'credit_mb': 1})
    assert _knobs(e) == {'{"credit_mb": 1.0, "mode": "bytescheduler"}'}
    e = _exp('bytescheduler', send_order='prophet',
             prophet={'credit_mb': 1})
    assert _knobs(e) == {'{"credit_mb": 4.0, "mode": "bytescheduler"}'}
    e = _exp('prophet', send_order='bytescheduler',
             bytescheduler={'credit_mb': 1})
    assert _knobs(e) == {
        '{"credit_mb": 4.0, "profile_iterations": 2}'}


def test_the_job_knobs_and_the_params_are_checked():
    def bad(match, **kw):
        with pytest.raises(ConfigError, match=match):
            _exp(**kw)
    bad(r"e.yaml: jobs\[0\]: bytescheduler: credit_mb: must be > 0, got 0",
        send_order='bytescheduler', bytescheduler={'credit_mb': 0})
    bad(r"e.yaml: jobs\[0\]: bytescheduler: unknown key 'partition_mb'",
        send_order='bytescheduler', bytescheduler={'partition_mb': 1})
    bad(r"e.yaml: jobs\[0\]: bytescheduler: ByteScheduler's knobs are for "
        r"a job with send_order: bytescheduler \(this one has priority\)",
        send_order='priority', bytescheduler={})
    bad(r"e.yaml: jobs\[0\]: prophet: Prophet's knobs are for a job with "
        r"send_order: prophet \(this one has bytescheduler\)",
        send_order='bytescheduler', prophet={})
    bad(r"e.yaml: policy_params: bytescheduler: credit_mb: must be a "
        r"positive number, got -2", policy='bytescheduler',
        params={'bytescheduler': {'credit_mb': -2}})
    bad(r"e.yaml: policy_params: bytescheduler: policy bytescheduler has no "
        r"parameter 'slice_mb'", policy='bytescheduler',
        params={'bytescheduler': {'slice_mb': 2}})


def test_netsched_check_takes_the_policy_and_the_send_order(tmp_path):
    path = tmp_path / 'e.yaml'
    path.write_text(
        'topology: dumbbell,2\npolicy: fair\njobs:\n'
        '  - {id: j, model: resnet50, pattern: ps, workers: 2, '
        'iterations: 3, send_order: bytescheduler, slice_mb: 2, '
        'bytescheduler: {credit_mb: 8}}\n')

    def check(*args):
        return subprocess.run([sys.executable, '-m', 'netsched', 'check',
                               str(path), '--backend', 'sim', *args],
                              capture_output=True, text=True, timeout=60,
                              cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                                  os.path.dirname(__file__)))))
    r = check()
    assert r.returncode == 0 and ': ok' in r.stdout, r.stderr
    r = check('--policy', 'bytescheduler:credit_mb=16')
    assert r.returncode == 0 and 'policy bytescheduler' in r.stdout
    r = check('--policy', 'bytescheduler:credit=16')
    assert r.returncode == 2 and "has no parameter 'credit'" in r.stderr
    path.write_text(path.read_text().replace('bytescheduler,',
                                             'bytescheduling,'))
    r = check()
    assert r.returncode == 2 and 'send_order: must be one of ready, ' \
        'priority, prophet, bytescheduler' in r.stderr


# --- TensorExpress: in-network priority without host ordering --------------

def test_tensorexpress_without_host_order_keeps_the_tags():
    from tests.unit.policies.test_policies_geryon_tx import NAN, positions
    on = policies.make('tensorexpress')
    off = policies.make('tensorexpress', {'host_order': False})
    assert on.host_order is True and off.host_order is False
    assert off.workload() == {'send_order': 'ready', 'slice_mb': 4.0}
    # the plan: the same sends, no key among a connection's waiting ones
    plans = {}
    for name, pol in (('on', 'tensorexpress'),
                      ('off', 'tensorexpress')):
        e = _exp(pol, {'tensorexpress': {'host_order': name == 'on'}})
        plans[name] = [t for t in taskgraph.build(e).tasks
                       if t.kind == 'send']
    assert all(t.order is None for t in plans['off'])
    assert all(t.order is not None for t in plans['on'])
    assert [(t.label, t.conn, t.bytes, t.position, t.urgency)
            for t in plans['on']] == [
        (t.label, t.conn, t.bytes, t.position, t.urgency)
        for t in plans['off']]
    # the tags: floor(8 x position), no model's data in 7, either way
    s = positions([0.0, 0.3, 0.9, NAN], [0.05, 0.8])
    for pol in (on, off):
        d = pol.decide(s)
        assert d.flow_class.tolist() == [0, 2, 7, 7]
        assert d.pending_class.tolist() == [0, 6]
    # the command line's spellings of a yes/no (registry.declared, as for
    # every policy's bool parameter); anything else is refused
    for text, value in (('false', False), ('1', True), ('no', False),
                        ('On', True)):
        assert policies.make(*policies.parse_spec(
            'tensorexpress:host_order=' + text)).host_order is value
    assert TensorExpress(host_order='no').host_order is False
    with pytest.raises(ConfigError, match=r"tensorexpress: host_order must "
                       r"be true or false, got 'maybe'"):
        policies.make('tensorexpress', {'host_order': 'maybe'})
    with pytest.raises(ConfigError, match=r"tensorexpress: lanes must "
                       r"be true or false, got 'maybe'"):
        TensorExpress(lanes='maybe')
