"""Where an emulated run lost packets: per interface, the packets its tc
priority tree dropped (a full class queue), the packets OVS counted as
dropped on its ports, and the packets the kernel dropped on the way into
OVS's own packet sockets (the userspace datapath reads each port through
one; when ovs-vswitchd falls behind, its receive buffer fills and the
kernel drops there, which neither tc nor OVS's port statistics count).
Read before and after a run; run.json keeps the difference
(``queue_drops_by_interface``, ``ovs_drops_by_port``,
``socket_drops_by_port``), so a result shaped by loss says where the
loss was, not only that TCP retransmitted."""
import json
import re
import subprocess

from .mininet_adapter import interfaces


def parse_qdiscs(text):
    """{interface: packets dropped} from ``tc -s -j qdisc show``: the root
    qdisc of each interface (an htb root counts its leaves' drops)."""
    out = {}
    try:
        rows = json.loads(text or '[]')
    except ValueError:
        return out
    for q in rows:
        if q.get('root') and q.get('dev'):
            out[q['dev']] = out.get(q['dev'], 0) + int(q.get('drops', 0))
    return out


def parse_ovs_interfaces(text):
    """{port: rx_dropped + tx_dropped} from ``ovs-vsctl --format=json
    --columns=name,statistics list interface``."""
    out = {}
    try:
        d = json.loads(text or '{}')
    except ValueError:
        return out
    for name, stats in d.get('data', []):
        if not isinstance(stats, list) or len(stats) != 2:
            continue
        s = dict(stats[1])
        out[name] = int(s.get('rx_dropped', 0)) + int(s.get('tx_dropped', 0))
    return out


_SS_ROW = re.compile(r'^p_raw\s+\d+\s+\d+\s+\*:(\S+)\s.*skmem:\([^)]*\bd(\d+)\)')


def parse_packet_sockets(text):
    """{interface: packets dropped} from ``ss -0 -m -p``: the drop count
    (skmem ``d``) of the packet sockets bound to an interface and owned
    by ovs-vswitchd, summed per interface."""
    out = {}
    for line in (text or '').splitlines():
        if '"ovs-vswitchd"' not in line:
            continue
        m = _SS_ROW.match(line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


def _packet_sockets():
    try:
        r = subprocess.run(['ss', '-0', '-m', '-p'], capture_output=True,
                           text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ''
    return r.stdout


def _tc_root():
    r = subprocess.run(['tc', '-s', '-j', 'qdisc', 'show'],
                       capture_output=True, text=True, timeout=10)
    return r.stdout


def _ovs():
    r = subprocess.run(['ovs-vsctl', '--format=json',
                        '--columns=name,statistics', 'list', 'interface'],
                       capture_output=True, text=True, timeout=10)
    return r.stdout


def ours(counts, names):
    """The counters of the fabric's interfaces (``names``), not the
    machine's own."""
    return {k: v for k, v in counts.items() if k in names}


def snapshot(fab):
    """Drop counters now: tc in the root namespace (switch ports) and in
    every host (its interface), and OVS's per port; the fabric's only. A
    run attached to a fabric another process built (``--attach``) cannot
    enter its hosts: there the switch ports are counted, not the hosts'
    own interfaces."""
    q = parse_qdiscs(_tc_root())
    hosts = getattr(fab, 'hosts', None)
    for h in hosts() if hosts is not None else ():
        q.update(parse_qdiscs(h.cmd('tc -s -j qdisc show')))
    names = set(interfaces(fab.g))
    return {'queue': ours(q, names),
            'ovs': ours(parse_ovs_interfaces(_ovs()), names),
            'socket': ours(parse_packet_sockets(_packet_sockets()), names)}


def delta(before, after):
    """The counters that grew between two snapshots, per kind."""
    out = {}
    for kind in ('queue', 'ovs', 'socket'):
        b, a = before.get(kind, {}), after.get(kind, {})
        out[kind] = {k: v - b.get(k, 0) for k, v in sorted(a.items())
                     if v - b.get(k, 0) > 0}
    return out
