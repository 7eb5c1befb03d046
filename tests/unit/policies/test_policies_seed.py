"""The seed policies of issue 11 (JPAS, Beamer, Geryon, TensorExpress) on
hand-worked snapshots, and what the controller compiles from their
decisions (golden files in tests/golden/, regenerated with
NETSCHED_REGEN_GOLDEN=1 and then read by a person before committing)."""
import json
import os

import numpy as np
import pytest

from netsched import policies
from netsched import topology as topo
from netsched.control.core import ControllerCore
from netsched.errors import ConfigError
from netsched.policies import JobView, Snapshot, flow_priority
from netsched.policies.jpas import fit_loss, loss_at
from tests.support.decisions import assert_same

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'golden')
MB = 1e6


def snap(flows, jobs=(), cap=(8.0,), t=0.0, queues=8, urgency=None,
         position=None, pending=(), arrival=None):
    """flows: (coflow index, link, remaining bytes, job); capacities in
    bit/s (8 bit/s = 1 byte/s). pending: (coflow, link, bytes, urgency,
    position)."""
    C = 1 + max(f[0] for f in flows)
    links = sorted({f[1] for f in flows} | {p[1] for p in pending})
    pid = {lk: i for i, lk in enumerate(links)}
    job_of = {}
    for f in flows:
        job_of[f[0]] = f[3]
    return Snapshot(
        t=t, queues=queues, link_capacity=np.array(cap, float),
        path_links=np.array([[lk] for lk in links]),
        flow_path=np.array([pid[f[1]] for f in flows]),
        flow_coflow=np.array([f[0] for f in flows]),
        flow_remaining=np.array([f[2] for f in flows], float),
        flow_sent=np.zeros(len(flows)), flow_rate=np.zeros(len(flows)),
        coflow_id=tuple('c%d' % i for i in range(C)),
        coflow_arrival=np.zeros(C) if arrival is None
        else np.array(arrival, float),
        coflow_sent=np.zeros(C),
        coflow_job=tuple(job_of[c] for c in range(C)),
        jobs={v.id: v for v in jobs},
        flow_urgency=np.array(urgency if urgency is not None
                              else [np.nan] * len(flows), float),
        flow_position=np.array(position if position is not None
                               else [np.nan] * len(flows), float),
        pending_path=np.array([pid[p[1]] for p in pending], np.int64),
        pending_coflow=np.array([p[0] for p in pending], np.int64),
        pending_bytes=np.array([p[2] for p in pending], float),
        pending_urgency=np.array([p[3] for p in pending], float),
        pending_position=np.array([p[4] for p in pending], float))


def losses(beta, ks, t=0.0):
    return tuple((k, loss_at(beta, k), t) for k in ks)


# --- JPAS ---------------------------------------------------------------

def test_the_loss_fit_recovers_a_curve_from_its_points():
    beta = (0.1, 0.5, 0.2)
    got = fit_loss([(k, loss_at(beta, k)) for k in range(1, 7)])
    assert got == pytest.approx(beta, rel=0.05)
    assert fit_loss([(1, 2.0), (2, 2.5), (3, 3.0)]) is None   # rising
    assert fit_loss([(1, 2.0)]) is None


def test_maif_puts_the_job_that_gains_most_per_byte_first():
    # After 3 iterations: steep a, beta (0.1, 0.5, 0.1): l(3) = 1/0.8 +
    # 0.1 = 1.35, l(4) = 1/0.9 + 0.1 = 1.2111, gain 0.1389 per 1 MB;
    # flat b, beta (0.01, 0.5, 0.1): l(3) = 1.9868, l(4) = 1.9519, gain
    # 0.0349 per 1 MB. a first although b arrived first.
    jobs = [JobView('a', 1.0, 10, done=3, bytes_per_iteration=MB,
                    losses=losses((0.1, 0.5, 0.1), (1, 2, 3))),
            JobView('b', 0.0, 10, done=3, bytes_per_iteration=MB,
                    losses=losses((0.01, 0.5, 0.1), (1, 2, 3)))]
    s = snap([(0, 0, 5, 'b'), (1, 0, 5, 'a')], jobs, t=0.5)
    d = policies.make('jpas').decide(s)
    assert d.coflow_rank.tolist() == [1, 0]
    # with 4x the bytes per iteration a's gain per byte (0.0347) falls
    # below b's: b first
    jobs[0] = JobView('a', 1.0, 10, done=3, bytes_per_iteration=4 * MB,
                      losses=jobs[0].losses)
    s = snap([(0, 0, 5, 'b'), (1, 0, 5, 'a')], jobs, t=0.5)
    assert policies.make('jpas').decide(s).coflow_rank.tolist() == [0, 1]


