"""CASSINI as a policy (issue 12): profiles, shifts on contended links,
cycles broken, the executors' gate, and the shifts carried out by the
simulator's driver and handed to the agents by the controller."""
import json
import os

import numpy as np
import pytest

from netsched import ROOT, policies
from netsched.pipeline import experiment, run
from netsched.errors import ConfigError
from netsched.policies import JobView, Snapshot
from netsched.policies import cassini as cs
from netsched.host.shifts import gate

from tests.support.decisions import assert_same

G = 10e9                                   # 10 Gbit/s links
MB = 1e6


def job(jid, compute_s, first_send_s, load, arrival=0.0):
    """A job whose iteration puts ``load`` bytes on each link."""
    return JobView(jid, arrival, 10, iteration_load=np.asarray(load, float),
                   compute_s=compute_s, first_send_s=first_send_s)


def snap(jobs, links=1, cap=G):
    return Snapshot(
        t=0.0, queues=8, link_capacity=np.full(links, cap),
        path_links=np.zeros((0, 1), np.int64),
        flow_path=np.zeros(0, np.int64), flow_coflow=np.zeros(0, np.int64),
        flow_remaining=np.zeros(0), flow_sent=np.zeros(0),
        flow_rate=np.zeros(0), coflow_id=(), coflow_arrival=np.zeros(0),
        coflow_sent=np.zeros(0), jobs={j.id: j for j in jobs})


def worked(links=1, on=(0,)):
    """The worked example x10: A computes 300 ms and then moves 125 MB
    (100 ms at 10 Gbit/s), B computes 500 ms and moves 125 MB."""
    load = np.zeros(links)
    load[list(on)] = 125 * MB
    return job('a', 0.3, 0.3, load), job('b', 0.5, 0.5, load)


def test_a_profile_is_compute_then_the_bytes_at_the_bottleneck_rate():
    it, start, comm, demand = cs.profile(
        job('a', 0.3, 0.25, [125 * MB, 62.5 * MB]), np.full(2, G))
    assert (it, start, comm) == pytest.approx((0.35, 0.25, 0.1))
    assert demand == pytest.approx([G, G / 2])
    # communication longer than the backward pass it overlaps
    it, _, _, _ = cs.profile(job('a', 0.3, 0.25, [250 * MB]), np.full(1, G))
    assert it == pytest.approx(0.45)
    assert cs.profile(job('a', 0.3, 0.3, [0.0]), np.full(1, G)) is None
    assert cs.profile(JobView('x', 0.0, 3), np.full(1, G)) is None


def test_the_worked_example_shifts_b_by_100_ms_on_the_slack_grid():
    d = policies.make('cassini').decide(snap(worked()))
    k = 1.02                                  # the default slack
    assert d.job_shift['a'] == pytest.approx(
        (0.0, 0.4 * k, 0.05 * 0.4 * k, 0.5 * 0.4 * k))
    assert d.job_shift['b'] == pytest.approx(
        (0.1 * k, 0.6 * k, 0.05 * 0.6 * k, 0.5 * 0.6 * k))
    assert d.coflow_rank is None and d.flow_rate is None   # no priorities
    sh, circles, _ = policies.make('cassini').solve(snap(worked()))
    assert circles[0][1] == pytest.approx(1.0)             # score 1


def test_links_the_jobs_cannot_overload_give_no_shift():
    # each job's bottleneck is its own 10 Gbit/s access link; the shared
    # core link of 40 Gbit/s takes both at full rate: nothing to shift
    a = job('a', 0.3, 0.3, [125 * MB, 0, 125 * MB])
    b = job('b', 0.5, 0.5, [0, 125 * MB, 125 * MB])
    cap = np.array([G, G, 4 * G])
    s = Snapshot(**{**snap([a, b], 3).__dict__, 'link_capacity': cap})
    assert policies.make('cassini').decide(s).job_shift == {}
    # a core of 15 Gbit/s they can overload together: shifted
    cap[2] = 1.5 * G
    s = Snapshot(**{**snap([a, b], 3).__dict__, 'link_capacity': cap})
    assert set(policies.make('cassini').decide(s).job_shift) == {'a', 'b'}
    # a job alone on its links is never held
    c = job('c', 0.3, 0.3, [0, 125 * MB])
    d = policies.make('cassini').decide(snap([*worked(2), c], links=2))
    assert set(d.job_shift) == {'a', 'b'}


