"""Prophet's gradient blocks and its sender (issues 12, 24, 42) on
hand-made profiles; the plan and both backends: test_prophet_runs.py."""
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

def test_the_mean_gap_is_between_distinct_ready_instants():
    # gradient A (6 partitions) at 0, B at 4 ms, C at 5 ms, D (3
    # partitions) at 16 ms. Instants 0, 4, 5, 16 ms: gaps 4, 1, 11 ms,
    # mean 16/3 = 5.33, so only the 11 ms gap (> 10.67) cuts. (Counted
    # between partitions, 10 gaps of 16 ms in all, mean 1.6, the 4 ms gap
    # would cut too.)
    ready = [0.0] * 6 + [0.004, 0.005] + [0.016] * 3
    assert prophet.groups(ready) == (
        (0, 1, 2, 3, 4, 5, 6, 7), (8, 9, 10))
    p = prophet.plan(ready, [1.0] * 11, range(11, 0, -1), 1.0, 1.0)
    assert p.groups == ((0, 1, 2, 3, 4, 5, 6, 7), (8, 9, 10))


def test_gradients_ready_at_one_instant_count_it_once():
    """Issue 42: six gradients (a layer's weight and bias, BatchNorm
    layers with no compute) ready at 0, six at 2 ms, one at 3 ms, layer
    0 at 10 ms. Instants 0, 2, 3, 10 ms: gaps 2, 1, 7, mean 10/3 = 3.33
    ms; twice that is 6.67: the 7 ms gap cuts, the 2 ms one does not.
    Between gradients, 13 gaps (10 of them zero) of 10 ms, mean 0.77,
    the 2 ms gap (> 1.54) would cut as well: three groups, two small
    blocks."""
    ready = [0.0] * 6 + [0.002] * 6 + [0.003, 0.010]
    assert prophet.groups(ready) == (tuple(range(13)), (13,))
    # the plan: one block, when the 3 ms gradient is ready, of 7 ms at
    # 1 B/ms = 7 B: the six front-most of 1 B each (7 > 1, ..., 2 > 1,
    # then 1 > 1 fails); layer 0 opens the tail
    prio = list(range(13, 0, -1)) + [0]
    p = prophet.plan(ready, [1.0] * 14, prio, 1000.0, 1.0)
    assert [(b.start, b.parts, b.budget) for b in p.blocks] == [
        (0.003, (12, 11, 10, 9, 8, 7), pytest.approx(7.0))]
    assert p.tail == (13, 6, 5, 4, 3, 2, 1, 0)


def test_a_partition_goes_only_if_the_remaining_budget_is_greater():
    # p0 (prio 1), p1 (prio 2) at 0, p2 (prio 3) at 0.125 s, p4 (prio
    # 4) at 0.25 s, p3 (layer 0) at 1 s: gaps 0.125, 0.125, 0.75 (mean
    # 1/3) cut before p3 only. The block at 0.25 s has 0.75 s x 8 B/s =
    # 6 B.
    ready, prio = (0.0, 0.0, 0.125, 1.0, 0.25), (1, 2, 3, 0, 4)
    # p0 of 6 B: 6 > 6 fails, and priority is strict: no block at all
    p = prophet.plan(ready, (6, 1, 1, 1, 1), prio, 8.0, 1.0)
    assert p.groups == ((0, 1, 2, 4), (3,))
    assert p.blocks == () and p.tail == (3, 0, 1, 2, 4)
    # p0 of 5 B: 6 > 5, in; then 1 B left, and p1 of 1 B: 1 > 1 fails
    p = prophet.plan(ready, (5, 1, 1, 1, 1), prio, 8.0, 1.0)
    assert [(b.start, b.parts, b.budget) for b in p.blocks] == [
        (0.25, (0,), 6.0)]
    assert p.tail == (3, 1, 2, 4)


def test_partitions_of_a_gradient_keep_their_order():
    # three partitions of one gradient, ready together at one priority,
    # listed (and numbered by the sender's first sight) as parts 2, 0, 1:
    # they leave as parts 0, 1, 2 (indices 1, 2, 0), in the tail ...
    p = prophet.plan([0.0] * 3, [1.0] * 3, [0] * 3, 1.0, 1.0, [2, 0, 1])
    assert p.tail == (1, 2, 0)
    # ... and in a block: with gradients e and f (priority 2) at 0, c
    # (3) at 0.05 s, d (4) at 0.1 s and h (layer 0) at 0.6 s, gaps 0.05,
    # 0.05, 0.5 (mean 0.2) cut before h; the block at 0.1 s has 0.5 s x
    # 10 B/s = 5 B: parts 0 and 1 (1 B each), then part 2 (4 B) does not
    # go (3 left, not > 4), nor e, f, c, d
    p = prophet.plan([0.0] * 3 + [0.6, 0.0, 0.0, 0.05, 0.1],
                     [4, 1, 1, 1, 1, 1, 1, 1], [1] * 3 + [0, 2, 2, 3, 4],
                     10.0, 1.0, [2, 0, 1, 0, 0, 0, 0, 0])
    assert [(b.start, b.parts) for b in p.blocks] == [(0.1, (1, 2))]
    assert p.tail == (3, 0, 4, 5, 6, 7)
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


