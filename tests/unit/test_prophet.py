"""Prophet's gradient blocks (issue 12) on a hand-made profile."""
import pytest

from netsched.policies import prophet

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
