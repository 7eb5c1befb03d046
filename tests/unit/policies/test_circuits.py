"""Circuit schedulers (netsched.circuits) on hand-worked snapshots, and
their invariants on random ones."""

import numpy as np
import pytest

from netsched import circuits
from netsched.circuits import (CircuitSnapshot, JobTraffic, check_circuits,
                               matching, osdl)
from netsched.errors import ConfigError

MB = 1e6
GBPS = 8e9                     # 1 GB/s: 1 MB per ms


def snap(demand_mb=None, T=None, P=1, now=(), since=None, t=0.0,
         circuit_bps=GBPS, packet_bps=GBPS / 8, reconfig_s=0.0, jobs=None):
    """A snapshot; demand in MB ((T, T) or {(i, j): MB}); packet uplinks
    default to 125 MB/s."""
    if isinstance(demand_mb, dict) or demand_mb is None:
        d = np.zeros((T, T))
        for (i, j), v in (demand_mb or {}).items():
            d[i, j] = v
    else:
        d = np.asarray(demand_mb, float)
    T = len(d)
    return CircuitSnapshot(
        t=t, tors=tuple('tor%d' % i for i in range(T)), planes=P,
        demand=d * MB, circuits=frozenset(now), since=dict(since or {}),
        circuit_bps=circuit_bps, packet_bps=np.full(T, float(packet_bps)),
        reconfig_s=reconfig_s, jobs=dict(jobs or {}))


def decide(name, s, **params):
    return circuits.make(name, params).decide(s)


# Four ToRs. The heaviest pair is {1, 2} (100 MB one way), but {0, 1}
# (40 + 30 MB, both ways) with {2, 3} (60) carries 130 MB, more than
# {1, 2} with {0, 3} (100 + 5): a greedy heaviest-first choice would
# take {1, 2}; the max-weight matching takes {0, 1} and {2, 3}.
FOUR = {(0, 1): 40, (1, 0): 30, (2, 3): 60, (1, 2): 100, (0, 3): 5}


def test_max_weight_matching_of_four_tors():
    d = decide('matching', snap(FOUR, T=4))
    assert d.circuits == {(0, 0, 1), (0, 2, 3)}


def test_each_direction_of_a_pair_counts():
    # {0, 1} sends 40 MB each way (80), {1, 2} 70 one way: the circuit,
    # carrying both directions at once, takes more off the core at {0, 1}
    d = decide('matching', snap({(0, 1): 40, (1, 0): 40, (1, 2): 70}, T=3))
    assert d.circuits == {(0, 0, 1)}


def test_second_plane_matches_what_the_first_left():
    # 1 GB/s circuits, window max(period 0.1, hold 0.2) = 0.2 s: a circuit
    # carries up to 200 MB each way, so plane 0's circuits clear {0, 1}
    # and {2, 3}; plane 1 takes the next matching, {1, 2} and {0, 3}
    d = decide('matching', snap(FOUR, T=4, P=2))
    assert d.circuits == {(0, 0, 1), (0, 2, 3), (1, 1, 2), (1, 0, 3)}


def test_demand_beyond_one_circuit_gets_a_second_plane():
    # 100 MB/s circuits carry 20 MB per direction in the 0.2 s window.
    # Plane 0: {0,1} 20+20 + {2,3} 20 = 60 against {1,2} 20 + {0,3} 5.
    # Left: {0,1} 20+10, {2,3} 40, {1,2} 100, {0,3} 5. Plane 1: {0,1} 30
    # + {2,3} 20 = 50 against 20 + 5: both pairs get a second circuit.
    d = decide('matching', snap(FOUR, T=4, P=2, circuit_bps=GBPS / 10))
    assert d.circuits == {(0, 0, 1), (0, 2, 3), (1, 0, 1), (1, 2, 3)}


def test_pairs_beyond_the_cap_tie_and_more_demand_wins():
    # both pairs would fill a 100 MB/s circuit for the window (20 MB):
    # equal bytes carried, so the larger demand (50 over 30) decides
    s = snap({(0, 1): 50, (0, 2): 30}, T=3, circuit_bps=GBPS / 10)
    assert decide('matching', s).circuits == {(0, 0, 1)}
    # ... unless the other is there already: a tie keeps what is there
    s = snap({(0, 1): 50, (0, 2): 30}, T=3, circuit_bps=GBPS / 10,
             now={(0, 0, 2)}, since={(0, 0, 2): -1.0})
    assert decide('matching', s).circuits == {(0, 0, 2)}


