import pytest

from netsched import topology as topo
from netsched.errors import TopologyError


def roles(g):
    out = {}
    for _, d in g.nodes(data=True):
        out[d['role']] = out.get(d['role'], 0) + 1
    return out


@pytest.mark.parametrize('k', [2, 4, 6, 8])
def test_fat_tree_counts(k):
    g = topo.fat_tree(k)
    h = k // 2
    assert len(topo.hosts(g)) == k ** 3 // 4
    assert len(topo.switches(g)) == 5 * k * k // 4
    assert roles(g) == {'host': k ** 3 // 4, 'edge': k * h,
                        'aggregation': k * h, 'core': h * h}
    assert g.number_of_edges() == 3 * k ** 3 // 4


@pytest.mark.parametrize('k', [2, 4, 6, 8])
def test_fat_tree_wiring(k):
    g = topo.fat_tree(k)
    h = k // 2
    for n, d in g.nodes(data=True):
        nbr = [g.nodes[m] for m in g[n]]
        if d['role'] == 'host':
            assert len(nbr) == 1 and nbr[0]['role'] == 'edge'
            assert nbr[0]['pod'] == d['pod']
            assert g[n][next(iter(g[n]))]['ports'][n] == 0
        elif d['role'] == 'edge':
            assert sorted(x['role'] for x in nbr) == \
                ['aggregation'] * h + ['host'] * h
            assert all(x['pod'] == d['pod'] for x in nbr)
        elif d['role'] == 'aggregation':
            assert sorted(x['role'] for x in nbr) == ['core'] * h + ['edge'] * h
        else:
            assert sorted(x['pod'] for x in nbr) == list(range(k))
    # each core reaches each pod exactly once; aggregation a of every
    # pod connects to cores a*h .. a*h+h-1 (the standard wiring)
    for p in range(k):
        for a in range(h):
            cores = sorted(int(m[1:]) for m in g['a%d_%d' % (p, a)]
                           if m.startswith('c'))
            assert cores == list(range(a * h, a * h + h))


def test_fat_tree_ports_names_addresses():
    g = topo.fat_tree(4)
    assert topo.port(g, 'e0_1', 'h0_1_0') == 1
    assert topo.port(g, 'e0_1', 'a0_0') == 3
    assert topo.port(g, 'a0_1', 'e0_0') == 1
    assert topo.port(g, 'a0_1', 'c2') == 3
    assert topo.port(g, 'c2', 'a3_1') == 4
    assert g.nodes['h2_1_0']['ip'] == '10.2.1.2'
    assert g.nodes['h2_1_0']['mac'] == '02:00:0a:02:01:02'
    assert g.nodes['e3_1']['dpid'] == 0x030301
    assert g.nodes['c3']['dpid'] == 0x010003
    ips = [g.nodes[h]['ip'] for h in topo.hosts(g)]
    dpids = [g.nodes[s]['dpid'] for s in topo.switches(g)]
    assert len(set(ips)) == len(ips) and len(set(dpids)) == len(dpids)
    for n in topo.switches(g):      # ports on a switch are 1..degree
        assert sorted(topo.port(g, n, m) for m in g[n]) == \
            list(range(1, g.degree(n) + 1))


def test_deterministic():
    a, b = topo.fat_tree(4), topo.fat_tree(4)
    assert topo.to_dict(a) == topo.to_dict(b)


@pytest.mark.parametrize('k', [3, 0, -2, 1, 2.0, '4', True, None])
def test_fat_tree_bad_k(k):
    with pytest.raises(TopologyError, match='k must be'):
        topo.fat_tree(k)


def test_leaf_spine():
    g = topo.leaf_spine(3, 2, 4)
    assert roles(g) == {'host': 12, 'leaf': 3, 'spine': 2}
    assert g.number_of_edges() == 12 + 6
    assert topo.port(g, 'l1', 's0') == 5
    assert topo.port(g, 's1', 'l2') == 3
    with pytest.raises(TopologyError, match='spines'):
        topo.leaf_spine(2, 0, 4)
    with pytest.raises(TopologyError, match='hosts_per_leaf'):
        topo.leaf_spine(2, 2, -1)


def test_dumbbell():
    g = topo.dumbbell(3, link_bps=1e9, bottleneck_bps=1e8)
    assert roles(g) == {'host': 6, 'switch': 2}
    assert g['sl']['sr']['capacity_bps'] == 1e8
    assert g['sl']['hl0']['capacity_bps'] == 1e9
    with pytest.raises(TopologyError, match='n must be'):
        topo.dumbbell(0)
    with pytest.raises(TopologyError, match='link_bps'):
        topo.dumbbell(2, link_bps=-5)


def test_parse_spec_and_errors():
    assert len(topo.hosts(topo.parse_spec('fattree,4'))) == 16
    assert len(topo.hosts(topo.parse_spec('leafspine,2,2,3'))) == 6
    assert len(topo.hosts(topo.parse_spec('dumbbell,n=2'))) == 4
    with pytest.raises(TopologyError, match="unknown topology 'torus'"):
        topo.parse_spec('torus,4')
    with pytest.raises(TopologyError, match='not a number'):
        topo.parse_spec('fattree,four')
    with pytest.raises(TopologyError, match='fattree'):
        topo.parse_spec('fattree,4,5,6')


def test_round_trip(tmp_path):
    g = topo.fat_tree(4)
    topo.save(g, tmp_path / 'g.json')
    h = topo.load(tmp_path / 'g.json')
    assert topo.to_dict(h) == topo.to_dict(g)
    assert h['e0_0']['a0_1']['ports'] == {'e0_0': 4, 'a0_1': 1}
