"""FIFO-LM and LAS on hand-worked snapshots: every expected number is
worked out in the comment next to it. Links carry 1 MiB/s (8 x 2^20
bit/s) unless a test says otherwise, so bytes over rates come out in
seconds with MiB as the unit of data."""
import numpy as np
import pytest

from netsched import policies
from netsched.pipeline import experiment, run
from netsched.errors import ConfigError
from netsched.policies import (JobView, Snapshot, coflow_class,
                               flow_priority)
from netsched.policies.base import full_rank
from netsched.policies.fifolm import FifoLm
from netsched.policies.las import Las
from tests.support.decisions import assert_same
from tests.support.tiny import TINY

MIB = 2.0 ** 20
LINK = 8 * MIB                     # bit/s: 1 MiB per second


def snap(flows, sent, arrival=None, jobs=(), links=2, t=0.0, cap=None,
         queues=8):
    """flows: (coflow index, link, rate in MiB/s, job id or None), one
    single-link path per link, 1 MiB left each; sent: MiB per coflow."""
    C = len(sent)
    job = {f[0]: f[3] for f in flows}
    return Snapshot(
        t=t, queues=queues,
        link_capacity=np.full(links, LINK) if cap is None
        else np.array(cap, float),
        path_links=np.arange(links).reshape(-1, 1),
        flow_path=np.array([f[1] for f in flows], np.int64),
        flow_coflow=np.array([f[0] for f in flows], np.int64),
        flow_remaining=np.full(len(flows), MIB),
        flow_sent=np.zeros(len(flows)),
        flow_rate=np.array([f[2] * 8 * MIB for f in flows], float),
        coflow_id=tuple('c%d' % c for c in range(C)),
        coflow_arrival=np.arange(C, dtype=float) if arrival is None
        else np.array(arrival, float),
        coflow_sent=np.array(sent, float) * MIB,
        coflow_job=tuple(job.get(c) for c in range(C)),
        jobs={v.id: v for v in jobs})


def one_each(C, rate=0.0):
    """Coflow c has one flow, on link c % 2, at ``rate`` MiB/s."""
    return [(c, c % 2, rate, None) for c in range(C)]


# --- FIFO-LM -----------------------------------------------------------

def fifolm(threshold_mb=1.0):
    return policies.make('fifo-lm', {'threshold_mb': threshold_mb})


@pytest.mark.parametrize('sent, ranks', [
    # threshold 1 MiB; coflows arrive c0, c1, c2, c3 (arrival = index)
    ([0, 0, 0, 0], [0, 1, 2, 3]),        # none heavy: plain FIFO
    ([2, 0, 0, 0], [0, 0, 1, 2]),        # c0 heavy: shares with c1
    ([2, 2, 0, 0], [0, 0, 0, 1]),        # c0, c1 heavy: level 3 with c2
    ([0, 2, 0, 0], [0, 1, 1, 2]),        # c1 heavy: c1 and c2 share
    ([0, 0, 0, 2], [0, 1, 2, 3]),        # the last one heavy: none after
    ([2, 0, 2, 0], [0, 0, 1, 1]),        # two groups of two
    ([1, 0.999, 0, 0], [0, 0, 1, 2]),    # at the threshold is heavy
])
def test_fifolm_heavy_coflows_share_with_the_next(sent, ranks):
    d = fifolm().decide(snap(one_each(4), sent))
    assert d.coflow_rank.tolist() == ranks
    assert d.coflow_order is None        # nothing splits a shared rank


def test_fifolm_walks_arrival_order_not_index_order():
    # arrivals: c0 at 3, c1 at 1, c2 at 2, c3 at 0: order c3, c1, c2, c0.
    # c1 heavy (5 MiB): it shares with c2, the next to arrive. Ranks c3 0,
    # c1 1, c2 1, c0 2.
    d = fifolm().decide(snap(one_each(4), [0, 5, 0, 0],
                             arrival=[3.0, 1.0, 2.0, 0.0]))
    assert d.coflow_rank.tolist() == [2, 1, 1, 0]


