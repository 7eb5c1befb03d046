"""Coflow baselines on hand-worked snapshots."""
import numpy as np
import pytest

from netsched import policies
from netsched.errors import ConfigError
from netsched.policies import Snapshot, flow_priority, sincronia, varys

MB = 2 ** 20


def snap(flows, cap=(8.0, 8.0, 8.0), arrival=None, sent=None, rate=None,
         queues=None, t=0.0):
    """flows: (coflow index, link, remaining bytes); capacities in bit/s
    (8 bit/s = 1 byte/s, so Gamma is in seconds of bytes)."""
    C = 1 + max(f[0] for f in flows)
    paths = sorted({(f[1],) for f in flows})
    pid = {p: i for i, p in enumerate(paths)}
    return Snapshot(
        t=t, queues=queues, link_capacity=np.array(cap, float),
        path_links=np.array(paths), flow_path=np.array(
            [pid[(f[1],)] for f in flows]),
        flow_coflow=np.array([f[0] for f in flows]),
        flow_remaining=np.array([f[2] for f in flows], float),
        flow_sent=np.zeros(len(flows)),
        flow_rate=np.zeros(len(flows)) if rate is None else np.array(rate),
        coflow_id=tuple('c%d' % i for i in range(C)),
        coflow_arrival=np.zeros(C) if arrival is None else np.array(arrival),
        coflow_sent=np.zeros(C) if sent is None else np.array(sent, float))


# A: 10 B on port 0.  B: 2 B on port 0, 6 B on port 1.  C: 1 B on port 0,
# 3 B on port 2.  Gamma (1 B/s ports): A 10, B 6, C 3 -> SEBF order C, B, A.
SEBF_CASE = [(0, 0, 10), (1, 0, 2), (1, 1, 6), (2, 0, 1), (2, 2, 3)]


def test_sebf_orders_three_coflows_by_effective_bottleneck():
    s = snap(SEBF_CASE)
    assert varys.effective_bottleneck(s).tolist() == [10.0, 6.0, 3.0]
    d = policies.make('varys').decide(s)
    assert d.coflow_rank.tolist() == [2, 1, 0]


def test_madd_rates_finish_each_coflow_together_in_order():
    # C alone: Gamma 3 -> port 0 at 1/3 B/s, port 2 at 1 B/s. B on what C
    # left (port 0: 2/3 B/s): Gamma max(2/(2/3), 6/1) = 6 -> 1/3 and 1 B/s.
    # A on port 0's last 1/3 B/s: 10 B in 30 s.
    d = policies.make('varys').decide(snap(SEBF_CASE))
    assert (d.flow_rate / 8).tolist() == pytest.approx(
        [1 / 3, 1 / 3, 1.0, 1 / 3, 1.0])


def test_fifo_orders_by_arrival():
    s = snap([(0, 0, 5), (1, 0, 5), (2, 1, 5)], arrival=[3.0, 1.0, 2.0])
    assert policies.make('fifo').decide(s).coflow_rank.tolist() == [2, 0, 1]


def test_fair_decides_nothing():
    d = policies.make('fair').decide(snap(SEBF_CASE))
    assert d.coflow_rank is None and d.flow_rate is None


def test_bssi_hand_worked_example():
    # loads (coflow x port): A [4, 0], B [2, 2], C [0, 3], weights 1.
    # 1) port 0 is most loaded (6): A has w/load 1/4 < B's 1/2 -> A last;
    #    B's weight drops to 1 - 1 * 2/4 = 0.5.
    # 2) port 1 (5): B 0.5/2 = 0.25 < C 1/3 -> B next to last.
    # 3) C first.  Order C, B, A.
    load = np.array([[4.0, 0.0], [2.0, 2.0], [0.0, 3.0]])
    assert sincronia.bssi_order(load).tolist() == [2, 1, 0]


def test_bssi_with_no_bytes_left_keeps_the_given_order():
    # Beamer's stages can all be idle at once (their jobs computing, no
    # load known): every port carries 0 bytes
    assert sincronia.bssi_order(np.zeros((3, 4))).tolist() == [0, 1, 2]
    assert sincronia.bssi_order(np.zeros((0, 4))).tolist() == []
    s = snap([(0, 0, 4), (1, 0, 2), (1, 1, 2), (2, 1, 3)])
    assert policies.make('sincronia').decide(s).coflow_rank.tolist() == \
        [2, 1, 0]


