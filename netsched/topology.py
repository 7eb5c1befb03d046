"""Topology graphs: the one source of truth for every backend.

A topology function returns a networkx Graph. Every node has a ``role``
(host, edge, aggregation, core, leaf, spine, switch, ocs) and a ``pod``
(None where the role has none); hosts carry ``ip`` and ``mac``, switches
a ``dpid``. Every link carries ``capacity_bps`` (data-center units) and
``ports``, a dict node -> port number on that node (hosts use port 0,
their eth0; switch ports count from 1 in the order links are added).
A hybrid fabric's links to its optical circuit switches (role ``ocs``)
carry ``circuit: True``: they carry traffic only while the circuit
switch joins two of them (a circuit, see :func:`circuit`).
Names, addresses, datapath ids and port numbers follow deterministically
from the parameters, so the controller, the emulator and the simulator
agree on them without talking to each other.
"""
import collections
import ipaddress
import json
import numbers
import weakref

import networkx as nx

from .errors import TopologyError

HOST = 'host'
OCS = 'ocs'
SWITCH_ROLES = ('edge', 'aggregation', 'core', 'leaf', 'spine', 'switch',
                OCS)
ROLES = (HOST,) + SWITCH_ROLES
DEFAULT_LINK_BPS = 10e9
# role -> top byte of the 24-bit datapath-id layout role<<16 | a<<8 | b
_ROLE_CODE = {'core': 1, 'aggregation': 2, 'edge': 3, 'spine': 4,
              'leaf': 5, 'switch': 6, OCS: 7}


def _check_int(fn, name, value, minimum, maximum=None, even=False):
    ok = (isinstance(value, numbers.Integral) and not isinstance(value, bool)
          and value >= minimum and (maximum is None or value <= maximum)
          and (not even or value % 2 == 0))
    if not ok:
        what = 'an even integer' if even else 'an integer'
        rng = '>= %d' % minimum if maximum is None else \
            'in %d..%d' % (minimum, maximum)
        raise TopologyError('%s: %s must be %s %s, got %r'
                            % (fn, name, what, rng, value))


def _check_rate(fn, link_bps):
    if (not isinstance(link_bps, numbers.Real) or isinstance(link_bps, bool)
            or not link_bps > 0):
        raise TopologyError('%s: link_bps must be a positive number, got %r'
                            % (fn, link_bps))


class _Builder:
    """Adds nodes and links with deterministic port numbering."""

    def __init__(self, name, link_bps, **graph_attrs):
        self.g = nx.Graph(name=name, **graph_attrs)
        self.link_bps = float(link_bps)
        self._next_port = {}

    def switch(self, name, role, pod, a, b):
        self.g.add_node(name, role=role, pod=pod,
                        dpid=_ROLE_CODE[role] << 16 | a << 8 | b)
        self._next_port[name] = 1
        return name

    def host(self, name, pod, ip):
        packed = ipaddress.IPv4Address(ip).packed
        mac = '02:00:%02x:%02x:%02x:%02x' % tuple(packed)
        self.g.add_node(name, role=HOST, pod=pod, ip=ip, mac=mac)
        self._next_port[name] = 0
        return name

    def link(self, u, v, capacity_bps=None, **attrs):
        ports = {}
        for n in (u, v):
            ports[n] = self._next_port[n]
            if self.g.nodes[n]['role'] == HOST:
                if ports[n] != 0:
                    raise TopologyError('host %s would get a second link' % n)
            self._next_port[n] += 1
        self.g.add_edge(u, v, ports=ports,
                        capacity_bps=float(capacity_bps or self.link_bps),
                        **attrs)


def fat_tree(k, link_bps=DEFAULT_LINK_BPS):
    """k-ary fat-tree: k pods of k/2 edge and k/2 aggregation switches,
    (k/2)^2 cores, k^3/4 hosts. Edge (p,e) port h+1 -> host h, ports
    k/2+a+1 -> aggregation a; aggregation (p,a) port e+1 -> edge e,
    ports k/2+j+1 -> core a*k/2+j; core c port p+1 -> pod p.
    Host (p,e,h) is h{p}_{e}_{h} with address 10.p.e.(h+2)."""
    _check_int('fat_tree', 'k', k, 2, 254, even=True)
    _check_rate('fat_tree', link_bps)
    h = k // 2
    b = _Builder('fattree', link_bps, kind='fattree', params={'k': k})
    cores = [b.switch('c%d' % c, 'core', None, c >> 8, c & 0xff)
             for c in range(h * h)]
    for p in range(k):
        aggs = [b.switch('a%d_%d' % (p, a), 'aggregation', p, p, a)
                for a in range(h)]
        edges = [b.switch('e%d_%d' % (p, e), 'edge', p, p, e)
                 for e in range(h)]
        for e, edge in enumerate(edges):
            for i in range(h):
                b.link(edge, b.host('h%d_%d_%d' % (p, e, i), p,
                                    '10.%d.%d.%d' % (p, e, i + 2)))
        for e, edge in enumerate(edges):
            for agg in aggs:
                b.link(edge, agg)
        for a, agg in enumerate(aggs):
            for j in range(h):
                b.link(agg, cores[a * h + j])
    return b.g