def test_recheck_every_period():
    assert decide('matching', snap(FOUR, T=4, t=3.0)).recheck_at == \
        pytest.approx(3.1)
    assert decide('matching', snap(FOUR, T=4, t=3.0),
                  period_s=0.05).recheck_at == pytest.approx(3.05)


def test_hold_time_keeps_a_young_circuit_then_releases_it():
    young = {(0, 1, 2)}
    s = snap(FOUR, T=4, now=young, since={(0, 1, 2): 0.0}, t=0.05)
    # {1, 2} was set up 50 ms ago (hold 0.2 s): its ports stay; ToRs 0
    # and 3 are matched on what is left
    assert decide('matching', s).circuits == {(0, 1, 2), (0, 0, 3)}
    s = snap(FOUR, T=4, now=young, since={(0, 1, 2): 0.0}, t=0.199)
    assert decide('matching', s).circuits == {(0, 1, 2), (0, 0, 3)}
    # at hold_s it is old: the better matching replaces it
    s = snap(FOUR, T=4, now=young, since={(0, 1, 2): 0.0}, t=0.2)
    assert decide('matching', s).circuits == {(0, 0, 1), (0, 2, 3)}
    # with no hold time it goes at once
    s = snap(FOUR, T=4, now=young, since={(0, 1, 2): 0.0}, t=0.05)
    assert decide('matching', s, hold_s=0).circuits == {(0, 0, 1),
                                                        (0, 2, 3)}


def test_a_held_circuit_counts_as_carrying_its_pairs_demand():
    # two planes; plane 1 holds {1, 2}, which carries its 100 MB: plane 0
    # then matches {0, 1} and {2, 3} (130) -- not {1, 2} again (100) --
    # and plane 1 joins the two ToRs it has free, 0 and 3 (5 MB)
    s = snap(FOUR, T=4, P=2, now={(1, 1, 2)}, since={(1, 1, 2): 0.0},
             t=0.1)
    assert decide('matching', s).circuits == {(1, 1, 2), (0, 0, 1),
                                              (0, 2, 3), (1, 0, 3)}


def test_no_reconfiguration_for_equal_demand():
    old = {(0, 0, 1)}
    since = {(0, 0, 1): -10.0}
    s = snap({(0, 1): 50, (0, 2): 50}, T=3, now=old, since=since)
    assert decide('matching', s).circuits == old            # a tie
    s = snap({(0, 1): 50, (0, 2): 51}, T=3, now=old, since=since)
    assert decide('matching', s).circuits == {(0, 0, 2)}    # 51 > 50
    # with a margin of 10 % the newcomer must beat 55
    assert decide('matching', s, margin=0.1).circuits == old
    s = snap({(0, 1): 50, (0, 2): 56}, T=3, now=old, since=since)
    assert decide('matching', s, margin=0.1).circuits == {(0, 0, 2)}


def test_the_blackout_counts_against_a_newcomer():
    # 1 GB/s, window 0.2 s: a new circuit carries <= 200 MB each way; the
    # one there now has no 10 ms blackout to sit through: <= 210 MB.
    # {0, 1} (205 MB, one way) is up; {0, 2} offers 150 + 53 = 203 MB
    old = {(0, 0, 1)}
    dem = {(0, 1): 205, (0, 2): 150, (2, 0): 53}
    s = snap(dem, T=3, now=old, since={(0, 0, 1): -1.0}, reconfig_s=0.01)
    assert decide('matching', s).circuits == old            # 205 > 203
    s = snap(dem, T=3, now=old, since={(0, 0, 1): -1.0}, reconfig_s=0.0)
    assert decide('matching', s).circuits == {(0, 0, 2)}    # 200 < 203


def test_an_idle_circuit_stays_until_its_ports_are_wanted():
    old = {(0, 0, 1)}
    since = {(0, 0, 1): -1.0}
    s = snap({(2, 3): 10}, T=4, now=old, since=since)
    assert decide('matching', s).circuits == {(0, 0, 1), (0, 2, 3)}
    s = snap({(1, 2): 10}, T=4, now=old, since=since)
    assert decide('matching', s).circuits == {(0, 1, 2)}
    assert decide('matching', snap(T=4)).circuits == frozenset()


