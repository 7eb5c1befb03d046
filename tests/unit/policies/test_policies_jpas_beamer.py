"""JPAS and Beamer on hand-worked snapshots: every expected number below
is worked out in the comments next to it (1 byte/s links, so a coflow's
effective bottleneck Gamma is its largest per-link byte count in
seconds)."""
import numpy as np
import pytest

from netsched import policies
from netsched.errors import ConfigError
from netsched.policies import JobView, Snapshot, coflow_class
from netsched.policies.base import full_rank
from netsched.policies.beamer import Beamer
from netsched.policies.jpas import Jpas, fit_loss, loss_at
from netsched.policies.sincronia import bssi_order
from tests.support.decisions import assert_same

BYTE_S = 8.0                  # a link of 8 bit/s carries 1 byte per second
MB = 1e6


def snap(flows, jobs=(), links=2, t=0.0, arrival=None, pending=(),
         cap=None, queues=8):
    """flows: (coflow index, link, remaining bytes, job id or None), one
    single-link path per link; pending: (coflow index, link, bytes) sends
    not started yet."""
    C = 1 + max(f[0] for f in flows)
    job = {f[0]: f[3] for f in flows}
    return Snapshot(
        t=t, queues=queues,
        link_capacity=np.full(links, BYTE_S) if cap is None
        else np.array(cap, float),
        path_links=np.arange(links).reshape(-1, 1),
        flow_path=np.array([f[1] for f in flows], np.int64),
        flow_coflow=np.array([f[0] for f in flows], np.int64),
        flow_remaining=np.array([f[2] for f in flows], float),
        flow_sent=np.zeros(len(flows)), flow_rate=np.zeros(len(flows)),
        coflow_id=tuple('c%d' % c for c in range(C)),
        coflow_arrival=np.zeros(C) if arrival is None
        else np.array(arrival, float),
        coflow_sent=np.zeros(C),
        coflow_job=tuple(job[c] for c in range(C)),
        jobs={v.id: v for v in jobs},
        pending_path=np.array([p[1] for p in pending], np.int64),
        pending_coflow=np.array([p[0] for p in pending], np.int64),
        pending_bytes=np.array([p[2] for p in pending], float))


def reports(beta, ks, at=0.0):
    """A job's log: (iterations done, loss on the curve beta, time)."""
    return tuple((k, loss_at(beta, k), at) for k in ks)


# --- JPAS: the loss fit ---------------------------------------------------

def test_the_fit_recovers_beta_from_exact_points():
    # l(k) = 1/(0.2 k + 1) + 0.5 at k = 0..5: 1.5, 1.3333, 1.2143, 1.125,
    # 1.0556, 1.0. 1/(l - 0.5) = 0.2 k + 1 exactly, so the b2 = 0.5
    # candidate has zero error.
    beta = (0.2, 1.0, 0.5)
    pts = [(k, loss_at(beta, k)) for k in range(6)]
    assert [round(v, 4) for _, v in pts] == [1.5, 1.3333, 1.2143, 1.125,
                                              1.0556, 1.0]
    assert fit_loss(pts) == pytest.approx(beta, rel=1e-4)
    # three points of (0.1, 1, 0.1): off the coarse b2 grid, found by its
    # refinement; close enough that the gain l(3) - l(4) = 1/1.3 - 1/1.4
    # = 0.054945 comes out to 5 digits
    got = fit_loss([(k, loss_at((0.1, 1.0, 0.1), k)) for k in (1, 2, 3)])
    assert got == pytest.approx((0.1, 1.0, 0.1), rel=1e-3)
    assert loss_at(got, 3) - loss_at(got, 4) == pytest.approx(0.054945,
                                                               abs=1e-5)


def test_no_fit_for_flat_rising_or_too_few_points():
    assert fit_loss([(1, 1.0), (2, 1.0), (3, 1.0)]) is None     # flat
    assert fit_loss([(1, 1.0), (2, 1.2), (3, 1.5)]) is None     # rising
    assert fit_loss([(4, 1.0)]) is None
    assert fit_loss([(4, 1.0), (4, 0.9)]) is None               # one k


