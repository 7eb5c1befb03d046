"""Prophet's gradient blocks (issue 12) on a hand-made profile."""
import pytest

from netsched.host import prophet

MB = 1e6
# partition: ready (s after backward began), bytes, priority (0 = layer 0)
PROFILE = [(0.000, 10 * MB, 5), (0.001, 10 * MB, 4),      # group 1
           (0.010, 20 * MB, 3), (0.011, 5 * MB, 2),       # group 2
           (0.020, 5 * MB, 1), (0.021, 5 * MB, 0)]        # group 3


def test_groups_split_at_gaps_over_twice_the_mean():
    # gaps 1, 9, 1, 9, 1 ms: mean 4.2, so the 9 ms gaps cut
    ready = [r for r, _, _ in PROFILE]
    assert prophet.groups(ready) == ((0, 1), (2, 3), (4, 5))
    assert prophet.groups([0.0, 0.001, 0.002]) == ((0, 1, 2),)


def test_blocks_fill_each_gap_front_layers_first_then_the_tail():
    ready, size, prio = zip(*PROFILE)
    p = prophet.plan(ready, size, prio, bandwidth_Bps=2e9,
                     credit_bytes=4 * MB)
    # after group 1 (1 ms), 9 ms to the next group at 2 MB/ms: 18 MB.
    # Highest priority first: partition 1 (10 MB) fits, partition 0
    # would make 20: one block of partition 1.
    # after group 2 (11 ms), 9 ms again: 18 MB. Ready and unsent: 3 (prio
    # 2, 5 MB), 2 (prio 3, 20 MB), 0 (prio 5): 3 fits, 2 does not.
    assert [(b.start, b.parts) for b in p.blocks] == [
        (pytest.approx(0.001), (1,)), (pytest.approx(0.011), (3,))]
    assert [b.budget for b in p.blocks] == [pytest.approx(18 * MB)] * 2
    # layer 0 ready at 21 ms: the rest in strict priority order
    assert p.tail == (5, 4, 2, 0) and p.credit == 4 * MB


def test_no_block_when_nothing_fits_and_everything_reaches_the_tail():
    ready, size, prio = zip(*PROFILE)
    p = prophet.plan(ready, size, prio, bandwidth_Bps=0.5e9,
                     credit_bytes=MB)
    # 4.5 MB budgets: no partition fits; all go in priority order
    assert p.blocks == ()
    assert p.tail == (5, 4, 3, 2, 1, 0)
    # every partition is sent exactly once
    q = prophet.plan(ready, size, prio, 2e9, MB)
    sent = [i for b in q.blocks for i in b.parts] + list(q.tail)
    assert sorted(sent) == list(range(len(PROFILE)))


# --- issue 24: the mean gap, the strict budget, partition order ----------

def test_the_mean_gap_is_between_gradients_not_partitions():
    # gradient A (6 partitions) at 0, B at 4 ms, C at 5 ms, D (3
    # partitions) at 16 ms. Between gradients: gaps 4, 1, 11 ms, mean
    # 16/3 = 5.33, so only the 11 ms gap (> 10.67) cuts
    ready = [0.0] * 6 + [0.004, 0.005] + [0.016] * 3
    grad = ['A'] * 6 + ['B', 'C'] + ['D'] * 3
    assert prophet.groups(ready, grad) == (
        (0, 1, 2, 3, 4, 5, 6, 7), (8, 9, 10))
    # counted between partitions: 10 gaps (7 of them zero) of 16 ms in
    # all, mean 1.6, so the 4 ms gap (> 3.2) cut too
    assert prophet.groups(ready) == (
        (0, 1, 2, 3, 4, 5), (6, 7), (8, 9, 10))
    # the plan groups the same way
    p = prophet.plan(ready, [1.0] * 11, range(11, 0, -1), 1.0, 1.0, grad)
    assert p.groups == ((0, 1, 2, 3, 4, 5, 6, 7), (8, 9, 10))


