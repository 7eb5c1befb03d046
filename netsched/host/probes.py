"""The fidelity probes of one emulated host: how long the datapath
itself holds packets.

Every ``interval_s`` the host sends a small UDP datagram to one of its
peers in turn, stamped with CLOCK_REALTIME just before it is sent; the
peer takes the kernel's receive timestamp (SO_TIMESTAMPNS, the same
clock: all hosts share one kernel). Every egress carries the probes in
a class of their own above the scheduling classes (emulator.tc), so a
probe waits at most for the packet being sent on each hop: its one-way
delay beyond that is the time the userspace datapath and the kernel
held it. The coordinator sets the delays against each path
(pipeline.verdict).

Receive timestamps come from the kernel, not from this process, so a
busy agent does not pass for a slow datapath.
"""
import socket
import struct
import threading
import time

SO_TIMESTAMPNS = getattr(socket, 'SO_TIMESTAMPNS', 35)
PAYLOAD = struct.Struct('!QI')      # send time (ns, realtime), sequence
TIMESPEC = struct.Struct('@qq')
MOST_KEPT = 4000                    # delays kept for the report


class Probes:
    """Send probes to ``peers`` (IPv4 addresses) from ``ip``:``port``
    every ``interval_s``, starting ``phase_s`` after the run's common
    start, and collect the delays of those that arrive here."""

    def __init__(self, ip, port, peers, interval_s, phase_s=0.0):
        self.peers, self.port = list(peers), port
        self.interval_s, self.phase_s = interval_s, phase_s
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.bind((ip, port))
        self.sock.settimeout(0.5)
        self.sent = {}                 # peer -> probes sent
        self.got = {}                  # source -> [delay, microseconds]
        self.stopping = threading.Event()

    def start(self, t0_monotonic):
        threading.Thread(target=self._send, args=(t0_monotonic,),
                         daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    def _send(self, t0):
        if not self.peers:
            return
        k = 0
        while not self.stopping.is_set():
            due = t0 + self.phase_s + k * self.interval_s
            wait = due - time.monotonic()
            if wait > 0 and self.stopping.wait(wait):
                return
            peer = self.peers[k % len(self.peers)]
            try:
                self.sock.sendto(PAYLOAD.pack(time.time_ns(), k),
                                 (peer, self.port))
                self.sent[peer] = self.sent.get(peer, 0) + 1
            except OSError:
                pass                   # counted as lost by the receiver
            k += 1

    def _receive(self):
        space = socket.CMSG_SPACE(TIMESPEC.size)
        while not self.stopping.is_set():
            try:
                data, anc, _, addr = self.sock.recvmsg(64, space)
            except socket.timeout:
                continue
            except OSError:
                return
            rx = next((TIMESPEC.unpack(d[:TIMESPEC.size]) for lvl, typ, d
                       in anc if lvl == socket.SOL_SOCKET
                       and typ == SO_TIMESTAMPNS), None)
            if rx is None or len(data) < PAYLOAD.size:
                continue
            tx, _ = PAYLOAD.unpack(data[:PAYLOAD.size])
            delay_ns = rx[0] * 1_000_000_000 + rx[1] - tx
            self.got.setdefault(addr[0], []).append(
                max(0, delay_ns) // 1000)

    def stop(self):
        """Stop both threads; what was measured: probes sent per peer and
        the delays (microseconds) received per source, at most MOST_KEPT
        in all (every n-th where there were more)."""
        self.stopping.set()
        got = {s: list(v) for s, v in self.got.items()}
        n = sum(len(v) for v in got.values())
        step = -(-n // MOST_KEPT) if n > MOST_KEPT else 1
        try:
            self.sock.close()
        except OSError:
            pass
        return {'sent': dict(self.sent),
                'received': {s: len(v) for s, v in got.items()},
                'delays_us': {s: v[::step] for s, v in got.items()}}