def test_links_that_carry_the_same_jobs_count_once():
    # both directions of the bottleneck carry A and B: one constraint,
    # not a cycle A-l0-B-l1-A
    d = policies.make('cassini').decide(snap(worked(2, on=(0, 1)),
                                             links=2))
    assert d.job_shift['b'][0] == pytest.approx(0.102)


def test_a_cycle_is_broken_at_its_least_contended_link():
    # three jobs pairwise on three links: a-b on l0, b-c on l1, a-c on
    # l2, the last 1.5 times as wide (least contended): it is left out and
    # the shifts hold on l0 and l1
    def j(jid, compute, on, half=()):
        load = np.zeros(3)
        load[list(on)] = 125 * MB
        return job(jid, compute, compute, load)
    jobs = [j('a', 0.3, (0, 2)), j('b', 0.3, (0, 1)), j('c', 0.3, (1, 2))]
    cap = np.array([G, G, 1.5 * G])
    s = Snapshot(**{**snap(jobs, 3).__dict__, 'link_capacity': cap})
    _, circles, _ = policies.make('cassini').solve(s)
    kept = {link: k for link, (_, _, k) in circles.items()}
    assert kept == {0: True, 1: True, 2: False}
    sh = policies.make('cassini').decide(s).job_shift
    per = sh['a'][1]
    # on l0 and l1 the pairs never communicate at once
    for x, y in (('a', 'b'), ('b', 'c')):
        gap = (sh[y][0] - sh[x][0]) % per
        assert 0.1 * 1.02 - 1e-9 <= gap <= per - 0.1 * 1.02 + 1e-9


def test_random_shifts_are_in_the_period_and_the_same_every_time():
    s = snap(worked())
    p = policies.make('cassini', {'shifts': 'random', 'seed': 7})
    d1, d2 = p.decide(s), p.decide(s)
    assert_same(d1, d2)
    for j, (shift, per, _, _) in d1.job_shift.items():
        assert 0 <= shift < per
    other = policies.make('cassini', {'shifts': 'random', 'seed': 8})
    assert other.decide(s).job_shift != d1.job_shift


def test_no_shifts_mode_shifts_nothing():
    assert policies.make('cassini', {'shifts': 'none'}).decide(
        snap(worked())).job_shift == {}


def test_placement_takes_the_candidate_without_a_cycle_and_best_score():
    # A runs on links 0 and 1, C on links 1 and 2. B's candidates: on
    # links 0 and 2 (a cycle A-0-B-2-C-1-A: never taken), on link 0 with
    # A (they can take turns: score 1), on link 0 with twice the bytes
    # and little compute (they cannot: score below 1), or on no link
    # at all (nothing contended: 1). The best average wins, the first
    # of equals.
    def on(jid, compute, links, mb=125):
        load = np.zeros(3)
        load[list(links)] = mb * MB
        return job(jid, compute, compute, load)
    placed = {'a': on('a', 0.3, (0, 1)), 'c': on('c', 0.3, (1, 2))}
    p = policies.make('cassini')
    cap = np.full(3, G)
    cyclic, turns = on('b', 0.5, (0, 2)), on('b', 0.5, (0,))
    tight = on('b', 0.1, (0,), mb=250)
    alone = JobView('b', 0.0, 10, iteration_load=np.zeros(3),
                    compute_s=0.5, first_send_s=0.5)
    assert p.place(placed, [cyclic, tight, alone], cap) == 2
    assert p.place(placed, [cyclic, turns, alone], cap) == 1
    assert p.place(placed, [tight, cyclic], cap) == 0
    # every candidate cyclic: the best average all the same
    assert p.place(placed, [cyclic], cap) == 0
    # a policy that does not place takes the first
    assert policies.make('fair').place(placed, [cyclic, turns], cap) == 0


def test_the_same_snapshot_gives_the_same_decision():
    s = snap(worked())
    assert_same(policies.make('cassini').decide(s),
                policies.make('cassini').decide(s))


