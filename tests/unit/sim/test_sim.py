"""The simulator backend end to end: small traces with hand-worked
completion times, DL jobs against the analytical model, properties."""
import json
import os

import pytest

from netsched.pipeline import experiment, report, run
from netsched.workload import models, taskgraph as workload

MB = 2 ** 20


def write_trace(tmp_path, lines, ports=2):
    p = tmp_path / 'trace.txt'
    p.write_text('%d %d\n' % (ports, len(lines)) + '\n'.join(lines) + '\n')
    return str(p)


def run_exp(tmp_path, d, **kw):
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'), **kw)
    out, summary = run.execute(exp, str(tmp_path / 'out'), say=lambda m: None)
    return summary


def trace_exp(path, policy):
    # 2 ports at 8 * 2^20 bit/s = 1 MB/s each
    return {'topology': 'bigswitch,2', 'big_switch': True, 'backend': 'sim',
            'link_bps': 8 * MB, 'queues': 'exact', 'policy': policy,
            'trace': {'path': path}}


@pytest.mark.parametrize('policy,ccts', [
    # coflow 1: 1 MB, coflow 2: 2 MB, both rack 0 -> rack 1 at t=0
    ('fair', {'1': 2.0, '2': 3.0}),       # 0.5 MB/s each until 1 is done
    ('varys', {'1': 1.0, '2': 3.0}),      # smallest bottleneck first
    ('sebf', {'1': 1.0, '2': 3.0}),
    ('sincronia', {'1': 1.0, '2': 3.0}),
    ('fifo', {'1': 1.0, '2': 3.0}),       # same arrival: by id
    ('aalo', {'1': 2.0, '2': 3.0}),       # both under 10 MB: FIFO in queue 0
])
def test_two_coflows_one_port(tmp_path, policy, ccts):
    path = write_trace(tmp_path, ['1 0 1 0 1 1:1.0', '2 0 1 0 1 1:2.0'])
    s = run_exp(tmp_path, trace_exp(path, policy))
    got = {c: r['cct_s'] for c, r in s['coflows'].items()}
    if policy == 'aalo':               # FIFO inside the queue, then 2
        ccts = {'1': 1.0, '2': 3.0}
    assert got == pytest.approx(ccts, abs=1e-5)


def test_strict_priority_leaves_the_rest_to_lower_classes(tmp_path):
    # coflow 1 (0->1, 1 MB) is first under SEBF; coflow 2 (0->1 and 1->0)
    # still uses port 1->0 at full rate meanwhile (work conservation)
    path = write_trace(tmp_path, ['1 0 1 0 1 1:1.0', '2 0 2 0 1 2 1:2.0 0:2.0'])
    s = run_exp(tmp_path, trace_exp(path, 'sebf'))
    assert s['coflows']['1']['cct_s'] == pytest.approx(1.0, abs=1e-5)
    # flow 1->0 of coflow 2 carries 1 MB at 1 MB/s from t=0
    links = s['links']
    assert links['h1->x0']['peak_util'] == pytest.approx(1.0)
    for r in links.values():
        assert r['peak_util'] <= 1.0 + 1e-9


def dl_exp(pattern, workers, model, **job):
    d = {'topology': 'fattree,4', 'backend': 'sim', 'link_gbps': 10,
         'jobs': [dict(id='j', model=model, pattern=pattern, workers=workers,
                       iterations=3, compute_scale=0, **job)]}
    return d


def test_ring_alone_matches_the_analytical_time(tmp_path):
    s = run_exp(tmp_path, dl_exp('ring', 4, 'resnet50',
                                 placement=['h0_0_0', 'h0_0_1', 'h0_1_0',
                                            'h0_1_1']))
    want = workload.analytical_comm_s(models.get('resnet50'), 'ring', 4,
                                      10e9)
    for c, r in s['coflows'].items():
        assert r['cct_s'] == pytest.approx(want, rel=0.01), c
    assert s['jobs']['j']['iterations'] == 3


def test_ps_alone_matches_the_analytical_time(tmp_path):
    s = run_exp(tmp_path, dl_exp('ps', 3, 'resnet50', ps_shards=1))
    want = workload.analytical_comm_s(models.get('resnet50'), 'ps', 3, 10e9)
    for c, r in s['coflows'].items():
        assert r['cct_s'] == pytest.approx(want, rel=0.02), c


