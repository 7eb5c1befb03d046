"""What an emulated run measured of its own fidelity, as figures: the
datapath's delay (the agents' probes, host.probes), the agents' lateness
against the plan, the controller's time to apply its decisions, and
TCP's losses. netsched.pipeline.verdict judges them.

A probe's *excess* is its one-way delay beyond what the emulated links
allow it: on every hop, its own serialisation and the burst the link's
token bucket may send ahead of it (its class is above every scheduling
class, so nothing else waits ahead of it). What is left is time the
userspace datapath or the kernel held it, which the emulated hardware
would not have.
"""
import statistics

import numpy as np

from .. import routing
from .. import topology as topo
from ..qos import PROBE_PORT
from .tc import burst_bytes

PROBE_INTERVAL_S = 0.05
PROBE_FRAME = 60                # bytes on the wire: the minimum frame


def probe_plan(g, plan, host, hosts):
    """A host's probe settings for its agent: its peers are the hosts it
    sends data to (so the probes cross the data's paths), and its phase
    spreads the hosts' probes over the interval."""
    peers = sorted({c.dst for c in plan.conns if c.src == host})
    i = sorted(hosts).index(host)
    return {'port': PROBE_PORT, 'interval_s': PROBE_INTERVAL_S,
            'phase_s': PROBE_INTERVAL_S * i / max(1, len(hosts)),
            'peers': [g.nodes[p]['ip'] for p in peers]}


def allowance_s(g, src, dst, rate_bps, mtu):
    """The most a probe from host ``src`` to host ``dst`` may take on
    the emulated links (its path by the router's hash)."""
    ft = routing.FiveTuple(g.nodes[src]['ip'], g.nodes[dst]['ip'],
                           routing.UDP, PROBE_PORT, PROBE_PORT)
    return sum((PROBE_FRAME + burst_bytes(mtu)) * 8.0 / rate_bps(u, v)
               for u, v in routing.path_links(g, ft))


def ideal_scale(g, plan):
    """The run's time scale as the plan sets it, whatever the datapath
    did: the median over coflows of each one's time alone on the
    fabric, its busiest host's bytes in or out at that host's link rate
    (a lower bound). A saturated datapath stretches every measured
    completion time, so measured times would hide the lags."""
    out, inn = {}, {}
    for t in plan.tasks:
        if t.kind != 'send' or not t.bytes:
            continue
        o = out.setdefault(t.coflow, {})
        o[t.host] = o.get(t.host, 0.0) + t.bytes
        i = inn.setdefault(t.coflow, {})
        i[t.dst] = i.get(t.dst, 0.0) + t.bytes

    def rate(h):
        return max(d['capacity_bps'] for _, _, d in g.edges(h, data=True))
    times = [max(max(b * 8.0 / rate(h) for h, b in out[c].items()),
                 max(b * 8.0 / rate(h) for h, b in inn[c].items()))
             for c in out]
    return statistics.median(times) if times else None


def _quantiles(xs, qs=(50, 99)):
    if not len(xs):
        return None
    a = np.asarray(xs, float)
    out = {'p%d' % q: round(float(np.percentile(a, q)), 3) for q in qs}
    out['max'] = round(float(a.max()), 3)
    return out


def datapath(g, reports, rate_bps, mtu):
    """Figures from the agents' probe reports ({receiving host: report of
    host.probes.Probes.stop}): probes sent and received, their one-way
    delays and their excess, in ms."""
    by_ip = topo.host_by_ip(g)
    sent = received = 0
    delays, excess = [], []
    allow = {}
    for dst, r in sorted(reports.items()):
        if not r:
            continue
        sent += sum(r['sent'].values())
        received += sum(r['received'].values())
        for ip, us in r['delays_us'].items():
            src = by_ip.get(ip)
            if src is None:
                continue
            if (src, dst) not in allow:
                allow[src, dst] = allowance_s(g, src, dst, rate_bps, mtu)
            d = np.asarray(us, float) / 1e3
            delays.append(d)
            excess.append(d - allow[src, dst] * 1e3)
    d = np.concatenate(delays) if delays else np.array([])
    x = np.concatenate(excess) if excess else np.array([])
    return {'probes_sent': sent, 'probes_received': received,
            'probes_lost': max(0, sent - received),
            'delay_ms': _quantiles(d), 'excess_ms': _quantiles(x),
            'allowance_ms_max': round(max(allow.values(), default=0) * 1e3,
                                      3)}


def agents(late):
    """Figures from the agents' wake-up delays ({host: {'n', 'max',
    'kept'}}, microseconds, one per wake-up for the timers due by then):
    how late the agents acted on the plan, in ms, with the mean."""
    kept = np.asarray([x for r in late.values() if r for x in r['kept']],
                      float) / 1e3
    n = sum(r['n'] for r in late.values() if r)
    q = _quantiles(kept)
    if q is not None:
        q['max'] = round(max(r['max'] for r in late.values() if r) / 1e3, 3)
        q['mean'] = round(float(kept.mean()), 3)
    return {'wakeups': n, 'late_ms': q}


def controller(applied_ms, decisions):
    """The controller's decisions and their time from the first report
    to the last barrier reply, in ms."""
    q = _quantiles(applied_ms, (50, 95))
    return {'decisions': decisions, 'applied_ms': q}


def tcp(info):
    """TCP's losses as the run's backend_info has them."""
    rto = info.get('tcp_rto_recovery_s_by_connection') or {}
    t = info.get('tcp_timeouts_by_host') or {}
    return {'timeouts': sum(v or 0 for v in t.values()),
            'rto_recovery_s': round(sum(rto.values()), 3),
            'retransmits': info.get('tcp_retransmits'),
            'spurious_rtos': info.get('tcp_spurious_rtos'),
            'dsacks': info.get('tcp_dsacks'),
            'drops': (info.get('queue_drops') or 0)
            + sum((info.get('ovs_drops_by_port') or {}).values())
            + sum((info.get('socket_drops_by_port') or {}).values())}
