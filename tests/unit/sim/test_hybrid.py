"""The hybrid optical-circuit / electrical-packet fabric (issue 13): the
graph (ports, rates, circuit marks), routing over the packet core and
over live circuits, and the fluid network's paths as circuits change."""
import pytest

from netsched import fluid, routing
from netsched import topology as topo
from netsched.errors import TopologyError

G = 10e9


def ft(g, a, b, sport=20001, dport=7000):
    return routing.FiveTuple(g.nodes[a]['ip'], g.nodes[b]['ip'], 6, sport,
                             dport)


def test_the_graph_wires_racks_to_the_core_and_to_every_plane():
    g = topo.hybrid(4, 3, circuits=2, spines=2, oversub=3, circuit_x=4,
                    reconfig_ms=20, link_bps=G)
    roles = {}
    for _, r in g.nodes(data='role'):
        roles[r] = roles.get(r, 0) + 1
    assert roles == {'host': 12, 'leaf': 4, 'spine': 2, 'ocs': 2}
    assert topo.planes(g) == ['o0', 'o1']
    assert topo.tors(g) == ['t0', 't1', 't2', 't3']
    assert g.graph['reconfig_s'] == pytest.approx(0.02)
    # ToR ports: hosts 1-3, spines 4-5, planes 6-7; plane port r+1 -> t{r}
    assert [topo.port(g, 't1', n) for n in ('h1_0', 'h1_2', 's0', 's1',
                                            'o0', 'o1')] == [1, 3, 4, 5, 6, 7]
    assert topo.port(g, 'o1', 't2') == 3 and topo.port(g, 's0', 't3') == 4
    # uplinks: 3 hosts x 10G over (2 spines x oversubscription 3) = 5G
    assert g['t0']['s1']['capacity_bps'] == pytest.approx(5e9)
    assert g['t0']['o0']['capacity_bps'] == pytest.approx(40e9)
    assert g['t0']['h0_0']['capacity_bps'] == pytest.approx(G)
    marked = {(u, v) for u, v, d in g.edges(data=True) if d.get('circuit')}
    assert len(marked) == 8 and all('o' in u + v for u, v in marked)
    assert g.nodes['h2_1']['ip'] == '10.0.2.3'
    # the spec form, as experiment files and `netsched topo` spell it
    h = topo.parse_spec('hybrid,4,3,2,spines=2,oversub=3', link_bps=G)
    assert h['t0']['s1']['capacity_bps'] == pytest.approx(5e9)


@pytest.mark.parametrize('kw, word', [
    ({'racks': 1}, 'racks'), ({'circuits': 0}, 'circuits'),
    ({'oversub': 0}, 'oversub'), ({'circuit_x': -1}, 'circuit_x'),
    ({'reconfig_ms': -5}, 'reconfig_ms'), ({'spines': 1.5}, 'spines')])
def test_bad_parameters_are_named(kw, word):
    args = dict(racks=4, hosts_per_rack=2)
    args.update(kw)
    with pytest.raises(TopologyError, match=word):
        topo.hybrid(**args)


def test_without_circuits_everything_crosses_the_packet_core():
    g = topo.hybrid(4, 2, circuits=2)
    assert routing.path(g, ft(g, 'h0_0', 'h2_1')) == [
        'h0_0', 't0', 's0', 't2', 'h2_1']
    # a plane has no forwarding table: its rules are its circuits
    assert routing.forwarding_table(g, 'o0') == {}
    # in-rack traffic stays in the rack
    assert routing.path(g, ft(g, 'h0_0', 'h0_1')) == ['h0_0', 't0', 'h0_1']