def test_fifolm_threshold_is_a_parameter():
    # c0 has sent 5 MiB: heavy at 4 MiB, not at 8
    s = snap(one_each(3), [5, 0, 0])
    assert fifolm(4.0).decide(s).coflow_rank.tolist() == [0, 0, 1]
    assert fifolm(8.0).decide(s).coflow_rank.tolist() == [0, 1, 2]
    # a huge threshold is FIFO's whole order
    fifo = policies.make('fifo').decide(s)
    assert full_rank(fifolm(1e9).decide(s)).tolist() \
        == full_rank(fifo).tolist() == [0, 1, 2]


def test_fifolm_shared_rank_shares_under_exact_and_q_classes():
    # c0 heavy, c1 light: one rank. Exact order: every flow of c0 and c1
    # the same key 0, c2 key 1. With 8 classes (none yet): 0, 0, 1.
    flows = [(0, 0, 0.0, None), (0, 1, 0.0, None), (1, 0, 0.0, None),
             (2, 1, 0.0, None)]
    s = snap(flows, [3, 0, 0], queues=None)
    d = fifolm().decide(s)
    assert flow_priority(s, d).tolist() == [0, 0, 0, 1]
    s8 = snap(flows, [3, 0, 0])
    assert coflow_class(s8, fifolm().decide(s8)).tolist() == [0, 0, 1]


def test_fifolm_asks_again_when_the_next_coflow_turns_heavy():
    # threshold 1 MiB. c0 has sent 0.5 MiB at 0.25 MiB/s: 0.5 / 0.25 =
    # 2 s. c1 has sent nothing and no rate yet: its one flow's path is one
    # 1 MiB/s link, so at the most 1 MiB / 1 MiB/s = 1 s. c2 is heavy
    # already: no threshold ahead. First: t + 1 s.
    flows = [(0, 0, 0.25, None), (1, 1, 0.0, None), (2, 0, 0.5, None)]
    d = fifolm().decide(snap(flows, [0.5, 0, 1.5], t=10.0))
    assert d.recheck_at == pytest.approx(11.0)
    # c1 on a 4 MiB/s link: at the most 1 / 4 = 0.25 s
    d = fifolm().decide(snap(flows, [0.5, 0, 1.5], t=10.0,
                             cap=[LINK, 4 * LINK]))
    assert d.recheck_at == pytest.approx(10.25)
    # c1 sending at 0.1 MiB/s: 1 / 0.1 = 10 s, so c0's 2 s comes first
    flows[1] = (1, 1, 0.1, None)
    d = fifolm().decide(snap(flows, [0.5, 0, 1.5], t=10.0))
    assert d.recheck_at == pytest.approx(12.0)
    # every coflow heavy: nothing to wait for
    d = fifolm().decide(snap(flows, [1, 2, 3], t=10.0))
    assert d.recheck_at is None


def test_fifolm_named_with_a_hyphen_and_checked():
    assert policies.parse_spec('fifo-lm:threshold_mb=50') == \
        ('fifo-lm', {'threshold_mb': 50})
    p = policies.make(*policies.parse_spec('fifo-lm:threshold_mb=50'))
    assert isinstance(p, FifoLm) and p.threshold_mb == 50
    assert p.progress and not p.clairvoyant
    assert p.finest_bytes() == 50 * MIB
    assert policies.make('fifo-lm').threshold_mb == 100.0
    for bad in (0, -1, 'x'):
        with pytest.raises(ConfigError, match='threshold_mb'):
            policies.make('fifo-lm', {'threshold_mb': bad})