# --- JPAS: MAIF ------------------------------------------------------------

STEEP = (0.5, 1.0, 0.1)       # early job: l(3) = 1/2.5 + .1 = 0.5
FLAT = (0.05, 1.0, 0.1)       # late job:  l(10) = 1/1.5 + .1 = 0.76667


def maif_jobs(early_bytes):
    # early 'e' (arrived second, 3 iterations done): l(3) - l(4) = 0.5 -
    # (1/3 + .1) = 0.066667. late 'l' (arrived first, 10 done): l(10) -
    # l(11) = 0.766667 - (1/1.55 + .1) = 0.021505, over 1 MB.
    return [JobView('e', 5.0, 100, done=3, bytes_per_iteration=early_bytes,
                    losses=reports(STEEP, (1, 2, 3))),
            JobView('l', 0.0, 100, done=10, bytes_per_iteration=MB,
                    losses=reports(FLAT, range(1, 11)))]


def test_maif_puts_the_steep_early_job_before_the_flat_late_one():
    # at 2 MB per iteration e gains 0.066667 / 2 = 0.0333 per MB against
    # l's 0.0215: e first, although l arrived first and sends half as much
    flows = [(0, 0, 5, 'l'), (1, 0, 5, 'e')]
    d = policies.make('jpas').decide(snap(flows, maif_jobs(2 * MB), t=9.5))
    assert d.coflow_rank.tolist() == [1, 0]
    # at 4 MB e's 0.0167 per MB is below l's 0.0215: the key is per byte
    d = policies.make('jpas').decide(snap(flows, maif_jobs(4 * MB), t=9.5))
    assert d.coflow_rank.tolist() == [0, 1]
    # the lookahead weighs the curves' shapes: at 2 MB, over 4 iterations
    # e gains 0.5 - (1/4.5 + .1) = 0.177778 -> 0.088889 per MB, l 0.766667
    # - (1/1.7 + .1) = 0.078431: e first still; over 8, e's steep curve
    # has flattened: 0.5 - (1/6.5 + .1) = 0.246154 -> 0.123077 per MB
    # against l's 0.766667 - (1/1.9 + .1) = 0.140351: l first
    d = policies.make('jpas', {'lookahead': 4}).decide(
        snap(flows, maif_jobs(2 * MB), t=9.5))
    assert d.coflow_rank.tolist() == [1, 0]
    d = policies.make('jpas', {'lookahead': 8}).decide(
        snap(flows, maif_jobs(2 * MB), t=9.5))
    assert d.coflow_rank.tolist() == [0, 1]


def test_jobs_without_enough_reports_go_first_by_arrival_then_id():
    # 'f' is fitted (3 reports); 'n1' has 2 (arrived at 2), 'n0' none
    # (arrived at 1), 'r' 3 reports of a rising loss (no falling curve
    # fits: no gain expected, after every fitted job). Early ones first by
    # (arrival, id): n0, n1; then f; then r.
    jobs = [JobView('f', 0.0, 50, done=3, bytes_per_iteration=MB,
                    losses=reports(STEEP, (1, 2, 3))),
            JobView('n1', 2.0, 50, done=2, bytes_per_iteration=MB,
                    losses=reports(STEEP, (1, 2))),
            JobView('n0', 1.0, 50, bytes_per_iteration=MB),
            JobView('r', 1.0, 50, done=3, bytes_per_iteration=MB,
                    losses=((1, 1.0, 0.0), (2, 1.2, 0.0), (3, 1.5, 0.0)))]
    flows = [(0, 0, 1, 'f'), (1, 0, 1, 'n1'), (2, 0, 1, 'n0'),
             (3, 0, 1, 'r')]
    d = policies.make('jpas').decide(snap(flows, jobs, t=4.0))
    assert d.coflow_rank.tolist() == [2, 1, 0, 3]
    # with min_points 4 f and r are early too: by (arrival, id) f (0),
    # n0 (1), r (1), n1 (2)
    d = policies.make('jpas', {'min_points': 4}).decide(
        snap(flows, jobs, t=4.0))
    assert d.coflow_rank.tolist() == [0, 3, 1, 2]