def test_matching_is_a_fixed_point_of_its_own_decision():
    for P in (1, 2):
        s = snap(FOUR, T=4, P=P)
        d = decide('matching', s)
        again = snap(FOUR, T=4, P=P, now=d.circuits, t=1.0,
                     since={c: 0.5 for c in d.circuits})
        assert decide('matching', again).circuits == d.circuits


def test_none_never_sets_up_a_circuit():
    d = decide('none', snap(FOUR, T=4, P=2, now={(0, 0, 1)}))
    assert d.circuits == frozenset() and d.recheck_at is None
    assert circuits.make('none').static


def test_no_circuits_without_planes_or_circuit_rate():
    assert decide('matching', snap(FOUR, T=4, P=0)).circuits == frozenset()
    assert decide('matching', snap(FOUR, T=4, circuit_bps=0)
                  ).circuits == frozenset()
    assert decide('osdl', snap(T=4, P=0, jobs={'a': job(
        'a', {(0, 1): 100})})).circuits == frozenset()


# -- OSDL -------------------------------------------------------------------

def job(jid, pair_mb, iterations_left=10):
    return JobTraffic(id=jid, arrival=0.0, iterations_left=iterations_left,
                      pair_bytes={p: b * MB for p, b in pair_mb.items()})


# Packet uplinks 125 MB/s, circuits 1000 MB/s. A: 100 MB each way
# between racks 0 and 1. B: 20 MB each way between racks 1 and 2. Over
# the core, ToR 1's uplink carries A's 100 and B's 20: shared fairly, B is
# done after 40 MB (0.32 s) and A after 120 MB (0.96 s). A is the slower:
# its pair {0, 1} takes ToR 1's only port (0.1 s); B stays on the core,
# alone on ToR 1's uplink now (0.16 s), the slower now. With a second
# plane, B's pair gets a circuit on it (0.02 s); A's pair could have a
# second circuit (0.05 s) but ToR 1 has no port left.
A = job('a', {(0, 1): 100, (1, 0): 100})
B = job('b', {(1, 2): 20, (2, 1): 20})


def test_osdl_gives_the_slowest_job_its_heaviest_pair():
    s = snap(T=3, jobs={'a': A, 'b': B})
    assert osdl.expected_times(s.jobs, frozenset(), s) == pytest.approx(
        {'a': 0.96, 'b': 0.32})
    d = decide('osdl', s)
    assert d.circuits == {(0, 0, 1)} and d.recheck_at is None
    assert osdl.expected_times(s.jobs, d.circuits, s) == pytest.approx(
        {'a': 0.1, 'b': 0.16})
    s = snap(T=3, P=2, jobs={'a': A, 'b': B})
    d = decide('osdl', s)
    assert d.circuits == {(0, 0, 1), (1, 1, 2)}
    assert osdl.expected_times(s.jobs, d.circuits, s) == pytest.approx(
        {'a': 0.1, 'b': 0.02})


def test_osdl_serves_the_longest_job_first_not_the_most_bytes():
    # A: 100 MB each way over {0, 1} (200 MB); B: 150 MB one way over
    # {1, 2}; C: 30 MB over {0, 2}. Over the core ToR 1's uplink carries
    # A's 100 and B's 150: A 1.6 s, B 2.0 s; C 0.48 s. B, the slowest,
    # gets ToR 1's port though A sends more; then A's pair finds no free
    # port on ToR 1 and C's none on ToR 2.
    C = job('c', {(0, 2): 30})
    B1 = job('b', {(1, 2): 150})
    s = snap(T=3, jobs={'a': A, 'b': B1, 'c': C})
    t = osdl.expected_times(s.jobs, frozenset(), s)
    assert t == pytest.approx({'a': 1.6, 'b': 2.0, 'c': 0.48})
    assert decide('osdl', s).circuits == {(0, 1, 2)}
    # two planes: A's pair on plane 1; C's would need a plane free at
    # both ToR 0 (plane 0) and ToR 2 (plane 1): none
    s = snap(T=3, P=2, jobs={'a': A, 'b': B1, 'c': C})
    assert decide('osdl', s).circuits == {(0, 1, 2), (1, 0, 1)}


def test_osdl_takes_a_jobs_heaviest_pair_first():
    # ToR 0 sends 30 MB to ToR 1 and 100 MB to ToR 2: its uplink (130 MB,
    # 1.04 s) is the job's bottleneck and either circuit shortens it; the
    # heavier pair {0, 2} gets ToR 0's only port (30 MB left on the
    # uplink: 0.24 s), not {0, 1} (100 MB left: 0.8 s)
    s = snap(T=3, jobs={'p': job('p', {(0, 1): 30, (0, 2): 100})})
    d = decide('osdl', s)
    assert d.circuits == {(0, 0, 2)}
    assert osdl.expected_times(s.jobs, d.circuits, s)['p'] == \
        pytest.approx(0.24)


