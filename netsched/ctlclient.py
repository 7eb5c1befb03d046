"""Client side of the controller's Unix-socket channel (control.py)."""
import socket
import time

from . import control
from .errors import NetschedError


class ControlClient:
    def __init__(self, path, timeout_s=10.0):
        self.path = path
        self.timeout_s = timeout_s
        self._sock = None
        self._buf = b''

    def connect(self, wait_s=0.0):
        deadline = time.monotonic() + wait_s
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout_s)
            try:
                s.connect(self.path)
                self._sock = s
                return self
            except OSError as e:
                s.close()
                if time.monotonic() >= deadline:
                    raise NetschedError('cannot reach the controller at %s: %s'
                                        % (self.path, e)) from None
                time.sleep(0.1)

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request(self, op, **fields):
        if self._sock is None:
            self.connect()
        self._sock.sendall(control.encode(dict(fields, op=op)))
        while b'\n' not in self._buf:
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                raise NetschedError('controller did not answer %r within '
                                    '%.0f s' % (op, self.timeout_s)) from None
            if not chunk:
                raise NetschedError('controller closed the channel')
            self._buf += chunk
        line, self._buf = self._buf.split(b'\n', 1)
        reply = control.decode(line)
        if not reply.get('ok'):
            raise NetschedError('controller: %s' % reply.get('error'))
        return reply

    # conveniences
    def status(self):
        return self.request('status')

    def set_class(self, match, cls, priority=100):
        return self.request('set_class', match=match, cls=cls,
                            priority=priority)['id']

    def clear_class(self, rule_id=None):
        if rule_id is None:
            return self.request('clear_class')
        return self.request('clear_class', id=rule_id)