def test_progress_key_least_done_over_planned_first():
    # reports known at b = 3: a 4/10 = 0.4, b 3/5 = 0.6, c 2/20 = 0.1,
    # d 4/10 = 0.4 but arrived before a. c's fifth report came at 3.5,
    # after b: it still counts 2 done. Order c, d, a, b.
    jobs = [JobView('a', 1.0, 10, done=4, losses=reports(FLAT, (1, 2, 3, 4))),
            JobView('b', 0.0, 5, done=3, losses=reports(FLAT, (1, 2, 3))),
            JobView('c', 0.0, 20, done=5,
                    losses=reports(FLAT, (1, 2)) + reports(FLAT, (3, 4, 5),
                                                           at=3.5)),
            JobView('d', 0.5, 10, done=4, losses=reports(FLAT, (1, 2, 3, 4)))]
    flows = [(0, 0, 1, 'a'), (1, 0, 1, 'b'), (2, 1, 1, 'c'), (3, 1, 1, 'd')]
    p = policies.make('jpas', {'key': 'progress'})
    assert p.key == 'progress'
    d = p.decide(snap(flows, jobs, t=3.7))
    assert d.coflow_rank.tolist() == [2, 3, 0, 1]
    assert d.recheck_at == 4.0
    # at t = 4 c's reports count: 5/20 = 0.25, still first
    d = p.decide(snap(flows, jobs, t=4.0))
    assert d.coflow_rank.tolist() == [2, 3, 0, 1]


def boundary_jobs(with_late_report):
    # x: STEEP, 3 reports by t = 1.6; y: (0.1, 1, 0.1), 3 reports by 1.2;
    # 1 MB each. At k = 3 x gains 0.066667 > y's 1/1.3 - 1/1.4 = 0.054945:
    # x first. x's 4th report at 2.5: at k = 4 x gains 1/3 - 1/3.5 =
    # 0.047619 < 0.054945: y first, once that report counts.
    x_log = reports(STEEP, (1, 2, 3), at=1.6)
    if with_late_report:
        x_log += reports(STEEP, (4,), at=2.5)
    return [JobView('x', 0.0, 50, done=3 + with_late_report,
                    bytes_per_iteration=MB, losses=x_log),
            JobView('y', 0.0, 50, done=3, bytes_per_iteration=MB,
                    losses=reports((0.1, 1.0, 0.1), (1, 2, 3), at=1.2))]


def test_ranking_uses_only_reports_up_to_the_period_boundary():
    flows = [(0, 0, 4, 'x'), (1, 0, 4, 'y')]
    p = policies.make('jpas')                        # period 1 s
    # t = 2.7: b = 2.0; the report at 2.5 is not known yet
    before = p.decide(snap(flows, boundary_jobs(False), t=2.7))
    after = p.decide(snap(flows, boundary_jobs(True), t=2.7))
    assert before.coflow_rank.tolist() == [0, 1]
    assert_same(before, after)          # the report changed nothing
    assert after.recheck_at == 3.0                  # the next boundary
    # at the next boundary it counts: y first
    d = p.decide(snap(flows, boundary_jobs(True), t=3.0))
    assert d.coflow_rank.tolist() == [1, 0]
    assert d.recheck_at == 4.0
    # a 0.5 s period has its boundary at 2.5 <= t = 2.7: counted already
    d = policies.make('jpas', {'period_s': 0.5}).decide(
        snap(flows, boundary_jobs(True), t=2.7))
    assert d.coflow_rank.tolist() == [1, 0]
    assert d.recheck_at == 3.0
    # and before the first boundary with any report (t = 0.9, b = 0), no
    # job has a report: both early, by arrival then id (x, y)
    d = p.decide(snap(flows, boundary_jobs(True), t=0.9))
    assert d.coflow_rank.tolist() == [0, 1] and d.recheck_at == 1.0