def test_early_jobs_first_then_the_period_boundary_decides():
    fitted = JobView('old', 0.0, 10, done=3, bytes_per_iteration=MB,
                     losses=losses((0.1, 0.5, 0.1), (1, 2, 3)))
    # the new job's third report came at t = 1.1: at t = 1.5 with a 1 s
    # period the ranking uses what was known at 1.0, two points: too few
    # to fit, so the new job is early-stage and goes first
    new = JobView('new', 1.0, 10, done=3, bytes_per_iteration=MB,
                  losses=losses((0.01, 0.5, 0.1), (1, 2), 0.9)
                  + ((3, loss_at((0.01, 0.5, 0.1), 3), 1.1),))
    flows = [(0, 0, 5, 'old'), (1, 0, 5, 'new'), (2, 0, 5, None)]
    d = policies.make('jpas').decide(snap(flows, [fitted, new], t=1.5))
    assert d.coflow_rank.tolist() == [1, 0, 2]       # no job: last
    assert d.recheck_at == 2.0
    # at t = 2.0 the third point counts: the fit says old gains more
    d = policies.make('jpas').decide(snap(flows, [fitted, new], t=2.0))
    assert d.coflow_rank.tolist() == [0, 1, 2]
    assert d.recheck_at == 3.0


def test_least_progress_first():
    jobs = [JobView('a', 0.0, 10, done=5, losses=losses((.1, .5, .1),
                                                        range(1, 6))),
            JobView('b', 0.0, 4, done=1, losses=losses((.1, .5, .1), (1,))),
            JobView('c', 0.5, 20, done=2, losses=losses((.1, .5, .1),
                                                        (1, 2)))]
    # progress 5/10, 1/4, 2/20 -> c, b, a
    s = snap([(0, 0, 1, 'a'), (1, 0, 1, 'b'), (2, 0, 1, 'c')], jobs, t=3.0)
    d = policies.make('jpas', {'key': 'progress'}).decide(s)
    assert d.coflow_rank.tolist() == [2, 1, 0]


def test_jpas_parameters_are_checked():
    with pytest.raises(ConfigError, match=r"key must be one of maif, "
                       r"progress, got 'fastest'"):
        policies.make('jpas', {'key': 'fastest'})
    with pytest.raises(ConfigError, match=r'period_s: must be a positive'):
        policies.make('jpas', {'period_s': 0})


# --- Beamer -------------------------------------------------------------

def tuning_jobs(c_left=1, with_a=True):
    """Group g1: a and b in stage 0, 2 iterations left, 10 B per
    iteration on the link each: stage load 40. Group g2: c, c_left
    iterations left at 30 B: load 30 c_left."""
    jobs = [JobView('b', 0.0, 4, group='g1', stage_ends=(2, 4),
                    iteration_load=np.array([10.0])),
            JobView('c', 0.0, 4, done=4 - 2 - c_left + 2, group='g2',
                    stage_ends=(2 + c_left, 4 + c_left),
                    iteration_load=np.array([30.0]))]
    if with_a:
        jobs.append(JobView('a', 0.0, 4, group='g1', stage_ends=(2, 4),
                            iteration_load=np.array([10.0])))
    return jobs


def test_beamer_orders_stages_by_bssi_on_stage_loads():
    # one port: BSSI puts last the stage of least weight / load: g1 (40)
    # after g2 (30). Sincronia on the coflows alone would put c (20 B
    # left) last, after b (3) and a (5).
    flows = [(0, 0, 5, 'a'), (1, 0, 3, 'b'), (2, 0, 20, 'c')]
    jobs = tuning_jobs()
    assert {j.id: j.stage_left for j in jobs} == {'a': 2, 'b': 2, 'c': 1}
    d = policies.make('beamer').decide(snap(flows, jobs))
    # c's stage first; inside g1 the smaller bottleneck first: b, a
    assert d.coflow_rank.tolist() == [2, 1, 0]
    sinc = policies.make('sincronia').decide(snap(flows, jobs))
    assert sinc.coflow_rank.tolist() == [1, 0, 2]


