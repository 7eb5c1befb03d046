"""Strict-priority classes on every link egress, keyed on DSCP.

Class 0 is the highest. Class c is carried as DSCP CS(7-c) (56, 48, ...,
0), whatever the number of classes Q; on the wire a switch reads the
three class-selector bits and puts precedence p in class min(7-p, Q-1),
so unmarked traffic (DSCP 0) lands in the lowest class.

This module is the mapping every part shares (controller rules, agents'
marks, tc filters, policies' ranks); the emulator's tc trees that carry
the classes are in netsched.emulator.tc.
"""
from .errors import ConfigError

MAX_CLASSES = 8          # htb prio ranges over 0..7
# pfifo limit per class (per bucket with fair_queues), in packets: long
# enough that a class starved for a while by higher ones waits instead of
# losing its window. At 32, the seed policies' experiments lost 200-540
# packets per run under strict priorities and a starved ResNet-50 PS job
# ran 1.6-2.6x slower on the emulator than in the simulator; at 128,
# 90-180 and 1.1-1.4x (Beamer's SCT spread 1.28-1.73 s -> 1.24-1.25 s;
# three ring jobs under FIFO, per-coflow error 36% -> 14%). Fair sharing
# is unchanged (ring 1.03-1.04x, PS 1.11x the analytical time).
QUEUE_PACKETS = 128
# the UDP port of the emulator's fidelity probes, which every egress
# carries in a class of their own above the scheduling classes
PROBE_PORT = 47999
FAIR_BUCKETS = (2, 4, 8, 16)   # hashed on the low source-port bits
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


def bucket_error(buckets):
    """Why ``buckets`` is not a fair_queues setting, or None."""
    if isinstance(buckets, bool) or buckets not in (0, 1) + FAIR_BUCKETS:
        return 'must be 0 or one of %s, got %r' % (
            ', '.join(map(str, FAIR_BUCKETS)), buckets)
    return None


def check_buckets(buckets):
    why = bucket_error(buckets)
    if why:
        raise ConfigError('fair_queues ' + why)
    return buckets


def rank_class(rank, q=MAX_CLASSES):
    """Policies produce ranks; rank r maps to class min(r, Q-1)."""
    return min(max(int(rank), 0), check_queues(q) - 1)