def test_fifolm_properties_on_random_snapshots():
    # ranks start at 0, never fall along arrival order, and rise by one
    # exactly after each light coflow; same snapshot, same decision
    rng = np.random.default_rng(7)
    p = fifolm(2.0)
    for _ in range(50):
        C = int(rng.integers(1, 9))
        sent = rng.choice([0.0, 1.0, 1.99, 2.0, 5.0], size=C)
        s = snap(one_each(C, 0.5), sent, arrival=rng.permutation(C))
        d = p.decide(s)
        r = d.coflow_rank[np.argsort(s.coflow_arrival)]
        h = (sent >= 2.0)[np.argsort(s.coflow_arrival)]
        assert r[0] == 0
        assert np.array_equal(np.diff(r), (~h[:-1]).astype(int))
        assert_same(d, p.decide(s))


# --- LAS ---------------------------------------------------------------

def las(**kw):
    return policies.make('las', dict({'first_mb': 10.0, 'multiplier': 4.0},
                                     **kw))


def las_jobs():
    """a: 2 iterations of 10 MiB done, arrived at 0; b: none done,
    arrived at 1; both 10 MiB per iteration."""
    return [JobView('a', 0.0, 10, done=2, bytes_per_iteration=10 * MIB),
            JobView('b', 1.0, 10, bytes_per_iteration=10 * MIB)]


def test_las_classes_by_attained_service():
    # Q = 4: thresholds 10, 40, 160 MiB. a: 2 x 10 + its coflow's 3 = 23
    # MiB -> class 1 (10 <= 23 < 40). b: 5 MiB -> class 0. c2 (no job):
    # 50 MiB of its own -> class 2.
    flows = [(0, 0, 0.0, 'a'), (1, 1, 0.0, 'b'), (2, 0, 0.0, None)]
    s = snap(flows, [3, 5, 50], jobs=las_jobs(), queues=4)
    p = las()
    assert p.thresholds(4).tolist() == [10 * MIB, 40 * MIB, 160 * MIB]
    d = p.decide(s)
    assert d.coflow_rank.tolist() == [1, 0, 2]
    assert coflow_class(s, d).tolist() == [1, 0, 2]
    # at a threshold is past it: b at exactly 10 MiB is class 1, after a
    # by arrival (a at 0, b at 1): full order a, b, c2
    d = p.decide(snap(flows, [3, 10, 50], jobs=las_jobs(), queues=4))
    assert d.coflow_rank.tolist() == [1, 1, 2]
    assert full_rank(d).tolist() == [0, 1, 2]


def test_las_a_jobs_coflows_pool_their_service_and_share_its_class():
    # b has two live coflows, 4 + 7 = 11 MiB: class 1 (>= 10), though each
    # alone is below 10. a (20 + 1 = 21 MiB) is class 1 too; inside the
    # class FIFO by job arrival: a (0) first, then b's coflows by their
    # own arrival (c2 at 0.5 before c1 at 2).
    flows = [(0, 0, 0.0, 'a'), (1, 1, 0.0, 'b'), (2, 0, 0.0, 'b')]
    s = snap(flows, [1, 4, 7], jobs=las_jobs(), arrival=[0.0, 2.0, 0.5],
             queues=4)
    d = las().decide(s)
    assert d.coflow_rank.tolist() == [1, 1, 1]
    assert full_rank(d).tolist() == [0, 2, 1]


def test_las_fifo_inside_a_class_is_the_jobs_arrival():
    # both in class 0 (a: none done here, 2 MiB; b: 1 MiB): LAS's class is
    # the same, so the earlier job first although b has less service
    jobs = [JobView('a', 0.0, 10, bytes_per_iteration=10 * MIB),
            JobView('b', 1.0, 10, bytes_per_iteration=10 * MIB)]
    flows = [(0, 0, 0.0, 'b'), (1, 1, 0.0, 'a')]
    d = las().decide(snap(flows, [1, 2], jobs=jobs, arrival=[0.0, 1.0],
                          queues=4))
    assert d.coflow_rank.tolist() == [0, 0]
    assert full_rank(d).tolist() == [1, 0]