def test_a_partition_goes_only_if_the_remaining_budget_is_greater():
    # p0 (prio 1), p1 (prio 2) at 0, p2 (prio 3) at 0.25 s, p3 (layer 0)
    # at 1 s: gaps 0, 0.25, 0.75 (mean 1/3) cut before p3 only. The block
    # at 0.25 s has 0.75 s x 8 B/s = 6 B.
    ready, prio = (0.0, 0.0, 0.25, 1.0), (1, 2, 3, 0)
    # p0 of 6 B: 6 > 6 fails, and priority is strict: no block at all
    p = prophet.plan(ready, (6, 1, 1, 1), prio, 8.0, 1.0)
    assert p.groups == ((0, 1, 2), (3,))
    assert p.blocks == () and p.tail == (3, 0, 1, 2)
    # p0 of 5 B: 6 > 5, in; then 1 B left, and p1 of 1 B: 1 > 1 fails
    p = prophet.plan(ready, (5, 1, 1, 1), prio, 8.0, 1.0)
    assert [(b.start, b.parts, b.budget) for b in p.blocks] == [
        (0.25, (0,), 6.0)]
    assert p.tail == (3, 1, 2)


def test_partitions_of_a_gradient_keep_their_order():
    # three partitions of one gradient, ready together at one priority,
    # listed (and numbered by the sender's first sight) as parts 2, 0, 1:
    # they leave as parts 0, 1, 2 (indices 1, 2, 0), in the tail ...
    p = prophet.plan([0.0] * 3, [1.0] * 3, [0] * 3, 1.0, 1.0,
                     ['g'] * 3, [2, 0, 1])
    assert p.tail == (1, 2, 0)
    # ... and in a block: with gradients e and f (priority 2) at 0 and h
    # (layer 0) at 0.5 s, gaps 0, 0, 0.5 (mean 1/6) cut before h; the
    # block at 0 has 0.5 s x 10 B/s = 5 B: parts 0 and 1 (1 B each),
    # then part 2 (4 B) does not go (3 left, not > 4), nor e and f
    p = prophet.plan([0.0] * 3 + [0.5, 0.0, 0.0], [4, 1, 1, 1, 1, 1],
                     [1] * 3 + [0, 2, 2], 10.0, 1.0,
                     ['g'] * 3 + ['h', 'e', 'f'], [2, 0, 1, 0, 0, 0])
    assert [b.parts for b in p.blocks] == [(1, 2)]
    assert p.tail == (3, 0, 4, 5)
    # the sender: its ids in the opposite order (as they could come from
    # a plan built another way), ready while another send is out
    s = prophet.Sender(0, 1.0, mode='bytescheduler')
    x = prophet.Send(0, 0, 'x', 1.0, 5.0, 0.0, 0.0)
    assert s.ready(x, 0.0) == [x]
    parts = [prophet.Send(9 - k, 0, 's%d' % k, 1.0, 1.0, 0.1, 0.0,
                          gradient='g', part=k) for k in (2, 0, 1)]
    for y in parts:
        assert s.ready(y, 0.1) == []               # x holds the credit
    got = []
    for tid in (0, 9, 8, 7):
        got += [y.part for y in s.done(tid, 0.0, 0.2)]
    assert got == [0, 1, 2]


# --- the sender (issue 12): one worker's executor, time passed in ---------

KB = 1000.0
# slot: ready offset from the backward start, bytes, priority (0 = layer 0)
SLOTS = {'s0': (0.000, 10 * KB, 5), 's1': (0.001, 10 * KB, 4),
         's2': (0.010, 20 * KB, 3), 's3': (0.011, 5 * KB, 2),
         's4': (0.020, 5 * KB, 1), 's5': (0.021, 5 * KB, 0)}
# iteration 0's sends, one after the other at 2 MB/s: (start, end)
BUSY = {'s0': (0.0, 0.005), 's1': (0.005, 0.010), 's2': (0.010, 0.020),
        's3': (0.020, 0.0225), 's4': (0.0225, 0.025), 's5': (0.025, 0.0275)}


def send(slot, it, b):
    off, size, prio = SLOTS[slot]
    return prophet.Send(10 * it + int(slot[1]), it, slot, size, prio,
                        b + off, b)


def profiled(profile_iterations=1, credit=12 * KB):
    """A sender that profiled iteration 0 (backward at 0): every send
    went as it became ready; the bandwidth is 55 kB over 27.5 ms."""
    s = prophet.Sender(profile_iterations, credit)
    for slot in sorted(SLOTS, key=lambda k: SLOTS[k][0]):
        x = send(slot, 0, 0.0)
        assert s.ready(x, x.ready) == [x]          # FIFO while profiling
    for slot, (a, b) in BUSY.items():
        assert s.done(send(slot, 0, 0.0).id, a, b) == []
    return s


