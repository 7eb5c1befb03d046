"""The fluid network model shared by the simulator, the controller and
the benchmarks: directed links and path ids over a topology graph
(:class:`Network`, paths exactly as the controller routes them), and
rate allocation (:func:`allocate`: strict priority classes, max-min
fairness inside a class by progressive filling, explicit rates reserved
first).

Flows are given by path id into a path table (P, H) of link indices,
padded with -1. Flows of one class on one path get identical max-min
rates, so they are filled as one group weighted by their number: the
cost per call grows with the number of distinct (class, path) pairs, not
of flows. Everything is numpy; there is no per-flow Python loop. Where
a C compiler is at hand the filling runs compiled instead
(:mod:`netsched.fluid.kernels`, per flow, giving the same bits).
"""
import numpy as np

from . import kernels
from .. import routing
from .. import topology as topo

REL_TOL = 1e-9
FEW_LEVELS = 32        # up to this many classes, no link -> group index


def _link_order(flat, nl):
    """Stable argsort of link indices; numpy radix-sorts 16-bit keys."""
    if nl < 32767:
        return np.argsort(flat.astype(np.int16), kind='stable')
    return np.argsort(flat, kind='stable')


def _fill(links, weight, residual, capacity):
    """Progressive filling of groups (rows of ``links``, padded with the
    dummy link index len(residual)-1) with ``weight`` flows each. Returns
    the per-flow rate of each group; ``residual`` is reduced in place.

    All unfrozen groups rise together; each round the links with the
    smallest fair share fill up and freeze the groups crossing them. The
    per-link group count is updated incrementally, so a round costs
    O(links + groups frozen in it), not O(groups)."""
    G, H = links.shape
    nl = len(residual)
    dummy = nl - 1
    flat = links.ravel()
    order = _link_order(flat, nl)
    owner = order // H                  # group of each sorted entry
    starts = np.r_[0, np.cumsum(np.bincount(flat, minlength=nl))]
    n = np.bincount(flat, weights=np.repeat(weight, H), minlength=nl)
    n[dummy] = 0.0
    rate = np.zeros(G)
    active = np.ones(G, dtype=bool)
    stamp = np.zeros(G, dtype=np.int64)
    level = 0.0
    while True:
        used = np.flatnonzero(n > 0.5)
        if len(used) == 0:
            break
        share = residual[used] / n[used]
        k = np.argmin(share)
        inc = max(share[k], 0.0)
        level += inc
        residual[used] -= inc * n[used]
        full = used[residual[used] <= REL_TOL * capacity[used]]
        if used[k] not in full:                  # numerical guard
            full = np.r_[full, used[k]]
        residual[full] = 0.0
        gs = np.concatenate([owner[starts[i]:starts[i + 1]] for i in full])
        gs = gs[active[gs]]
        stamp[gs] = np.arange(len(gs))          # keep one of each
        gs = gs[stamp[gs] == np.arange(len(gs))]
        active[gs] = False
        rate[gs] = level
        n -= np.bincount(links[gs].ravel(), weights=np.repeat(weight[gs], H),
                         minlength=nl)
        n[dummy] = 0.0
        n[full] = 0.0
    return rate