def test_two_jobs_on_a_shared_bottleneck_slow_each_other(tmp_path):
    d = {'topology': 'dumbbell,4', 'backend': 'sim', 'link_gbps': 10,
         'jobs': [dict(id='a', model='resnet50', pattern='ring', workers=2,
                       iterations=4, compute_scale=0,
                       placement=['hl0', 'hr0']),
                  dict(id='b', model='resnet50', pattern='ring', workers=2,
                       iterations=4, compute_scale=0,
                       placement=['hl1', 'hr1'])]}
    both = run_exp(tmp_path, d)
    alone = run_exp(tmp_path, dict(d, jobs=d['jobs'][:1]))
    t_alone = alone['jobs']['a']['iteration_time_s']['mean']
    assert both['jobs']['a']['iteration_time_s']['mean'] > 1.5 * t_alone
    assert both['links']['sl->sr']['peak_util'] == pytest.approx(1.0)


def test_compute_and_wait_free_overlap(tmp_path):
    # with compute, an iteration takes at least forward + backward, and
    # less than compute plus the whole exchange (they overlap)
    s = run_exp(tmp_path, {
        'topology': 'fattree,4', 'backend': 'sim', 'link_gbps': 10,
        'jobs': [dict(id='j', model='resnet50', pattern='ring', workers=4,
                      iterations=5, placement='packed')]})
    m = models.get('resnet50')
    comp = (m.forward_ms + m.backward_ms) / 1e3
    comm = workload.analytical_comm_s(m, 'ring', 4, 10e9)
    it = s['jobs']['j']['iteration_time_s']['p50']
    assert comp < it < comp + comm


def test_tuning_stages_stop_the_worst(tmp_path):
    s = run_exp(tmp_path, {
        'topology': 'fattree,4', 'backend': 'sim', 'link_gbps': 10,
        'tuning': [dict(id='hpt', model='resnet50', pattern='ring',
                        workers=2, configs=4, placement='packed',
                        stages=[dict(iterations=2, keep=0.5),
                                dict(iterations=3)])]})
    assert sorted(s['stages']) == ['hpt/s0', 'hpt/s1']
    iters = sorted(r['iterations'] for r in s['jobs'].values())
    assert iters == [2, 2, 5, 5]
    assert all(r['sct_s'] > 0 for r in s['stages'].values())


def test_outputs_written(tmp_path):
    exp = experiment.from_dict(dl_exp('ring', 2, 'resnet50'),
                               str(tmp_path / 'e.yaml'))
    result = run.execute(exp, str(tmp_path / 'o'), say=lambda m: None)
    report.write_run(result)
    out, summary = result
    for f in ('events.jsonl', 'summary.json', 'jobs.csv', 'coflows.csv',
              'flows.csv', 'links.csv', 'iterations.csv', 'stages.csv',
              'experiment.yaml', 'run.json', 'iteration_cdf.png',
              'link_utilization.png'):
        assert os.path.exists(os.path.join(out, f)), f
    with open(os.path.join(out, 'summary.json')) as f:
        s = json.load(f)
    for k in ('backend', 'seed', 'scale', 'jobs', 'coflows', 'stages',
              'links'):
        assert k in s
    j = s['jobs']['j']
    assert set(j) >= {'jct_s', 'iterations', 'iteration_time_s'}
    assert set(j['iteration_time_s']) == {'mean', 'p50', 'p99'}
    assert s['backend'] == 'sim' and s['format'] == 'netsched-summary/1'


def test_completion_tolerance_bounds_the_error(tmp_path):
    # two coflows on disjoint ports at 1 MB/s, sizes 0.05% apart
    path = write_trace(tmp_path, ['1 0 1 0 1 1:2.0', '2 0 1 1 1 0:2.001'])
    exact = run_exp(tmp_path, dict(trace_exp(path, 'fair'),
                                   completion_tolerance=0))
    assert exact['coflows']['2']['cct_s'] == pytest.approx(2.001, abs=1e-6)
    loose = run_exp(tmp_path, trace_exp(path, 'fair'))    # default 1e-3
    # coflow 2 finishes with coflow 1, early by 0.05% of its duration
    assert loose['coflows']['2']['cct_s'] == pytest.approx(2.0, abs=1e-6)
    for c in ('1', '2'):
        err = exact['coflows'][c]['cct_s'] - loose['coflows'][c]['cct_s']
        assert 0 <= err <= 1e-3 * exact['coflows'][c]['cct_s']