def test_a_jobs_coflows_share_its_rank_and_coflows_of_no_job_come_last():
    # job a early (no report), job b fitted: a rank 0, b rank 1. a has two
    # coflows (the tail of one iteration and the next); two trace coflows
    # share the last rank, ordered by arrival (coflow_order). Job z has no
    # coflow now (computing): the ranks stay dense over those present.
    jobs = [JobView('a', 3.0, 10, bytes_per_iteration=MB),
            JobView('b', 0.0, 10, done=3, bytes_per_iteration=MB,
                    losses=reports(STEEP, (1, 2, 3))),
            JobView('z', 1.0, 10, bytes_per_iteration=MB)]
    flows = [(0, 0, 1, None), (1, 0, 1, 'b'), (2, 0, 1, 'a'),
             (3, 1, 1, 'a'), (4, 1, 1, None)]
    s = snap(flows, jobs, t=5.0, arrival=[4.0, 0.5, 3.0, 4.5, 2.0])
    d = policies.make('jpas').decide(s)
    # z (arrival 1) ranks before a (arrival 3) among the early jobs, but
    # has no coflow: a 0, b 1, no job 2
    assert d.coflow_rank.tolist() == [2, 1, 0, 0, 2]
    # the whole order: a's two coflows by arrival, b, then the trace
    # coflows by arrival (c4 at 2.0 before c0 at 4.0)
    assert full_rank(d).tolist() == [4, 2, 0, 1, 3]


def test_a_bad_key_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match=r"maif, progress, got 'fastest'"):
        policies.make('jpas', {'key': 'fastest'})
    with pytest.raises(ConfigError) as e:
        policies.make('jpas', {'key': 'MAIF'})
    assert "'MAIF'" in str(e.value) and 'maif' in str(e.value) \
        and 'progress' in str(e.value)
    with pytest.raises(ConfigError, match=r'lookahead: must be a positive'):
        policies.make('jpas', {'lookahead': 0})


def test_jpas_needs_three_points_for_its_three_parameter_curve(tmp_path):
    """Issue 42: l(k) = 1/(b0 k + b1) + b2 through two points is one of
    a family (any b2 below both losses), so ``min_points`` 2 is refused,
    by the policy and by ``netsched check``, in one line naming it."""
    import subprocess
    import sys
    from netsched import ROOT
    for n in (1, 2):
        with pytest.raises(ConfigError, match=r'^jpas: min_points must be '
                           r'at least 3 \(the loss curve has three '
                           r'parameters\), got %d$' % n):
            policies.make('jpas', {'min_points': n})
    assert policies.make('jpas', {'min_points': 3}).min_points == 3
    # two exact points of l(k) = 1/(k + 1) + 0.5: (1, 1.0), (3, 0.75).
    # b2 = 0 fits them too, 1/(b0 k + b1) with b0 k + b1 = 1 at k = 1 and
    # 4/3 at k = 3: b0 = 1/6, b1 = 5/6; its drop from 3 to 4 is
    # 0.75 - 1/(4/6 + 5/6) = 1/12, the true curve's 1/4 - 1/5 = 1/20
    assert loss_at((1 / 6, 5 / 6, 0.0), 1) == pytest.approx(1.0)
    assert loss_at((1 / 6, 5 / 6, 0.0), 3) == pytest.approx(0.75)
    assert loss_at((1.0, 1.0, 0.5), 1) == pytest.approx(1.0)
    assert loss_at((1.0, 1.0, 0.5), 3) == pytest.approx(0.75)
    assert loss_at((1 / 6, 5 / 6, 0.0), 3) - \
        loss_at((1 / 6, 5 / 6, 0.0), 4) == pytest.approx(1 / 12)
    assert loss_at((1.0, 1.0, 0.5), 3) - loss_at((1.0, 1.0, 0.5), 4) == \
        pytest.approx(1 / 20)
    path = tmp_path / 'e.yaml'
    path.write_text('topology: dumbbell,2\npolicy: jpas\npolicy_params:\n'
                    '  jpas: {min_points: 2}\njobs:\n'
                    '  - {id: j, model: resnet50, pattern: ps, workers: 2, '
                    'iterations: 3}\n')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'check', str(path),
                        '--backend', 'sim'], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert r.returncode == 2 and r.stderr == (
        'netsched: error: jpas: min_points must be at least 3 (the loss '
        'curve has three parameters), got 2\n')


