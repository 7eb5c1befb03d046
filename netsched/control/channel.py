"""The controller's control channel: JSON objects, one per line, on a
Unix socket (Mininet hosts live in other network namespaces but share the
filesystem). The wire format, and the client that netsched, the agents
and `netsched status` use."""
import json
import socket
import time

from ..errors import NetschedError

DEFAULT_SOCKET = '/run/netsched/ctl.sock'


def fabric_description(spec, socket_path=None):
    """What the controller is started with (written as JSON): its
    ControllerSpec (control.spec) as the app loads it, with the control
    socket placed at ``socket_path`` (None: the spec's own)."""
    if socket_path is not None:
        spec = spec.placed(socket=socket_path)
    return spec.to_dict()


def encode(obj):
    """One message as a line of JSON: lines let either side read a stream
    with readline, and sorted keys make equal messages equal bytes."""
    return (json.dumps(obj, sort_keys=True) + '\n').encode()


def decode(line):
    """A line back to its object. Anything but a JSON object is a
    NetschedError, so a bad client gets an error reply, not a crash."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        raise NetschedError('bad request: %s' % e) from None
    except RecursionError:        # the decoder recurses once per level
        raise NetschedError('bad request: nested too deeply') from None
    if not isinstance(obj, dict):
        raise NetschedError('bad request: not a JSON object')
    return obj


class ControlClient:
    """The control channel's client, shared by netsched, the agents and
    `netsched status` so that all speak the wire format of this module:
    requests that wait for a reply, and reports that have none."""

    def __init__(self, path, timeout_s=10.0):
        self.path = path
        self.timeout_s = timeout_s
        self._sock = None
        self._buf = b''

    def connect(self, wait_s=0.0):
        """Connect, retrying for up to wait_s: the controller creates its
        socket a moment after its process starts."""
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
        """Close the channel; an agent registered on it gets no more
        messages from the controller."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def tell(self, op, **fields):
        """Send a message that has no reply (an agent's report)."""
        if self._sock is None:
            self.connect()
        self._sock.sendall(encode(dict(fields, op=op)))

    def receive(self, what='a reply'):
        """The next line from the controller, as an object."""
        while b'\n' not in self._buf:
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                raise NetschedError('controller sent no %s within %.0f s'
                                    % (what, self.timeout_s)) from None
            if not chunk:
                raise NetschedError('controller closed the channel')
            self._buf += chunk
        line, self._buf = self._buf.split(b'\n', 1)
        return decode(line)

    def request(self, op, **fields):
        """Send a request and return its reply; an error reply raises, so
        no caller can mistake a refusal for an answer."""
        self.tell(op, **fields)
        reply = self.receive('answer to %r' % op)
        if not reply.get('ok'):
            raise NetschedError('controller: %s' % reply.get('error'))
        return reply

    # conveniences
    def status(self):
        """Switches connected and ready, rules, policy: what netsched
        polls until the fabric is up."""
        return self.request('status')

    def set_class(self, match, cls, priority=100):
        """A manual classification rule in every ingress switch; the id
        comes back only once the switches confirmed it."""
        return self.request('set_class', match=match, cls=cls,
                            priority=priority)['id']

    def clear_class(self, rule_id=None):
        """Remove one manual rule (or all), confirmed like set_class."""
        if rule_id is None:
            return self.request('clear_class')
        return self.request('clear_class', id=rule_id)
