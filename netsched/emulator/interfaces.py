"""Interface set-up of a running Mininet network: MTU, offloads off
(TCP through the userspace datapath stalls with them on), the tc
priority trees on every link egress, per-host TCP settings and static
ARP. One batch per namespace, one for the root namespace."""
import os
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


def route_options():
    """Per-route TCP settings for every host, from the measuring knobs
    NETSCHED_RTO_MIN_MS (minimum retransmission timeout),
    NETSCHED_INITCWND (initial congestion window, packets) and
    NETSCHED_CWND_CLAMP (the most packets a connection may have in
    flight: ``cwnd lock``); '' when none is set."""
    opts = []
    if os.environ.get('NETSCHED_RTO_MIN_MS'):
        opts.append('rto_min %dms' % int(os.environ['NETSCHED_RTO_MIN_MS']))
    if os.environ.get('NETSCHED_INITCWND'):
        opts.append('initcwnd %d' % int(os.environ['NETSCHED_INITCWND']))
    if os.environ.get('NETSCHED_CWND_CLAMP'):
        opts.append('cwnd lock %d' % int(os.environ['NETSCHED_CWND_CLAMP']))
    return ' '.join(opts)


def configure(net, g, scale, queues, mtu, queue_packets, fair_queues):
    """Configure every interface of the fabric ``net`` built from ``g``;
    link rates are capacity_bps / scale."""
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
            # a persistent connection that idles between transfers
            # (gradient exchanges) keeps its window, as data-center
            # training stacks are set up to; per network namespace
            sh.append('sysctl -qw net.ipv4.tcp_slow_start_after_idle=0')
            # measuring knob: NETSCHED_HOST_SYSCTL='key=value ...' (e.g.
            # net.ipv4.tcp_early_retrans=0), set in every host's namespace
            for kv in os.environ.get('NETSCHED_HOST_SYSCTL', '').split():
                sh.append('sysctl -qw %s' % kv)
            opts = route_options()
            if opts:
                sh.append('ip route show | while read r; do ip route change '
                          '$r %s; done' % opts)
            _run_in_host(net.get(n), sh, lines)
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