def test_las_with_two_queues_has_one_threshold():
    # Q = 2: one threshold, 10 MiB; a at 21 MiB and c1 (no job) at 1e6 MiB
    # share the last class; b's coflow (job b, 1 MiB) is first
    flows = [(0, 0, 0.0, 'a'), (1, 1, 0.0, None), (2, 0, 0.0, 'b')]
    d = las().decide(snap(flows, [1, 1e6, 1], jobs=las_jobs(), queues=2))
    assert d.coflow_rank.tolist() == [1, 1, 0]


def test_las_exact_order_in_quantum_steps_ties_share():
    # queues exact, 1 MiB steps. a: 20 + 3.5 = 23.5 MiB (step 23); b: 5.2
    # (step 5); c2 (no job): 5.9 (step 5). b and c2 share rank 0; a after.
    flows = [(0, 0, 0.0, 'a'), (1, 1, 1.0, 'b'), (2, 0, 0.5, None)]
    s = snap(flows, [3.5, 5.2, 5.9], jobs=las_jobs(), queues=None, t=4.0)
    d = las().decide(s)
    assert d.coflow_rank.tolist() == [1, 0, 0]
    assert d.coflow_order is None
    assert flow_priority(s, d).tolist() == [1, 0, 0]
    # next change: b and c2 share step 5; each leaves it at 6 MiB. b: 0.8
    # MiB at 1 MiB/s = 0.8 s; c2: 0.1 at 0.5 = 0.2 s. a (step 23) has no
    # job at or above it: none. Ask again at 4 + 0.2 = 4.2.
    assert d.recheck_at == pytest.approx(4.2)
    # a step of 4 MiB: b and c2 both in step 1 (4..8), a in step 5 (20..
    # 24): b leaves at 8: 2.8 MiB at 1 MiB/s = 2.8 s; c2: 2.1 at 0.5 = 4.2
    # s: 4 + 2.8
    d = las(quantum_mb=4.0).decide(s)
    assert d.coflow_rank.tolist() == [1, 0, 0]
    assert d.recheck_at == pytest.approx(6.8)


def test_las_exact_a_job_behind_catches_up_to_the_next():
    # b at 2.5 MiB (step 2) sending at 0.5 MiB/s, a at 21 (step 21) not
    # sending: b reaches a's step (21 MiB) in 18.5 / 0.5 = 37 s; a has
    # none above it
    flows = [(0, 0, 0.0, 'a'), (1, 1, 0.5, 'b')]
    s = snap(flows, [1, 2.5], jobs=las_jobs(), queues=None)
    d = las().decide(s)
    assert d.coflow_rank.tolist() == [1, 0]
    assert d.recheck_at == pytest.approx(37.0)


def test_las_asks_again_at_the_next_threshold():
    # Q = 4 (10, 40, 160 MiB). a at 23 MiB sending 1 MiB/s: 40 in 17 s;
    # b at 5 MiB, no rate yet: its link's 1 MiB/s at the most, 10 in 5 s.
    flows = [(0, 0, 1.0, 'a'), (1, 1, 0.0, 'b')]
    d = las().decide(snap(flows, [3, 5], jobs=las_jobs(), queues=4, t=1.0))
    assert d.recheck_at == pytest.approx(6.0)
    # past the last threshold (160): nothing ahead for a; b as before
    flows = [(0, 0, 1.0, 'a')]
    d = las().decide(snap(flows, [200], jobs=las_jobs(), queues=4, t=1.0))
    assert d.recheck_at is None


def test_las_named_and_checked():
    p = policies.make('las')
    assert isinstance(p, Las) and p.progress and not p.clairvoyant
    assert (p.first_mb, p.multiplier, p.quantum_mb) == (10.0, 10.0, 1.0)
    assert p.finest_bytes() == 10 * MIB
    assert policies.parse_spec('las:first_mb=5:multiplier=2') == \
        ('las', {'first_mb': 5, 'multiplier': 2})
    with pytest.raises(ConfigError, match='multiplier'):
        policies.make('las', {'multiplier': 0})


