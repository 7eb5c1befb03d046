"""The agent's data path: real TCP between emulated hosts. Every
outgoing connection is one persistent TCP connection bound to the plan's
source port (so the ECMP path is the plan's) with a sender thread that
writes one transfer at a time, in the order transfers became ready, each
preceded by a 12-byte header (task id, length), marked with the DSCP of
its coflow's class (IP_TOS, looked up again every 64 KiB) and kept to
the rate the controller gave it, if any. A transfer of another coflow in
another class waits until the connection's earlier transfers are
acknowledged whole (the simulator's connection starts its next transfer
when the last is received; Transport._drain). A receiver thread per incoming
connection timestamps the last byte of every transfer; its ACKs go in
class 0."""
import collections
import queue
import socket
import struct
import threading
import time

HEADER = struct.Struct('!IQ')
HOLD = -1                 # a transfer's rate while the controller holds it
# unsent bytes a connection may keep in its socket buffer: a few packets,
# so what the sender holds back or paces is what the network sees (the
# default buffer held up to ~1.6 s of data at the emulated link rates)
NOTSENT_LOWAT = 32768
TCP_NOTSENT_LOWAT = getattr(socket, 'TCP_NOTSENT_LOWAT', 25)
CLASS_WAIT_S = 0.1        # longest wait for a new coflow's class
DRAIN_POLL_S = 0.00025    # how often a draining sender reads its acks
PACED_CHUNK = 8192        # write size while a transfer is rate-limited
PACED_BURST_S = 0.002     # how far a limited transfer may fall behind
PACED_POLL_S = 0.005      # how often a paced wait reads its rate again
TCP_INFO_RETRANS = (struct.Struct('=I'), 100)    # tcpi_total_retrans
TCP_INFO_ACKED = (struct.Struct('=Q'), 120)      # tcpi_bytes_acked
# tcpi_total_rto, tcpi_total_rto_recoveries, tcpi_total_rto_time (ms):
# Linux >= 6.7
TCP_INFO_RTO = (struct.Struct('=HHI'), 240)


def _tcp_info(s, field):
    """The values of one field (a struct of one or more) of this TCP
    socket's struct tcp_info, or None where the kernel does not give
    it."""
    fmt, offset = field
    try:
        info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO,
                            offset + fmt.size)
    except OSError:
        return None
    return fmt.unpack_from(info, offset) \
        if len(info) >= offset + fmt.size else None


def tcp_total_retrans(s):
    """Segments this TCP socket has retransmitted."""
    v = _tcp_info(s, TCP_INFO_RETRANS)
    return v[0] if v else 0


def tcp_rto(s):
    """(retransmission timeouts, seconds spent recovering from them) of
    this TCP socket so far, or None where the kernel does not count
    them per socket."""
    v = _tcp_info(s, TCP_INFO_RTO)
    return None if v is None else (v[0], v[2] / 1000.0)


def tcp_bytes_acked(s):
    """Bytes of this TCP socket's stream the receiver has acknowledged
    (Linux >= 4.1; the SYN counts one), or None."""
    v = _tcp_info(s, TCP_INFO_ACKED)
    return None if v is None else v[0]


def _forget_acked(s, unacked):
    """Drop from ``unacked`` (a connection's [task id, first stream byte,
    bytes, ...] records, oldest first) the transfers its socket ``s``
    has had acknowledged whole; returns tcpi_bytes_acked, or None where
    the kernel does not give it (then nothing is dropped)."""
    acked = tcp_bytes_acked(s)
    while unacked and acked is not None and \
            unacked[0][1] + unacked[0][2] <= acked:
        unacked.popleft()
    return acked


ACK_TOS = (8 * 7) << 2               # DSCP CS7: class 0
CHUNK = 1 << 16
_ZEROS = bytes(CHUNK)


def _pace_wait(due, k, rate, rate_of):
    """Sleep until ``due`` (when the last k bytes, written at ``rate``,
    are paid for), reading ``rate_of()`` every PACED_POLL_S: a new rate
    re-times those bytes, and no limit or a hold ends the wait. (A
    transfer nearly done can be given a rate of a few bytes/s, to end
    with its coflow; one sleep of k / rate then outlasted every later
    rate: a run under Varys waited 25 min.) Returns the new due time."""
    while True:
        wait = due - time.monotonic()
        if wait <= 0:
            return due
        time.sleep(min(wait, PACED_POLL_S))
        now = rate_of()
        if now != rate:
            if now <= 0:                # unlimited, or held
                return time.monotonic()
            due += k / now - k / rate
            rate = now


