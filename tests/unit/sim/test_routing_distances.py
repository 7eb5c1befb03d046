"""routing's hop distances, computed as they are needed (per ToR, one
search from all hosts for the tiers), against networkx's searches from
every host as routing made them before: the same distances, so the same
next hops and paths on every fabric."""
import random

import networkx as nx
import pytest

from netsched import routing, topology


def fabrics():
    yield topology.fat_tree(4)
    yield topology.fat_tree(6)
    yield topology.leaf_spine(3, 2, 2)
    yield topology.dumbbell(3)
    yield topology.big_switch(5)
    yield topology.hybrid(4, 2, 2)
    g = topology.fat_tree(4)             # links down: the live graph
    e = sorted(g.edges())[7]
    yield topology.without(g, {topology.link_id(*e)})


def reference(g):
    """Distances from every host over the packet fabric (networkx)."""
    packet = g.subgraph(n for n, r in g.nodes(data='role')
                        if r != topology.OCS)
    return {h: nx.single_source_shortest_path_length(packet, h)
            for h in topology.hosts(g)}


@pytest.mark.parametrize('g', list(fabrics()),
                         ids=['ft4', 'ft6', 'ls', 'db', 'bs', 'hyb', 'down'])
def test_distances_and_tiers_as_networkx_gives_them(g):
    ref = reference(g)
    d = routing._dist(g)
    for h, row in ref.items():
        for n in g:
            assert d[h].get(n, -7) == row.get(n, -7), (h, n)
            if n in row:
                assert d[h][n] == row[n]
            else:
                with pytest.raises(KeyError):
                    d[h][n]
    for n in g:
        if g.nodes[n]['role'] == topology.OCS:
            continue
        assert routing._tier(g, n) == min(r[n] for r in ref.values())


def test_tiers_by_hand():
    # k=4 fat-tree: a host is 0 hops from a host, an edge switch 1, an
    # aggregation switch 2, a core switch 3
    g = topology.fat_tree(4)
    assert [routing._tier(g, n) for n in ('h0_0_0', 'e0_0', 'a0_0', 'c0')] \
        == [0, 1, 2, 3]


def test_paths_unchanged_on_a_fat_tree():
    # the paths of 300 random 5-tuples, as the searches from every host
    # gave them: next hops by the reference distances, the same hash
    g = topology.fat_tree(6)
    ref = reference(g)
    hosts = topology.hosts(g)
    rnd = random.Random(3)
    for _ in range(300):
        a, b = rnd.sample(hosts, 2)
        ft = routing.FiveTuple(g.nodes[a]['ip'], g.nodes[b]['ip'], 6,
                               rnd.randrange(1, 65536), 7000)
        want, node = [a], a
        while node != b:
            d = ref[b]
            hops = sorted((m for m in g[node]
                           if d.get(m) == d[node] - 1 and
                           (m == b or g.nodes[m]['role'] != topology.HOST)),
                          key=lambda m: topology.port(g, node, m))
            node = hops[routing.ecmp_index(ft, len(hops),
                                           routing.salt(g, node))]
            want.append(node)
        assert routing.path(g, ft) == want
