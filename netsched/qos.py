"""Strict-priority classes on every link egress, keyed on DSCP.

Class 0 is the highest. Class c is carried as DSCP CS(7-c) (56, 48, ...,
0), whatever the number of classes Q; on the wire a switch reads the
three class-selector bits and puts precedence p in class min(7-p, Q-1),
so unmarked traffic (DSCP 0) lands in the lowest class.

Each egress interface gets an htb tree (measured in DESIGN.md, the only
strict priority that works with OVS's userspace datapath): a root class
at the link rate and one child per class with a tiny guaranteed rate,
ceil = link rate and htb ``prio c``. htb lends spare bandwidth in prio
order, which is strict priority, and it is work-conserving. A pfifo
leaf under every class bounds its queue; u32 filters on the TOS byte
pick the class. Everything is emitted as ``tc -batch`` lines.
"""
from .errors import ConfigError

MAX_CLASSES = 8          # htb prio ranges over 0..7
ETH_HEADER = 14


def check_queues(q):
    if not isinstance(q, int) or isinstance(q, bool) or not 1 <= q <= MAX_CLASSES:
        raise ConfigError('queues must be an integer in 1..%d, got %r'
                          % (MAX_CLASSES, q))
    return q


def class_dscp(cls, q=MAX_CLASSES):
    """DSCP value that carries priority class cls (0 = highest)."""
    check_queues(q)
    if not isinstance(cls, int) or isinstance(cls, bool) or not 0 <= cls < q:
        raise ConfigError('class must be an integer in 0..%d, got %r'
                          % (q - 1, cls))
    return 8 * (7 - cls)


def dscp_class(dscp, q=MAX_CLASSES):
    """Priority class a switch gives a packet with this DSCP."""
    if not 0 <= dscp <= 63:
        raise ConfigError('DSCP must be in 0..63, got %r' % (dscp,))
    return min(7 - (dscp >> 3), check_queues(q) - 1)


def rank_class(rank, q=MAX_CLASSES):
    """Policies produce ranks; rank r maps to class min(r, Q-1)."""
    return min(max(int(rank), 0), check_queues(q) - 1)


def tc_batch(dev, rate_bps, q, mtu, queue_packets):
    """tc -batch lines that install Q strict-priority classes on dev."""
    rate = '%dbit' % int(rate_bps)
    quantum = mtu + ETH_HEADER
    burst = max(15000, 2 * quantum)
    lowest = 10 + q - 1
    guaranteed = '%dbit' % max(8000, int(rate_bps / 200))
    lines = ['qdisc add dev %s root handle 1: htb default %d'
             % (dev, lowest),
             'class add dev %s parent 1: classid 1:1 htb rate %s ceil %s '
             'burst %d cburst %d quantum %d'
             % (dev, rate, rate, burst, burst, quantum)]
    for c in range(q):
        lines += [
            'class add dev %s parent 1:1 classid 1:%d htb rate %s ceil %s '
            'burst %d cburst %d prio %d quantum %d'
            % (dev, 10 + c, guaranteed if q > 1 else rate, rate, burst,
               burst, c, quantum),
            'qdisc add dev %s parent 1:%d handle %d: pfifo limit %d'
            % (dev, 10 + c, 100 + c, queue_packets)]
        if c < q - 1:
            lines.append('filter add dev %s parent 1: protocol ip prio 1 '
                         'u32 match ip tos 0x%02x 0xe0 flowid 1:%d'
                         % (dev, (7 - c) << 5, 10 + c))
    return lines


def tc_clear(dev):
    return ['qdisc del dev %s root' % dev]
