"""What the host agents rely on from the kernel, checked on loopback (no
emulator needed)."""
import socket
import threading
import time

from netsched import agent


def _send_paced(cap, size):
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
    agent.set_pacing(s, cap)
    t0 = time.monotonic()
    s.sendall(bytes(size))
    s.close()
    th.join(30)
    lsock.close()
    n, end = done[0]
    assert n == size
    return size / (end - t0)


def test_pacing_caps_a_connections_rate():
    # 3 MB at a 1 MB/s cap: about 1 MB/s (the first window goes unpaced);
    # unpaced, loopback moves it in milliseconds
    rate = _send_paced(1_000_000, 3_000_000)
    assert 0.7e6 <= rate <= 1.3e6


def test_zero_means_no_cap():
    assert _send_paced(0, 3_000_000) > 20e6
