"""Prophet and the ByteScheduler-like sender in runs (issues 12 and 42):
the plan's gradient sends and their knobs, the same sends released by
the simulator and by the agents, partitions cut as BytePS cuts them, and
what `netsched check` says of them."""
import pytest

from netsched.host import prophet


# --- both backends, the plan, the knobs -----------------------------------

def _exp(policy='prophet', **job):
    from netsched.pipeline import experiment
    j = dict(id='p', model='resnet50', pattern='ps', workers=2,
             iterations=4, slice_mb=4.0, placement=['hl0', 'hl1', 'hr0'])
    j.update(job)
    return experiment.from_dict({'topology': 'dumbbell,2', 'policy': policy,
                                 'policy_params': {'prophet': {
                                     'profile_iterations': 1},
                                     'bytescheduler': {'credit_mb': 8}},
                                 'jobs': [j]}, 'e.yaml', backend='sim')


def test_gradient_sends_carry_the_knobs_and_their_backward_start():
    from netsched.workload import taskgraph
    plan = taskgraph.build(_exp())
    sends = [t for t in plan.tasks if t.kind == 'send']
    grads = [t for t in sends if t.prophet]
    # every push, no pull
    assert {t.label.split()[0] for t in grads} == {'push'}
    assert len(grads) == sum(t.label.startswith('push') for t in sends)
    for t in grads:
        a = plan.tasks[t.prophet['anchor']]
        # the last forward layer of the same worker and iteration
        assert (a.kind, a.host, a.iter) == ('compute', t.host, t.iter)
        assert a.label == 'F%d' % (len([x for x in plan.tasks
                                        if x.kind == 'compute'
                                        and x.host == t.host and x.iter == 0
                                        and x.label.startswith('F')]) - 1)
        assert t.order is None
        assert prophet.knobs(t.prophet) == (1, 4.0 * 2 ** 20)
    # ring: only each bucket's first step is a worker's own gradient
    ring = taskgraph.build(_exp('fair', pattern='ring', slice_mb=None,
                                send_order='prophet',
                                placement=['hl0', 'hr0']))
    g = [t for t in ring.tasks if t.kind == 'send' and t.prophet]
    assert g and all(t.label.endswith(' step0') for t in g)
    assert prophet.knobs(g[0].prophet) == (2, 4.0 * 2 ** 20)   # defaults


# a backward pass with a gap: L3, L2 and L1 ready 1 ms apart, then
# layer 0 8 ms later (instants 1, 2, 3, 11 ms: the 8 ms gap is over
# twice their mean gap, 3.33 ms), so Prophet plans a block
GAPS = """
name: gaps
layers:
  - {name: L0, forward_ms: 1, backward_ms: 8,
     tensors: [{name: t0, bytes: 2097152}]}
  - {name: L1, forward_ms: 1, backward_ms: 1,
     tensors: [{name: w1, bytes: 3145728}, {name: b1, bytes: 1048576}]}
  - {name: L2, forward_ms: 1, backward_ms: 1,
     tensors: [{name: t2, bytes: 2097152}]}
  - {name: L3, forward_ms: 1, backward_ms: 1,
     tensors: [{name: t3, bytes: 4194304}]}
"""