def test_osdl_gives_no_circuit_that_would_slow_a_job():
    # circuits at half the packet uplinks' rate: the core is faster
    s = snap(T=2, jobs={'a': A}, circuit_bps=GBPS / 16)
    assert decide('osdl', s).circuits == frozenset()


def test_osdl_gives_a_ring_all_its_pairs_when_it_can():
    # ring 0 -> 1 -> 2 -> 0, 60 MB a step: no one circuit shortens it (the
    # other two steps stay on the core), all three do; three planes let a
    # triangle have all three
    ring = job('r', {(0, 1): 60, (1, 2): 60, (2, 0): 60})
    s = snap(T=3, P=3, jobs={'r': ring})
    d = decide('osdl', s)
    assert d.circuits == {(0, 0, 1), (1, 0, 2), (2, 1, 2)}
    assert osdl.expected_times(s.jobs, d.circuits, s)['r'] == \
        pytest.approx(0.06)
    # two planes cannot hold a triangle: two of its pairs get circuits
    # (off the core, for the other jobs), its time stays 0.48 s
    s = snap(T=3, P=2, jobs={'r': ring})
    d = decide('osdl', s)
    assert d.circuits == {(0, 0, 1), (1, 0, 2)}
    assert osdl.expected_times(s.jobs, d.circuits, s)['r'] == \
        pytest.approx(0.48)


def test_osdl_ignores_finished_jobs_and_decides_on_the_jobs_only():
    s = snap(T=3, jobs={'a': A, 'b': job('b', {(1, 2): 500}, 0)})
    assert decide('osdl', s).circuits == {(0, 0, 1)}
    # demand (counters) does not matter to it
    s2 = snap({(1, 2): 900}, T=3, jobs={'a': A, 'b': B})
    assert decide('osdl', s2).circuits == {(0, 0, 1)}


def test_osdl_keeps_circuits_on_the_planes_they_are_on():
    # the greedy would put {0, 1} on plane 0 and {1, 2} on plane 1; with
    # them the other way round now, the planes are renamed, not rewired
    s = snap(T=3, P=2, jobs={'a': A, 'b': B},
             now={(1, 0, 1), (0, 1, 2)})
    assert decide('osdl', s).circuits == {(1, 0, 1), (0, 1, 2)}


def test_osdl_is_deterministic_and_a_fixed_point():
    jobs = {'a': A, 'b': B, 'r': job('r', {(0, 3): 10, (3, 2): 70})}
    s = snap(T=4, P=2, jobs=jobs)
    sched = circuits.make('osdl')
    d = sched.decide(s)
    assert sched.decide(s) == d                    # memoised
    assert circuits.make('osdl').decide(s) == d    # fresh
    again = snap(T=4, P=2, jobs=jobs, now=d.circuits, t=5.0)
    assert sched.decide(again).circuits == d.circuits


def test_osdl_places_a_job_where_its_pair_can_have_a_circuit():
    # A holds ToR 1's only port. A new job of 20 MB each way could go on
    # racks {1, 2} (its pair finds no port: 0.16 s over the core) or
    # {2, 3} (a circuit: 0.02 s): OSDL takes the second
    on_12 = job('c', {(1, 2): 20, (2, 1): 20})
    on_23 = job('c', {(2, 3): 20, (3, 2): 20})
    fabric = snap(T=4)
    sched = circuits.make('osdl')
    assert sched.place({'a': A}, [on_12, on_23], fabric) == 1
    assert sched.place({'a': A}, [on_23, on_12], fabric) == 0
    # in one rack it sends nothing between racks: best of all
    assert sched.place({'a': A}, [on_12, on_23, job('c', {})], fabric) == 2
    # with a second plane, on {1, 2} its pair gets ToR 1's second port
    # (0.02 s); on {2, 3} it gets two circuits (0.01 s): still the second
    two = snap(T=4, P=2)
    assert [osdl.expected_times(
        {'a': A, 'c': c}, osdl.assign({'a': A, 'c': c}, two), two)['c']
        for c in (on_12, on_23)] == pytest.approx([0.02, 0.01])
    assert sched.place({'a': A}, [on_12, on_23], two) == 1
    # equal candidates: the first
    on_03 = job('c', {(0, 3): 20, (3, 0): 20})
    assert sched.place({}, [on_23, on_03], fabric) == 0
    assert sched.place({}, [on_03, on_23], fabric) == 0
    # the job's own time comes first, the total after: a heavy job (300
    # MB each way) on racks {1, 2} takes ToR 1's port from A (its own
    # 0.3 s, A back on the core: 0.8 s); on A's racks {0, 1} it shares
    # A's circuit (0.4 s, A 0.2 s): less in total, but slower for it
    heavy_12 = job('c', {(1, 2): 300, (2, 1): 300})
    heavy_01 = job('c', {(0, 1): 300, (1, 0): 300})
    for cands, want in (([heavy_01, heavy_12], 1), ([heavy_12, heavy_01], 0)):
        assert sched.place({'a': A}, cands, fabric) == want
    # schedulers that do not place take the first
    assert circuits.make('matching').place({'a': A}, [on_12, on_23],
                                           fabric) == 0