def test_beamer_reorders_when_stage_loads_change():
    flows = [(0, 0, 5, 'a'), (1, 0, 3, 'b'), (2, 0, 20, 'c')]
    # c with 3 iterations left in its stage: g2's load 90 > 40: g1 first
    d = policies.make('beamer').decide(snap(flows, tuning_jobs(c_left=3)))
    assert d.coflow_rank.tolist() == [1, 0, 2]
    # a stopped early (gone from the jobs, its coflow done): g1's load
    # is b's alone, 20 < 30: g1 first again with c at 1 left
    d = policies.make('beamer').decide(
        snap([(0, 0, 3, 'b'), (1, 0, 20, 'c')],
             tuning_jobs(c_left=1, with_a=False)))
    assert d.coflow_rank.tolist() == [0, 1]


def test_beamer_puts_coflows_of_no_job_last():
    flows = [(0, 0, 1, None), (1, 0, 3, 'b'), (2, 0, 20, 'c')]
    d = policies.make('beamer').decide(snap(flows, tuning_jobs(
        with_a=False)))
    assert d.coflow_rank.tolist()[0] == 2


# --- Geryon and TensorExpress -------------------------------------------

URG = [0.0, 0.24, 0.25, 0.6, 0.99, np.nan]
POS = [0.1, 0.3, 0.5, 0.7, 0.95, np.nan]
PEND = [(0, 0, 1, 0.5, 0.05), (1, 0, 1, 0.8, 0.8)]


def flows6():
    return [(i % 2, 0, 1, 'j%d' % (i % 2)) for i in range(6)]


def test_geryon_classes_equal_byte_shares_of_the_model():
    g = policies.make('geryon')
    assert g.workload() == {'ps_lanes': 4, 'slice_mb': 4.0}
    d = g.decide(snap(flows6(), urgency=URG, pending=PEND))
    # K = 4: [0, .25) -> 0, [.25, .5) -> 1, [.5, .75) -> 2, [.75, 1] -> 3;
    # no model data: the lowest of Q = 8
    assert d.flow_class.tolist() == [0, 0, 1, 2, 3, 7]
    assert d.pending_class.tolist() == [2, 3]
    assert d.coflow_rank is None
    # more classes than queues: merged in order (c * Q // K)
    d = policies.make('geryon', {'classes': 8}).decide(
        snap(flows6(), urgency=URG, pending=PEND, queues=4))
    assert d.flow_class.tolist() == [0, 0, 1, 2, 3, 3]
    # the simulator's exact mode has no Q: 8 classes
    d = g.decide(snap(flows6(), urgency=URG, queues=None))
    assert d.flow_class.tolist() == [0, 0, 1, 2, 3, 7]
    with pytest.raises(ConfigError, match=r'classes: must be a positive'):
        policies.make('geryon', {'classes': 0})


def test_tensorexpress_tags_by_consumption_order_cluster_wide():
    tx = policies.make('tensorexpress')
    assert tx.workload() == {'send_order': 'priority', 'slice_mb': 4.0}
    s = snap(flows6(), urgency=URG, position=POS, pending=PEND)
    d = tx.decide(s)
    # 8 classes: floor(8 position); two jobs' flows at one position get
    # one class (j0 and j1 alternate in flows6)
    assert d.flow_class.tolist() == [0, 2, 4, 5, 7, 7]
    assert d.pending_class.tolist() == [0, 6]
    d4 = tx.decide(snap(flows6(), position=POS, pending=PEND, queues=4))
    assert d4.flow_class.tolist() == [0, 1, 2, 2, 3, 3]
    # the per-send classes are the flows' keys on both backends
    assert flow_priority(s, d).tolist() == d.flow_class.tolist()


@pytest.mark.parametrize('name, kw', [
    ('jpas', {}), ('beamer', {}), ('geryon', {}), ('tensorexpress', {})])