def _by_level(glinks, gkey, weight, residual, cap, grate):
    """Fill the priority levels in order. A group that crosses a full
    link gets nothing. With many levels, the groups each newly full link
    kills are found through a link -> groups index, so levels that are
    entirely starved (the common case under strict priority) cost
    nothing."""
    G, H = glinks.shape
    nl = len(residual)
    bounds = np.flatnonzero(np.r_[True, gkey[1:] != gkey[:-1], True])
    nlev = len(bounds) - 1
    if nlev <= FEW_LEVELS:
        # few classes: test each class's groups against the full links
        for lev in range(nlev):
            full = residual <= 0
            full[nl - 1] = False
            if full[:-1].all():
                return
            a, b = bounds[lev], bounds[lev + 1]
            idx = a + np.flatnonzero(~full[glinks[a:b]].any(axis=1))
            if len(idx):
                grate[idx] = _fill(glinks[idx], weight[idx], residual, cap)
        return
    level_of = np.repeat(np.arange(nlev), np.diff(bounds))
    flat = glinks.ravel()
    order = _link_order(flat, nl)
    owner = order // H
    starts = np.r_[0, np.cumsum(np.bincount(flat, minlength=nl))]
    alive = np.bincount(level_of, minlength=nlev)
    dead = np.zeros(G, dtype=bool)
    stamp = np.zeros(G, dtype=np.int64)
    full = residual <= 0
    full[nl - 1] = False

    def kill(links):
        if len(links) == 0:
            return
        g = np.concatenate([owner[starts[i]:starts[i + 1]] for i in links])
        g = g[~dead[g]]
        stamp[g] = np.arange(len(g))
        g = g[stamp[g] == np.arange(len(g))]
        dead[g] = True
        np.subtract.at(alive, level_of[g], 1)

    kill(np.flatnonzero(full))
    lev = 0
    while lev < nlev:
        if alive[lev] == 0:
            nxt = np.flatnonzero(alive[lev:] > 0)
            if len(nxt) == 0:
                break
            lev += int(nxt[0])
        a, b = bounds[lev], bounds[lev + 1]
        idx = a + np.flatnonzero(~dead[a:b])
        grate[idx] = _fill(glinks[idx], weight[idx], residual, cap)
        now_full = residual <= 0
        now_full[nl - 1] = False
        kill(np.flatnonzero(now_full & ~full))
        full = now_full
        lev += 1


def allocate(path_links, flow_path, flow_key, capacity, explicit=None,
             remaining=None):
    """Per-flow rates.

    path_links: (P, H) int link indices, -1 padded; flow_path: (F,) path
    ids; flow_key: (F,) priority (lower served first; equal keys share
    max-min fairly); capacity: (L,) bit/s; explicit: (F,) bit/s or NaN,
    reserved before anything else (scaled down where they would exceed a
    link) and then topped up by back-filling like every other flow.
    Returns (per-flow rates, per-link carried load). With ``remaining``
    ((F,) bytes left per flow) a third value: (found, s), the time until
    the first flow with a rate finishes at it (kernels.first_finish's),
    made as the rates are where the compiled filling runs, else None
    (not made).
    """
    out = _allocate(path_links, flow_path, flow_key, capacity, explicit,
                    remaining)
    return out if remaining is not None else out[:2]


