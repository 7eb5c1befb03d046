"""The agents' rate limiter (Varys' per-flow rates on the emulator),
checked on loopback: no emulator needed."""
import socket
import threading
import time

from netsched.emulator import transport as agent


def _send(size, rate_of):
    lsock = socket.socket()
    lsock.bind(('127.0.0.1', 0))
    lsock.listen(1)
    done = []

    def receive():
        c, _ = lsock.accept()
        n = 0
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            n += len(b)
        done.append((n, time.monotonic()))
        c.close()
    th = threading.Thread(target=receive)
    th.start()
    s = socket.socket()
    s.connect(lsock.getsockname())
    t0 = time.monotonic()
    agent.send_body(s, size, rate_of)
    s.close()
    th.join(30)
    lsock.close()
    n, end = done[0]
    assert n == size
    return end - t0


def test_a_limited_transfer_keeps_to_its_rate():
    # 1 MB at 1 MB/s: about 1 s (loopback alone moves it in milliseconds)
    assert 0.9 <= _send(1_000_000, lambda: 1_000_000) <= 1.3


def test_the_limit_is_read_before_every_write():
    # 0.5 MB limited to 1 MB/s, then the limit is lifted: ~0.5 s
    sent = {'calls': 0}

    def rate():
        sent['calls'] += 1
        return 1_000_000 if sent['calls'] * agent.PACED_CHUNK < 500_000 \
            else 0
    assert 0.4 <= _send(2_000_000, rate) <= 0.8


def test_zero_means_no_limit():
    assert _send(3_000_000, lambda: 0) < 0.2


def test_tcp_timeouts_read_from_netstat(tmp_path):
    from netsched.emulator.transport import tcp_timeouts
    p = tmp_path / 'netstat'
    p.write_text('TcpExt: SyncookiesSent TCPTimeouts TW\n'
                 'TcpExt: 0 17 3\n'
                 'IpExt: InNoRoutes\nIpExt: 0\n')
    assert tcp_timeouts(str(p)) == 17
    assert tcp_timeouts(str(tmp_path / 'missing')) is None