# -- invariants ---------------------------------------------------------------

def random_matchings(rng, T, P, share=0.5):
    """Random valid circuits: per plane, a random partial matching."""
    out = set()
    for k in range(P):
        perm = rng.permutation(T).tolist()
        for a, b in zip(perm[::2], perm[1::2]):
            if rng.random() < share:
                out.add((k, min(a, b), max(a, b)))
    return out


def random_demand(rng, T):
    d = rng.lognormal(3, 2, (T, T)) * (rng.random((T, T)) < 0.6)
    np.fill_diagonal(d, 0)
    return d


def per_tor(cs, T):
    return np.bincount([x for _, i, j in cs for x in (i, j)], minlength=T)


@pytest.mark.parametrize('seed', range(40))
def test_matching_gives_valid_configurations(seed):
    rng = np.random.default_rng(seed)
    T, P = int(rng.integers(2, 10)), int(rng.integers(1, 4))
    now = random_matchings(rng, T, P)
    since = {c: float(rng.uniform(0, 1)) for c in now}
    s = snap(random_demand(rng, T), P=P, now=now, since=since, t=1.0,
             circuit_bps=float(rng.choice([GBPS / 10, GBPS])),
             reconfig_s=float(rng.choice([0, 0.01, 0.1])))
    sched = circuits.make('matching')
    d = sched.decide(s)
    assert check_circuits(d.circuits, T, P) == d.circuits
    assert per_tor(d.circuits, T).max(initial=0) <= P
    young = {c for c in now if 1.0 - since[c] < sched.hold_s}
    assert young <= d.circuits                     # held ones stay
    assert sched.decide(s) == d                    # same snapshot, same
    assert circuits.make('matching').decide(s) == d


def carried(cs, d, cap):
    return sum(min(d[i, j], cap) + min(d[j, i], cap) for _, i, j in cs)


def all_matchings(nodes):
    if len(nodes) < 2:
        yield []
        return
    a, rest = nodes[0], nodes[1:]
    yield from all_matchings(rest)                 # a unmatched
    for b in rest:
        for m in all_matchings([x for x in rest if x != b]):
            yield [(0, a, b)] + m


@pytest.mark.parametrize('seed', range(20))
def test_one_plane_carries_the_most_any_matching_can(seed):
    """Brute force over every matching of up to 7 ToRs: the decision
    carries the most bytes in the window (no circuit there now)."""
    rng = np.random.default_rng(100 + seed)
    T = int(rng.integers(2, 8))
    d = random_demand(rng, T) * MB
    s = snap(d / MB, circuit_bps=GBPS / 10)
    cap = GBPS / 10 / 8 * 0.2
    got = carried(decide('matching', s).circuits, d, cap)
    best = max(carried(m, d, cap) for m in all_matchings(list(range(T))))
    assert got == pytest.approx(best, rel=1e-9, abs=T)   # whole bytes


