"""The simulator's store-and-forward packets (``sim_packets``): a
transfer is received one packet time per hop (but its path's slowest)
after its last byte is sent; its sender is free at once. Hand-worked
cases, the pipelining on a connection, and the experiment key."""
import json

import pytest

from netsched import fluid
from netsched.pipeline import experiment, run
from netsched import topology as topo
from netsched.errors import ConfigError

from .test_sim import write_trace

MB = 2 ** 20


def test_delivery_is_one_packet_time_per_busy_hop_but_the_slowest():
    g = topo.parse_spec('dumbbell,1', link_bps=1e9)     # hl0-sl-sr-hr0
    net = fluid.Network(g)
    p = net.path_id('hl0', 'hr0')
    assert list(net.delivery_s([p], [1e6])) == [0.0]     # fluid: none
    net.set_packets(9000.0)
    # every hop counted (no ``others``): 3 links at 1 Gbit/s, two more
    # serialisations of the last packet
    assert net.delivery_s([p], [1e6])[0] == pytest.approx(2 * 72e-6)
    # a transfer smaller than a packet is its own packet
    assert net.delivery_s([p], [1000])[0] == pytest.approx(2 * 8e-6)
    # only busy hops: alone on its path, none; two busy hops, one more
    assert net.delivery_s([p], [1e6], [[0, 0, 0]])[0] == 0.0
    assert net.delivery_s([p], [1e6], [[0, 3, 1]])[0] == \
        pytest.approx(72e-6)
    assert net.delivery_s([p], [1e6], [[0, 3, 0]])[0] == 0.0
    # a slower core paces; the busy host links add their packet times
    g['sl']['sr']['capacity_bps'] = 0.25e9
    g['sl']['hl0']['capacity_bps'] = 0.5e9
    net = fluid.Network(g)
    net.set_packets(9000.0)
    p = net.path_id('hl0', 'hr0')
    assert net.delivery_s([p], [1e6])[0] == pytest.approx(144e-6 + 72e-6)
    assert net.delivery_s([p], [1e6], [[1, 1, 0]])[0] == \
        pytest.approx(144e-6)
    with pytest.raises(ValueError):
        net.set_packets(0)


def run_exp(tmp_path, d, **kw):
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'), **kw)
    out, summary = run.execute(exp, str(tmp_path / 'out'),
                               say=lambda m: None)
    return exp, summary


def trace_exp(path, policy, packets):
    # 2 ports at 8 * 2^20 bit/s = 1 MB/s each; packets of MTU x scale =
    # 8192 x 32 B = 0.25 MB ('emulated'), 8192 B ('dc'): a big switch's
    # path is two links, so a flow that shares both with another is
    # received 0.25 s (1/128 s) after its last byte is sent, one alone
    # at once
    return {'topology': 'bigswitch,2', 'big_switch': True, 'backend': 'sim',
            'link_bps': 8 * MB, 'queues': 'exact', 'policy': policy,
            'mtu': 8192, 'scale': 32, 'sim_packets': packets,
            'trace': {'path': path}}


@pytest.mark.parametrize('policy,packets,ccts', [
    # coflow 1: 1 MB, coflow 2: 2 MB, both rack 0 -> rack 1 at t=0
    ('fair', 'none', {'1': 2.0, '2': 3.0}),
    ('fair', 'emulated', {'1': 2.25, '2': 3.0}),
    # coflow 2 has the port from t=1 (when 1's last byte left), not 1.25;
    # it shares it with coflow 1's flow though that has no rate
    ('sebf', 'emulated', {'1': 1.25, '2': 3.0}),
    ('sebf', 'dc', {'1': 1 + 1 / 128, '2': 3.0}),
])
def test_two_coflows_one_port(tmp_path, policy, packets, ccts):
    path = write_trace(tmp_path, ['1 0 1 0 1 1:1.0', '2 0 1 0 1 1:2.0'])
    exp, s = run_exp(tmp_path, trace_exp(path, policy, packets))
    got = {c: r['cct_s'] for c, r in s['coflows'].items()}
    assert got == pytest.approx(ccts, abs=1e-5)
    assert exp.sim_packets == packets
    # the port carried 3 MB at its rate: never over, idle only at the end
    for r in s['links'].values():
        assert r['peak_util'] <= 1.0 + 1e-9


def flows(tmp_path):
    with open(tmp_path / 'out' / 'events.jsonl') as f:
        return [e for e in map(json.loads, f) if e['ev'] == 'flow']


PS2 = {'topology': 'dumbbell,2', 'backend': 'sim', 'link_gbps': 10,
       'scale': 500,
       'jobs': [{'id': 'j', 'model': 'resnet50', 'pattern': 'ps',
                 'workers': 2, 'ps_shards': 1, 'iterations': 2,
                 'compute_scale': 0, 'placement': ['hl0', 'hl1', 'hr0']}]}