class _Spy:
    """Counts what the engine asks a policy."""
    def __init__(self, decides_on):
        self.decides_on = decides_on
        self.calls = []

    def decide(self, snap):
        from netsched.policies import Decision
        self.calls.append((snap.t, len(snap.flow_path)))
        return Decision()


@pytest.mark.parametrize('decides_on', ['flows', 'coflows'])
def test_coflow_level_policies_are_asked_on_coflow_changes(decides_on):
    import numpy as np
    from netsched import fluid, topology
    from netsched.sim.engine import Engine
    g = topology.big_switch(3, link_bps=8 * MB)
    net = fluid.Network(g, big_switch=True)
    spy = _Spy(decides_on)

    class Driver:
        def start(self, eng):
            c = eng.coflow('c', 0.0)
            # three flows of one coflow from h0, sizes 1, 2, 3 MB
            eng.add_flows(['h0', 'h0', 'h0'], ['h1', 'h2', 'h1'],
                          np.array([1, 2, 3]) * MB, c)

        def on_flows_done(self, ids):
            pass

    class Log:
        def write(self, *a, **k):
            pass

        def write_raw(self, s):
            pass
    eng = Engine(net, spy, Log(), rel_tol=0)
    eng.run(Driver())
    # fair shares of h0's 1 MB/s: 1/3 each -> 1st done at 3 s, then 1/2
    # each -> 2nd at 5 s, then 3rd alone -> 6 s
    assert eng.now == pytest.approx(6.0, abs=1e-5)
    if decides_on == 'flows':
        assert [n for _, n in spy.calls] == [3, 2, 1]
    else:                       # only the arrival; rates still follow
        assert [n for _, n in spy.calls] == [3]
        assert eng.allocations == 3


def test_sebf_sees_a_dl_coflows_pending_sends(tmp_path):
    """experiments/crosscheck.yaml on the simulator: with the sends not yet
    started counted (the whole iteration's demand), SEBF always puts the
    small job's exchange first, so each takes exactly its time alone
    (S / B = 0.0818 s); counting only flows in flight, one did not."""
    exp = experiment.load(os.path.join(os.path.dirname(__file__), '..', '..',
                                       '..', 'experiments',
                                       'crosscheck.yaml'),
                          backend='sim', policy='sebf')
    _, s = run.execute(exp, str(tmp_path / 'o'), say=lambda m: None)
    small = [c['cct_s'] for k, c in s['coflows'].items()
             if k.startswith('small/')]
    want = workload.analytical_comm_s(models.get('resnet50'), 'ring', 2,
                                      10e9)
    assert len(small) == 20
    assert small == pytest.approx([want] * 20, rel=1e-3)


def test_class_changes_are_logged_as_on_the_emulator(tmp_path):
    """The simulator logs each decision's class changes as the emulator's
    controller does ('classes' events: {coflow: class}), so the two
    backends' class histories can be compared."""
    path = write_trace(tmp_path, ['1 0 1 0 1 1:1.0', '2 0 1 0 1 1:2.0',
                                  '3 500 1 0 1 1:0.25'])
    d = dict(trace_exp(path, 'sebf'), queues=8)
    run_exp(tmp_path, d)
    with open(tmp_path / 'out' / 'events.jsonl') as f:
        evs = [e for e in map(json.loads, f) if e['ev'] == 'classes']
    # both at t=0, the smaller first; at 0.5 s coflow 3 (0.25 MB)
    # arrives, smaller than what coflow 1 has left (0.5 MB): it takes
    # class 0 and pushes the running coflows down one each
    assert evs[0] == {'t': 0.0, 'ev': 'classes', 'classes': {'1': 0, '2': 1}}
    assert evs[1]['t'] == pytest.approx(0.5)
    assert evs[1]['classes'] == {'3': 0, '1': 1, '2': 2}