def leaf_spine(leaves, spines, hosts_per_leaf, link_bps=DEFAULT_LINK_BPS):
    """Two-tier Clos: every leaf connects to every spine. Leaf l port
    i+1 -> host i, ports hosts_per_leaf+s+1 -> spine s; spine s port
    l+1 -> leaf l. Host i of leaf l is h{l}_{i}, address 10.0.l.(i+2);
    each leaf is its own pod."""
    _check_int('leaf_spine', 'leaves', leaves, 1, 255)
    _check_int('leaf_spine', 'spines', spines, 1, 255)
    _check_int('leaf_spine', 'hosts_per_leaf', hosts_per_leaf, 1, 252)
    _check_rate('leaf_spine', link_bps)
    b = _Builder('leafspine', link_bps, kind='leafspine',
                 params={'leaves': leaves, 'spines': spines,
                         'hosts_per_leaf': hosts_per_leaf})
    spine_names = [b.switch('s%d' % s, 'spine', None, 0, s)
                   for s in range(spines)]
    leaf_names = [b.switch('l%d' % i, 'leaf', i, 0, i) for i in range(leaves)]
    for i, leaf in enumerate(leaf_names):
        for j in range(hosts_per_leaf):
            b.link(leaf, b.host('h%d_%d' % (i, j), i,
                                '10.0.%d.%d' % (i, j + 2)))
    for leaf in leaf_names:
        for spine in spine_names:
            b.link(leaf, spine)
    return b.g


