"""Collectives on the real emulator, one idle leaf switch: each within
the fidelity suite's 10% of its alpha-beta cost (the bandwidth term;
the emulator adds packets, TCP's start and the agents' reaction, never
takes less). The simulator meets the cost exactly and ns-3 within about
1% (tests/unit/workload/test_collectives.py, test_ns3_collectives.py).

The all-to-all is not here: it takes 1.36-1.42x its cost on the
emulator under BBR and 1.61x under CUBIC with a faithful verdict (the
emulator keeps up; TCP shares differently). At every sender the flow to
one host finishes last: that host's own sends filled its uplink queue
first, the ACKs of what it receives wait behind them, and its downlink
idles early (docs/llm-workloads.md, "Collectives on each backend")."""
import json

import pytest

from netsched import topology as topo
from netsched.emulator import ovs
from netsched.pipeline import experiment, run

S = 480 * 2 ** 20       # bytes each rank reduces: divides by 2 .. 8
B = 10e9


@pytest.mark.parametrize('name,kw,want', [
    ('ring', {}, 2 * 3 / 4),
    ('halving-doubling', {}, 2 * 3 / 4),
    ('tree', {'chunks': 1}, 3.0),
])
def test_a_collective_on_the_emulator_is_within_the_target(tmp_path, name,
                                                          kw, want):
    prof = tmp_path / 'one.json'
    prof.write_text(json.dumps({'name': 'one', 'layers': [
        {'name': 'l', 'forward_ms': 0, 'backward_ms': 0,
         'tensors': [{'name': 'w', 'bytes': S}]}]}))
    d = {'name': name, 'topology': 'leafspine,1,1,4', 'backend': 'emu',
         'link_bps': B, 'scale': 250, 'timeout_s': 120,
         'jobs': [dict(id='j', model='one.json', collective=name, workers=4,
                       iterations=1, compute_scale=0, bucket_mb=1000,
                       **kw)]}
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'))
    _, s = run.execute(exp, str(tmp_path / 'out'), say=lambda m: None)
    assert not set(topo.switches(exp.graph())) & set(ovs.bridges())
    t = s['jobs']['j']['jct_s'] / (S * 8 / B)
    assert want <= t <= want * 1.10, (name, t, want, s.get('fidelity'))


def test_a_3d_parallel_job_runs_on_the_emulator(tmp_path):
    """Tensor, pipeline and data parallelism over a k=4 fat-tree: the
    emulator runs the plan the simulator runs, every transfer and
    coflow of it, and says whether it kept up (its millisecond
    tensor-parallel coflows are below what its agents resolve: the
    verdict, not this test, judges the times)."""
    d = {'name': 'p3d', 'topology': 'fattree,4', 'link_gbps': 100,
         'scale': 1000, 'timeout_s': 300,
         'jobs': [{'id': 'g', 'model': 'gpt3-1.3b', 'workers': 8,
                   'iterations': 1, 'compute_scale': 0.05,
                   'collective': {'dp': 'ring', 'tp': 'ring'},
                   'parallelism': {'tp': 2, 'pp': 2, 'dp': 2,
                                   'micro_batches': 2}}]}
    out = {}
    for backend in ('sim', 'emu'):
        exp = experiment.from_dict(dict(d, backend=backend),
                                   str(tmp_path / 'p3d.yaml'))
        _, out[backend] = run.execute(exp, str(tmp_path / backend),
                                      say=lambda m: None)
    assert not set(topo.switches(exp.graph())) & set(ovs.bridges())
    sim, emu = out['sim'], out['emu']
    assert emu['jobs']['g']['iterations'] == 1
    assert set(emu['coflows']) == set(sim['coflows'])
    assert all(c['cct_s'] is not None for c in emu['coflows'].values())
    assert emu['fidelity']['verdict'] in ('faithful', 'degraded')