def test_the_sender_goes_in_ready_order_while_it_profiles():
    s = prophet.Sender(2, 12 * KB)
    got = []
    for it, b in ((0, 0.0), (1, 1.0)):
        for slot in ('s0', 's1', 's2', 's3', 's4', 's5'):
            x = send(slot, it, b)
            got += [y.slot for y in s.ready(x, x.ready)]
    assert got == ['s0', 's1', 's2', 's3', 's4', 's5'] * 2
    assert s.plan is None and s.outstanding == 12 * 55 * KB / 6


def test_an_iteration_before_any_profiled_send_finished_stays_fifo():
    s = prophet.Sender(1, 12 * KB)
    x = send('s0', 0, 0.0)
    s.ready(x, 0.0)
    y = send('s2', 1, 1.0)                     # s0 is still in flight
    assert s.ready(y, y.ready) == [y] and s.plan is None
    z = send('s1', 1, 1.0)
    s.done(x.id, 0.0, 1.0)                     # measured now, but
    assert s.ready(z, z.ready) == [z]          # iteration 1 stays FIFO


def test_the_sender_carries_out_the_plan_by_hand():
    """Iteration 1, backward at 1.0: the plan of
    test_blocks_fill_each_gap_front_layers_first_then_the_tail (2 MB/s
    here, 18 kB budgets): block (s1,) at +1 ms, block (s3,) at +11 ms,
    then, once s5 (layer 0) is ready, s5 s4 s2 s0 in strict priority
    with at most 12 kB outstanding."""
    s = profiled()
    assert s.plan is None                       # made at iteration 1
    B = 1.0
    log = []

    def ready(slot):
        x = send(slot, 1, B)
        log.extend((y.slot, x.ready) for y in s.ready(x, x.ready))

    ready('s0')                                 # in no open block: waits
    assert s.bandwidth == pytest.approx(2e6)
    assert [(b.start, [s.slots[i] for i in b.parts]) for b in s.plan.blocks
            ] == [(0.001, ['s1']), (0.011, ['s3'])]
    assert [s.slots[i] for i in s.plan.tail] == ['s5', 's4', 's2', 's0']
    assert log == [] and s.next_wake() == B + 0.001
    ready('s1')                                 # block 1 opens with it
    assert log == [('s1', B + 0.001)] and s.next_wake() == B + 0.011
    s.done(11, B + 0.001, B + 0.006)
    ready('s2')                                 # ready before block 2
    assert s.wake(B + 0.0105) == []             # opens: nothing early
    ready('s3')
    assert log[-1] == ('s3', B + 0.011) and 's2' not in dict(log)
    s.done(13, B + 0.011, B + 0.0135)
    ready('s4')
    assert len(log) == 2 and s.next_wake() is None
    ready('s5')                                 # layer 0: the tail opens
    # s5 (5 kB), s4 (10 kB out); s2 (20 kB) would pass the 12 kB credit
    assert log[2:] == [('s5', B + 0.021), ('s4', B + 0.021)]
    assert s.outstanding == 10 * KB
    assert s.done(15, B + 0.021, B + 0.0235) == []      # s2 still > credit
    out = s.done(14, B + 0.0235, B + 0.026)             # nothing out: s2
    assert [x.slot for x in out] == ['s2']
    out = s.done(12, B + 0.026, B + 0.036)
    assert [x.slot for x in out] == ['s0']
    assert s.done(10, B + 0.036, B + 0.041) == [] and s.outstanding == 0


def test_the_credit_bounds_every_released_byte_in_the_tail():
    s = profiled(credit=1.0)                    # under any one send
    B = 1.0
    for slot in ('s0', 's1', 's2', 's3', 's4'):
        x = send(slot, 1, B)
        s.ready(x, B + 0.0205)                  # late: both blocks open
    assert s.outstanding == 15 * KB             # s1 and s3, the blocks
    x = send('s5', 1, B)
    assert s.ready(x, x.ready) == []            # blocks still out
    assert s.done(11, B, B + 0.021) == []
    assert [y.slot for y in s.done(13, B, B + 0.022)] == ['s5']
    order = []
    for tid in (15, 14, 12, 10):
        out = s.done(tid, B, B + 0.03)
        assert len(out) == (0 if tid == 10 else 1)
        order += [y.slot for y in out]
        assert s.outstanding <= 20 * KB and len(s.out) <= 1
    assert order == ['s4', 's2', 's0']