@pytest.mark.parametrize('params, word', [
    ({'shifts': 'greedy'}, 'shifts'), ({'tolerance': 0.5}, 'tolerance'),
    ({'slack': -1}, 'slack'), ({'cap_s': 0}, 'cap_s'),
    ({'max_wait': 0.01}, 'max_wait'), ({'max_wait': 1.5}, 'max_wait'),
    ({'place': 'best'}, 'place')])
def test_bad_knobs_are_named(params, word):
    with pytest.raises(ConfigError, match=word):
        policies.make('cassini', params)


def test_the_gate():
    # grid 0.1 + n 0.4, tolerance 0.02
    g = dict(shift_s=0.1, period_s=0.4, tolerance_s=0.02)
    assert gate(0.5, **g) == pytest.approx((0.5, 0.0))      # on time
    assert gate(0.51, **g) == pytest.approx((0.51, 0.01))   # late, within
    # early: waits for its grid point
    assert gate(0.45, **g) == pytest.approx((0.5, -0.05))
    # later than the tolerance: re-aligns on the next grid point
    assert gate(0.55, **g) == pytest.approx((0.9, 0.05))
    # ... unless that is more than max_wait away: it goes, drifting
    assert gate(0.55, max_wait_s=0.2, **g) == pytest.approx((0.55, 0.05))
    assert gate(0.75, max_wait_s=0.2, **g) == pytest.approx((0.9, -0.15))
    # far in the run: the same grid
    assert gate(100.1 + 1e-4, **g)[0] == pytest.approx(100.1 + 1e-4)


EXP = os.path.join(ROOT, 'experiments', 'cassini-pair.yaml')


def run_sim(tmp_path, policy):
    """The worked-example experiment on the simulator: its events and
    summary."""
    out = tmp_path / policy.replace(':', '_').replace('=', '_')
    _, summary = run.execute(experiment.load(EXP, backend='sim',
                                             policy=policy),
                             str(out), say=lambda m: None)
    ev = [json.loads(line) for line in open(out / 'events.jsonl')]
    return ev, summary


def mean_iteration(summary, j):
    return summary['jobs'][j]['iteration_time_s']['mean']


def test_the_simulator_starts_shifted_iterations_on_their_grid(tmp_path):
    ev, summary = run_sim(tmp_path, 'cassini')
    shifts = [e for e in ev if e['ev'] == 'shifts']
    grid = {j: tuple(v) for j, v in shifts[0]['shifts'].items()}
    assert grid['b'][0] == pytest.approx(0.102)
    gates = [e for e in ev if e['ev'] == 'gate']
    assert {e['job'] for e in gates} == {'a', 'b'}
    for e in gates:
        shift, per, tol, _ = grid[e['job']]
        phase = (e['start'] - shift) % per
        assert min(phase, per - phase) <= tol + 1e-6
        assert e['start'] >= e['t'] - 1e-9
    # every iteration as long as its slack grid: 1.02 x its time alone
    assert mean_iteration(summary, 'a') == pytest.approx(0.408, rel=0.01)
    assert mean_iteration(summary, 'b') == pytest.approx(0.612, rel=0.02)
    # the jobs left: the shifts are released
    assert shifts[-1]['shifts'] == {}


def test_without_shifts_the_phases_meet_and_both_jobs_are_slower(tmp_path):
    _, cas = run_sim(tmp_path, 'cassini')
    _, fair = run_sim(tmp_path, 'fair')
    for j in ('a', 'b'):
        assert mean_iteration(fair, j) > mean_iteration(cas, j)
    # random shifts held on the grid: A's phase meets B's
    _, rnd = run_sim(tmp_path, 'cassini:shifts=random')
    assert mean_iteration(rnd, 'a') > mean_iteration(cas, 'a') * 1.02


def controller():
    from netsched import topology as topo
    from netsched.control.core import ControllerCore
    c = ControllerCore(topo.parse_spec('dumbbell,2'), 8,
                       policies.make('cassini'), scale=500.0)
    for d in (0x060000, 0x060001):
        c.on_connect(d)
    meta = {'iterations': 10, 'bytes_per_iteration': 125 * MB,
            'group': None, 'stage_ends': []}
    for i, (h, dst, ip, jid, compute, iters) in enumerate((
            ('hl0', 'hr0', '10.0.1.2', 'a', 0.3, 10),
            ('hl1', 'hr1', '10.0.1.3', 'b', 0.5, 1))):
        out = c.handle({'op': 'register', 'host': h, 'run': 'r1',
                        'conns': [{'id': 1, 'sport': 40001 + i, 'dport': 5000,
                                   'dst_ip': ip}],
                        'sends': [{'id': 1 + i, 'coflow': jid + '/0',
                                   'job': jid, 'bytes': 125 * MB, 'conn': 1,
                                   'dst': dst, 'iter': 0}],
                        'jobs': {jid: dict(meta, compute_s=compute,
                                           first_send_s=compute,
                                           iterations=iters)}}, 0.0)
        assert out.reply['ok'], out.reply
        assert out.reply['wait_for_class'] is False     # no classes come
    return c


