"""Tensor, pipeline and expert parallelism: schedules, placement, checks,
and iteration times on an idle fabric against their hand-worked sums."""
import json

import pytest

from netsched.errors import ConfigError
from netsched.pipeline import experiment, run
from netsched.workload import models, parallelism, taskgraph

MB = 2 ** 20
B = 8 * MB                  # link bit/s: 1 MiB/s


def profile(tmp_path, layers, name='p'):
    p = tmp_path / (name + '.json')
    p.write_text(json.dumps({'name': name, 'layers': layers}))
    return p.name


def exp_of(tmp_path, job, topology='bigswitch,8', **top):
    d = dict({'topology': topology, 'backend': 'sim', 'link_bps': B,
              'completion_tolerance': 0,
              'jobs': [dict({'id': 'j', 'iterations': 1}, **job)]}, **top)
    return experiment.from_dict(d, str(tmp_path / 'exp.yaml'))


def jct(tmp_path, job, **kw):
    exp = exp_of(tmp_path, job, **kw)
    _, s = run.execute(exp, str(tmp_path / 'out'), say=lambda m: None)
    return s['jobs']['j']['jct_s'], s


def test_one_f_one_b_order():
    # Narayanan et al. 2021, Figure 4: 4 stages, 8 micro-batches
    assert parallelism.one_f_one_b(3, 4, 8)[:4] == [
        ('F', 0), ('B', 0), ('F', 1), ('B', 1)]
    s0 = parallelism.one_f_one_b(0, 4, 8)
    assert s0[:5] == [('F', 0), ('F', 1), ('F', 2), ('F', 3), ('B', 0)]
    assert s0[-3:] == [('B', 5), ('B', 6), ('B', 7)]
    for s in range(4):
        ops = parallelism.one_f_one_b(s, 4, 8)
        assert sorted(ops) == sorted([(o, i) for o in 'FB' for i in range(8)])
    assert parallelism.one_f_one_b(0, 4, 2) == [('F', 0), ('F', 1),
                                                ('B', 0), ('B', 1)]


def test_stages_split_forward_compute_evenly():
    m = models.get('gpt3-1.3b')
    cuts = parallelism.stages(m, 4)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(m.layers)
    fwd = [sum(x.forward_ms for x in m.layers[a:e]) for a, e in cuts]
    assert max(fwd) / min(fwd) < 1.3


def test_pipeline_iteration_is_its_1f1b_sum(tmp_path):
    # two layers, one a stage; forward f = 0.1 s a micro-batch, backward
    # 2f; an activation of A bytes a micro-batch takes a = A/B = 0.05 s.
    # Stage 0: F0 [0, f], F1 [f, 2f]; stage 1: F0 [f+a, 2f+a], B0 to
    # 4f+a, F1 to 5f+a, B1 to 7f+a; gradients back: B0 at stage 0 from
    # 4f+2a to 6f+2a, B1 from 7f+2a to 9f+2a
    f, a, m = 0.1, 0.05, 2
    A = int(a * MB) * m
    layer = {'forward_ms': f * m * 1e3, 'backward_ms': 2 * f * m * 1e3,
             'activation_bytes': A, 'tensors': [{'bytes': 1000}]}
    name = profile(tmp_path, [dict(layer, name='a'), dict(layer, name='b')])
    t, s = jct(tmp_path, {'model': name, 'workers': 2, 'parallelism':
                          {'pp': 2, 'micro_batches': m}})
    assert t == pytest.approx(9 * f + 2 * a, rel=1e-5)
    # a coflow per micro-batch and direction
    assert sorted(s['coflows']) == ['j/0/pp.s0-1.m0.F', 'j/0/pp.s0-1.m1.F',
                                    'j/0/pp.s1-0.m0.B', 'j/0/pp.s1-0.m1.B']


def test_tensor_parallel_layer_is_compute_and_two_all_reduces(tmp_path):
    # tp 2: half the compute, then a ring all-reduce of the activation A
    # (2 (2-1)/2 A / B = A/B), in the forward and the backward pass
    f, A = 0.2, 300 * 1024
    name = profile(tmp_path, [{'name': 'a', 'forward_ms': f * 1e3,
                               'backward_ms': 2 * f * 1e3,
                               'activation_bytes': A, 'tp_allreduces': 1,
                               'tensors': [{'bytes': 1000}]}])
    t, s = jct(tmp_path, {'model': name, 'workers': 2,
                          'parallelism': {'tp': 2}})
    assert t == pytest.approx(f / 2 + A / MB + f + A / MB, rel=1e-5)
    # a coflow per step: 2 steps an all-reduce, one forward, one backward
    assert len(s['coflows']) == 4


