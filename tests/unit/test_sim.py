"""The simulator backend end to end: small traces with hand-worked
completion times, DL jobs against the analytical model, properties."""
import json
import os

import pytest

from netsched import experiment, models, run, workload

MB = 2 ** 20


def write_trace(tmp_path, lines, ports=2):
    p = tmp_path / 'trace.txt'
    p.write_text('%d %d\n' % (ports, len(lines)) + '\n'.join(lines) + '\n')
    return str(p)


def run_exp(tmp_path, d, **kw):
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'), **kw)
    out, summary = run.execute(exp, str(tmp_path / 'out'), say=lambda m: None,
                               plots=False)
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
    out, summary = run.execute(exp, str(tmp_path / 'o'), say=lambda m: None)
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