def test_jpas_is_not_clairvoyant_and_decides_on_coflows():
    p = policies.make('jpas')
    assert isinstance(p, Jpas) and p.name == 'jpas'
    assert p.decides_on == 'coflows' and not p.clairvoyant
    assert (p.period_s, p.key, p.lookahead, p.min_points) == (1.0, 'maif',
                                                              1, 3)


@pytest.mark.parametrize('key', ['maif', 'progress'])
def test_jpas_same_snapshot_same_decision(key):
    flows = [(0, 0, 4, 'x'), (1, 0, 4, 'y'), (2, 1, 3, None)]
    s1 = snap(flows, boundary_jobs(True), t=3.2)
    s2 = snap(flows, boundary_jobs(False), t=7.0)
    p = policies.make('jpas', {'key': key})
    first = p.decide(s1)
    assert_same(first, p.decide(s1))
    p.decide(s2)                                  # nothing carried over
    assert_same(first, p.decide(s1))
    assert_same(first, policies.make('jpas', {'key': key}).decide(s1))


# --- Beamer ------------------------------------------------------------

def two_groups():
    """Two links. g1 stage 0: p (2 left, [10, 0] per iteration) and q (2
    left, [5, 5]): L = [20, 0] + [10, 10] = [30, 10]. g2 stage 0: r (1
    left, [10, 10]): L = [10, 10]. z, a plain job (5 - 2 = 3 left,
    [0, 10]): L = [0, 30]."""
    return [JobView('p', 0.0, 6, group='g1', stage_ends=(2, 4, 6),
                    iteration_load=np.array([10.0, 0.0])),
            JobView('q', 0.0, 6, group='g1', stage_ends=(2, 4, 6),
                    iteration_load=np.array([5.0, 5.0])),
            JobView('r', 0.0, 6, done=2, group='g2', stage_ends=(3, 6),
                    iteration_load=np.array([10.0, 10.0])),
            JobView('z', 0.0, 5, done=2, iteration_load=np.array([0.0, 10.0]))]


def test_beamer_orders_stages_by_bssi_on_stage_loads():
    jobs = two_groups()
    assert [(j.stage, j.stage_left) for j in jobs] == [(0, 2), (0, 2),
                                                       (0, 1), (None, 3)]
    # BSSI on g1 [30, 10], g2 [10, 10], z [0, 30]: link 1 is the most
    # loaded (50 vs 40); on it z has the least weight/load (1/30): z last.
    # g1 and g2 lose 1 * 10/30 of weight: 2/3 each. Then link 0 (40): g1
    # (2/3)/30 < g2 (2/3)/10: g1 next to last. Order g2, g1, z -- not the
    # smallest total first (g2 20, z 30, g1 40).
    assert bssi_order(np.array([[30.0, 10.0], [10.0, 10.0],
                                [0.0, 30.0]])).tolist() == [1, 0, 2]
    # coflows: p 6 B on link 0 (Gamma 6), q 2 + 2 B (Gamma 2), r 3 + 3 B,
    # z 4 B on link 1. Inside g1 q (Gamma 2) before p (Gamma 6).
    flows = [(0, 0, 6, 'p'), (1, 0, 2, 'q'), (1, 1, 2, 'q'),
             (2, 0, 3, 'r'), (2, 1, 3, 'r'), (3, 1, 4, 'z')]
    d = policies.make('beamer').decide(snap(flows, jobs))
    assert full_rank(d).tolist() == [2, 1, 0, 3]
    # Sincronia on the coflows alone (p [6, 0], q [2, 2], r [3, 3], z
    # [0, 4]): link 0 (11 B) first: p (1/6) last; q's weight 1 - 2/6 =
    # 2/3, r's 1 - 3/6 = 1/2. Link 1 (9): r (0.5/3) < z (1/4) < q
    # ((2/3)/2): r next; q's weight 2/3 - 0.5 * 2/3 = 1/3, z's 1 - 0.5 *
    # 4/3 = 1/3. Link 1 (6): z (1/12) < q (1/6): z. Order q, z, r, p.
    sinc = policies.make('sincronia').decide(snap(flows, jobs))
    assert sinc.coflow_rank.tolist() == [3, 0, 2, 1]