def test_data_parallel_gradients_after_the_pipeline(tmp_path):
    # dp 2 x pp 2 with no compute; ranks 0, 1 are stage 0, ranks 2, 3
    # stage 1. The activations go 0 -> 2 and 1 -> 3 (a = A/B); stage 1's
    # ring all-reduce of G (G/B between 2 and 3) starts as the gradients
    # go back, and they share the uplinks of 2 and 3 (fair halves: the
    # gradient of A takes 2a); then stage 0's all-reduce, G/B
    A, G = 100 * 1024, 400 * 1024
    layer = {'forward_ms': 0, 'backward_ms': 0, 'activation_bytes': A,
             'tensors': [{'bytes': G}]}
    name = profile(tmp_path, [dict(layer, name='a'), dict(layer, name='b')])
    t, s = jct(tmp_path, {'model': name, 'workers': 4, 'parallelism':
                          {'pp': 2}})
    assert t == pytest.approx(3 * A / MB + G / MB, rel=1e-5)


def test_expert_parallel_all_to_alls(tmp_path):
    # ep 2 over dp 2: per expert layer a dispatch and a combine of
    # A x top_k in each pass: 4 all-to-alls, each 1/2 of 2A at B
    A = 100 * 1024
    name = profile(tmp_path, [{'name': 'moe', 'forward_ms': 0,
                               'backward_ms': 0, 'activation_bytes': A,
                               'experts': 4, 'top_k': 2,
                               'tensors': [{'bytes': 8000}]}])
    t, s = jct(tmp_path, {'model': name, 'workers': 2,
                          'parallelism': {'ep': 2}})
    a2a = [c for c in s['coflows'] if '/ep.' in c]
    assert len(a2a) == 4
    # expert weights are not replicated over dp = ep: nothing to reduce
    assert not [c for c in s['coflows'] if '/dp.' in c]
    assert t == pytest.approx(4 * (2 * A / 2) / MB, rel=1e-5)


def test_tp_groups_are_placed_under_one_leaf(tmp_path):
    # fat-tree k=4: 2 hosts a leaf; job x leaves leaves e0_0 and e1_0
    # one free host each, so the tp groups of 2 go to e0_1 and e1_1
    d = {'topology': 'fattree,4', 'backend': 'sim', 'jobs': [
        {'id': 'x', 'model': 'resnet50', 'pattern': 'ring', 'workers': 2,
         'iterations': 1, 'placement': ['h0_0_1', 'h1_0_0']},
        {'id': 'j', 'model': 'gpt3-1.3b', 'workers': 4, 'iterations': 1,
         'parallelism': {'tp': 2}}]}
    plan = taskgraph.build(experiment.from_dict(d, str(tmp_path / 'e.yaml')))
    assert plan.jobs['j'].workers == ('h0_1_0', 'h0_1_1', 'h1_1_0',
                                      'h1_1_1')


def test_a_tp_group_that_cannot_fit_is_explained(tmp_path):
    exp = exp_of(tmp_path, {'model': 'gpt3-1.3b', 'workers': 4,
                            'parallelism': {'tp': 4}}, topology='fattree,4')
    with pytest.raises(ConfigError, match='exp.yaml: job j: parallelism: tp: '
                       'tensor-parallel group 0 of 4 '
                       'hosts must be under one leaf; the most free hosts '
                       'any leaf has is 2'):
        run.check(exp)
    ok = exp_of(tmp_path, {'model': 'gpt3-1.3b', 'workers': 4, 'parallelism':
                           {'tp': 4, 'tp_within': 'pod'}},
                topology='fattree,4')
    assert run.check(ok)[2].jobs['j'].workers == (
        'h0_0_0', 'h0_0_1', 'h0_1_0', 'h0_1_1')