def test_aalo_queues_by_bytes_sent_fifo_inside():
    s = snap([(0, 0, 5), (1, 0, 5), (2, 1, 5)],
             sent=[15 * MB, 1 * MB, 150 * MB], arrival=[0.0, 1.0, 2.0],
             rate=[8.0 * MB, 8.0 * MB, 0.0], t=5.0)
    d = policies.make('aalo').decide(s)
    assert d.coflow_rank.tolist() == [1, 0, 2]
    # coflow 0 crosses 100 MB in 85 s, coflow 1 crosses 10 MB in 9 s
    assert d.recheck_at == pytest.approx(5.0 + 9.0)


def test_ranks_to_priority_classes():
    s = snap([(0, 0, 1), (1, 0, 1), (2, 0, 1)], queues=2)
    d = policies.Decision(coflow_rank=np.array([0, 5, 1]))
    assert flow_priority(s, d).tolist() == [0, 1, 1]
    exact = snap([(0, 0, 1), (1, 0, 1), (2, 0, 1)], queues=None)
    d = policies.Decision(coflow_rank=np.array([1, 1, 0]),
                          coflow_order=np.array([2, 1, 0]))
    assert flow_priority(exact, d).tolist() == [2, 1, 0]


def test_unknown_policy_and_bad_parameters_are_named():
    with pytest.raises(ConfigError, match="unknown policy 'bogus'"):
        policies.make('bogus')
    with pytest.raises(ConfigError, match='first_mb'):
        policies.make('aalo', {'first_mb': -1})
    with pytest.raises(ConfigError, match="no parameter 'x'"):
        policies.make('varys', {'x': 1})


def test_pending_sends_count_in_a_coflows_remaining_bytes():
    # in flight: coflow 0 has 4 B on port 0, coflow 1 has 5 B on port 0;
    # coflow 0 still has 6 B to send on port 1 (a later tensor): Gamma
    # 0 -> 6 s, 1 -> 5 s, so SEBF puts coflow 1 first
    import dataclasses
    s = snap([(0, 0, 4), (1, 0, 5), (0, 1, 0.001)])
    assert policies.make('sebf').decide(s).coflow_rank.tolist() == [0, 1]
    s = dataclasses.replace(s, pending_path=np.array([1]),
                            pending_coflow=np.array([0]),
                            pending_bytes=np.array([6.0]))
    assert s.coflow_port_bytes()[0].tolist() == [4.0, 6.001, 0.0]
    assert varys.effective_bottleneck(s).tolist() == [6.001, 5.0]
    assert policies.make('sebf').decide(s).coflow_rank.tolist() == [1, 0]
    # with per-flow values, pending sends are left out
    assert s.coflow_port_bytes(s.flow_sent)[0].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize('rank,current,want', [
    ([0, 1, 2], [-1, -1, -1], [0, 1, 2]),     # nothing running: dense
    ([0, 0, 1], [-1, -1, -1], [0, 0, 1]),     # equal ranks share a class
    # a new coflow ranked between two running ones: the one behind it is
    # pushed down (a demotion), never tied with it
    ([0, 1, 2], [0, -1, 1], [0, 1, 2]),
    ([0, 1, 2, 3], [0, -1, 1, 2], [0, 1, 2, 3]),    # pushes cascade
    ([0, 1, 2, 3], [0, -1, 1, 5], [0, 1, 2, 5]),    # ... only as needed
    # coflows ranked apart, tied: the later one steps down
    ([0, 1, 2], [0, 0, 1], [0, 1, 2]),
    ([1, 0], [0, 1], [2, 1]),                 # a swap moves one coflow
    ([0, 1], [3, 5], [3, 5]),                 # gaps are fine
    (list(range(10)), [-1] * 10, [0, 1, 2, 3, 4, 5, 6, 7, 7, 7]),
    ([0, 1], [7, 7], [7, 7]),                 # out of classes: tie
    # 12 coflows in 8 classes; the first ends: nobody else moves
    (list(range(11)), [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7],
     [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7]),
    # out of classes with a coflow ranked below one it used to trail:
    # it joins the last class, the others stay
    ([0, 1, 2, 3, 4, 5, 6, 7, 8], [0, 1, 2, 3, 4, 5, 6, 7, 3],
     [0, 1, 2, 3, 4, 5, 6, 7, 7]),
])
def test_stable_classes_keep_running_coflows_where_they_are(rank, current,
                                                            want):
    got = policies.stable_classes(np.array(rank), np.array(current), 8)
    assert got.tolist() == want
    # whatever happens, the classes never contradict the ranks
    r = np.array(rank)
    for i in range(len(r)):
        for j in range(len(r)):
            if r[i] < r[j]:
                assert got[i] <= got[j]