def test_beamer_smaller_bottleneck_first_inside_a_stage():
    # one stage (g, stage 0): u arrived first, 3 B on link 0 (Gamma 3);
    # v 2 B on link 0 (Gamma 2): v first
    jobs = [JobView(j, 0.0, 4, group='g', stage_ends=(2, 4),
                    iteration_load=np.array([5.0, 5.0])) for j in 'uv']
    flows = [(0, 0, 3, 'u'), (1, 0, 2, 'v')]
    d = policies.make('beamer').decide(snap(flows, jobs,
                                            arrival=[0.0, 1.0]))
    assert full_rank(d).tolist() == [1, 0]
    # a pending send of v's, 4 B on link 1, counts (clairvoyant): Gamma_v
    # 4 > 3: u first
    d = policies.make('beamer').decide(snap(flows, jobs, arrival=[0.0, 1.0],
                                            pending=[(1, 1, 4.0)]))
    assert full_rank(d).tolist() == [0, 1]
    # Gamma is bytes over capacity: link 1 at 16 bit/s (2 B/s) makes v's
    # pending 4 B 2 s: v first again
    d = policies.make('beamer').decide(snap(flows, jobs, arrival=[0.0, 1.0],
                                            pending=[(1, 1, 4.0)],
                                            cap=[8.0, 16.0]))
    assert full_rank(d).tolist() == [1, 0]
    # equal Gamma: by arrival
    d = policies.make('beamer').decide(snap([(0, 0, 2, 'u'), (1, 1, 2, 'v')],
                                            jobs, arrival=[1.0, 0.0]))
    assert full_rank(d).tolist() == [1, 0]



def inner_jobs(u_load=(10.0, 0.0)):
    """One stage (g, stage 0, ends at 4): u has 3 done (1 left), v 1 done
    (3 left), 4 B per iteration on link 0."""
    return [JobView('u', 0.0, 8, done=3, group='g', stage_ends=(4, 8),
                    iteration_load=np.array(u_load)),
            JobView('v', 0.0, 8, done=1, group='g', stage_ends=(4, 8),
                    iteration_load=np.array([4.0, 0.0]))]


def test_beamer_inner_order_stage_work_or_one_iteration():
    # u's coflow 10 B on link 0 (Gamma 10), v's 4 B (Gamma 4). One
    # iteration: v first. Stage work W = R x max_p D(p)/C(p): u 1 x 10 =
    # 10, v 3 x 4 = 12: u first.
    flows = [(0, 0, 10, 'u'), (1, 0, 4, 'v')]
    s = snap(flows, inner_jobs())
    it = policies.make('beamer', {'inner': 'iteration'})
    assert full_rank(it.decide(s)).tolist() == [1, 0]
    st = policies.make('beamer', {'inner': 'stage'})
    assert full_rank(st.decide(s)).tolist() == [0, 1]
    assert policies.make('beamer').inner == 'stage'        # Beamer's
    # W is over capacity: u's 20 B per iteration on link 1 at 2 B/s (16
    # bit/s) is 10 s, on link 0 none: W_u 10 < 12, u first; at 1 B/s it
    # is 20 > 12: v first under both orders
    s = snap(flows, inner_jobs(u_load=(0.0, 20.0)), cap=[8.0, 16.0])
    assert full_rank(st.decide(s)).tolist() == [0, 1]
    s = snap(flows, inner_jobs(u_load=(0.0, 20.0)))
    assert full_rank(st.decide(s)).tolist() == [1, 0]


