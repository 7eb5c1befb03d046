"""Prophet's gradient blocks (issue 12) on a hand-made profile."""
import pytest

from netsched.workload import prophet

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