def send_body(s, n, rate_of, between=None, hold=None):
    """Write n bytes to s. ``rate_of()``, asked before every write, is the
    rate to keep to (bytes/s; 0 = as fast as TCP goes; HOLD = write
    nothing until it changes: ``hold()`` waits for that): a token bucket
    between 8 KiB writes, allowed to fall behind by PACED_BURST_S.
    ``between()`` runs between writes."""
    left = n
    due = time.monotonic()
    while left:
        rate = rate_of()
        if rate == HOLD and hold is not None:
            hold()
            due = time.monotonic()
            continue
        k = min(left, PACED_CHUNK if rate > 0 else CHUNK)
        s.sendall(_ZEROS[:k])
        left -= k
        if left and rate > 0:
            due = max(due, time.monotonic() - PACED_BURST_S) + k / rate
            due = _pace_wait(due, k, rate, rate_of)
        if left and between is not None:
            between()


class Transport:
    """Listening, connecting, sending and receiving for one agent.
    ``cls`` ({coflow: class}) and ``rate`` ({task id: emulated bytes/s})
    are the agent's, updated as decisions arrive and read by the sender
    threads; ``inbox`` gets ('recv', task id, time) and ('conn_lost',
    connection id, or an incoming one's peer [ip, port], msg);
    ``on_start(task, ready, start, n)`` runs as a transfer starts."""

    def __init__(self, scale, cls, rate, inbox, on_start, drain=True,
                 on_written=None):
        self.scale, self.cls, self.rate = scale, cls, rate
        # per-side timestamps of every transfer, so that a stall shows
        # which side stopped: ``on_written(task, t)`` as its last byte
        # is written, and ``first_read`` {task id: t} when its first
        # bytes (the header) are read here
        self.on_written = on_written
        self.first_read = {}
        self.send_cls = {}             # task id -> class (per-send tags)
        self.seq = 0                   # sends queued so far (FIFO key)
        self.inbox, self.on_start = inbox, on_start
        self.out = {}                  # connection id -> (socket, queue)
        # per connection, transfers written and perhaps not yet acked:
        # [task id, stream offset of its first byte, bytes, last seen,
        # task]; its sender drops those acknowledged whole
        self.unacked = {}
        self.paused = {}               # connection id -> seconds held
        # hold a coflow's first transfer until the controller classified
        # it (for at most CLASS_WAIT_S; then it goes in class 0)
        self.wait_class = False
        # tell the agent ('sent', task id, start, end) when a Prophet
        # gradient send's last byte is written (its sender's credit and
        # bandwidth profile, host.prophet)
        self.report_sent = False
        # a connection writes a transfer of another coflow in another
        # class (or one not classified yet) only when the transfers before
        # it are acknowledged whole (_drain); ``drain`` False (the
        # experiment's measuring knob emulator.drain) writes it at once
        self.drain = bool(drain)
        # guards ``rate``: the agent updates it under this lock and
        # wakes the senders it holds
        self.pace = threading.Condition()

    def listen(self, port, n_in):
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(('0.0.0.0', port))
        self.lsock.listen(256)
        threading.Thread(target=self._accept, args=(n_in,),
                         daemon=True).start()

    def connect(self, ip, conns, tcp_cc=None):
        for c in conns:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT,
                         NOTSENT_LOWAT)
            if tcp_cc:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                             tcp_cc.encode())
            s.bind((ip, c['sport']))
            for attempt in range(50):
                try:
                    s.connect((c['dst_ip'], c['dport']))
                    break
                except OSError:
                    if attempt == 49:
                        raise
                    time.sleep(0.1)
            q = queue.PriorityQueue()
            self.out[c['id']] = (s, q)
            self.unacked[c['id']] = collections.deque()
            self.paused[c['id']] = 0.0
            threading.Thread(target=self._sender,
                             args=(c['id'], s, q, self.unacked[c['id']]),
                             daemon=True).start()

    def send(self, task, ready):
        """Queue a transfer on its connection: its sends go lowest
        ``order`` first (a job that sends front layers first), else in
        the order they became ready (as the simulator's driver picks)."""
        self.seq += 1
        key = task.get('order')
        self.out[task['conn']][1].put(
            ((0, key, self.seq) if key is not None else (1, 0, self.seq),
             task, ready))

    def progress(self):
        """{task id: bytes the receiver has acknowledged} for the
        transfers whose acknowledged bytes grew since the last call
        (emulated bytes; from each connection's tcpi_bytes_acked)."""
        out = {}
        for cid, track in self.unacked.items():
            if not track:
                continue
            acked = tcp_bytes_acked(self.out[cid][0])
            if acked is None:
                continue
            for rec in list(track):
                tid, first, n, seen, _ = rec
                got = min(max(acked - first, 0), n)
                if got > seen:
                    rec[3] = got
                    out[tid] = got
                if got < n:
                    break
        return out

    def congestion_control(self):
        """The TCP congestion control its connections use (the host's
        default unless the run names one), or None without any."""
        for s, _ in self.out.values():
            try:
                return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                                    16).split(b'\0', 1)[0].decode()
            except OSError:
                return None
        return None

    def retransmits(self):
        """{connection id: segments it retransmitted}."""
        return {cid: tcp_total_retrans(s) for cid, (s, _) in self.out.items()}

    def timeouts(self):
        """{connection id: (retransmission timeouts, seconds in the
        recoveries from them)}; {} where the kernel does not count them
        per socket."""
        out = {}
        for cid, (s, _) in self.out.items():
            r = tcp_rto(s)
            if r is not None:
                out[cid] = r
        return out

    def _accept(self, n):
        for _ in range(n):
            s, _ = self.lsock.accept()
            # this side sends only ACKs: in the top class (CS7), so a
            # transfer is never stalled by its own ACKs waiting behind
            # other classes' data on the reverse path
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, ACK_TOS)
            threading.Thread(target=self._receiver, args=(s,),
                             daemon=True).start()

    def set_rates(self, rates):
        """New rates ({task id: bytes/s, 0 or HOLD}) from the controller;
        wakes the senders that were held."""
        with self.pace:
            self.rate.update(rates)
            self.pace.notify_all()

    def set_classes(self, classes, sends=None):
        """New classes ({coflow: class}) and per-send classes ({task id:
        class}, a tensor's tag); wakes the senders that wait."""
        with self.pace:
            self.cls.update(classes)
            self.send_cls.update(sends or {})
            self.pace.notify_all()

    def class_of(self, t):
        """A transfer's class: its own tag if it has one, else its
        coflow's (class 0 until the controller says)."""
        k = self.send_cls.get(t['id'])
        return self.cls.get(t['coflow'], 0) if k is None else k

    def _classified(self, cid, t):
        t0 = time.monotonic()
        with self.pace:
            self.pace.wait_for(lambda: t['coflow'] in self.cls
                               or t['id'] in self.send_cls, CLASS_WAIT_S)
        self.paused[cid] += time.monotonic() - t0

    def _hold(self, cid, tid):
        """Block a sender while its transfer is held; count the time."""
        t0 = time.monotonic()
        with self.pace:
            while self.rate.get(tid, 0) == HOLD:
                self.pace.wait(0.5)
        self.paused[cid] += time.monotonic() - t0

    def _drain(self, cid, s, t, unacked):
        """Wait until this connection's earlier transfers are
        acknowledged whole where one of them is of another coflow in
        another class than ``t`` (or ``t``'s coflow has no class yet),
        as the simulator's connection starts its next transfer only when
        the last one is received; count the time as paused.

        Written at once, the next coflow's packets went out in their own
        class while the last one's tail was still queued in the fabric
        in its own: under Aalo, which starts every coflow in its first
        queue, they overtook that demoted tail, and the sender sent it
        again (of 100 retransmitted segments in one captured run, 94
        while the original was still queued, 58 in a higher class).
        Waiting cuts the retransmissions and the per-coflow error of
        policies that re-class often, Aalo most (docs/fidelity.md). Sends
        with a tag of their own (TensorExpress' tensors) are queued by
        tag, and do not wait."""
        if t['id'] in self.send_cls:
            return

        def differs():
            if _forget_acked(s, unacked) is None:
                return False
            # a coflow not classified yet is one whose class will come
            # (wait_class), else class 0 (a policy that classes nothing)
            k = self.cls.get(t['coflow'], None if self.wait_class else 0)
            return any(r[4]['coflow'] != t['coflow'] and
                       r[4]['id'] not in self.send_cls and
                       (k is None or self.class_of(r[4]) != k)
                       for r in unacked)
        t0 = time.monotonic()
        waited = False
        while unacked and differs():
            waited = True
            time.sleep(DRAIN_POLL_S)
        if waited:
            self.paused[cid] += time.monotonic() - t0

    def _sender(self, cid, s, q, unacked):
        tos = None
        offset = 0                     # stream bytes written so far

        def mark(t):
            """The transfer's class, or an earlier transfer's on this
            connection, not yet acknowledged whole, where that is higher:
            the socket's mark applies to every packet it sends from now
            on, that one's tail too (the controller's rules keep to the
            same, Scheduler._wanted). A send tagged with a class of its
            own (TensorExpress' tensors) keeps its tag: the switches queue
            such a connection's packets by tag, and promoting a job's less
            urgent tensors to an earlier urgent one's class made them
            compete with other jobs' urgent ones (docs/policies.md,
            tensorexpress)."""
            nonlocal tos
            k = self.class_of(t)
            if unacked:
                _forget_acked(s, unacked)
                if t['id'] not in self.send_cls:
                    k = min([k] + [self.class_of(r[4]) for r in unacked
                                   if r[4]['id'] not in self.send_cls])
            want = (8 * (7 - k)) << 2
            if want != tos:
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, want)
                tos = want
        try:
            while True:
                _, t, ready = q.get()
                n = max(1, round(t['bytes'] / self.scale))
                if self.drain:
                    self._drain(cid, s, t, unacked)
                self.on_start(t, ready, time.monotonic(), n)
                if self.wait_class and t['coflow'] not in self.cls \
                        and t['id'] not in self.send_cls:
                    self._classified(cid, t)
                mark(t)
                began = time.monotonic()
                s.sendall(HEADER.pack(t['id'], n))
                offset += HEADER.size
                # tcpi_bytes_acked counts the SYN: stream byte k is k + 1
                unacked.append([t['id'], offset + 1, n, 0, t])
                offset += n
                send_body(s, n, lambda: self.rate.get(t['id'], 0),
                          lambda: mark(t),
                          lambda: self._hold(cid, t['id']))
                if self.on_written is not None:
                    self.on_written(t, time.monotonic())
                if self.report_sent and t.get('prophet'):
                    self.inbox.put(('sent', t['id'], began,
                                    time.monotonic()))
        except OSError as e:
            # the peer is gone (its agent died): this connection's jobs
            # fail, the agent and its other connections go on
            self.inbox.put(('conn_lost', cid, 'send failed: %s' % e))

    def _receiver(self, s):
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        try:
            while True:
                head = _exact(s, view, HEADER.size)
                if head is None:
                    return
                tid, n = HEADER.unpack(head)
                self.first_read[tid] = time.monotonic()
                left = n
                while left:
                    k = s.recv_into(view, min(left, CHUNK))
                    if k == 0:
                        raise OSError('connection closed mid-transfer')
                    left -= k
                self.inbox.put(('recv', tid, time.monotonic()))
        except OSError as e:
            try:
                peer = list(s.getpeername())
            except OSError:
                peer = None
            self.inbox.put(('conn_lost', peer, 'receive failed: %s' % e))


# the namespace's TCP counters an agent reports for its run (TcpExt):
# timeouts, those the kernel found spurious (F-RTO: the ACK for data
# sent before the timeout came after it), and DSACKs received (the
# receiver had a retransmitted segment already)
TCP_COUNTERS = ('TCPTimeouts', 'TCPSpuriousRTOs', 'TCPDSACKRecv')


def tcp_counters(path='/proc/self/net/netstat'):
    """This network namespace's ``TCP_COUNTERS`` so far ({name: n}, those
    the kernel has), or None where it does not say."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith('TcpExt:'):
            row = dict(zip(names.split()[1:], values.split()[1:]))
            return {k: int(row[k]) for k in TCP_COUNTERS if k in row}
    return None


def _exact(s, view, n):
    got = 0
    while got < n:
        k = s.recv_into(view[got:n], n - got)
        if k == 0:
            if got == 0:
                return None
            raise OSError('connection closed in a header')
        got += k
    return bytes(view[:n])