def test_las_same_snapshot_same_decision():
    flows = [(0, 0, 1.0, 'a'), (1, 1, 0.0, 'b'), (2, 0, 0.5, None)]
    for q in (None, 4, 8):
        s = snap(flows, [3, 5, 50], jobs=las_jobs(), queues=q)
        p = las()
        first = p.decide(s)
        assert_same(first, p.decide(s))
        assert_same(first, las().decide(s))


# --- on the simulator --------------------------------------------------

def simulate(tmp_path, policy, queues=None):
    """tests.support.tiny's two ring jobs on the simulator: the summary."""
    text = TINY + ('queues: %s\n' % queues if queues else '')
    path = tmp_path / 'tiny.yaml'
    path.write_text(text)
    out = tmp_path / ('%s-%s' % (policy.replace(':', '_').replace('=', '_'),
                                 queues))
    _, summary = run.execute(experiment.load(str(path), policy=policy),
                             str(out), say=lambda *_: None)
    return summary


@pytest.mark.parametrize('queues', [None, 'exact'])
def test_fifolm_and_las_run_on_the_simulator(tmp_path, queues):
    fifo = simulate(tmp_path, 'fifo', queues)
    n = len(fifo['coflows'])
    # a threshold no coflow reaches (1e6 MiB) is FIFO, figure for figure
    never = simulate(tmp_path, 'fifo-lm:threshold_mb=1000000', queues)
    assert never['totals'] == fifo['totals']
    # one every coflow passes in its first MiB (of 100s) puts them all in
    # one rank from then on: per-flow fair sharing, up to that MiB
    fair = simulate(tmp_path, 'fair', queues)['totals']
    soon = simulate(tmp_path, 'fifo-lm:threshold_mb=1', queues)['totals']
    for k in ('avg_cct_s', 'avg_jct_s'):
        assert soon[k] == pytest.approx(fair[k], rel=0.01)
        assert fifo['totals'][k] > 1.1 * fair[k]
    for policy in ('fifo-lm', 'las', 'las:first_mb=1:multiplier=2'):
        s = simulate(tmp_path, policy, queues)
        assert s['totals']['coflows_done'] == n
        assert s['totals']['jobs_done'] == 2


# --- Aalo's next decision ----------------------------------------------

def test_aalo_asks_again_at_a_just_started_coflows_crossing():
    """A coflow whose flows have just started has no rate yet; Aalo must
    still ask again when it may cross its threshold, at its path's
    capacity (1 MiB/s here), or a backend that decides only when asked
    demotes it late (a ring's coflow: chunk after chunk just started)."""
    aalo = policies.make('aalo', {'first_mb': 1.0})
    # c0 sent 0.25 MiB, its flow at rate 0 (just started): 0.75 MiB at
    # 1 MiB/s crosses at t + 0.75 s
    d = aalo.decide(snap([(0, 0, 0.0, None)], [0.25], t=2.0))
    assert d.recheck_at == pytest.approx(2.75)
    # sending at 0.5 MiB/s: the measured rate rules, t + 1.5 s
    d = aalo.decide(snap([(0, 0, 0.5, None)], [0.25], t=2.0))
    assert d.recheck_at == pytest.approx(3.5)
    # the earliest of two coflows: c1, 0.1 MiB short at 1 MiB/s (its
    # flow not started), against c0 0.75 MiB short -> t + 0.1 s; c0 in
    # queue 1 (beyond 1 MiB) waits for the 10 MiB threshold
    d = aalo.decide(snap([(0, 0, 0.0, None), (1, 1, 0.0, None)],
                         [1.5, 0.9], t=1.0))
    assert d.coflow_rank.tolist() == [1, 0]
    assert d.recheck_at == pytest.approx(1.1)
    # nothing moving toward a threshold: no recheck
    d = aalo.decide(snap([], [0.25]))
    assert d.recheck_at is None