def hybrid(racks, hosts_per_rack, circuits=1, spines=1, oversub=4,
           circuit_x=4, reconfig_ms=10, link_bps=DEFAULT_LINK_BPS):
    """Racks whose top-of-rack switches have uplinks both to an
    electrical packet core (``spines`` spine switches, a leaf-spine) and
    to ``circuits`` optical circuit switches (OCS planes): a circuit on
    plane k joins two ToRs' ports on it, so each ToR has at most
    ``circuits`` circuits, one per plane.

    Rates: hosts' links ``link_bps``; a ToR's uplinks to the packet core
    together carry its hosts' rate over ``oversub`` (each uplink
    hosts_per_rack x link_bps / (spines x oversub)); a circuit
    ``circuit_x`` x link_bps each way. ``reconfig_ms``: the OCS's
    reconfiguration delay (``g.graph['reconfig_s']``), the blackout
    between removing circuits and setting up new ones.

    ToR r is t{r} (role leaf, pod r), its host i h{r}_{i} at 10.0.r.(i+2);
    spine s is s{s}, OCS plane k o{k} (role ocs). ToR r's ports: 1.. its
    hosts, then the spines, then the planes; spine and plane port r+1 ->
    ToR r. Links to the planes carry ``circuit: True``."""
    fn = 'hybrid'
    _check_int(fn, 'racks', racks, 2, 255)
    _check_int(fn, 'hosts_per_rack', hosts_per_rack, 1, 252)
    _check_int(fn, 'circuits', circuits, 1, 16)
    _check_int(fn, 'spines', spines, 1, 255)
    _check_rate(fn, link_bps)
    for name, v in (('oversub', oversub), ('circuit_x', circuit_x)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or v <= 0:
            raise TopologyError('%s: %s must be a positive number, got %r'
                                % (fn, name, v))
    if not isinstance(reconfig_ms, numbers.Real) or \
            isinstance(reconfig_ms, bool) or reconfig_ms < 0:
        raise TopologyError('%s: reconfig_ms must be a number >= 0, got %r'
                            % (fn, reconfig_ms))
    uplink = hosts_per_rack * link_bps / (spines * oversub)
    b = _Builder(fn, link_bps, kind=fn, reconfig_s=reconfig_ms / 1e3,
                 params={'racks': racks, 'hosts_per_rack': hosts_per_rack,
                         'circuits': circuits, 'spines': spines,
                         'oversub': oversub, 'circuit_x': circuit_x,
                         'reconfig_ms': reconfig_ms})
    spine_names = [b.switch('s%d' % s, 'spine', None, 0, s)
                   for s in range(spines)]
    planes = [b.switch('o%d' % k, OCS, None, 0, k) for k in range(circuits)]
    tors = [b.switch('t%d' % r, 'leaf', r, 0, r) for r in range(racks)]
    for r, tor in enumerate(tors):
        for i in range(hosts_per_rack):
            b.link(tor, b.host('h%d_%d' % (r, i), r,
                               '10.0.%d.%d' % (r, i + 2)))
    for tor in tors:
        for spine in spine_names:
            b.link(tor, spine, uplink)
        for plane in planes:
            b.link(tor, plane, circuit_x * link_bps, circuit=True)
    return b.g


def circuit(plane, a, b):
    """A circuit of an OCS plane between two ToRs, as routing and the
    backends name it: (plane, ToR, ToR), the ToRs in natural order."""
    a, b = sorted((a, b), key=natural)
    return (plane, a, b)


def planes(g):
    """The optical circuit switches of a hybrid fabric (none elsewhere)."""
    return sorted((n for n, d in g.nodes(data=True) if d['role'] == OCS),
                  key=natural)


def tors(g):
    """The switches with circuit ports (a hybrid fabric's ToRs)."""
    out = {u if g.nodes[v]['role'] == OCS else v
           for u, v, d in g.edges(data=True) if d.get('circuit')}
    return sorted(out, key=natural)


CircuitFabric = collections.namedtuple(
    'CircuitFabric', 'tors planes tor_index circuit_bps packet_bps '
    'reconfig_s')


def circuit_fabric(g):
    """What a circuit scheduler knows of a hybrid fabric, the same for
    every backend: ToR and plane names (index order), each host's ToR
    index, one circuit's rate, each ToR's uplink capacity to the packet
    core (bit/s, in ToR order) and the reconfiguration delay (s)."""
    t, p = tors(g), planes(g)
    index = {x: i for i, x in enumerate(t)}
    return CircuitFabric(
        tuple(t), tuple(p),
        {h: index[next(iter(g[h]))] for h in hosts(g)},
        float(g[t[0]][p[0]]['capacity_bps']),
        tuple(float(sum(d['capacity_bps'] for n, d in g[x].items()
                        if g.nodes[n]['role'] != HOST
                        and not d.get('circuit'))) for x in t),
        float(g.graph.get('reconfig_s', 0.0)))


def dumbbell(n, link_bps=DEFAULT_LINK_BPS, bottleneck_bps=None):
    """n senders hl{i} on switch sl, n receivers hr{i} on switch sr, one
    link sl-sr between them (the bottleneck when bottleneck_bps is lower
    than link_bps). Left hosts are 10.0.0.(i+2), right 10.0.1.(i+2)."""
    _check_int('dumbbell', 'n', n, 1, 252)
    _check_rate('dumbbell', link_bps)
    if bottleneck_bps is not None:
        _check_rate('dumbbell', bottleneck_bps)
    b = _Builder('dumbbell', link_bps, kind='dumbbell', params={'n': n})
    left = b.switch('sl', 'switch', 0, 0, 0)
    right = b.switch('sr', 'switch', 1, 0, 1)
    for side, sw, pod in (('l', left, 0), ('r', right, 1)):
        for i in range(n):
            b.link(sw, b.host('h%s%d' % (side, i), pod,
                              '10.0.%d.%d' % (pod, i + 2)))
    b.link(left, right, bottleneck_bps)
    return b.g


def big_switch(n, link_bps=DEFAULT_LINK_BPS):
    """n hosts h{i} (i = 0..n-1) on one non-blocking switch x0: only the
    host ports are bottlenecks (the coflow literature's model of a
    data-center fabric; a coflow trace's rack i is host h{i}). Switch port
    i+1 -> host i; host i is 10.1.(i // 250).(i % 250 + 2)."""
    _check_int('big_switch', 'n', n, 1, 250 * 250)
    _check_rate('big_switch', link_bps)
    b = _Builder('bigswitch', link_bps, kind='bigswitch', params={'n': n})
    sw = b.switch('x0', 'switch', None, 0, 0)
    for i in range(n):
        b.link(sw, b.host('h%d' % i, None,
                          '10.1.%d.%d' % (i // 250, i % 250 + 2)))
    return b.g


TOPOLOGIES = {'fattree': fat_tree, 'leafspine': leaf_spine,
              'dumbbell': dumbbell, 'bigswitch': big_switch,
              'hybrid': hybrid}


def build(name, *args, **kwargs):
    """Build a registered topology by name: build('fattree', 4)."""
    try:
        fn = TOPOLOGIES[name]
    except KeyError:
        raise TopologyError('unknown topology %r (known: %s)'
                            % (name, ', '.join(sorted(TOPOLOGIES)))) from None
    try:
        return fn(*args, **kwargs)
    except TypeError as e:
        raise TopologyError('%s: %s' % (name, e)) from None


def split_spec(spec):
    """'fattree,4' or 'leafspine,2,2,4,link_bps=1e9' -> (name, [args],
    {keyword: value}), numbers as int where they are integers; a
    TopologyError for an empty spec or an argument that is no number."""
    parts = [p.strip() for p in str(spec).split(',') if p.strip()]
    if not parts:
        raise TopologyError('empty topology spec')
    args, kwargs = [], {}
    for p in parts[1:]:
        key, _, val = p.rpartition('=')
        try:
            num = int(val)
        except ValueError:
            try:
                num = float(val)
            except ValueError:
                raise TopologyError('topology %r: argument %r is not a '
                                    'number' % (spec, p)) from None
        if key:
            kwargs[key] = num
        else:
            args.append(num)
    return parts[0], args, kwargs


def parse_spec(spec, link_bps=None):
    """'fattree,4' or 'leafspine,2,2,4' (Mininet's --topo syntax) ->
    graph. Integer arguments only; keyword form k=v is accepted too.
    ``link_bps``: the hosts' link rate, unless the spec gives one."""
    name, args, kwargs = split_spec(spec)
    if link_bps is not None:
        kwargs.setdefault('link_bps', link_bps)
    return build(name, *args, **kwargs)


# --- queries -------------------------------------------------------------

def hosts(g):
    return sorted((n for n, d in g.nodes(data=True) if d['role'] == HOST),
                  key=natural)


def switches(g):
    return sorted((n for n, d in g.nodes(data=True) if d['role'] != HOST),
                  key=natural)


def natural(name):
    """A sort key for node names: runs of digits compare as numbers (h2
    before h10)."""
    out, num = [], ''
    for ch in name + '\0':
        if ch.isdigit():
            num += ch
            continue
        if num:
            out.append((1, int(num), ''))
            num = ''
        out.append((0, 0, ch))
    return out


def port(g, node, neighbor):
    return g[node][neighbor]['ports'][node]


def neighbor_on_port(g, node, port_no):
    for m in g[node]:
        if g[node][m]['ports'][node] == port_no:
            return m
    raise KeyError('%s has no port %d' % (node, port_no))


def by_dpid(g):
    return {d['dpid']: n for n, d in g.nodes(data=True) if d['role'] != HOST}


def host_by_ip(g):
    return {d['ip']: n for n, d in g.nodes(data=True) if d['role'] == HOST}


def without(g, down):
    """The fabric as it is while the links ``down`` (a set of link_id
    names) are down: the same graph less those links, one object per set
    so that routing's per-graph caches hold (a failed switch is every
    link of it down). Nothing is removed for an empty set."""
    down = frozenset(down)
    if not down:
        return g
    cache = _LIVE.setdefault(g, {})
    live = cache.get(down)
    if live is None:
        live = g.copy()
        live.remove_edges_from([(u, v) for u, v in g.edges()
                                if link_id(u, v) in down])
        live.graph['base'] = g
        cache[down] = live
    return live


def base_of(g):
    """The whole fabric a graph of :func:`without` was made from (the
    graph itself if it is whole): its tiers and hash salts stay."""
    return g.graph.get('base', g)


def switch_links(g, switch):
    """The link_id of every link of ``switch``: what goes down with it."""
    return frozenset(link_id(switch, m) for m in g[switch])


_LIVE = weakref.WeakKeyDictionary()


def link_id(u, v):
    """A stable name for an undirected link: 'a-b' with a < b naturally."""
    a, b = sorted((u, v), key=natural)
    return '%s-%s' % (a, b)


# --- serialisation -------------------------------------------------------

def to_dict(g):
    data = nx.node_link_data(g, edges='links')
    return data


def from_dict(data):
    g = nx.node_link_graph(data, edges='links')
    for u, v, d in g.edges(data=True):
        d['ports'] = {str(k): int(p) for k, p in d['ports'].items()}
    return g


def save(g, path):
    with open(path, 'w') as f:
        json.dump(to_dict(g), f, indent=1, sort_keys=True)


def load(path):
    with open(path) as f:
        return from_dict(json.load(f))