def _allocate(path_links, flow_path, flow_key, capacity, explicit=None,
              remaining=None):
    """allocate's work: (rates, load, the first finish where ``remaining``
    is given and it is made as the rates are, else None)."""
    F = len(flow_path)
    if F and explicit is None and kernels.lib() is not None:
        # compiled, nothing reserved: the kernel needs no dummy link, so
        # a fabric's every link is copied once, not four times (k=32:
        # 49,152 links at every event)
        capf = np.asarray(capacity, float)
        residual = capf.copy()
        fin = None
        if remaining is not None:
            frate, fin = kernels.maxmin(path_links, flow_path, flow_key,
                                        residual, capf, REL_TOL, remaining)
        else:
            frate = kernels.maxmin(path_links, flow_path, flow_key,
                                   residual, capf, REL_TOL)
        np.subtract(capf, residual, out=residual)
        return frate, np.maximum(residual, 0.0, out=residual), fin
    if F == 0:
        return np.zeros(0), np.zeros(len(capacity)), None
    L = len(capacity)
    cap = np.append(np.asarray(capacity, float), np.inf)
    residual = cap.copy()
    rate, add_explicit = None, False
    if explicit is not None:
        # the positive, finite rates (NaN and inf reserve nothing)
        x = np.asarray(explicit, float)
        got = kernels.reserve(path_links, flow_path, x, cap, residual,
                              fits=True)
        if isinstance(got, str):
            # none scaled: the filling adds the explicit rates themselves
            rate, add_explicit = x, True
        elif got is not None:
            rate = got                        # compiled: the same bits
        else:
            rate = np.zeros(F)
            sel = np.flatnonzero((x > 0) & (x < np.inf))
            if len(sel):
                e = x[sel]
                fl = path_links[flow_path[sel]]
                fl = np.where(fl >= 0, fl, L)
                load = np.bincount(fl.ravel(),
                                   weights=np.repeat(e, fl.shape[1]),
                                   minlength=L + 1)
                with np.errstate(divide='ignore', invalid='ignore'):
                    over = np.where(load > cap, cap / load, 1.0)
                over[L] = 1.0
                # each flow's smallest factor, hop by hop (a reduction
                # over the short axis costs several times as much; min is
                # exact)
                scale = over[fl[:, 0]] if fl.shape[1] else np.ones(len(e))
                for h in range(1, fl.shape[1]):
                    np.minimum(scale, over[fl[:, h]], out=scale)
                e = e * scale
                load = np.bincount(fl.ravel(),
                                   weights=np.repeat(e, fl.shape[1]),
                                   minlength=L + 1)
                residual = np.maximum(cap - load, 0.0)
                residual[L] = np.inf
                rate[sel] += e
    key = np.asarray(flow_key, dtype=np.int64)
    if kernels.lib() is not None:             # compiled: the same bits
        # the reservations are added as the filling writes its rates
        out = kernels.maxmin(path_links, flow_path, key, residual, cap,
                             REL_TOL, remaining, rate, add_explicit)
        frate, fin = out if remaining is not None else (out, None)
        return frate, np.maximum(cap[:L] - residual[:L], 0.0), fin
    if rate is None:
        rate = np.zeros(F)
    pl = np.where(path_links >= 0, path_links, L)
    P = len(path_links)
    gid = key * P + flow_path
    span = int(key.max()) * P + P if F else 0
    if span <= max(4 * F, 1 << 16):           # dense: no sort needed
        counts = np.bincount(gid, minlength=span)
        groups = np.flatnonzero(counts)
        lut = np.zeros(span, dtype=np.int64)
        lut[groups] = np.arange(len(groups))
        inverse = lut[gid]
        counts = counts[groups]
    else:
        groups, inverse, counts = np.unique(gid, return_inverse=True,
                                            return_counts=True)
    gkey = groups // P
    gpath = groups % P
    grate = np.zeros(len(groups))
    _by_level(pl[gpath], gkey, counts.astype(float), residual, cap, grate)
    rate += grate[inverse]
    # carried load per link, from the groups (plus explicit reservations)
    load = np.maximum(cap[:L] - residual[:L], 0.0)
    return rate, load, None


