"""Measurements on a running emulated fabric: reachability, and iperf3
TCP flows with known 5-tuples (fixed client ports), so that the ECMP path
and the max-min fair share of every flow are known exactly."""
import json
import subprocess
import time

import numpy as np

from .. import fluid, routing
from .. import topology as topo
from ..errors import NetschedError



def goodput_efficiency(mtu):
    """Best TCP goodput per unit of htb rate (htb counts L2 bytes)."""
    return (mtu - 52) / (mtu + 14)


def reachability(fab):
    """Ping every ordered host pair once; returns the failing pairs."""
    names = topo.hosts(fab.g)
    by_ip = topo.host_by_ip(fab.g)
    failed = []
    for src in names:
        ips = ' '.join(fab.ip(d) for d in names if d != src)
        out = fab.host(src).cmd(
            'for ip in %s; do ping -c1 -W1 -q $ip >/dev/null 2>&1 '
            '&& echo ok $ip || echo fail $ip; done' % ips)
        failed += [(src, by_ip[line.split()[1]]) for line in out.splitlines()
                   if line.startswith('fail ')]
    return failed


class Flow:
    def __init__(self, src, dst, sport, dport, duration_s, start_s=0.0,
                 cls=None):
        self.src, self.dst = src, dst
        self.sport, self.dport = sport, dport
        self.duration_s, self.start_s = duration_s, start_s
        self.cls = cls
        self.series_bps = []        # receiver side, 1 s intervals
        self.retransmits = None

    def five_tuple(self, g):
        return routing.FiveTuple(g.nodes[self.src]['ip'],
                                 g.nodes[self.dst]['ip'], routing.TCP,
                                 self.sport, self.dport)

    def mean_bps(self, skip_s=2, until_s=None):
        sel = self.series_bps[skip_s:until_s]
        return sum(sel) / len(sel) if sel else 0.0


def run_iperf(fab, flows, timeout_s=None):
    """Run iperf3 flows concurrently (start_s offsets from a common
    start); fills each flow's series_bps. Processes are stopped by pid."""
    servers, clients = [], []
    for f in flows:
        servers.append(fab.popen(f.dst, ['iperf3', '-s', '-1', '-J', '-p',
                                         str(f.dport)],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT))
    time.sleep(0.5)
    t0 = time.monotonic()
    for f in sorted(flows, key=lambda f: f.start_s):
        while time.monotonic() - t0 < f.start_s:
            time.sleep(0.01)
        clients.append((f, fab.popen(
            f.src, ['iperf3', '-c', fab.ip(f.dst), '-p', str(f.dport),
                    '--cport', str(f.sport), '-t', str(f.duration_s), '-J'],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
    limit = timeout_s or max(f.start_s + f.duration_s for f in flows) + 15
    for f, c in clients:
        try:
            out = c.communicate(timeout=max(1, limit - (time.monotonic() - t0)))[0]
            f.retransmits = _json(out)['end']['sum_sent'].get('retransmits')
        except (subprocess.TimeoutExpired, ValueError, KeyError):
            pass
    for f, s in zip(flows, servers):
        try:
            out = s.communicate(timeout=5)[0]
            f.series_bps = [i['sum']['bits_per_second']
                            for i in _json(out)['intervals']
                            if i['sum']['seconds'] > 0.5]
        except (subprocess.TimeoutExpired, ValueError, KeyError) as e:
            raise NetschedError('iperf3 %s->%s gave no result: %s'
                                % (f.src, f.dst, e)) from None
    return flows


def _json(raw):
    text = raw.decode(errors='replace')
    return json.loads(text[text.index('{'):])


def fair_shares(fab, flows):
    """Max-min fair share (emulated bit/s, L2) of each flow over the
    directed links of its ECMP path (netsched.fluid, one class)."""
    paths = [routing.path_links(fab.g, f.five_tuple(fab.g)) for f in flows]
    links = sorted({l for p in paths for l in p}, key=str)
    index = {l: i for i, l in enumerate(links)}
    table = np.full((len(paths), max(map(len, paths), default=1)), -1)
    for i, p in enumerate(paths):
        table[i, :len(p)] = [index[l] for l in p]
    rate, _ = fluid.allocate(table, np.arange(len(paths)),
                             np.zeros(len(paths), np.int64),
                             np.array([fab.rate_bps(*l) for l in links]))
    return rate
