"""The datapath's capacity on this machine, for ``scale: auto``.

The userspace datapath forwards every packet of the fabric from one
thread, so what it can carry is a number of packet hops a second (a
packet received by a switch port is one hop), and it depends on the
fabric: the thread polls every port of every bridge. So the capacity is
measured on the experiment's own topology: the fabric comes up with its
links at Mininet's top rate (1 Gbit/s, so the links do not bind),
greedy TCP flows run between host pairs across it, a permutation that
crosses the core, and the switch ports' receive counters over the
measured seconds give the packet hops a second the datapath carried
when it was the bottleneck.

The figure is kept per machine (this kernel, CPU count and Open vSwitch
version), topology and MTU, in ``CACHE``, for ``MAX_AGE_S``; a load on
the machine at measurement time lowers it, which is what a run at that
time would meet (the load average is recorded beside it).
"""
import json
import os
import platform
import subprocess
import time

from .. import topology as topo
from ..control.spec import ControllerSpec
from ..errors import NetschedError, PrerequisiteError

CACHE = os.environ.get('NETSCHED_CALIBRATION') or (
    '/var/lib/netsched/datapath.json' if os.geteuid() == 0 else
    os.path.join(os.path.expanduser('~'), '.cache', 'netsched',
                 'datapath.json'))
MAX_AGE_S = 7 * 24 * 3600
MEASURE_S = 3.0             # greedy flows' measured seconds
WARM_S = 1.0                # and before, while TCP opens its windows
LINK_MBPS = 1000.0          # Mininet's top rate: the links do not bind
MAX_FLOWS = 8
PORT_BASE = 47100


def machine():
    """What the capacity is a property of, besides the fabric."""
    try:
        ovs = subprocess.run(['ovs-vswitchd', '--version'],
                             capture_output=True, text=True,
                             timeout=10).stdout.split('\n')[0].split()[-1]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        ovs = None
    return {'kernel': platform.release(), 'cpus': os.cpu_count(),
            'ovs': ovs}


def _key(topology, mtu):
    m = machine()
    return '%s|%s|%s|%s|mtu=%d' % (m['kernel'], m['cpus'], m['ovs'],
                                   topology, mtu)


def _read():
    try:
        with open(CACHE) as f:
            d = json.load(f)
        return d if isinstance(d, dict) else {}
    except (OSError, ValueError):
        return {}


def cached(topology, mtu, now=None):
    """The measurement of ``topology`` at ``mtu`` on this machine if one
    is fresh, else None."""
    rec = _read().get(_key(topology, mtu))
    now = time.time() if now is None else now
    if not isinstance(rec, dict) or not isinstance(
            rec.get('hops_per_s'), (int, float)) or \
            now - rec.get('measured_at', 0) > MAX_AGE_S:
        return None
    return rec


def store(topology, mtu, rec):
    d = _read()
    d[_key(topology, mtu)] = rec
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    tmp = CACHE + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(d, f, indent=1, sort_keys=True)
    os.replace(tmp, CACHE)


def can_measure():
    """Root, Mininet and a running Open vSwitch: what a measurement
    needs (the emulator's own prerequisites)."""
    from . import ovs
    if os.geteuid() != 0:
        return False
    try:
        import mininet  # noqa: F401
    except ImportError:
        return False
    return ovs.running()


def pairs(g, n=MAX_FLOWS):
    """Up to ``n`` (src, dst) host pairs, each host sending once and
    receiving once, every pair as far apart as the fabric allows (a
    host's partner half the host list away: across the core of a
    fat-tree, across the bottleneck of a dumbbell)."""
    hs = topo.hosts(g)
    if len(hs) < 2:
        raise NetschedError('calibration needs two hosts; the topology has '
                            '%d' % len(hs))
    half = len(hs) // 2
    out = [(hs[i], hs[(i + half) % len(hs)]) for i in range(len(hs))]
    step = max(1, len(out) // n)
    return out[::step][:n]


def _rx_packets(fab):
    total = 0
    for sw in fab.net.switches:
        for intf in sw.intfList():
            if intf.name == 'lo':
                continue
            try:
                with open('/sys/class/net/%s/statistics/rx_packets'
                          % intf.name) as f:
                    total += int(f.read())
            except (OSError, ValueError):
                pass
    return total


def measure(topology, mtu, say=print):
    """Bring up ``topology`` (a topology spec) with unbinding links, run
    greedy flows across it and return the measurement (packet hops a
    second, goodput, flows, load average, when); stored in the cache."""
    from .fabric import Fabric
    if not can_measure():
        raise PrerequisiteError('scale: auto needs this machine\'s datapath '
                                'measured once, which needs root and a '
                                'running Open vSwitch (make setup)')
    g = topo.parse_spec(topology)
    flows = pairs(g)
    say('calibrating the datapath on %s, MTU %d (%d greedy flows, %.0f s; '
        'kept for %d days)' % (topology, mtu, len(flows),
                               WARM_S + MEASURE_S, MAX_AGE_S // 86400))
    with Fabric(ControllerSpec.for_link(g, LINK_MBPS), mtu=mtu,
                controller=True) as fab:
        procs = []
        for i, (src, dst) in enumerate(flows):
            port = PORT_BASE + i
            procs.append(fab.popen(dst, ['iperf3', '-s', '-1', '-p',
                                         str(port)],
                                   stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL))
        time.sleep(0.5)
        for i, (src, dst) in enumerate(flows):
            procs.append(fab.popen(src, [
                'iperf3', '-c', fab.ip(dst), '-p', str(PORT_BASE + i),
                '-t', str(WARM_S + MEASURE_S + 1.0)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(WARM_S)
        n0, t0 = _rx_packets(fab), time.monotonic()
        time.sleep(MEASURE_S)
        n1, t1 = _rx_packets(fab), time.monotonic()
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
    hops = (n1 - n0) / (t1 - t0)
    if hops <= 0:
        raise NetschedError('calibration on %s: the switches received no '
                            'packet while the flows ran' % topology)
    rec = {'hops_per_s': round(hops, 1), 'flows': len(flows),
           'measured_s': round(t1 - t0, 3), 'measured_at': time.time(),
           'when': time.strftime('%Y-%m-%d %H:%M:%S'),
           'load_avg': round(os.getloadavg()[0], 2), **machine()}
    store(topology, mtu, rec)
    say('datapath: %.0f packet hops a second (load average %.2f)'
        % (hops, rec['load_avg']))
    return rec