def test_the_same_snapshot_gives_the_same_decision(name, kw):
    jobs = tuning_jobs() + [JobView('j0', 0.0, 5, done=3,
                                    losses=losses((.1, .5, .1), (1, 2, 3))),
                            JobView('j1', 0.1, 5, done=1)]
    s = snap([(0, 0, 5, 'a'), (1, 0, 3, 'b'), (2, 0, 20, 'c'),
              (3, 0, 1, 'j0'), (4, 0, 2, 'j1')], jobs, t=1.0,
             urgency=[0.1, 0.3, 0.5, 0.7, 0.9],
             position=[0.1, 0.3, 0.5, 0.7, 0.9], pending=PEND)
    p = policies.make(name, kw)
    assert_same(p.decide(s), p.decide(s))


# --- what the controller compiles: golden files --------------------------

SL = 0x060000


def scenario(policy):
    """dumbbell,2: hl0 sends job a's tensors on two connections (urgency
    0.1 and 0.6; positions 0.1 and 0.6), hl1 job b's on one (0.3). Job a
    is new (no loss reported), b has three losses."""
    c = ControllerCore(topo.parse_spec('dumbbell,2'), 8,
                       policies.make(policy), scale=500.0)
    for d in (SL, SL + 1):
        c.on_connect(d)

    def send(i, conn, job, dst, u):
        return {'id': i, 'coflow': job + '/0', 'job': job, 'bytes': MB,
                'conn': conn, 'dst': dst, 'iter': 0, 'urgency': u,
                'position': u}
    meta = {'iterations': 4, 'bytes_per_iteration': 2 * MB}
    out = [c.handle({'op': 'register', 'host': 'hl0', 'run': 'g', 'conns': [
        {'id': 1, 'sport': 40001, 'dport': 7000, 'dst_ip': '10.0.1.2'},
        {'id': 2, 'sport': 40002, 'dport': 7000, 'dst_ip': '10.0.1.2'}],
        'sends': [send(1, 1, 'a', 'hr0', 0.1), send(2, 2, 'a', 'hr0', 0.6)],
        'jobs': {'a': meta}}, 0.0),
        c.handle({'op': 'register', 'host': 'hl1', 'run': 'g', 'conns': [
            {'id': 1, 'sport': 40003, 'dport': 7000,
             'dst_ip': '10.0.1.3'}],
            'sends': [send(3, 1, 'b', 'hr1', 0.3),
                      send(4, 1, 'b', 'hr1', 0.35)],
            'jobs': {'b': meta}}, 0.0)]
    assert all(o.reply['ok'] for o in out)
    # b started first and has reported three iterations (a loss curve)
    c.handle({'op': 'report', 'host': 'hl1', 'events': [
        {'ev': 'start', 'task': 3, 'ready': 0.1, 't': 0.1}] + [
        {'ev': 'mark', 'job': 'b', 'iter': k, 't': 0.2,
         'loss': loss_at((0.01, 0.5, 0.1), k + 1)} for k in range(3)]}, 0.3)
    c.step(0.3)
    c.handle({'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'start', 'task': 1, 'ready': 1.2, 't': 1.2},
        {'ev': 'start', 'task': 2, 'ready': 1.2, 't': 1.2}]}, 1.2)
    return c, c.step(1.2)


def compiled(c, out):
    return {'mods': {'%x' % d: [m.to_dict() for m in ms]
                     for d, ms in sorted(out.mods.items())},
            'pushes': out.pushes,
            'rules': {'%x' % d: r for d, r in
                      c.scheduler.rules.per_switch().items()}}


@pytest.mark.parametrize('policy', ['jpas', 'beamer', 'geryon',
                                    'tensorexpress'])
def test_compiled_openflow_matches_the_golden_file(policy):
    c, out = scenario(policy)
    got = json.loads(json.dumps(compiled(c, out), sort_keys=True))
    path = os.path.join(GOLDEN, 'policy-%s.json' % policy)
    if os.environ.get('NETSCHED_REGEN_GOLDEN'):
        with open(path, 'w') as f:
            json.dump(got, f, indent=1, sort_keys=True)
    with open(path) as f:
        assert got == json.load(f)
    # idempotent: asked again on the same state, nothing is sent
    c.scheduler.intake.dirty = True
    again = c.step(1.3)
    assert again.decided and not again.mods and not again.pushes