def test_the_busy_time_is_the_union_of_the_intervals():
    assert prophet.busy_time([(0, 1), (0.5, 2), (3, 4)]) == 3.0
    assert prophet.busy_time([]) == 0.0


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


@pytest.mark.parametrize('policy', ['prophet', 'bytescheduler'])
def test_the_simulator_and_the_agents_release_the_same_sends(monkeypatch,
                                                             policy):
    """The simulator's driver and the emulator's agent feed the same
    events to the same sender: replaying what the simulator's senders
    saw through the agent's glue (task dicts, its finish times, its
    clock) releases the same sends at the same moments. Prophet's and
    the ByteScheduler-like sender (whose credit, 8 MB, lets several
    partitions out at once)."""
    from netsched.pipeline import run as nrun
    from netsched.host import agent as agent_mod
    calls = []                                  # (sender, what, args, out)
    real = {k: getattr(prophet.Sender, k) for k in ('ready', 'done', 'wake')}

    def spy(name):
        def f(self, *a):
            out = real[name](self, *a)
            calls.append((id(self), name, a, [x.id for x in out]))
            return out
        return f
    for k in real:
        monkeypatch.setattr(prophet.Sender, k, spy(k))
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        nrun.execute(_exp(policy), d + '/out', say=lambda m: None,
                     plots=False)
    for k, f in real.items():
        monkeypatch.setattr(prophet.Sender, k, f)
    # Prophet's blocks open on wake-ups; ByteScheduler's sender has none
    assert any(name == 'wake' for _, name, _, _ in calls) == \
        (policy == 'prophet')
    assert any(len(out) > 1 for _, _, _, out in calls)      # a burst
    from netsched.workload import taskgraph
    tasks = {t.id: t.to_dict() for t in taskgraph.build(_exp(policy)).tasks}
    assert {t['prophet'].get('mode', 'prophet') for t in tasks.values()
            if t['prophet']} == {policy}
    for sender in {c[0] for c in calls}:
        mine = [c for c in calls if c[0] == sender]
        a = object.__new__(agent_mod.Agent)
        a.senders, a.wakes, a.woken, a.finish = {}, [], set(), {}
        a.tasks = tasks
        sent = []
        a.net = type('Net', (), {'send': lambda self, t, r: sent.append(
            t['id'])})()
        for _, name, args, out in mine:
            del sent[:]
            if name == 'ready':
                s, now = args
                a.finish[tasks[s.id]['prophet']['anchor']] = s.backward
                monkeypatch.setattr(agent_mod.time, 'monotonic',
                                    lambda: now)
                a._prophet(tasks[s.id]['job'], 'ready', tasks[s.id], s.ready)
            elif name == 'done':
                tid, start, end = args
                a._prophet(tasks[tid]['job'], 'done', tasks[tid],
                           start=start, end=end)
            else:
                monkeypatch.setattr(agent_mod.time, 'monotonic',
                                    lambda: args[0])
                a._prophet(next(iter(a.senders)), 'wake')
            assert sent == out
        # the agent asked to be woken whenever the simulator woke it
        assert {c[2][0] for c in mine if c[1] == 'wake'} <= \
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
    assert p.static and p.workload() == {
        'send_order': 'prophet', 'slice_mb': 4.0,
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
    """experiments/prophet.yaml on the simulator: the first two
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
        for pol in ('prophet', 'fair', 'p3'):
            e = experiment.load(path, backend='sim', policy=pol)
            _, s = nrun.execute(e, os.path.join(d, pol), say=lambda m: None,
                                plots=False)
            m = metrics.from_log(os.path.join(d, pol, 'events.jsonl'))
            res[pol] = (s['totals'], metrics.iteration_times(m)['r50'])
    ends = {p: [r[1] for r in rows] for p, (_, rows) in res.items()}
    assert ends['prophet'][:2] == pytest.approx(ends['fair'][:2], abs=1e-9)
    assert ends['prophet'][2] != pytest.approx(ends['fair'][2], abs=1e-6)
    front = {p: t['front_tensor_s'] for p, (t, _) in res.items()}
    assert front['prophet'] < 0.5 * front['fair']
    assert front['p3'] < front['prophet']
