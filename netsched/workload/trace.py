"""Coflow traces in the coflow-benchmark format (Facebook FB2010 trace).

Line 1: ``<ports> <coflows>``. Then one coflow per line:
``<id> <arrival ms> <#mappers> <rack>... <#reducers> <rack>:<MB>...``.
The conventional reading (CoflowSim's, the benchmark's simulator): each
reducer's MB (2^20 bytes) is split equally over the coflow's mappers,
one flow per mapper -> reducer pair, all released at the arrival time.
Bad lines are reported with their line number and the reason.
"""
import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, read_text

MB = 2 ** 20
# racks a trace may have: a header of 10**18 ports passed, and placing
# racks with ``wrap`` then listed every one (the FB trace has 150)
MAX_PORTS = 2 ** 20
# a coflow's flows at most (mappers x reducers): a 30 KB line of 3,000
# mappers and 3,000 reducers is 9 million flows, gigabytes once expanded
MAX_COFLOW_FLOWS = 2 ** 20
# the latest arrival (s) the simulator's clock holds (workload.bounds)
MAX_ARRIVAL_S = 1e8


@dataclass(frozen=True)
class Coflow:
    id: str
    arrival_s: float
    mappers: tuple                  # rack numbers
    reducers: tuple                 # (rack, bytes) pairs

    @property
    def bytes(self):
        return sum(b for _, b in self.reducers)

    def flows(self):
        """(src racks, dst racks, bytes) arrays, the conventional split."""
        m = np.array(self.mappers, np.int64)
        r = np.array([x for x, _ in self.reducers], np.int64)
        b = np.array([y for _, y in self.reducers], float) / len(m)
        return (np.tile(m, len(r)), np.repeat(r, len(m)),
                np.repeat(b, len(m)))


def _int(path, n, tok, what, lo=0, hi=None):
    try:
        v = int(tok)
    except ValueError:
        raise ConfigError('%s:%d: %s must be an integer, got %r'
                          % (path, n, what, tok)) from None
    if v < lo or (hi is not None and v > hi):
        raise ConfigError('%s:%d: %s must be in %d..%s, got %d'
                          % (path, n, what, lo, hi if hi is not None else
                             'inf', v))
    return v


TRACE_SPORT = 40000       # source port of a trace's k-th network flow:
TRACE_PORTS = 25536       # TRACE_SPORT + k mod TRACE_PORTS (both backends)