class Network:
    """Directed links and path ids over one topology graph."""

    def __init__(self, g, big_switch=False):
        self.g = g
        self.big_switch = big_switch
        self.links = []
        for u, v, d in g.edges(data=True):
            self.links += [(u, v, d['capacity_bps']), (v, u, d['capacity_bps'])]
        self.links.sort(key=lambda x: (topo.natural(x[0]),
                                       topo.natural(x[1])))
        self.index = {(u, v): i for i, (u, v, _) in enumerate(self.links)}
        self.capacity = np.array([c for _, _, c in self.links], float)
        self.names = ['%s->%s' % (u, v) for u, v, _ in self.links]
        self.hosts = topo.hosts(g)
        self.ips = {h: g.nodes[h]['ip'] for h in self.hosts}
        self._path_ids = {}
        self._paths = []
        self._caches = {}
        self.max_hops = 1
        self.packet_bytes = None
        self.down = frozenset()          # link_ids down now (faults)
        self.live = g                    # the graph less those links
        self.set_circuits(frozenset())

    def set_packets(self, packet_bytes):
        """Model packets: a transfer is delivered a packet time per busy
        hop after its path's slowest link has carried it
        (:meth:`delivery_s`). ``packet_bytes``: the packet size in the
        graph's units (the emulated network's is MTU x scale); None:
        the plain fluid model, delivery when the last byte is sent."""
        if packet_bytes is not None and not packet_bytes > 0:
            raise ValueError('packet_bytes must be positive, got %r'
                             % (packet_bytes,))
        self.packet_bytes = packet_bytes

    def delivery_s(self, path_ids, sizes, others=None):
        """(n,) how long after its last byte left the sender each
        transfer is received, s, with packets of ``packet_bytes`` (a
        transfer's own size if smaller): a pipeline of store-and-forward
        hops, in which the path's slowest hop paces the packets and each
        other hop adds one packet's time at its rate. ``others`` (n, H:
        per transfer, > 0 where a hop of its path, as ``table()`` lists
        them, is busy: it carries other transfers, or the transfer fills
        it after one that does) counts only busy hops: a token-bucket
        shaper (the emulator's htb) lets a packet through an idle link at
        once and serialises it only when the link is busy, so a transfer
        alone on its path gets no lag, and one with two busy hops one
        packet time. Zeros without packets."""
        path_ids = np.asarray(path_ids, np.int64)
        if self.packet_bytes is None or not len(path_ids):
            return np.zeros(len(path_ids))
        t = self.table()[path_ids]                        # (n, H)
        hop = np.where(t >= 0, 1.0 / self.capacity[np.maximum(t, 0)], 0.0)
        if others is not None:
            hop = np.where(np.asarray(others) > 0, hop, 0.0)
        bits = np.minimum(np.asarray(sizes, float), self.packet_bytes) * 8.0
        return bits * (hop.sum(axis=1) - hop.max(axis=1))

    def set_circuits(self, circuits):
        """The circuits live from now on (a hybrid fabric's: a set of
        topology.circuit tuples): path_id routes over them as the ToRs
        do. Path ids already given out keep their links."""
        self.circuits = frozenset(circuits)
        self._cache = self._caches.setdefault((self.circuits, self.down), {})

    def set_down(self, down):
        """The links down from now on (a set of topology.link_id names;
        a failed switch is all of its links): path_id routes around
        them as the switches do once the controller has rerouted. Path
        ids already given out keep their links."""
        self.down = frozenset(down)
        self.live = topo.without(self.g, self.down)
        self._cache = self._caches.setdefault((self.circuits, self.down), {})

    def path_id(self, src, dst, sport=0, dport=0, proto=6):
        key = (src, dst) if self.big_switch else (src, dst, sport, dport)
        pid = self._cache.get(key)
        if pid is not None:
            return pid
        if self.big_switch:
            hops = [(src, self._edge(src)), (self._edge(dst), dst)]
        else:
            ft = routing.FiveTuple(self.ips[src], self.ips[dst], proto,
                                   sport, dport)
            hops = routing.path_links(self.live, ft, self.circuits)
        links = tuple(self.index[h] for h in hops)
        pid = self._path_ids.get(links)
        if pid is None:
            pid = self._path_ids[links] = len(self._paths)
            self._paths.append(links)
            self.max_hops = max(self.max_hops, len(links))
        self._cache[key] = pid
        return pid

    def path_ids(self, src, dst, sport, dport):
        """:meth:`path_id` of many flows, hosts given by index into
        ``hosts``: (n,) int64. On a big switch in one pass (ids are given
        to new host pairs in the order they first appear, as one call
        per flow would give them)."""
        hosts = self.hosts
        nh = len(hosts)
        if not self.big_switch or nh * nh > 1 << 22:
            return np.array([self.path_id(hosts[s], hosts[d], sp, dp)
                             for s, d, sp, dp in zip(src, dst, sport, dport)],
                            np.int64)
        pair = getattr(self, '_pair_pid', None)
        if pair is None:
            pair = self._pair_pid = np.full(nh * nh, -1, np.int64)
        code = np.asarray(src, np.int64) * nh + np.asarray(dst, np.int64)
        new = code[pair[code] < 0]
        if len(new):
            u, first = np.unique(new, return_index=True)
            for c in u[np.argsort(first)].tolist():
                pair[c] = self.path_id(hosts[c // nh], hosts[c % nh])
        return pair[code]

    def _edge(self, host):
        return next(iter(self.g[host]))

    def link_bytes(self, path_ids, sizes):
        """(L,) bytes per link of transfers of ``sizes`` bytes on the
        paths ``path_ids`` (a job's iteration load)."""
        t = self.table()[np.asarray(path_ids, np.int64)]
        w = np.broadcast_to(np.asarray(sizes, float)[:, None], t.shape)
        ok = t >= 0
        return np.bincount(t[ok], weights=w[ok], minlength=len(self.links))

    def table(self):
        """(P, H) link indices of every path seen, -1 padded."""
        P, H = len(self._paths), self.max_hops
        t = getattr(self, '_table', None)
        if t is None or t.shape[1] != H:
            t = np.full((0, H), -1, np.int64)
        if len(t) < P:
            new = np.full((P - len(t), H), -1, np.int64)
            for i, p in enumerate(self._paths[len(t):]):
                new[i, :len(p)] = p
            t = np.vstack([t, new])
        self._table = t
        return t