@pytest.mark.parametrize('policy', ['prophet', 'bytescheduler'])
def test_the_simulator_and_the_agents_release_the_same_sends(monkeypatch,
                                                             tmp_path,
                                                             policy):
    """The simulator's driver and the emulator's agent feed the same
    events to the same sender: replaying what the simulator's senders
    were handed, batch by batch, through the agent's glue (task dicts,
    its finish times, its clock, its flush) releases the same sends at
    the same moments. Prophet's and the ByteScheduler-like sender (whose
    credit, 8 MB, lets several partitions out at once), on a model
    whose backward pass has a gap Prophet fills with a block (its
    compute varying from iteration to iteration, so that blocks open
    between the sends' ready times, on wake-ups)."""
    from netsched.pipeline import run as nrun
    from netsched.host import agent as agent_mod
    (tmp_path / 'gaps.yaml').write_text(GAPS)

    def exp():
        return _exp(policy, model=str(tmp_path / 'gaps.yaml'),
                    slice_mb=1.0, compute_jitter=0.1)
    calls = []                              # (sender, now, ready, done, out)
    real = prophet.Sender.update

    def spy(self, now, ready=(), done=()):
        out = real(self, now, ready, done)
        calls.append((id(self), now, list(ready), list(done),
                      [x.id for x in out]))
        return out
    monkeypatch.setattr(prophet.Sender, 'update', spy)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        nrun.execute(exp(), d + '/out', say=lambda m: None)
    monkeypatch.setattr(prophet.Sender, 'update', real)
    # Prophet's blocks open on wake-ups (a batch of nothing);
    # ByteScheduler's sender has none
    assert any(not r and not d for _, _, r, d, _ in calls) == \
        (policy == 'prophet')
    assert any(len(out) > 1 for *_, out in calls)           # a burst
    assert any(len(r) > 1 for _, _, r, _, _ in calls)       # a batch
    from netsched.workload import taskgraph
    tasks = {t.id: t.to_dict() for t in taskgraph.build(exp()).tasks}
    assert {t['prophet'].get('mode', 'prophet') for t in tasks.values()
            if t['prophet']} == {policy}
    for sender in {c[0] for c in calls}:
        mine = [c for c in calls if c[0] == sender]
        sent = []
        a = agent_mod.HostSenders({}, lambda t, r: sent.append(t['id']))
        for _, now, ready, done, out in mine:
            del sent[:]
            for tid, start, end in done:
                a.event(tasks[tid]['job'], 'done', tasks[tid],
                        start=start, end=end)
            for s in ready:
                a.finish[tasks[s.id]['prophet']['anchor']] = s.backward
                a.event(tasks[s.id]['job'], 'ready', tasks[s.id], s.ready)
            if not ready and not done:
                a.event(next(iter(a.senders)), 'wake')
            monkeypatch.setattr(agent_mod.time, 'monotonic', lambda: now)
            a.flush()
            assert sent == out and not a.batch
        # the agent asked to be woken whenever the simulator woke it
        assert {now for _, now, r, d, _ in mine if not r and not d} <= \
            {w for w, _ in a.woken}


def test_a_transport_reports_a_prophet_send_written_whole():
    import queue
    import socket
    import time
    from netsched.host import transport

    def free():
        s = socket.socket()
        s.bind(('127.0.0.1', 0))
        p = s.getsockname()[1]
        s.close()
        return p
    inbox = queue.Queue()
    net = transport.Transport(1.0, {}, {}, inbox, lambda *a: None)
    net.report_sent = True
    port = free()
    net.listen(port, 1)
    net.connect('127.0.0.1', [{'id': 0, 'sport': free(),
                               'dst_ip': '127.0.0.1', 'dport': port}])
    net.send({'id': 1, 'coflow': 'c', 'bytes': 1000, 'conn': 0}, 0.0)
    net.send({'id': 2, 'coflow': 'c', 'bytes': 50_000, 'conn': 0,
              'prophet': {'anchor': 0}}, 0.0)
    got = [inbox.get(timeout=5) for _ in range(3)]
    sent = [m for m in got if m[0] == 'sent']
    assert [m[1] for m in sent] == [2]          # only the Prophet send
    _, _, start, end = sent[0]
    assert start <= end <= time.monotonic()
    assert sorted(m[1] for m in got if m[0] == 'recv') == [1, 2]


