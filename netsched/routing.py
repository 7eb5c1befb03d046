"""Shortest-path routing with ECMP, computed from the topology graph.

Every switch forwards a packet for host D to one of its *next hops*: the
neighbours one hop closer to D. Where there are several (equal-cost
multipath), the choice is a hash of the packet's 5-tuple, so all packets
of one flow take one path.

The hash is defined here, once, so that it can be written as plain
OpenFlow matches (the controller installs one rule per combination of
the few low bits it reads; no select groups, no recirculation) and so
that the simulator and the benchmarks can compute the exact path of any
flow. With n next hops it reads b = ceil(log2 n) low bits from each of
up to four fields -- L4 source port, L4 destination port, IPv4 source,
IPv4 destination (at most 8 bits in all, fields taken in that order) --
XORs them and maps the b-bit value v to next hop floor(v * n / 2**b).
Packets without L4 ports hash on the IPv4 addresses only.

If every switch read the same bits, the choices made at successive tiers
would be correlated (polarisation: on a k=4 fat-tree only 2 of the 4
inter-pod paths would ever be used). So a switch reads the L4 port bits
at an offset of salt * b, where its salt is its tier: hop distance to the
nearest host minus one (edge 0, aggregation 1, core 2).

On a hybrid fabric the shortest paths are those of its packet core (the
optical circuit switches are left out), and ``circuits`` (the circuits
live now, topology.circuit tuples) take precedence: a ToR sends traffic
for a rack it has a live circuit to over that circuit (over several,
by the same hash), and everything else over the packet core.
"""
import ipaddress
import math
import weakref
from collections import namedtuple

import networkx as nx

from . import topology as topo

HASH_BITS_MAX = 8
L4_FIELDS = ('l4_src', 'l4_dst', 'ipv4_src', 'ipv4_dst')
IP_FIELDS = ('ipv4_src', 'ipv4_dst')
TCP, UDP = 6, 17

FiveTuple = namedtuple('FiveTuple', 'src dst proto sport dport')


class NoRoute(ValueError):
    """:func:`path` found no next hop toward host ``dst``: the links
    down leave host ``src`` no valley-free path to it. Its own type, so
    that the simulator, ns-3 and the controller catch this outcome of a
    fault, and only this (any other ValueError from routing is a bug)."""

    def __init__(self, src, dst):
        super().__init__('%s cannot reach %s' % (src, dst))
        self.src, self.dst = src, dst


def hash_bits(n):
    """Bits read from each field when choosing among n next hops."""
    if n < 1 or n > 1 << HASH_BITS_MAX:
        raise ValueError('ECMP over %d next hops is not supported' % n)
    return max(1, math.ceil(math.log2(n))) if n > 1 else 0