def test_a_live_circuit_carries_its_racks_traffic_both_ways():
    g = topo.hybrid(4, 2, circuits=2)
    c = {topo.circuit('o1', 't2', 't0')}
    assert topo.circuit('o1', 't2', 't0') == ('o1', 't0', 't2')
    assert routing.path(g, ft(g, 'h0_0', 'h2_1'), c) == [
        'h0_0', 't0', 'o1', 't2', 'h2_1']
    assert routing.path(g, ft(g, 'h2_1', 'h0_0'), c) == [
        'h2_1', 't2', 'o1', 't0', 'h0_0']
    # other racks still go through the core
    assert routing.path(g, ft(g, 'h0_0', 'h1_0'), c)[2] == 's0'
    # the ToR's table sends rack 2 to o1's port, the rest to the spine
    table = routing.forwarding_table(g, 't0', c)
    assert table['h2_1'] == (topo.port(g, 't0', 'o1'),)
    assert table['h1_0'] == (topo.port(g, 't0', 's0'),)
    # two circuits between the same racks: flows hash over both planes
    both = c | {topo.circuit('o0', 't0', 't2')}
    assert routing.forwarding_table(g, 't0', both)['h2_1'] == (4, 5)
    seen = {routing.path(g, ft(g, 'h0_0', 'h2_1', sport=s), both)[2]
            for s in range(20000, 20016)}
    assert seen == {'o0', 'o1'}


def test_the_fluid_network_routes_over_the_circuits_set():
    g = topo.hybrid(4, 2, circuits=1)
    net = fluid.Network(g)
    core = net.path_id('h0_0', 'h3_0', 20001, 7000)
    net.set_circuits({topo.circuit('o0', 't0', 't3')})
    via = net.path_id('h0_0', 'h3_0', 20001, 7000)
    assert via != core
    assert [net.names[i] for i in net.table()[via] if i >= 0] == [
        'h0_0->t0', 't0->o0', 'o0->t3', 't3->h3_0']
    net.set_circuits(())
    assert net.path_id('h0_0', 'h3_0', 20001, 7000) == core


def test_a_placing_circuit_scheduler_chooses_among_candidates(tmp_path):
    # job a holds racks 0-1 (one plane: one circuit per ToR); b may go
    # to the same racks' other hosts or to racks 2-3. OSDL puts it where
    # it can have a circuit of its own; a scheduler that does not place
    # (none) leaves it to the flow policy, which takes the first
    import json
    from netsched.pipeline import experiment
    from netsched.workload import taskgraph
    p = tmp_path / 'h.yaml'
    p.write_text(json.dumps({
        'topology': 'hybrid,4,2,1,oversub=4', 'circuits': 'osdl',
        'jobs': [
            {'id': 'a', 'model': 'resnet50', 'pattern': 'ring',
             'workers': 2, 'iterations': 4, 'placement': ['h0_0', 'h1_0']},
            {'id': 'b', 'model': 'resnet50', 'pattern': 'ring',
             'workers': 2, 'iterations': 4,
             'candidates': [['h0_1', 'h1_1'], ['h2_0', 'h3_0']]}]}))
    got = {}
    for c in ('osdl', 'none'):
        plan = taskgraph.build(experiment.load(str(p), backend='sim',
                                               circuits=c), with_trace=False)
        got[c] = plan.placements['b']
    assert (got['osdl']['chosen'], got['osdl']['by']) == (1, 'osdl')
    assert (got['none']['chosen'], got['none']['by']) == (0, 'fair')
    # a flow policy that places (CASSINI) keeps the choice
    plan = taskgraph.build(experiment.load(str(p), backend='sim',
                                           circuits='osdl',
                                           policy='cassini'),
                           with_trace=False)
    assert plan.placements['b']['by'] == 'cassini'


def test_what_every_backend_tells_a_circuit_scheduler_of_the_fabric():
    g = topo.hybrid(3, 2, circuits=2, spines=2, oversub=2, reconfig_ms=5,
                    link_bps=G)
    f = topo.circuit_fabric(g)
    assert f.tors == ('t0', 't1', 't2') and f.planes == ('o0', 'o1')
    assert f.tor_index == {'h0_0': 0, 'h0_1': 0, 'h1_0': 1, 'h1_1': 1,
                           'h2_0': 2, 'h2_1': 2}
    assert f.circuit_bps == pytest.approx(40e9)
    # 2 hosts x 10G over oversubscription 2: 10G per ToR, on 2 spines
    assert f.packet_bps == pytest.approx((10e9,) * 3)
    assert f.reconfig_s == pytest.approx(0.005)
