"""The tc trees that carry netsched's priority classes on every link
egress of the emulated fabric (classes and DSCP: netsched.qos).

Each egress interface gets an htb tree (the only strict priority
measured to work with OVS's userspace datapath: docs/emulation.md): a
root class at the link rate and one child per class with no usable
guaranteed rate (1 byte/s, a 1-byte bucket), ceil = link rate and htb
``prio c``. htb lends spare bandwidth in prio order, which is strict
priority, and it is work-conserving.

Why no guaranteed rate: htb serves a class within its guaranteed rate
before it lends anything, whatever the prio, so an idle low class with a
real guarantee sends ahead of higher ones and a demoted connection's
packets overtake its own (spurious retransmissions; docs/emulation.md).

A pfifo leaf under every class bounds its queue; u32 filters on the TOS
byte pick the class. Everything is emitted as ``tc -batch`` lines.

Above the classes sits the fidelity probes' own class (UDP to
``qos.PROBE_PORT``): prio 0 with a small guaranteed rate, so a probe
waits for at most the packet in service on each hop. What it waits
beyond that is the datapath's own delay (netsched.pipeline.verdict).
"""
from ..qos import ETH_HEADER, PROBE_PORT, check_buckets

PROBE_CLASS = '1:9'


def burst_bytes(mtu):
    """The most a link's htb tree sends back to back above its rate: what
    the emulated link itself may put ahead of a packet."""
    return max(15000, 2 * (mtu + ETH_HEADER))


def probe_rate_bps(rate_bps):
    """The probes' guaranteed rate on a link: enough for every host's
    probes crossing it at once, a small part of the link."""
    return max(64e3, rate_bps / 100.0)


def tc_batch(dev, rate_bps, q, mtu, queue_packets, buckets=0,
             probe_port=PROBE_PORT):
    """tc -batch lines that install Q strict-priority classes on dev.

    With ``buckets`` > 1 every class is itself split into that many
    leaves (same htb prio, equal quantum: htb serves them round-robin),
    and a u32 hash on the low bits of the TCP source port spreads the
    connections over them: stochastic per-flow fair queueing inside each
    class, which this kernel has no qdisc for. Non-TCP packets of a class
    go to its first leaf. ``probe_port`` None leaves out the probes'
    class."""
    check_buckets(buckets)
    rate = '%dbit' % int(rate_bps)
    quantum = mtu + ETH_HEADER
    burst = burst_bytes(mtu)
    # no usable guaranteed rate (module docstring; htb takes 8 bit/s at
    # least), but for a single class, which has the link to itself
    least, lburst = '8bit', 1
    probe = int(probe_rate_bps(rate_bps)) if probe_port else 0
    guaranteed, gburst = (least, lburst) if q > 1 else (
        '%dbit' % int(rate_bps - probe), burst)
    fair = buckets > 1
    default = _leaf(q - 1, 0) if fair else '%d' % (10 + q - 1)
    lines = ['qdisc add dev %s root handle 1: htb default %s'
             % (dev, default),
             'class add dev %s parent 1: classid 1:1 htb rate %s ceil %s '
             'burst %d cburst %d quantum %d'
             % (dev, rate, rate, burst, burst, quantum)]
    if probe_port:
        lines += [
            'class add dev %s parent 1:1 classid %s htb rate %dbit ceil %s '
            'burst %d cburst %d prio 0 quantum %d'
            % (dev, PROBE_CLASS, probe, rate, quantum, burst, quantum),
            'qdisc add dev %s parent %s handle 99: pfifo limit 64'
            % (dev, PROBE_CLASS),
            'filter add dev %s parent 1: protocol ip prio 1 u32 match ip '
            'protocol 17 0xff match ip dport %d 0xffff flowid %s'
            % (dev, probe_port, PROBE_CLASS)]
    for c in range(q):
        cls = '1:%d' % (10 + c)
        lines.append(
            'class add dev %s parent 1:1 classid %s htb rate %s ceil %s '
            'burst %d cburst %d prio %d quantum %d'
            % (dev, cls, guaranteed, rate, gburst, burst, c, quantum))
        if not fair:
            lines.append('qdisc add dev %s parent %s handle %d: pfifo '
                         'limit %d' % (dev, cls, 100 + c, queue_packets))
        else:
            ht = '%x:' % (0x100 + c)
            for b in range(buckets):
                lines += [
                    'class add dev %s parent %s classid 1:%s htb rate %s '
                    'ceil %s burst %d cburst %d prio %d quantum %d'
                    % (dev, cls, _leaf(c, b), least, rate, lburst, burst,
                       c, quantum),
                    'qdisc add dev %s parent 1:%s handle %x: pfifo limit %d'
                    % (dev, _leaf(c, b), 0x1000 + (c << 8) + b,
                       queue_packets)]
            lines += [
                'filter add dev %s parent %s protocol ip prio 1 handle %s '
                'u32 divisor %d' % (dev, cls, ht, buckets),
                # the 32-bit word at IP + 20 is (sport << 16 | dport)
                'filter add dev %s parent %s protocol ip prio 1 u32 '
                'match ip protocol 6 0xff hashkey mask 0x%08x at 20 link %s'
                % (dev, cls, (buckets - 1) << 16, ht)]
            lines += ['filter add dev %s parent %s protocol ip prio 1 u32 '
                      'ht %s%x: match u32 0 0 flowid 1:%s'
                      % (dev, cls, ht, b, _leaf(c, b))
                      for b in range(buckets)]
            lines.append('filter add dev %s parent %s protocol all prio 2 '
                         'u32 match u32 0 0 flowid 1:%s'
                         % (dev, cls, _leaf(c, 0)))
        if c < q - 1:
            lines.append('filter add dev %s parent 1: protocol ip prio 2 '
                         'u32 match ip tos 0x%02x 0xe0 flowid %s'
                         % (dev, (7 - c) << 5, cls))
    return lines


def _leaf(c, b):
    """Minor id (hex, as tc reads it) of bucket b of class c."""
    return '%x' % (0x100 + (c << 4) + b)


def tc_clear(dev):
    return ['qdisc del dev %s root' % dev]