def hash_fields(n, has_ports):
    """The fields the hash reads for n next hops, in order."""
    b = hash_bits(n)
    if b == 0:
        return ()
    fields = L4_FIELDS if has_ports else IP_FIELDS
    return fields[:max(1, min(len(fields), HASH_BITS_MAX // b))]


def bucket_to_index(v, n):
    return (v * n) >> hash_bits(n)


def _field_values(ft):
    return {'l4_src': ft.sport or 0, 'l4_dst': ft.dport or 0,
            'ipv4_src': int(ipaddress.IPv4Address(ft.src)),
            'ipv4_dst': int(ipaddress.IPv4Address(ft.dst))}


def field_shift(field, n, salt):
    """Bit offset at which a switch with this salt reads a field."""
    if field in ('l4_src', 'l4_dst'):
        b = hash_bits(n)
        return (salt % (16 // b)) * b
    return 0


def ecmp_index(ft, n, salt=0):
    """Index of the next hop (0..n-1) that flow ft takes among n at a
    switch with the given salt."""
    if n <= 1:
        return 0
    mask = (1 << hash_bits(n)) - 1
    values = _field_values(ft)
    v = 0
    for f in hash_fields(n, ft.proto in (TCP, UDP)):
        v ^= (values[f] >> field_shift(f, n, salt)) & mask
    return bucket_to_index(v, n)


def salt(g, switch):
    """A switch's tier: hop distance to the nearest host minus one (0
    for an optical circuit switch, which has no shortest paths)."""
    if g.nodes[switch]['role'] == topo.OCS:
        return 0
    return _tier(topo.base_of(g), switch) - 1


_DIST_CACHE = weakref.WeakKeyDictionary()


class _Fabric:
    """A graph's packet fabric (its optical circuit switches left out) as
    index lists, and the hop distances over it, each computed the first
    time it is needed (graphs are built once and not changed
    afterwards). Searching from every host up front (the first way) took
    minutes and gigabytes on a k=32 fat-tree (8,192 hosts)."""

    def __init__(self, g):
        self.nodes = [n for n, r in g.nodes(data='role') if r != topo.OCS]
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.nbrs = [[self.index[m] for m in g[n] if m in self.index]
                     for n in self.nodes]
        self.rows = {}                   # source index -> distances
        self.to_host = {}                # host -> _ToHost
        self.tier = None                 # distance to the nearest host
        self.hosts = [self.index[h] for h in topo.hosts(g)
                      if h in self.index]

    def search(self, sources):
        """Hop distances from the nearest of ``sources`` (indices) to
        every node, -1 where none reaches (breadth first)."""
        dist = [-1] * len(self.nodes)
        for s in sources:
            dist[s] = 0
        frontier, d = list(sources), 0
        nbrs = self.nbrs
        while frontier:
            d += 1
            nxt = []
            for u in frontier:
                for v in nbrs[u]:
                    if dist[v] < 0:
                        dist[v] = d
                        nxt.append(v)
            frontier = nxt
        return dist

    def row(self, i):
        r = self.rows.get(i)
        if r is None:
            r = self.rows[i] = self.search([i])
        return r

    def __getitem__(self, host):
        """Hop distances to ``host``, as a mapping node -> distance (the
        nodes it reaches only)."""
        t = self.to_host.get(host)
        if t is None:
            t = self.to_host[host] = _ToHost(self, self.index[host])
        return t


class _ToHost:
    """Hop distances to one host: for a host on a single link (every
    host of the built-in fabrics) one more than its switch's, whose
    search the hosts under that switch share; the host's own search
    otherwise. Reads like the dict of those distances."""

    def __init__(self, fabric, i):
        self.fabric, self.i = fabric, i
        nb = fabric.nbrs[i]
        if len(nb) == 1:                 # every path from it goes there
            self.row, self.add = fabric.row(nb[0]), 1
        else:
            self.row, self.add = fabric.row(i), 0

    def get(self, node, default=None):
        j = self.fabric.index.get(node)
        if j is None:
            return default
        if j == self.i:
            return 0
        d = self.row[j]
        return default if d < 0 else d + self.add

    def __getitem__(self, node):
        d = self.get(node)
        if d is None:
            raise KeyError(node)
        return d


def _dist(g):
    """Hop distances to every host (``_dist(g)[host][node]``) over the
    packet fabric, computed as they are needed, once per graph object."""
    d = _DIST_CACHE.get(g)
    if d is None:
        d = _DIST_CACHE[g] = _Fabric(g)
    return d


def _tier(g, node):
    """Hop distance to the nearest host in the whole fabric ``g``."""
    f = _dist(g)
    if f.tier is None:                   # one search from all hosts
        f.tier = f.search(f.hosts)
    d = f.tier[f.index[node]]
    if d < 0:
        raise KeyError(node)
    return d


_UPDOWN_CACHE = weakref.WeakKeyDictionary()


def _updown(g, dst):
    """Valley-free path lengths to host ``dst`` over a fabric with links
    down (topology.without): {node: (down, any)}, ``down`` the length of
    the shortest path that only descends tiers, ``any`` of the shortest
    that climbs and then descends (inf: none)."""
    per = _UPDOWN_CACHE.setdefault(g, {})
    if dst in per:
        return per[dst]
    base = topo.base_of(g)
    tier = {n: _tier(base, n) for n in g if g.nodes[n]['role'] != topo.OCS}
    order = sorted(tier, key=tier.get)
    down = {n: math.inf for n in tier}
    down[dst] = 0
    for n in order:                  # lower tiers first
        for m in g[n]:
            if m in tier and tier[m] < tier[n] and (
                    m == dst or g.nodes[m]['role'] != topo.HOST):
                down[n] = min(down[n], down[m] + 1)
    best = dict(down)
    for n in reversed(order):        # higher tiers first
        for m in g[n]:
            if m in tier and tier[m] > tier[n]:
                best[n] = min(best[n], best[m] + 1)
    per[dst] = out = {n: (down[n], best[n]) for n in tier}
    return out


def _updown_hops(g, node, dst):
    """Next hops with links down: descend if a descending path is left,
    else climb towards the shortest valley-free one (as the fabric's
    routing protocol would: a fat-tree's BGP withdraws a route rather
    than send it down and up again through another switch)."""
    lengths = _updown(g, dst)
    base = topo.base_of(g)
    here_down, here = lengths.get(node, (math.inf, math.inf))
    if here_down < math.inf:
        want = [m for m in g[node] if _tier(base, m) < _tier(base, node)
                and lengths.get(m, (math.inf,))[0] == here_down - 1
                and (m == dst or g.nodes[m]['role'] != topo.HOST)]
    elif here < math.inf:
        want = [m for m in g[node] if _tier(base, m) > _tier(base, node)
                and lengths.get(m, (0, math.inf))[1] == here - 1]
    else:
        want = []
    return sorted(want, key=lambda m: topo.port(g, node, m))


def reaches(g, src, dst):
    """Whether the router's own rule (:func:`next_hops`) finds a path
    from host ``src`` to host ``dst`` over ``g``: any path on the whole
    fabric, a valley-free one (climb, then descend) where links are down
    (topology.without). A graph can be connected and still have none:
    with both uplinks of a0_0 and of a1_1 down, pod 0's hosts reach pod
    1 only down through another pod and up again."""
    if topo.base_of(g) is g:
        return nx.has_path(g, src, dst)
    return _updown(g, dst).get(src, (math.inf, math.inf))[1] < math.inf


def next_hops(g, node, dst, circuits=()):
    """Neighbours of node one hop closer to host dst, ordered by the
    port number they sit behind (the ECMP index order). With live
    ``circuits`` on a hybrid fabric: the circuit switches that join
    node's rack to dst's, if any."""
    if circuits:
        via = _circuit_hops(g, node, dst, circuits)
        if via is not None:
            return via
    if g.nodes[node]['role'] == topo.OCS:
        return []
    if topo.base_of(g) is not g:
        return _updown_hops(g, node, dst)
    d = _dist(g)[dst]
    here = d[node]
    cand = [m for m in g[node] if d.get(m, math.inf) == here - 1
            and (m == dst or g.nodes[m]['role'] != topo.HOST)]
    return sorted(cand, key=lambda m: topo.port(g, node, m))


def _circuit_hops(g, node, dst, circuits):
    """Where a circuit takes traffic for dst at node: at a ToR, the
    planes with a live circuit to dst's ToR; at a plane, dst's ToR if a
    circuit joins it to a ToR that sends to it (None: no circuit)."""
    tor = next(iter(g[dst]))
    if node == tor:
        return None
    if g.nodes[node]['role'] == topo.OCS:
        live = any(p == node and tor in (a, b) for p, a, b in circuits)
        return [tor] if live else None
    planes = [p for p, a, b in circuits if {a, b} == {node, tor}]
    if not planes:
        return None
    return sorted(set(planes), key=lambda m: topo.port(g, node, m))


def next_hop_ports(g, node, dst, circuits=()):
    return tuple(topo.port(g, node, m)
                 for m in next_hops(g, node, dst, circuits))


def forwarding_table(g, switch, circuits=()):
    """{destination host: tuple of egress ports} for one switch (an
    optical circuit switch has none: its rules are its circuits)."""
    if g.nodes[switch]['role'] == topo.OCS:
        return {}
    return {h: next_hop_ports(g, switch, h, circuits) for h in topo.hosts(g)
            if h != switch}


_BY_IP = weakref.WeakKeyDictionary()


def path(g, ft, circuits=()):
    """The node path flow ft takes: src host ... dst host."""
    by_ip = _BY_IP.get(g)
    if by_ip is None:            # once per graph, not per path (8,192
        by_ip = _BY_IP[g] = topo.host_by_ip(g)     # hosts at k=32)
    try:
        src, dst = by_ip[ft.src], by_ip[ft.dst]
    except KeyError as e:
        raise ValueError('no host has address %s' % e.args[0]) from None
    nodes = [src]
    node = src
    while node != dst:
        hops = next_hops(g, node, dst, circuits)
        if not hops:
            raise NoRoute(src, dst)
        node = hops[ecmp_index(ft, len(hops), salt(g, node))]
        nodes.append(node)
    return nodes


def path_links(g, ft, circuits=()):
    """Directed links (u, v) along the path of flow ft."""
    p = path(g, ft, circuits)
    return list(zip(p, p[1:]))


def all_paths(g, src, dst):
    """Every shortest path between two hosts (the ECMP path set)."""
    return sorted(nx.all_shortest_paths(g, src, dst))