PKT_S = 9000 * 500 * 8 / 10e9           # an emulated packet's time


def test_a_connection_pipelines_its_sends_and_dependents_wait(tmp_path):
    """Two PS workers push over the shared core to the server: a push is
    received a packet time after it is sent (two busy hops), the next
    push on the connection starts when its last byte has left (the
    emulator's agents write it then), and the server's pull of a tensor
    starts only once both pushes of it have been received."""
    exp, s = run_exp(tmp_path, dict(PS2, sim_packets='emulated'))
    fs = flows(tmp_path)
    push = {w: sorted((f for f in fs if f['src'] == w),
                      key=lambda f: f['start']) for w in ('hl0', 'hl1')}
    pull = {w: sorted((f for f in fs if f['dst'] == w),
                      key=lambda f: f['start']) for w in ('hl0', 'hl1')}
    n = len(push['hl0'])
    assert n > 100 and all(len(x) == n for x in list(push.values())
                           + list(pull.values()))
    lagged = 0
    for w in ('hl0', 'hl1'):
        for a, b in zip(push[w], push[w][1:]):
            # the next starts once the last byte has left, which is at
            # most one packet time before the end (or later: the
            # connection idles between iterations)
            assert b['start'] >= a['t'] - PKT_S - 1e-9
            lagged += b['start'] < a['t'] - 1e-9
            assert b['t'] >= a['t']          # a connection delivers in order
    assert lagged > n // 2
    # tensor i's pulls start after both workers' pushes of it ended
    for i in range(n):
        done = max(push['hl0'][i]['t'], push['hl1'][i]['t'])
        for w in ('hl0', 'hl1'):
            assert pull[w][i]['start'] >= done - 1e-9


def test_fluid_and_packets_differ_only_by_delivery(tmp_path):
    """The same job under both models carries the same bytes; with
    packets no flow is faster than its line rate and the job is slower
    (every push waits a packet time more)."""
    _, fluid_s = run_exp(tmp_path, PS2)
    fluid_flows = flows(tmp_path)
    exp, pk_s = run_exp(tmp_path, dict(PS2, sim_packets='emulated'))
    pk_flows = flows(tmp_path)
    assert sorted(f['bytes'] for f in fluid_flows) == \
        sorted(f['bytes'] for f in pk_flows)
    assert pk_s['jobs']['j']['jct_s'] > fluid_s['jobs']['j']['jct_s']
    for f in pk_flows:
        assert f['t'] - f['start'] >= f['bytes'] * 8 / 10e9 - 1e-6


def test_bad_sim_packets_is_named(tmp_path):
    d = {'topology': 'dumbbell,1', 'backend': 'sim',
         'jobs': [{'id': 'j', 'model': 'resnet50', 'pattern': 'ring',
                   'workers': 2, 'iterations': 1,
                   'placement': ['hl0', 'hr0']}]}
    with pytest.raises(ConfigError, match=r"exp\.yaml: sim_packets: must "
                       r"be one of none, dc, emulated, got 'yes'"):
        experiment.from_dict(dict(d, sim_packets='yes'), 'exp.yaml')
    with pytest.raises(ConfigError, match='--sim-packets must be one of'):
        experiment.from_dict(d, 'exp.yaml', sim_packets='fast')
    e = experiment.from_dict(d, 'exp.yaml', sim_packets='emulated')
    assert e.packet_bytes == 9000 * 1000.0             # default scale
    assert experiment.from_dict(d, 'exp.yaml').packet_bytes is None


def test_bunched_packets_pay_the_hops_after_a_shared_one(tmp_path):
    """Under SEBF on dumbbell,2, coflow 1 (hl0 -> hr0, 10 MB) runs at
    line rate over the core link beside coflow 2's starved flow (hl1 ->
    hr1). It is received one packet time after its last byte: its core
    hop carries another flow and its last hop, which it fills, comes
    after that one (packets bunched behind another flow's queue there);
    its first hop, filled too but before any shared hop, costs nothing,
    and the path's slowest hop never does. Coflow 2, alone from then on,
    fills its whole path with no shared hop: no lag."""
    d = {'topology': 'dumbbell,2', 'backend': 'sim', 'link_gbps': 10,
         'scale': 500, 'sim_packets': 'emulated', 'policy': 'sebf',
         'trace': {'path': write_trace(
             tmp_path, ['1 0 1 0 1 2:10', '2 0 1 1 1 3:50'], ports=4)}}
    _, s = run_exp(tmp_path, d)
    c = s['coflows']
    mb = 2 ** 20 * 8 / 10e9
    assert c['1']['cct_s'] == pytest.approx(10 * mb + PKT_S, rel=1e-4)
    assert c['2']['cct_s'] == pytest.approx(60 * mb, rel=1e-4)