@pytest.mark.parametrize('seed', range(25))
def test_osdl_gives_valid_configurations_and_slows_no_job(seed):
    rng = np.random.default_rng(200 + seed)
    T, P = int(rng.integers(2, 8)), int(rng.integers(1, 4))
    jobs = {}
    for n in range(int(rng.integers(1, 5))):
        racks = rng.choice(T, size=int(rng.integers(2, T + 1)),
                           replace=False).tolist()
        if rng.random() < 0.5:            # a ring over its racks
            pairs = {(a, b): float(rng.uniform(1, 200))
                     for a, b in zip(racks, racks[1:] + racks[:1])}
        else:                             # a PS in its first rack
            pairs = {}
            for w in racks[1:]:
                b = float(rng.uniform(1, 200))
                pairs[(w, racks[0])] = pairs[(racks[0], w)] = b
        jobs['j%d' % n] = job('j%d' % n, pairs)
    now = random_matchings(rng, T, P)
    s = snap(T=T, P=P, jobs=jobs, now=now,
             circuit_bps=float(rng.choice([GBPS / 16, GBPS])))
    d = circuits.make('osdl').decide(s)
    assert check_circuits(d.circuits, T, P) == d.circuits
    assert per_tor(d.circuits, T).max(initial=0) <= P
    before = osdl.expected_times(jobs, frozenset(), s)
    after = osdl.expected_times(jobs, d.circuits, s)
    for j in jobs:
        assert after[j] <= before[j] * (1 + 1e-9)
    assert circuits.make('osdl').decide(s) == d


# -- validation and registry ------------------------------------------------

def test_check_circuits_refuses_a_port_in_two_circuits():
    assert check_circuits({(0, 0, 1), (0, 2, 3), (1, 1, 2)}, 4, 2) == \
        {(0, 0, 1), (0, 2, 3), (1, 1, 2)}
    with pytest.raises(ValueError, match='ToR 1 .plane 0. is in two'):
        check_circuits({(0, 0, 1), (0, 1, 2)}, 4, 1)
    with pytest.raises(ValueError, match='i < j'):
        check_circuits({(0, 2, 1)}, 4, 1)
    with pytest.raises(ValueError, match='i < j'):
        check_circuits({(0, 1, 4)}, 4, 1)
    with pytest.raises(ValueError, match='plane 1 out of range'):
        check_circuits({(1, 0, 1)}, 4, 1)
    with pytest.raises(ValueError, match='not a .plane, i, j.'):
        check_circuits({(0, 1)}, 4, 1)


def test_a_scheduler_is_given_valid_circuits_only():
    with pytest.raises(ValueError, match='in two'):
        decide('matching', snap(FOUR, T=4, now={(0, 0, 1), (0, 0, 2)}))


def test_unknown_names_and_bad_parameters_are_named():
    with pytest.raises(ConfigError, match="unknown circuit scheduler 'bogus'"):
        circuits.make('bogus')
    with pytest.raises(ConfigError, match="matching has no parameter 'x'"):
        circuits.make('matching', {'x': 1})
    with pytest.raises(ConfigError, match="osdl has no parameter 'hold_s'"):
        circuits.make('osdl', {'hold_s': 1})
    with pytest.raises(ConfigError, match='period_s: must be a positive'):
        circuits.make('matching', {'period_s': 0})
    with pytest.raises(ConfigError, match='hold_s: must be a non-negative'):
        circuits.make('matching', {'hold_s': -1})
    with pytest.raises(ConfigError, match='^exp.yaml: margin'):
        circuits.make('matching', {'margin': 'lots'}, where='exp.yaml')
    m = circuits.make('matching', {'hold_s': 0, 'period_s': 1})
    assert (m.hold_s, m.period_s, m.margin) == (0, 1, 0.0)


def test_spec_with_parameters():
    name, params = circuits.parse_spec('matching:period_s=0.05:hold_s=1')
    assert (name, params) == ('matching', {'period_s': 0.05, 'hold_s': 1})
    assert circuits.make(name, params).period_s == 0.05
    with pytest.raises(ConfigError, match='key=value'):
        circuits.parse_spec('matching:0.05')


def test_registry_knows_the_schedulers():
    assert {'none', 'matching', 'osdl'} <= set(circuits.REGISTRY)
    assert circuits.make('matching').decides_on == 'period'
    assert circuits.make('osdl').decides_on == 'jobs'
    assert circuits.make('osdl').needs == ('jobs',)
    assert circuits.make('matching').needs == ('demand',)
    assert matching.Matching.name == 'matching'


def test_a_decision_leaves_the_snapshot_as_it_was():
    s = snap(FOUR, T=4, P=2, now={(0, 1, 2)}, since={(0, 1, 2): 0.0},
             t=0.05, jobs={'a': A})
    demand, since = s.demand.copy(), dict(s.since)
    for name in ('none', 'matching', 'osdl'):
        decide(name, s)
    assert (s.demand == demand).all() and s.since == since