def test_stable_classes_let_a_jobs_next_coflow_follow_its_last():
    """A job's next iteration (rank 1) arrives while its last one's tail
    runs in class 0 and another job runs in class 1: it ties with its own
    job's coflow rather than push the other job down; a coflow of
    another job in its place pushes."""
    rank, cur = np.array([0, 1, 2]), np.array([0, -1, 1])
    assert policies.stable_classes(rank, cur, 8,
                                   np.array([0, 0, 1])).tolist() == [0, 0, 1]
    assert policies.stable_classes(rank, cur, 8,
                                   np.array([0, 2, 1])).tolist() == [0, 1, 2]
    # and the tie stays while both run; one of another job would not
    tied = np.array([0, 0, 1])
    assert policies.stable_classes(rank, tied, 8,
                                   np.array([0, 0, 1])).tolist() == [0, 0, 1]
    assert policies.stable_classes(rank, tied, 8,
                                   np.array([0, 2, 1])).tolist() == [0, 1, 2]


def test_stable_classes_properties_on_random_orders():
    """Never against the ranks, inside 0..Q-1; applying the result again
    changes nothing; one coflow overtaking many moves itself only."""
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        q = int(rng.integers(1, 9))
        rank = rng.integers(0, n, n)
        current = np.where(rng.random(n) < 0.3, -1, rng.integers(0, q, n))
        group = rng.integers(0, 4, n) if trial % 2 else None
        got = policies.stable_classes(rank, current, q, group)
        assert got.min() >= 0 and got.max() <= q - 1
        for i in range(n):
            assert (got[rank < rank[i]] <= got[i]).all()
        again = policies.stable_classes(rank, got, q, group)
        assert again.tolist() == got.tolist()
    # 40 coflows over 8 classes; the last one's remaining work drops to
    # nothing and it ranks first: it moves up to class 0 and the 7 it
    # overtook in classes 0..6 step down one each (demotions, which do not
    # reorder packets); nobody else is promoted
    rank = np.arange(40)
    cur = policies.stable_classes(rank, np.full(40, -1), 8)
    rank2 = np.r_[np.arange(1, 40), 0]
    new = policies.stable_classes(rank2, cur, 8)
    assert new[39] == 0
    assert new[:39].tolist() == [1, 2, 3, 4, 5, 6, 7] + [7] * 32
    # the first of two new coflows ahead of a running one gets class 0
    # and the running one makes way: the policy's order holds
    assert policies.stable_classes(np.array([1, 0]), np.array([0, -1]),
                                   8).tolist() == [1, 0]


def test_floor_release_frees_the_first_coflow_at_the_last_class():
    """release_floor (the backends' measuring knob scheduler.floor_release,
    docs/experiment-format.md): coflows ranked apart all at the last class (the drift of
    classes that only move down): the first-ranked leaves it, as a new
    coflow would be placed; without it they stay tied."""
    rank, cur = np.array([0, 1, 2]), np.array([7, 7, 7])
    assert policies.stable_classes(rank, cur, 8).tolist() == [7, 7, 7]
    assert policies.stable_classes(rank, cur, 8, release_floor=True
                                   ).tolist() == [0, 7, 7]
    # ranked alike at the last class: nothing to release
    assert policies.stable_classes(np.array([0, 0]), np.array([7, 7]), 8,
                                   release_floor=True).tolist() == [7, 7]


def test_classes_follow_the_tie_break_inside_a_rank():
    """With Q classes as with exact queues, a policy's tie-break inside a
    rank (Aalo: FIFO inside a queue) orders the classes; coflows equal in
    both share one."""
    d = policies.Decision(coflow_rank=np.array([1, 0, 1, 1]),
                          coflow_order=np.array([2.0, 0.0, 1.0, 2.0]))
    assert policies.base.full_rank(d).tolist() == [2, 0, 1, 2]