def test_beamer_stage_work_without_iteration_load_and_ties():
    # w has no per-iteration load: W_w = max(R, 1) x its coflow's Gamma.
    # w's coflow 5 B on link 1: W_w = 2 x 5 = 10, tied with u's 1 x 10;
    # then Gamma: w (5) before u (10); v (12) last: w, u, v
    def with_w(done, ends, load=None, size=5):
        w = JobView('w', 0.0, ends[-1], done=done, group='g',
                    stage_ends=ends, iteration_load=load)
        return ([(0, 0, 10, 'u'), (1, 0, 4, 'v'), (2, 1, size, 'w')],
                inner_jobs() + [w])
    st = policies.make('beamer')
    it = policies.make('beamer', {'inner': 'iteration'})
    flows, jobs = with_w(2, (4, 8))
    assert full_rank(st.decide(snap(flows, jobs))).tolist() == [1, 2, 0]
    # one iteration: by Gamma v 4, w 5, u 10
    assert full_rank(it.decide(snap(flows, jobs))).tolist() == [2, 0, 1]
    # w's coflow 11 B: W_w = 2 x 11 = 22, after u (10) and v (12)
    flows, jobs = with_w(2, (4, 8), size=11)
    assert full_rank(st.decide(snap(flows, jobs))).tolist() == [0, 1, 2]
    # w at the end of its stage (4 of 4 done, R 0, its last coflow still
    # live): max(0, 1) x 11 = 11, between u and v
    flows, jobs = with_w(4, (4,), size=11)
    assert jobs[2].stage_left == 0
    assert full_rank(st.decide(snap(flows, jobs))).tolist() == [0, 2, 1]
    # with its iteration load known: 0 x 11 = 0, first
    flows, jobs = with_w(4, (4,), load=np.array([0.0, 11.0]), size=11)
    assert full_rank(st.decide(snap(flows, jobs))).tolist() == [1, 2, 0]
    # one iteration, whatever is left: v 4, u 10, w 11
    assert full_rank(it.decide(snap(flows, jobs))).tolist() == [1, 0, 2]


def test_beamer_inner_is_checked():
    assert policies.parse_spec('beamer:inner=iteration') == \
        ('beamer', {'inner': 'iteration'})
    with pytest.raises(ConfigError, match='inner'):
        policies.make('beamer', {'inner': 'coflow'})


def progress_jobs(g1_done, g2_done, g1_jobs='ab'):
    """One link. g1: jobs of 10 B per iteration, stages end at 4 and 8;
    g2: job c, 10 B per iteration, stages end at 5 and 10."""
    return ([JobView(j, 0.0, 8, done=g1_done, group='g1', stage_ends=(4, 8),
                     iteration_load=np.array([10.0])) for j in g1_jobs]
            + [JobView('c', 0.0, 10, done=g2_done, group='g2',
                       stage_ends=(5, 10), iteration_load=np.array([10.0]))])


def test_beamer_stage_with_fewer_iterations_left_moves_ahead():
    flows = [(0, 0, 1, 'a'), (1, 0, 1, 'b'), (2, 0, 1, 'c')]
    p = policies.make('beamer')
    # g1 at done 1: 2 jobs x 3 left x 10 = 60; g2 at 1: 4 x 10 = 40. One
    # link: BSSI puts the larger load last (weights 1): g2 first (c 0)
    d = p.decide(snap(flows, progress_jobs(1, 1), links=1))
    assert full_rank(d).tolist() == [1, 2, 0]
    # two iterations later for g1 (1 left each: 20), one for g2 (3 left:
    # 30): g1 first
    d = p.decide(snap(flows, progress_jobs(3, 2), links=1))
    assert full_rank(d).tolist() == [0, 1, 2]
    # g1 enters stage 1 (done 4: 4 left each, 80): behind g2 again
    d = p.decide(snap(flows, progress_jobs(4, 2), links=1))
    assert full_rank(d).tolist() == [1, 2, 0]