def test_the_policy_and_the_knobs_are_checked():
    from netsched import policies
    from netsched.pipeline import experiment
    from netsched.errors import ConfigError
    p = policies.make('prophet')
    # BytePS' partitions: 4,096,000 B is 3.90625 MiB
    assert p.static and p.workload() == {
        'send_order': 'prophet', 'slice_mb': 3.90625,
        'partitions': 'byteps',
        'prophet': {'profile_iterations': prophet.PROFILE_ITERATIONS,
                    'credit_mb': prophet.CREDIT_MB}}
    assert experiment.PROPHET_KNOBS == {
        'profile_iterations': prophet.PROFILE_ITERATIONS,
        'credit_mb': prophet.CREDIT_MB}

    def bad(match, policy='fair', params=None, **job):
        j = dict(id='p', model='resnet50', pattern='ps', workers=2,
                 iterations=4)
        j.update(job)
        d = {'topology': 'dumbbell,2', 'policy': policy, 'jobs': [j]}
        if params is not None:
            d['policy_params'] = {'prophet': params}
        with pytest.raises(ConfigError, match=match):
            experiment.from_dict(d, 'e.yaml')
    bad(r"e.yaml: jobs\[0\]: send_order: must be one of ready, priority, "
        r"prophet, bytescheduler, got 'blocks'", send_order='blocks')
    bad(r"e.yaml: jobs\[0\]: prophet: credit_mb: must be > 0, got -1",
        send_order='prophet', prophet={'credit_mb': -1})
    bad(r"e.yaml: jobs\[0\]: prophet: profile_iterations: must be an "
        r"integer, got 1.5", send_order='prophet',
        prophet={'profile_iterations': 1.5})
    bad(r"e.yaml: jobs\[0\]: prophet: unknown key 'credit'",
        send_order='prophet', prophet={'credit': 4})
    bad(r"e.yaml: jobs\[0\]: prophet: Prophet's knobs are for a job with "
        r"send_order: prophet \(this one has ready\)", prophet={})
    bad(r"e.yaml: policy_params: prophet: credit_mb: must be a positive "
        r"number, got 0", params={'credit_mb': 0})
    bad(r"e.yaml: policy_params: prophet: profile_iterations: must be a "
        r"whole number, got 0.5", params={'profile_iterations': 0.5})
    bad(r"e.yaml: policy_params: prophet: policy prophet has no parameter "
        r"'gap'", params={'gap': 1})
    # a job's own knobs win over the policy's
    from netsched.workload import taskgraph
    e = experiment.from_dict({
        'topology': 'dumbbell,2', 'policy': 'prophet',
        'policy_params': {'prophet': {'credit_mb': 8}},
        'jobs': [dict(id='p', model='resnet50', pattern='ps', workers=2,
                      iterations=4, send_order='prophet',
                      prophet={'credit_mb': 1})]}, 'e.yaml')
    t = next(t for t in taskgraph.build(e).tasks if t.prophet)
    assert prophet.knobs(t.prophet) == (2, 2 ** 20)


def test_on_the_simulator_prophet_sends_front_layers_sooner_than_fifo():
    """experiments/prophet.yaml on the simulator, Prophet with the equal
    slices fair and p3 send (``partitions: equal``): the first two
    iterations (profiling, ready order) end exactly when FIFO's do; after
    them every iteration's front-layer tensors (the first quarter of the
    model) are received sooner than under FIFO, and p3 (strict priority)
    is sooner still."""
    import os
    import tempfile
    from netsched import ROOT
    from netsched.pipeline import experiment, metrics, run as nrun
    path = os.path.join(ROOT, 'experiments', 'prophet.yaml')
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for pol, spec in (('prophet', 'prophet:partitions=equal'),
                          ('fair', 'fair'), ('p3', 'p3')):
            e = experiment.load(path, backend='sim', policy=spec)
            _, s = nrun.execute(e, os.path.join(d, pol), say=lambda m: None)
            m = metrics.from_log(os.path.join(d, pol, 'events.jsonl'))
            res[pol] = (s['totals'], metrics.iteration_times(m)['r50'])
    ends = {p: [r[1] for r in rows] for p, (_, rows) in res.items()}
    assert ends['prophet'][:2] == pytest.approx(ends['fair'][:2], abs=1e-9)
    assert ends['prophet'][2] != pytest.approx(ends['fair'][2], abs=1e-6)
    front = {p: t['front_tensor_s'] for p, (t, _) in res.items()}
    assert front['prophet'] < 0.5 * front['fair']
    assert front['p3'] < front['prophet']


# --- issue 42: sends ready at one instant, on both backends --------------

