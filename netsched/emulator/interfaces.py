"""Interface set-up of a running Mininet network: MTU, offloads off
(TCP through the userspace datapath stalls with them on), the tc
priority trees on every link egress, per-host TCP settings and static
ARP. One batch per namespace, one for the root namespace."""
import os
import shlex
import subprocess
import tempfile

from . import tc
from .. import topology as topo
from ..errors import NetschedError
from .mininet_adapter import intf_name


def iface_script(intfs, queues, mtu, queue_packets, fair_queues):
    """Shell lines for MTU and offloads, plus tc batch lines, for a node's
    [(interface, emulated rate bit/s)]."""
    sh, lines = [], []
    for intf, rate in intfs:
        sh.append('ip link set dev %s mtu %d' % (intf, mtu))
        sh.append('ethtool -K %s tx off tso off gso off gro off '
                  '>/dev/null 2>&1' % intf)
        lines += tc.tc_batch(intf, rate, queues, mtu, queue_packets,
                             fair_queues)
    return sh, lines


# what a host's set-up prints when a measuring knob did not take (a
# sysctl the kernel refused, a route it would not change)
KNOB_FAILED = 'netsched-knob-failed:'


def route_options(rto_min_ms=None, initcwnd=None, cwnd_clamp=None):
    """Per-route TCP settings for every host, from the experiment's
    measuring knobs ``emulator.tcp``: ``rto_min_ms`` (minimum
    retransmission timeout), ``initcwnd`` (initial congestion window,
    packets) and ``cwnd_clamp`` (the most packets a connection may have
    in flight: ``cwnd lock``); '' when none is set."""
    opts = []
    if rto_min_ms:
        opts.append('rto_min %dms' % int(rto_min_ms))
    if initcwnd:
        opts.append('initcwnd %d' % int(initcwnd))
    if cwnd_clamp:
        opts.append('cwnd lock %d' % int(cwnd_clamp))
    return ' '.join(opts)


def host_commands(host_tcp=None):
    """Shell lines that set up TCP in one host's namespace: what every
    run has, then the experiment's measuring knobs (``host_tcp``:
    {'rto_min_ms', 'initcwnd', 'cwnd_clamp', 'sysctl': ((key, value),
    ...)}, pipeline.knobs.Knobs.host_tcp; None: none). A knob the kernel
    refuses prints KNOB_FAILED, which fails the set-up."""
    t = host_tcp or {}
    # a persistent connection that idles between transfers (gradient
    # exchanges) keeps its window, as data-center training stacks are
    # set up to; per network namespace
    sh = ['sysctl -qw net.ipv4.tcp_slow_start_after_idle=0']
    for k, v in t.get('sysctl', ()):
        kv = shlex.quote('%s=%s' % (k, v))
        sh.append('sysctl -qw %s || echo %s %s' % (kv, KNOB_FAILED, kv))
    opts = route_options(t.get('rto_min_ms'), t.get('initcwnd'),
                         t.get('cwnd_clamp'))
    if opts:
        sh.append('ip route show | while read r; do ip route change $r %s '
                  '|| echo %s route; done' % (opts, KNOB_FAILED))
    return sh


def configure(net, g, scale, queues, mtu, queue_packets, fair_queues,
              host_tcp=None):
    """Configure every interface of the fabric ``net`` built from ``g``;
    link rates are capacity_bps / scale. ``host_tcp``: the measuring
    knobs set in every host (host_commands)."""
    per_node = {}
    for u, v, d in g.edges(data=True):
        rate = d['capacity_bps'] / scale
        for n in (u, v):
            per_node.setdefault(n, []).append(
                (intf_name(n, d['ports'][n]), rate))
    root_sh, root_tc = [], []
    for n, intfs in sorted(per_node.items()):
        sh, lines = iface_script(intfs, queues, mtu, queue_packets,
                                 fair_queues)
        if g.nodes[n]['role'] == topo.HOST:
            _run_in_host(net.get(n), sh + host_commands(host_tcp), lines)
        else:
            root_sh += sh
            root_tc += lines
    run_checked(['sh', '-c', '; '.join(root_sh)], 'interface set-up')
    tc_batch_file(root_tc, lambda args: run_checked(args, 'tc set-up'))


def static_arp(net, g):
    hosts = topo.hosts(g)
    for n in hosts:
        cmds = ['ip neigh replace %s lladdr %s dev %s nud permanent'
                % (g.nodes[m]['ip'], g.nodes[m]['mac'], intf_name(n, 0))
                for m in hosts if m != n]
        if cmds:
            net.get(n).cmd('; '.join(cmds))


def _run_in_host(h, sh, lines):
    with tempfile.NamedTemporaryFile('w', suffix='.tc', delete=False) as f:
        f.write('\n'.join(lines) + '\n')
    try:
        out = h.cmd('; '.join(sh) + '; tc -batch %s; echo rc=$?' % f.name)
    finally:
        os.unlink(f.name)
    if 'rc=0' not in out:
        raise NetschedError('tc set-up failed in host %s: %s'
                            % (h.name, out.strip()[-300:]))
    if KNOB_FAILED in out:
        raise NetschedError('a measuring knob (emulator.tcp, host_sysctl) '
                            'did not take in host %s: %s'
                            % (h.name, out.strip()[-300:]))


def run_checked(args, what):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise NetschedError('%s failed: %s' % (what, (r.stderr or
                                                      r.stdout)[-400:]))
    return r


def tc_batch_file(lines, run):
    with tempfile.NamedTemporaryFile('w', suffix='.tc', delete=False) as f:
        f.write('\n'.join(lines) + '\n')
    try:
        run(['tc', '-batch', f.name])
    finally:
        os.unlink(f.name)