def test_beamer_early_stopped_jobs_leave_their_stage_load():
    # g1 stage 0 with a, b, e at done 2 (2 left each): 3 x 2 x 10 = 60 >
    # g2's c at done 1 (4 left, 40): c first
    flows = [(0, 0, 1, 'a'), (1, 0, 1, 'b'), (2, 0, 1, 'c'), (3, 0, 1, 'e')]
    p = policies.make('beamer')
    d = p.decide(snap(flows, progress_jobs(2, 1, 'abe'), links=1))
    assert full_rank(d).tolist() == [1, 2, 0, 3]
    # b and e stopped early: gone from the jobs and their coflows done. g1
    # is a's 2 x 10 = 20 < 40: a first
    d = p.decide(snap([(0, 0, 1, 'a'), (1, 0, 1, 'c')],
                      progress_jobs(2, 1, 'a'), links=1))
    assert full_rank(d).tolist() == [0, 1]


def test_beamer_without_iteration_load_uses_the_coflows_bytes_times_left():
    # a: no iteration_load, 2 left in its stage, its coflow 10 B: g1 load
    # 2 x 10 = 20 < g2's c (1 left x 30 = 30): a first
    def jobs(done):
        return [JobView('a', 0.0, 8, done=done, group='g1',
                        stage_ends=(4, 8)),
                JobView('c', 0.0, 4, done=1, group='g2', stage_ends=(2, 4),
                        iteration_load=np.array([30.0]))]
    flows = [(0, 0, 10, 'a'), (1, 0, 20, 'c')]
    p = policies.make('beamer')
    assert full_rank(p.decide(snap(flows, jobs(2), links=1))).tolist() \
        == [0, 1]
    # 4 left (done 0): 40 > 30: c first
    assert full_rank(p.decide(snap(flows, jobs(0), links=1))).tolist() \
        == [1, 0]


def test_beamer_coflows_of_no_job_last_by_bottleneck():
    # one link. c0 and c2 have no job (trace coflows; Gamma 5 and 1), c1
    # is b's (Gamma 7, larger than both): b's first, then by Gamma c2, a
    # coflow whose job is not among the jobs (c3, Gamma 3: as of no job),
    # c0. (c, the other stage, has no coflow now: still a stage.)
    jobs = progress_jobs(2, 1, 'b')
    flows = [(0, 0, 5, None), (1, 0, 7, 'b'), (2, 0, 1, None),
             (3, 0, 3, 'gone')]
    d = policies.make('beamer').decide(snap(flows, jobs, links=1))
    assert full_rank(d).tolist() == [3, 0, 1, 2]


def test_beamer_classes_follow_the_order():
    # two_groups with Q = 2: r's coflow class 0, the rest share class 1
    flows = [(0, 0, 6, 'p'), (1, 0, 2, 'q'), (1, 1, 2, 'q'),
             (2, 0, 3, 'r'), (2, 1, 3, 'r'), (3, 1, 4, 'z')]
    s = snap(flows, two_groups(), queues=2)
    d = policies.make('beamer').decide(s)
    assert coflow_class(s, d).tolist() == [1, 1, 0, 1]


def test_beamer_is_clairvoyant_on_coflows_and_made_by_name():
    p = policies.make('beamer')
    assert isinstance(p, Beamer) and p.name == 'beamer' and p.clairvoyant
    assert p.decides_on == 'coflows'


def test_beamer_same_snapshot_same_decision():
    flows = [(0, 0, 6, 'p'), (1, 0, 2, 'q'), (1, 1, 2, 'q'),
             (2, 0, 3, 'r'), (2, 1, 3, 'r'), (3, 1, 4, 'z'), (4, 0, 1, None)]
    s1 = snap(flows, two_groups(), pending=[(0, 1, 3.0)])
    s2 = snap([(0, 0, 1, 'a'), (1, 0, 1, 'c')], progress_jobs(2, 1, 'a'),
              links=1)
    for inner in ('stage', 'iteration'):
        p = policies.make('beamer', {'inner': inner})
        first = p.decide(s1)
        assert_same(first, p.decide(s1))
        p.decide(s2)
        assert_same(first, p.decide(s1))
        assert_same(first, policies.make('beamer',
                                         {'inner': inner}).decide(s1))