def test_the_controller_hands_each_jobs_hosts_its_shift_once():
    c = controller()
    c.handle({'op': 'report', 'host': 'hl0', 'events': [
        {'ev': 'start', 'task': 1, 'ready': 0.3, 't': 0.3}]}, 0.3)
    c.handle({'op': 'report', 'host': 'hl1', 'events': [
        {'ev': 'start', 'task': 2, 'ready': 0.5, 't': 0.5}]}, 0.5)
    out = c.step(0.5)
    assert out.decided
    assert out.mods == {}                    # nothing in the switches
    got = {h: [m for m in ms if m['op'] == 'shifts']
           for h, ms in out.pushes.items()}
    assert got['hl0'] == [{'op': 'shifts',
                           'shifts': {'a': pytest.approx(
                               [0.0, 0.408, 0.0204, 0.204])}}]
    assert got['hl1'] == [{'op': 'shifts',
                           'shifts': {'b': pytest.approx(
                               [0.102, 0.612, 0.0306, 0.306])}}]
    assert [r['kind'] for r in out.log] == ['shifts']
    # the same demand again: decided, nothing sent
    c.scheduler.intake.dirty = True
    again = c.step(0.6)
    assert again.decided and not again.pushes and not again.log
    # b's only iteration ends, b leaves the view: nothing to share the
    # link with, both are released
    c.handle({'op': 'report', 'host': 'hr1', 'events': [
        {'ev': 'recv', 'task': 2, 't': 0.6}]}, 0.6)
    out = c.step(0.7)
    assert out.pushes == {'hl0': [{'op': 'shifts', 'shifts': {'a': None}}],
                          'hl1': [{'op': 'shifts', 'shifts': {'b': None}}]}


@pytest.mark.parametrize('job, word', [
    ({'placement': ['h0_0_0', 'h1_0_0'],
      'candidates': [['h0_0_0', 'h1_0_0'], ['h2_0_0', 'h3_0_0']]},
     'placement or candidates'),
    ({'candidates': [['h0_0_0', 'h1_0_0']]}, 'two or more'),
    ({'candidates': [['h0_0_0', 'h1_0_0'], ['h2_0_0']]}, '[1] lists 1'),
    ({'candidates': [['h0_0_0', 'h1_0_0'], ['h2_0_0', 'h9_0_0']]},
     'h9_0_0')])
def test_bad_candidates_are_named(tmp_path, job, word):
    d = {'topology': 'fattree,4', 'policy': 'cassini', 'jobs': [dict(
        {'id': 'j', 'model': 'resnet50', 'pattern': 'ring', 'workers': 2,
         'iterations': 2}, **job)]}
    p = tmp_path / 'e.yaml'
    p.write_text(json.dumps(d))
    with pytest.raises(ConfigError, match='candidates') as e:
        experiment.load(str(p))
    assert word in str(e.value) and 'e.yaml' in str(e.value)


def test_the_fattree_experiment_places_by_policy(tmp_path):
    exp = os.path.join(ROOT, 'experiments', 'cassini-fattree.yaml')
    from netsched.workload import taskgraph
    chosen = {}
    for pol in ('cassini', 'fair'):
        plan = taskgraph.build(experiment.load(exp, backend='sim',
                                               policy=pol))
        chosen[pol] = {j: p['chosen'] for j, p in plan.placements.items()}
    assert chosen['fair'] == {'r2': 0, 'b1': 0, 'p1': 0}
    # CASSINI leaves the first candidates where they share links badly
    assert chosen['cassini'] != chosen['fair']
    assert set(chosen['cassini']) == {'r2', 'b1', 'p1'}
