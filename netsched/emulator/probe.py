"""Watching TCP inside a running emulation, read-only: the Mininet hosts
of the live runs (from their run records), ``ss -tin`` samples in their
namespaces, the TCP headers of every packet on the switches' ports, and
from those the time each data packet spent inside the fabric and the
silences in each connection. ``benchmarks/tcp_probe.py`` is its command
line (docs/emulation.md). Times are CLOCK_MONOTONIC, the clock of the
run's decision log."""
import collections
import glob
import json
import os
import socket
import struct
import subprocess
import time

from .runstate import RUNS_DIR

RUNS = RUNS_DIR
ETH_P_ALL, ETH_P_IP = 0x0003, 0x0800


def host_pids(want, runs=RUNS):
    """{host: pid} of the Mininet hosts named in ``want`` in the run
    records under ``runs``."""
    out = {}
    for f in sorted(glob.glob(os.path.join(runs, '*', 'state.json'))):
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (OSError, ValueError):
            continue
        for p in d.get('pids', []):
            w = p.get('what', '')
            if w.startswith('mininet host ') and w.split()[-1] in want:
                out[w.split()[-1]] = p['pid']
    return out


def sample_ss(out, hosts, seconds, every):
    end = time.monotonic() + seconds
    pids = {}
    with open(out, 'w') as f:
        while time.monotonic() < end:
            if not pids:
                pids = host_pids(set(hosts))
                if not pids:
                    time.sleep(0.05)
                    continue
            for h, pid in sorted(pids.items()):
                r = subprocess.run(['nsenter', '-t', str(pid), '-n', 'ss',
                                    '-tinH', 'state', 'established'],
                                   capture_output=True, text=True)
                if r.returncode:
                    del pids[h]                 # its run ended
                    continue
                f.write('%.4f %s\n%s' % (time.monotonic(), h, r.stdout))
            f.flush()
            time.sleep(every)


def parse_packet(frame):
    """(src, sport, dst, dport, seq, ack, payload bytes, dscp, flags, IP
    id) of an Ethernet frame carrying IPv4 TCP, else None."""
    if len(frame) < 34 or struct.unpack('!H', frame[12:14])[0] != ETH_P_IP:
        return None
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != socket.IPPROTO_TCP or len(ip) < ihl + 14:
        return None
    total, ip_id = struct.unpack('!HH', ip[2:6])
    tcp = ip[ihl:]
    sport, dport, seq, ack = struct.unpack('!HHII', tcp[:12])
    doff = (tcp[12] >> 4) * 4
    return (socket.inet_ntoa(ip[12:16]), sport, socket.inet_ntoa(ip[16:20]),
            dport, seq, ack, total - ihl - doff, ip[1] >> 2, tcp[13], ip_id)


SO_TIMESTAMPNS = getattr(socket, 'SO_TIMESTAMPNS', 35)
TIMESPEC = struct.Struct('qq')


def monotonic_offset():
    """CLOCK_REALTIME - CLOCK_MONOTONIC now (s): the kernel stamps
    packets in real time, the run logs in monotonic time."""
    a = time.monotonic()
    r = time.time()
    b = time.monotonic()
    return r - (a + b) / 2


def capture(out, ips, seconds):
    """Every packet's time is the kernel's, when it stamped it on the
    interface (SO_TIMESTAMPNS), not when this loop read it: a Python
    reader falls behind a busy fabric by tens of milliseconds, and a
    timestamp taken at read time would put that lag into every
    per-hop delay."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.ntohs(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.settimeout(0.5)
    end = time.monotonic() + seconds
    offset, next_offset = monotonic_offset(), time.monotonic() + 1.0
    cmsg_space = socket.CMSG_SPACE(TIMESPEC.size)
    with open(out, 'w') as f:
        while time.monotonic() < end:
            try:
                frame, anc, _, addr = s.recvmsg(256, cmsg_space)
            except socket.timeout:
                continue
            now = time.monotonic()
            if now > next_offset:
                offset, next_offset = monotonic_offset(), now + 1.0
            t = now
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS \
                        and len(data) >= TIMESPEC.size:
                    sec, ns = TIMESPEC.unpack_from(data)
                    t = sec + ns * 1e-9 - offset
            p = parse_packet(frame)
            if p is None or (ips and p[0] not in ips and p[2] not in ips):
                continue
            f.write('%.6f %s %d %s:%d>%s:%d %d %d %d %d %x %d\n'
                    % ((t, addr[0], addr[2]) + p))


def read_packets(path):
    """[(time, interface, flow 'src:port>dst:port', seq, payload, IP
    id)]."""
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 10:
                continue
            out.append((float(w[0]), w[1], w[3], int(w[4]), int(w[6]),
                        int(w[9]) if len(w) > 9 else 0))
    return out


def delays(packets, over):
    """(slow, silences): data packets (each transmission on its own: a
    retransmission has another IP id) whose first and last sighting are
    more than ``over`` s apart, as (first time, delay, flow, seq); and
    per flow the gaps over ``over`` s between data packets at the
    interface where its packets were last seen, as (flow, start, gap)."""
    seen = collections.defaultdict(list)    # (flow, seq, id) -> [(t, if)]
    for t, intf, flow, seq, n, ip_id in packets:
        if n > 0:
            seen[(flow, seq, ip_id)].append((t, intf))
    slow, last_intf = [], {}
    for (flow, seq, _), ts in seen.items():
        ts.sort()
        if ts[-1][0] - ts[0][0] > over:
            slow.append((ts[0][0], ts[-1][0] - ts[0][0], flow, seq))
        last_intf.setdefault(flow, collections.Counter())[ts[-1][1]] += 1
    silences = []
    for flow, cnt in last_intf.items():
        exit_intf = cnt.most_common(1)[0][0]
        ts = sorted(t for t, intf, f, _, n, _ in packets
                    if f == flow and intf == exit_intf and n > 0)
        silences += [(flow, a, b - a) for a, b in zip(ts, ts[1:])
                     if b - a > over]
    return sorted(slow), sorted(silences, key=lambda x: (x[1], x[0]))