# forward order; L1 has no backward compute, so its weight's two
# partitions and its bias are ready with L2's gradient; 1 MiB a
# partition, 1 MiB/ms on the link, one worker and one shard
SAME = """
name: same
layers:
  - {name: L0, forward_ms: 1, backward_ms: 10,
     tensors: [{name: t0, bytes: 1048576}]}
  - {name: L1, forward_ms: 1, backward_ms: 0,
     tensors: [{name: w1, bytes: 2097152}, {name: b1, bytes: 1048576}]}
  - {name: L2, forward_ms: 1, backward_ms: 1,
     tensors: [{name: t2, bytes: 1048576}]}
  - {name: L3, forward_ms: 1, backward_ms: 1,
     tensors: [{name: t3, bytes: 1048576}]}
  - {name: L4, forward_ms: 1, backward_ms: 1,
     tensors: [{name: t4, bytes: 1048576}]}
"""
SAME_EXP = """
name: same
backend: sim
topology: dumbbell,1
link_gbps: 8.388608
policy: fair
jobs:
  - {id: j, model: same.yaml, pattern: ps, workers: 1, ps_shards: 1,
     iterations: 3, placement: [hl0, hr0], slice_mb: 1,
     send_order: prophet, prophet: {profile_iterations: 2}}
"""


def _same(tmp_path):
    from netsched.pipeline import experiment
    (tmp_path / 'same.yaml').write_text(SAME)
    (tmp_path / 'e.yaml').write_text(SAME_EXP)
    return experiment.load(str(tmp_path / 'e.yaml'), backend='sim')


def test_same_instant_partitions_leave_in_order_on_the_simulator(tmp_path):
    """Pushes by sevenths of the model's 7 MiB (t0 = 0, w1 = 1 and 2,
    b1 = 3, t2 = 4, t3 = 5, t4 = 6). Backward from 5 ms: t4 ready at
    +1 ms, t3 at +2, t2, w1's two partitions and b1 at +3 (the driver
    hands them over as b1, w1/0, w1/1, t2: the task graph's order), t0
    at +13. Profiled iterations 0 and 1 go in ready order, those at +3
    front layers first: 6 5 1 2 3 4 0. Iteration 2: the instants 1, 2,
    3, 13 ms (gaps 1, 1, 10: mean 4) cut before t0; the block at +3 has
    10 ms at the profiled ~1 MiB/ms, room for all six: t4 and t3 wait
    for it, and it sends 1 2 3 4 5 6; t0 opens the tail."""
    import json
    from netsched.pipeline import run as nrun
    nrun.execute(_same(tmp_path), str(tmp_path / 'out'),
                 say=lambda m: None)
    with open(tmp_path / 'out' / 'events.jsonl') as f:
        flows = [json.loads(x) for x in f if '"ev":"flow"' in x]
    order = []
    for k in range(3):
        push = sorted((f['start'], round(f['urgency'] * 7)) for f in flows
                      if f['src'] == 'hl0' and f['coflow'] == 'j/%d' % k)
        order.append([u for _, u in push])
    assert order == [[6, 5, 1, 2, 3, 4, 0]] * 2 + [[1, 2, 3, 4, 5, 6, 0]]


def test_same_instant_partitions_leave_in_order_from_the_agent(tmp_path):
    """The emulator's agent, its main loop's timers stepped by hand (no
    network: its transport records what it is given): L1's backward
    ends at the instant L2's does, but the timer heap gives L2's
    gradient first (it is ready when L2's timer fires, L1's a zero-time
    timer later). Iteration 0 is profiled: ready order, those at one
    instant front layers first: t4, t3, then w1/0, w1/1, b1, t2, and t0
    (by sevenths of the model, as above)."""
    from netsched.host import agent as agent_mod
    from netsched.workload import taskgraph
    plan = taskgraph.build(_same(tmp_path))
    a = object.__new__(agent_mod.Agent)
    a._take_plan({'scale': 1.0, 'queues': 8,
                  'tasks': [t.to_dict() for t in plan.tasks
                            if t.host == 'hl0'],
                  'incoming': [{'id': t.id} for t in plan.tasks
                               if t.kind == 'send' and t.dst == 'hl0']})
    a.tell = lambda **msg: None
    a.controller = agent_mod.NoController()
    sent = []
    a.net = type('Net', (), {'send': lambda self, t, r: sent.append(
        (round(r * 1e3, 6), round(t['urgency'] * 7)))})()
    a._start(0.0)
    while a.timers:
        a._due(a.timers[0][0])
    assert sent == [(6.0, 6), (7.0, 5)] + [(8.0, u) for u in (1, 2, 3, 4)] \
        + [(18.0, 0)]


# --- issue 42: partitions as BytePS cuts them, in the plan ---------------