@pytest.mark.parametrize('job,msg', [
    ({'collective': 'butterfly'},
     r"jobs\[0\]: collective: unknown collective 'butterfly'"),
    ({'collective': {'tp': 'all-gather'}, 'parallelism': {'tp': 2}},
     r"collective: tp: 'all-gather' is not an all-reduce"),
    ({'parallelism': {'tp': 3}},
     r'parallelism: tp x pp = 3 x 1 = 3 does not divide the job\'s 8'),
    ({'parallelism': {'tp': 2, 'dp': 3}},
     r'dp x tp x pp = 3 x 2 x 1 = 6, but the job has 8 workers'),
    ({'collective': 'hierarchical', 'group_size': 3},
     r'group_size: 3 does not divide the 8 ranks'),
    ({'collective': 'ring', 'group_size': 2},
     r'group_size: only the hierarchical collective has groups'),
    ({'parallelism': {'ep': 2}}, r'ep: gpt3-1.3b has no expert layer'),
    ({'parallelism': {'zero': 2}}, r'zero: must be 0 or 3, got 2'),
    ({'parallelism': {'pp': 2, 'zero': 3}},
     r'zero: 3 does not go with pipeline parallelism'),
    ({'parallelism': {'sp': 2}}, r"parallelism: unknown key 'sp'"),
    ({'collective': 'ring', 'pattern': 'ring'},
     r'pattern: a job with collective has no pattern'),
    ({'chunks': 0}, r'chunks: must be an integer >= 1, got 0'),
])
def test_bad_keys_name_file_key_and_value(tmp_path, job, msg):
    with pytest.raises(ConfigError, match=r'exp\.yaml: ' + msg if
                       msg.startswith('jobs') else msg) as e:
        exp_of(tmp_path, dict({'model': 'gpt3-1.3b', 'workers': 8}, **job))
    assert str(tmp_path / 'exp.yaml') in str(e.value)


def test_zero3_gathers_and_scatters(tmp_path):
    # dp 2, one layer of G bytes, no compute. The forward's gather of G
    # (G/2 each way: G/2B), the backward's, asked for as the forward
    # began, after it on the same connections (G/2B), then the gradient's
    # reduce-scatter (G/2B): 1.5 G/B, and no all-reduce
    G = 400 * 1024
    name = profile(tmp_path, [{'name': 'a', 'forward_ms': 0,
                               'backward_ms': 0, 'tensors': [{'bytes': G}]}])
    t, s = jct(tmp_path, {'model': name, 'workers': 2,
                          'parallelism': {'zero': 3}})
    assert sorted(c.split('/')[2] for c in s['coflows']) == [
        'zero.ag.t0.B0.s0', 'zero.ag.t0.F0.s0', 'zero.rs.t0.B0.s0']
    assert t == pytest.approx(1.5 * G / MB, rel=1e-5)


@pytest.mark.parametrize('job', [
    {'model': 'gpt3-1.3b', 'workers': 8, 'collective': {'dp': 'tree'},
     'chunks': 2, 'parallelism': {'tp': 2, 'pp': 2, 'micro_batches': 3}},
    {'model': 'mixtral-8x7b', 'workers': 8,
     'parallelism': {'tp': 2, 'ep': 2, 'zero': 3}},
    {'model': 'gpt2', 'workers': 8, 'collective': 'halving-doubling'},
])
def test_a_host_waits_only_for_what_it_observes(tmp_path, job):
    # the emulator's agents run each host's tasks alone: a task may wait
    # for its own host's compute or for data sent to its host, never for
    # a send of its own (its end is seen at the receiver) or another's
    exp = exp_of(tmp_path, dict(job, iterations=2), topology='fattree,4')
    plan = taskgraph.build(exp)
    for t in plan.tasks:
        for d in t.deps:
            dep = plan.tasks[d]
            if dep.kind == 'send':
                assert dep.dst == t.host, (t.label, dep.coflow)
            else:
                assert dep.host == t.host, (t.label, dep.label)
    # every send's coflow is counted in full
    total = {}
    for t in plan.tasks:
        if t.kind == 'send':
            total[t.coflow] = total.get(t.coflow, 0) + t.bytes
    assert total == pytest.approx(plan.coflow_bytes)


def test_a_collective_job_is_in_view_until_its_last_coflow(tmp_path):
    # the policy's view of a job opens at its first coflow and closes at
    # the last of its last iteration's many coflows, not at the first
    from netsched.sim.drivers import PlanDriver
    exp = exp_of(tmp_path, {'model': 'gpt2', 'workers': 4,
                            'collective': 'ring', 'iterations': 2})
    plan = taskgraph.build(exp)
    last = {t.coflow for t in plan.tasks
            if t.kind == 'send' and t.iter == 1}
    assert len(last) > 1
    assert PlanDriver(plan).seen.last_coflows == {'j': last}