# --- issue 42: the sends ready at one instant, taken in together -----------

def part(i, slot, prio, ready=0.0, it=0, size=1.0, gradient=None, k=0,
         backward=0.0):
    return prophet.Send(i, it, slot, float(size), prio, ready, backward,
                        gradient=gradient, part=k)


def test_a_same_instant_batch_goes_in_priority_order_in_the_tail():
    """L3's two partitions and L4's one, ready together, handed over as
    [L3/0, L4/0, L3/1]; 1 B each, a 2 B credit. Taken in one by one the
    credit lets out L3/0 and L4/0 and holds L3/1 behind them; taken in
    together L3/0 and L3/1 go, L4/0 (3 B) waits until one is done."""
    def batch():
        return [part(1, 'L3/0', 0.30, gradient='L3'),
                part(2, 'L4/0', 0.40, gradient='L4'),
                part(3, 'L3/1', 0.35, gradient='L3', k=1)]
    one = prophet.Sender(credit_bytes=2.0, mode='bytescheduler')
    got = [x.slot for s in batch() for x in one.ready(s, 0.0)]
    assert got == ['L3/0', 'L4/0']                 # the reported order
    s = prophet.Sender(credit_bytes=2.0, mode='bytescheduler')
    assert [x.slot for x in s.update(0.0, ready=batch())] == ['L3/0', 'L3/1']
    assert s.outstanding == 2.0
    assert [x.slot for x in s.done(1, 0.0, 1.0)] == ['L4/0']
    # a done and a ready at one instant: the credit the done frees goes
    # to the front layer ready then, not to the one that waited
    s = prophet.Sender(credit_bytes=1.0, mode='bytescheduler')
    assert s.update(0.0, ready=[part(1, 'x', 0.5)]) != []
    assert s.update(0.0, ready=[part(2, 'late', 0.9)]) == []
    out = s.update(1.0, ready=[part(3, 'front', 0.1, ready=1.0)],
                   done=[(1, 0.0, 1.0)])
    assert [x.slot for x in out] == ['front']


def test_a_same_instant_batch_goes_in_the_blocks_order():
    """A profile (iteration 0, backward at 0; 1000 B each): z at 0 ms, y
    at 1 ms, L3/0, L3/1 and L4/0 at 2 ms, layer 0 at 20 ms. Distinct
    instants 0, 1, 2, 20 ms: gaps 1, 1, 18 (mean 6.67), so the 18 ms gap
    cuts. Sends back to back over 30 ms: 200 kB/s, the block at 2 ms
    has 18 ms x 200 kB/s = 3600 B: L3/0 (3600 > 1000), L3/1 (2600 >
    1000), L4/0 (1600 > 1000), not y (600). Iteration 1 (backward at
    1 s): z and y wait for the block; at 1.002 s it opens as L3/0, L4/0
    and L3/1 become ready, handed over in that order."""
    prio = {'z': 0.9, 'y': 0.8, 'L3/0': 0.30, 'L3/1': 0.35, 'L4/0': 0.40,
            'f': 0.0}
    off = {'z': 0.0, 'y': 0.001, 'L3/0': 0.002, 'L3/1': 0.002,
           'L4/0': 0.002, 'f': 0.020}
    ids = {k: i for i, k in enumerate(prio)}

    def mk(slot, it, b):
        return part(10 * it + ids[slot], slot, prio[slot],
                    ready=b + off[slot], it=it, size=1000.0,
                    gradient=slot.split('/')[0], k=int(slot[-1])
                    if '/' in slot else 0, backward=b)

    def profiled():
        s = prophet.Sender(1, 1e9)
        for k in prio:
            assert s.ready(mk(k, 0, 0.0), off[k]) == [mk(k, 0, 0.0)]
        for n, k in enumerate(prio):
            s.done(ids[k], 0.005 * n, 0.005 * (n + 1))
        return s
    B = 1.0
    late = [mk('L3/0', 1, B), mk('L4/0', 1, B), mk('L3/1', 1, B)]
    for s, together in ((profiled(), True), (profiled(), False)):
        assert s.ready(mk('z', 1, B), B) == []
        assert s.bandwidth == pytest.approx(2e5)
        assert [(b.start, [s.slots[i] for i in b.parts])
                for b in s.plan.blocks] == [(0.002, ['L3/0', 'L3/1',
                                                     'L4/0'])]
        assert s.ready(mk('y', 1, B), B + 0.001) == []
        assert s.next_wake() == B + 0.002
        if together:
            got = [x.slot for x in s.update(B + 0.002, ready=late)]
            assert got == ['L3/0', 'L3/1', 'L4/0']
        else:                                   # as they were handed over
            got = [x.slot for y in late for x in s.ready(y, B + 0.002)]
            assert got == ['L3/0', 'L4/0', 'L3/1']