TWO = """
name: two
layers:
  - {name: L0, forward_ms: 1, backward_ms: 1,
     tensors: [{name: big, bytes: 10000000}]}
  - {name: L1, forward_ms: 1, backward_ms: 1,
     tensors: [{name: small, bytes: 1000000}]}
"""


def _pushes(tmp_path, policy, **job):
    """Worker 0's pushes of iteration 0 under ``policy``: (label, bytes,
    urgency x 11,000,000, the model's bytes before the send's first)."""
    from netsched.pipeline import experiment
    from netsched.workload import taskgraph
    (tmp_path / 'two.yaml').write_text(TWO)
    j = dict(id='j', model='two.yaml', pattern='ps', workers=1,
             iterations=1, placement=['hl0', 'hr0'])
    j.update(job)
    e = experiment.from_dict({'topology': 'dumbbell,1', 'jobs': [j]},
                             str(tmp_path / 'e.yaml'), backend='sim',
                             policy=policy)
    return [(t.label, t.bytes, round(t.urgency * 11_000_000))
            for t in taskgraph.build(e).tasks
            if t.kind == 'send' and t.label.startswith('push')]


def test_prophet_and_bytescheduler_cut_as_byteps_by_default(tmp_path):
    """A 10,000,000 B tensor (layer 0) and a 1,000,000 B one: under
    prophet and bytescheduler 4,096,000 B partitions, the remainder
    last; each partition's urgency is the model's bytes before its
    first byte. ``partitions: equal`` gives netsched's equal slices; a
    job's own slice_mb (2 MiB: 4 x 2,097,152 and 1,611,392) keeps the
    policy's cut. Under fair the job's slice_mb is cut equally."""
    byteps = [('push small', 1_000_000, 10_000_000),
              ('push big[0/3]', 4_096_000, 0),
              ('push big[1/3]', 4_096_000, 4_096_000),
              ('push big[2/3]', 1_808_000, 8_192_000)]
    assert _pushes(tmp_path, 'prophet') == byteps
    assert _pushes(tmp_path, 'bytescheduler') == byteps
    equal = [('push small', 1_000_000, 10_000_000),
             ('push big[0/3]', 3_333_334, 0),
             ('push big[1/3]', 3_333_334, 3_333_334),
             ('push big[2/3]', 3_333_332, 6_666_668)]
    assert _pushes(tmp_path, 'prophet:partitions=equal') == equal
    assert _pushes(tmp_path, 'bytescheduler:partitions=equal') == equal
    M = 2 ** 21
    assert [b for _, b, _ in _pushes(tmp_path, 'prophet', slice_mb=2)] == \
        [1_000_000, M, M, M, M, 10_000_000 - 4 * M]
    assert [b for _, b, _ in _pushes(tmp_path, 'fair', slice_mb=2)] == \
        [1_000_000] + [2_000_000] * 5
    assert [b for _, b, _ in _pushes(tmp_path, 'fair')] == \
        [1_000_000, 10_000_000]


@pytest.mark.parametrize('policy', ['prophet', 'bytescheduler'])
def test_netsched_check_names_a_bad_partitions(tmp_path, policy):
    import subprocess
    import sys
    from netsched import ROOT
    path = tmp_path / 'e.yaml'
    path.write_text(
        'topology: dumbbell,2\npolicy: %s\npolicy_params:\n'
        '  %s: {partitions: BytePS}\njobs:\n'
        '  - {id: j, model: resnet50, pattern: ps, workers: 2, '
        'iterations: 3}\n' % (policy, policy))

    def check(*args):
        return subprocess.run([sys.executable, '-m', 'netsched', 'check',
                               str(path), '--backend', 'sim', *args],
                              capture_output=True, text=True, timeout=60,
                              cwd=ROOT)
    r = check()
    assert r.returncode == 2 and r.stderr == (
        "netsched: error: %s: partitions must be one of equal, byteps, "
        "got 'BytePS'\n" % policy)
    path.write_text(path.read_text().replace('BytePS', 'equal'))
    r = check()
    assert r.returncode == 0, r.stderr
    r = check('--policy', '%s:partitions=4' % policy)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and \
        "partitions must be one of equal, byteps, got 4" in r.stderr
