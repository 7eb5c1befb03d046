"""Watch TCP inside a running emulation (issue 10's measurements): run it
beside `netsched run` / `crosscheck`, as root, on the same machine.

  tcp_probe.py ss OUT --hosts hl1,hr1 [--seconds 60] [--every 0.03]
      samples `ss -tin` (established TCP sockets: RTO, cwnd, unacked,
      retransmissions, ...) in the named Mininet hosts of every netsched
      run that is up, found by their run records
      (/run/netsched/runs/*/state.json), until --seconds pass. A host
      that goes away (its run ended) is looked up again, so a crosscheck's
      successive runs are all sampled. Lines: '<monotonic time> <host>'
      then ss's lines for that host.
  tcp_probe.py packets OUT [--ips 10.0.0.3,10.0.1.3] [--seconds 60]
      captures the TCP headers of every packet on every interface of the
      root namespace (the switches' ports; the hosts' own are in their
      namespaces) with the hosts' clock: one line per packet and
      interface, 'time interface pkttype src:port>dst:port seq ack
      payload dscp flags ip-id' (the IP id tells a retransmission from
      the packet it repeats).
  tcp_probe.py delays OUT [--over 0.1]
      from a packets file: each data packet's time inside the fabric
      (first to last interface it was seen on) where it is over --over
      seconds, and the silences over --over seconds in each connection's
      data at the interface where it was last seen.

Times are CLOCK_MONOTONIC, the clock of the run's decision log: an
event at run time t is at t0 + t, and the classes events of the run's
decisions.jsonl (monotonic) and events.jsonl (relative) give t0.
Read-only on the emulation: it opens sockets and reads, nothing else.
"""
import argparse
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from netsched.emulator.probe import (  # noqa: E402
    capture, delays, read_packets, sample_ss)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('ss')
    a.add_argument('out')
    a.add_argument('--hosts', required=True)
    a.add_argument('--seconds', type=float, default=60.0)
    a.add_argument('--every', type=float, default=0.03)
    a = sub.add_parser('packets')
    a.add_argument('out')
    a.add_argument('--ips', default='')
    a.add_argument('--seconds', type=float, default=60.0)
    a = sub.add_parser('delays')
    a.add_argument('packets_file')
    a.add_argument('--over', type=float, default=0.1)
    a = ap.parse_args(argv)
    if a.cmd == 'ss':
        sample_ss(a.out, a.hosts.split(','), a.seconds, a.every)
    elif a.cmd == 'packets':
        capture(a.out, set(filter(None, a.ips.split(','))), a.seconds)
    else:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)    # | head
        try:
            pk = read_packets(a.packets_file)
        except OSError as e:
            sys.exit('tcp_probe: %s' % e)
        slow, silences = delays(pk, a.over)
        for t, d, flow, seq in slow:
            print('%.4f slow %.3f s %s seq %d' % (t, d, flow, seq))
        for flow, t, gap in silences:
            print('%.4f silent %.3f s %s' % (t, gap, flow))
    return 0


if __name__ == '__main__':
    sys.exit(main())
