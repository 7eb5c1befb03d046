import collections
import ipaddress
import itertools
import random

import pytest

from netsched.control import openflow as of
from netsched import routing
from netsched import topology as topo


@pytest.fixture(scope='module')
def ft4():
    return topo.fat_tree(4)


def test_ecmp_path_sets(ft4):
    # inter-pod: (k/2)^2 paths; same pod other edge: k/2; same edge: 1
    assert len(routing.all_paths(ft4, 'h0_0_0', 'h3_1_1')) == 4
    assert len(routing.all_paths(ft4, 'h0_0_0', 'h0_1_0')) == 2
    assert routing.all_paths(ft4, 'h0_0_0', 'h0_0_1') == \
        [['h0_0_0', 'e0_0', 'h0_0_1']]
    assert routing.next_hop_ports(ft4, 'e0_0', 'h3_1_1') == (3, 4)
    assert routing.next_hop_ports(ft4, 'a0_0', 'h3_1_1') == (3, 4)
    assert routing.next_hop_ports(ft4, 'c1', 'h3_1_1') == (4,)
    assert routing.next_hop_ports(ft4, 'a3_1', 'h3_1_1') == (2,)


def test_flow_path_is_shortest_and_stable(ft4):
    rng = random.Random(1)
    for _ in range(200):
        ft = routing.FiveTuple('10.0.0.2', '10.3.1.3', routing.TCP,
                               rng.randrange(1024, 65536), 5201)
        p = routing.path(ft4, ft)
        assert p in routing.all_paths(ft4, 'h0_0_0', 'h3_1_1')
        assert routing.path(ft4, ft) == p


def test_ecmp_spreads_over_all_paths(ft4):
    counts = collections.Counter(
        tuple(routing.path(ft4, routing.FiveTuple(
            '10.0.0.2', '10.3.1.3', routing.TCP, sport, 5201)))
        for sport in range(40000, 40400))
    assert len(counts) == 4
    assert min(counts.values()) == max(counts.values()) == 100


@pytest.mark.parametrize('n', [1, 2, 3, 4, 5, 8, 16])
def test_hash_index_range_and_balance(n):
    seen = collections.Counter(
        routing.ecmp_index(routing.FiveTuple('10.0.0.2', '10.0.1.2', 6,
                                             s, 80), n)
        for s in range(4096))
    assert set(seen) == set(range(n))
    if n & (n - 1) == 0:        # powers of two split exactly
        assert len(set(seen.values())) == 1


def _as_int(v):
    return int(ipaddress.IPv4Address(v)) if isinstance(v, str) else v


def _matches(match, pkt):
    for k, v in match:
        if k not in pkt:
            return False
        val, mask = v if isinstance(v, tuple) else (v, None)
        have, val = _as_int(pkt[k]), _as_int(val)
        mask = -1 if mask is None else _as_int(mask)
        if have & mask != val & mask:
            return False
    return True


def _lookup(rules, table, pkt):
    """Highest-priority rule of a table matching pkt (a dict of fields)."""
    hits = [r for r in rules if r.table == table and _matches(r.match, pkt)]
    return max(hits, key=lambda r: r.priority, default=None)


def _forward(g, programs, ft):
    """Walk a packet through the installed OpenFlow tables."""
    by_ip = topo.host_by_ip(g)
    node = next(iter(g[by_ip[ft.src]]))
    nodes = [by_ip[ft.src], node]
    pkt = {'eth_type': of.ETH_IP, 'ipv4_src': ft.src, 'ipv4_dst': ft.dst,
           'ip_proto': ft.proto, 'tcp_src': ft.sport, 'tcp_dst': ft.dport}
    while g.nodes[node]['role'] != topo.HOST:
        meta = 0
        table = of.FORWARD_TABLE
        while True:
            r = _lookup(programs[node], table, dict(pkt, metadata=meta))
            assert r is not None, 'no rule in %s table %d' % (node, table)
            if r.goto is None:
                break
            meta = r.metadata[0] if r.metadata else meta
            table = r.goto
        port = dict(r.actions)['output']
        node = topo.neighbor_on_port(g, node, port)
        nodes.append(node)
    return nodes


def test_openflow_rules_realise_the_hash():
    """The masked-match rules the controller installs send every flow
    down exactly the path routing.path() computes."""
    for g in (topo.fat_tree(4), topo.leaf_spine(2, 3, 2)):
        programs = {s: of.route_rules(g, s) for s in topo.switches(g)}
        hosts = topo.hosts(g)
        rng = random.Random(7)
        for src, dst in itertools.islice(
                itertools.permutations(hosts, 2), 0, None, 3):
            ft = routing.FiveTuple(g.nodes[src]['ip'], g.nodes[dst]['ip'],
                                   routing.TCP, rng.randrange(1, 65536),
                                   rng.randrange(1, 65536))
            assert _forward(g, programs, ft) == routing.path(g, ft)