# One error per malformed field
def read(path, limit=None, time_scale=1.0, skip=0, size_scale=1.0,  # noqa: C901
         start_s=None):
    """(ports, [Coflow]) sorted by arrival. ``skip`` drops the first N
    coflows of the file (in file order), ``limit`` keeps the next N;
    arrival times are multiplied by ``time_scale`` and bytes by
    ``size_scale``. Arrivals are shifted so that the first coflow kept
    arrives at ``start_s``; without it (None), at 0 when ``skip`` > 0
    (a slice from the middle of a trace does not wait for the hours
    before it) and not at all otherwise (the file's own times)."""
    # lines as an editor counts them: splitlines() also split at \f, \v
    # and \u2028, and the errors named the wrong line
    lines = read_text(path, 'trace ').split('\n')
    if not lines or not lines[0].strip():
        raise ConfigError('%s:1: empty trace; expected "<ports> <coflows>"'
                          % path)
    head = lines[0].split()
    if len(head) != 2:
        raise ConfigError('%s:1: expected "<ports> <coflows>", got %r'
                          % (path, lines[0]))
    ports = _int(path, 1, head[0], 'ports', 1, MAX_PORTS)
    count = _int(path, 1, head[1], 'coflows', 0)
    out, seen = [], set()
    skipped = 0
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        if limit is not None and len(out) >= limit:
            break
        if skipped < skip:
            skipped += 1
            continue
        tok = line.split()
        if len(tok) < 5:
            raise ConfigError('%s:%d: too few fields for a coflow (need id, '
                              'arrival, mappers, reducers)' % (path, n))
        cid = tok[0]
        if cid in seen:
            raise ConfigError('%s:%d: coflow id %s appears twice'
                              % (path, n, cid))
        seen.add(cid)
        arrival = _int(path, n, tok[1], 'arrival ms')
        nm = _int(path, n, tok[2], 'number of mappers', 1)
        if len(tok) < 3 + nm + 1:
            raise ConfigError('%s:%d: says %d mappers but the line ends '
                              'after %d' % (path, n, nm, len(tok) - 3))
        mappers = tuple(_int(path, n, x, 'mapper rack', 0, ports - 1)
                        for x in tok[3:3 + nm])
        nr = _int(path, n, tok[3 + nm], 'number of reducers', 1)
        red = tok[4 + nm:]
        if len(red) != nr:
            raise ConfigError('%s:%d: says %d reducers, lists %d'
                              % (path, n, nr, len(red)))
        if nm * nr > MAX_COFLOW_FLOWS:
            raise ConfigError('%s:%d: coflow %s: %d mappers x %d reducers is '
                              '%d flows; at most %d a coflow'
                              % (path, n, cid, nm, nr, nm * nr,
                                 MAX_COFLOW_FLOWS))
        reducers = []
        for x in red:
            rack, sep, mb = x.partition(':')
            if not sep:
                raise ConfigError('%s:%d: reducer %r is not <rack>:<MB>'
                                  % (path, n, x))
            r = _int(path, n, rack, 'reducer rack', 0, ports - 1)
            try:
                size = float(mb)
            except ValueError:
                raise ConfigError('%s:%d: reducer %s: MB %r is not a number'
                                  % (path, n, rack, mb)) from None
            if not size >= 0 or size == float('inf'):
                raise ConfigError('%s:%d: reducer %s: MB must be >= 0, got %s'
                                  % (path, n, rack, mb))
            if not math.isfinite(size * MB * size_scale):
                raise ConfigError('%s:%d: reducer %s: %s MB is too large'
                                  % (path, n, rack, mb))
            reducers.append((r, size * MB * size_scale))
        # a number of ms past float's range: OverflowError in the division
        if arrival > 1e300 or not math.isfinite(arrival / 1000.0
                                                * time_scale):
            raise ConfigError('%s:%d: arrival ms %d is too large'
                              % (path, n, arrival))
        if arrival / 1000.0 * time_scale > MAX_ARRIVAL_S:
            raise ConfigError('%s:%d: arrival ms %d x time_scale %g is past '
                              'the %g s the simulator can hold'
                              % (path, n, arrival, time_scale,
                                 MAX_ARRIVAL_S))
        out.append(Coflow(cid, arrival / 1000.0 * time_scale, mappers,
                          tuple(reducers)))
    if limit is None and skipped + len(out) != count:
        raise ConfigError('%s:1: header says %d coflows, the file has %d'
                          % (path, count, skipped + len(out)))
    if skip and not out:
        raise ConfigError('%s: skip: %d leaves no coflow (the file has %d)'
                          % (path, skip, skipped))
    out.sort(key=lambda c: c.arrival_s)
    if start_s is None and skip:
        start_s = 0.0
    if start_s is not None and out:
        t0 = out[0].arrival_s
        out = [Coflow(c.id, c.arrival_s - t0 + start_s, c.mappers,
                      c.reducers) for c in out]
    return ports, out


def load(spec):
    """A TraceSpec's coflows: (ports, [Coflow])."""
    return read(spec.path, spec.limit, spec.time_scale, spec.skip,
                spec.size_scale, spec.start_s)


def rack_hosts(ports, hosts, racks='strict', where='trace'):
    """The host each of the trace's racks runs on: rack i on the i-th
    host (``strict``: the topology needs as many hosts as the trace has
    ports) or on host i mod the number of hosts (``wrap``)."""
    if racks == 'wrap':
        return [hosts[r % len(hosts)] for r in range(ports)]
    check_ports(ports, hosts, where)
    return list(hosts[:ports])


def network_flows(c, racks, big_switch=False):
    """A coflow's flows that cross the network, in the conventional
    split's order: (sources, destinations, bytes) as arrays. Flows
    between two racks on one host (unless the fabric is a big switch,
    where every rack has a port of its own) and empty flows are left
    out, on both backends."""
    src, dst, size = c.flows()
    h = np.array(racks, dtype=object)
    src, dst = h[src], h[dst]
    keep = size > 0
    if not big_switch:
        keep &= src != dst
    return src[keep], dst[keep], size[keep]


def check_ports(ports, hosts, where='trace'):
    """A trace's rack i runs on the topology's i-th host: there must be
    as many hosts as the trace has ports."""
    if ports > len(hosts):
        raise ConfigError('%s: the trace has %d ports but the topology only '
                          '%d hosts' % (where, ports, len(hosts)))