# --- issue 42: partitions as BytePS cuts them --------------------------------

def test_byteps_partitions_are_whole_with_the_remainder_last():
    from netsched.workload.taskgraph import slice_sizes
    B = 4096000
    # 10,000,000 B: 2 x 4,096,000 and 8,192,000 short of it, 1,808,000;
    # equal slices: ceil(10,000,000 / 3) = 3,333,334 twice, then the rest
    assert slice_sizes(10_000_000, B, 'byteps') == [B, B, 1_808_000]
    assert slice_sizes(10_000_000, B, 'equal') == [3_333_334] * 2 + \
        [3_333_332]
    # a whole number of partitions, one smaller than a partition, none
    assert slice_sizes(2 * B, B, 'byteps') == [B, B]
    assert slice_sizes(2 * B, B, 'equal') == [B, B]
    assert slice_sizes(B - 1, B, 'byteps') == [B - 1]
    assert slice_sizes(10_000_000, None, 'byteps') == [10_000_000]
    # BytePS' bound is in whole bytes: 2.5 B slices of 6 B are 2 B ones
    assert slice_sizes(6, 2.5, 'byteps') == [2, 2, 2]
    assert slice_sizes(6, 2.5, 'equal') == [2, 2, 2]
    assert slice_sizes(7, 2.5, 'byteps') == [2, 2, 2, 1]
    assert slice_sizes(7, 2.5, 'equal') == [3, 3, 1]


# --- issue 42: the tail waits for layer 0, as the public code's switch ----

def test_without_a_large_gap_everything_waits_for_layer_0():
    """Four gradients of 1000 B ready 1 ms apart, layer 0 (priority 0)
    last at 3 ms: gaps 1, 1, 1 ms, mean 1, none over 2, so one group and
    no block (the public code's checkpoints hold only the start and the
    end: its countdown sends nothing until layer 0 is pushed). Iteration
    1 (backward at 1 s): d, c and b wait with nothing outstanding; at
    1.003 s a (layer 0) opens the tail: a, b, c, d in strict priority,
    2000 B of credit."""
    prio = {'d': 3.0, 'c': 2.0, 'b': 1.0, 'a': 0.0}
    off = {'d': 0.0, 'c': 0.001, 'b': 0.002, 'a': 0.003}
    ids = {k: i for i, k in enumerate(prio)}

    def mk(slot, it, b):
        return part(10 * it + ids[slot], slot, prio[slot],
                    ready=b + off[slot], it=it, size=1000.0, backward=b)
    p = prophet.plan(list(off.values()), [1000.0] * 4, list(prio.values()),
                     1e6, 2000.0)
    assert p.groups == ((0, 1, 2, 3),) and p.blocks == ()
    assert p.tail == (3, 2, 1, 0)
    s = prophet.Sender(1, 2000.0)
    for k in prio:                                 # profiled: FIFO
        assert s.ready(mk(k, 0, 0.0), off[k]) == [mk(k, 0, 0.0)]
    for n, k in enumerate(prio):
        s.done(ids[k], 0.001 * n, 0.001 * (n + 1))
    B = 1.0
    for k in ('d', 'c', 'b'):
        assert s.ready(mk(k, 1, B), B + off[k]) == []
        assert s.outstanding == 0 and s.next_wake() is None
    assert s.plan.blocks == ()
    got = [x.slot for x in s.ready(mk('a', 1, B), B + 0.003)]
    assert got == ['a', 'b'] and s.outstanding == 2000.0
    assert [x.slot for x in s.done(10 + ids['a'], B + 0.003, B + 0.004)
            ] == ['c']
    assert [x.slot for x in s.done(10 + ids['b'], B + 0.004, B + 0.005)
            ] == ['d']
