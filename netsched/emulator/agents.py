"""The coordinator's side of the host agents: one agent per host of the
plan, either started by the runner inside its Mininet host (``launch``)
or started by hand (``netsched run --attach``: the user runs the command
this prints in each host), all connecting to one Unix socket. Set-up
hands every agent its plan and walks them through listen and connect
together; then messages are read without blocking, and an agent that
exits or goes quiet is an error naming its host."""
import json
import os
import selectors
import socket
import sys
import time

from .. import ROOT
from ..errors import NetschedError

STUCK_S = 10.0
CONNECT_TIMEOUT_S = 60.0


class AgentFailed(NetschedError):
    """An agent died or misbehaved; ``host`` says whose."""

    def __init__(self, msg, host=None):
        super().__init__(msg)
        self.host = host


def agent_command(sock_path, host, python=sys.executable):
    return [python, '-m', 'netsched.host.agent', '--socket', sock_path,
            '--host', host]


def hand_command(sock_path, host):
    """The shell command that starts the agent of ``host`` by hand."""
    return 'PYTHONPATH=%s python3 -m netsched.host.agent --socket %s ' \
        '--host %s' % (ROOT, sock_path, host)


def agent_env():
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep +
                os.environ.get('PYTHONPATH', ''))


class AgentPool:
    def __init__(self, hosts, sock_path):
        self.hosts = list(hosts)
        self.path = sock_path
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(sock_path)
        os.chmod(sock_path, 0o600)      # the coordinator's owner only
        self.server.listen(len(self.hosts) + 8)
        self.procs, self.logs = {}, {}
        self.sock, self.rbuf, self.last_seen = {}, {}, {}
        self.sel = None
        self.lost = {}                  # host -> why its agent is gone

    def close(self):
        for s, _ in self.sock.values():
            s.close()
        self.server.close()
        if os.path.exists(self.path):
            os.unlink(self.path)

    # --- set-up -------------------------------------------------------------
    def launch(self, fab, out_dir):
        """Start an agent in every host of the plan (stopped at teardown)."""
        for h in self.hosts:
            lp = os.path.join(out_dir, 'agent-%s.log' % h)
            self.logs[h] = lp
            with open(lp, 'w') as f:
                self.procs[h] = fab.popen(h, agent_command(self.path, h),
                                          stdout=f, stderr=f,
                                          env=agent_env())

    def accept(self, timeout_s=CONNECT_TIMEOUT_S):
        """Until every host's agent said hello."""
        deadline = time.monotonic() + timeout_s
        while len(self.sock) < len(self.hosts):
            self.check_procs()
            self.server.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                s, _ = self.server.accept()
            except socket.timeout:
                if time.monotonic() < deadline:
                    continue
                missing = sorted(set(self.hosts) - set(self.sock))
                raise AgentFailed('no agent connected within %.0f s for '
                                  '%s' % (timeout_s, ', '.join(missing)))
            s.settimeout(CONNECT_TIMEOUT_S)
            f = s.makefile('r')
            h = json.loads(f.readline() or '{}').get('host')
            if h not in self.hosts or h in self.sock:
                s.close()
                raise AgentFailed('an agent said it runs on %r, which is '
                                  '%s' % (h, 'taken' if h in self.sock else
                                          'not a host of this experiment'))
            self.logs.setdefault(h, '(started by hand)')
            self.sock[h] = (s, f)

    def handshake(self, plan_for):
        """Plans out; every agent listening, then every agent connected."""
        for h in self.hosts:
            self.send(h, plan_for(h))
        self._phase('listening')
        self.broadcast({'op': 'connect'})
        self._phase('connected')
        self.sel = selectors.DefaultSelector()
        for h, (s, f) in self.sock.items():
            s.setblocking(False)
            self.rbuf[h] = b''
            self.sel.register(s, selectors.EVENT_READ, h)
            self.last_seen[h] = time.monotonic()

    def _phase(self, want):
        for h, (s, f) in self.sock.items():
            line = f.readline()
            if not line:
                self.check_procs()
                raise AgentFailed('agent on %s closed its channel during '
                                  'set-up (log: %s)' % (h, self.logs[h]))
            m = json.loads(line)
            if m.get('op') == 'error':
                raise AgentFailed('agent on %s: %s' % (h, m['msg']))
            if m.get('op') != want:
                raise AgentFailed('agent on %s: expected %s, got %r'
                                  % (h, want, m))

    # --- the run ------------------------------------------------------------
    def send(self, h, msg):
        if h in self.lost:              # gone: its jobs failed
            return
        s = self.sock[h][0]
        blocking = s.getblocking()
        s.setblocking(True)
        s.sendall((json.dumps(msg, separators=(',', ':')) + '\n').encode())
        s.setblocking(blocking)

    def broadcast(self, msg, ignore_errors=False):
        for h in self.hosts:
            try:
                self.send(h, msg)
            except OSError:
                if not ignore_errors:
                    raise

    def poll(self, timeout_s):
        """(host, message) for every line that arrived within timeout_s;
        an agent whose channel closed comes as ``{'op': 'lost', 'why'}``
        (the run goes on without it: :meth:`lose`)."""
        out = []
        for key, _ in self.sel.select(timeout=timeout_s):
            try:
                out += [(key.data, m) for m in self._read(key.data)]
            except AgentFailed as e:
                out.append((key.data, self.lose(key.data, str(e))))
        return out

    def lose(self, h, why):
        """Let the agent of ``h`` go: nothing more is read from or sent to
        it, and it no longer counts for liveness. Returns the 'lost'
        message the coordinator handles."""
        if h not in self.lost:
            self.lost[h] = why
            s = self.sock[h][0]
            try:
                self.sel.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()
            self.last_seen.pop(h, None)
        return {'op': 'lost', 'why': why}

    def drain(self, done, wait_s):
        """Messages until done() or wait_s; agents that close are let go
        (the run is over)."""
        deadline = time.monotonic() + wait_s
        while not done() and time.monotonic() < deadline:
            for key, _ in self.sel.select(timeout=0.05):
                try:
                    yield from ((key.data, m) for m in self._read(key.data))
                except AgentFailed:
                    self.sel.unregister(key.fileobj)

    def _read(self, h):
        s = self.sock[h][0]
        try:
            data = s.recv(1 << 16)
        except BlockingIOError:
            return []
        if not data:
            p = self.procs.get(h)
            try:                     # a dead agent: say how it ended
                if p is not None:
                    p.wait(timeout=1.0)
            except Exception:        # still running: it closed the channel
                pass
            if p is not None and p.returncode is not None:
                raise AgentFailed('agent on %s exited with code %s (log: %s)'
                                  % (h, p.returncode, self.logs[h]), h)
            raise AgentFailed('agent on %s closed its channel (log: %s)'
                              % (h, self.logs[h]), h)
        self.last_seen[h] = time.monotonic()
        buf = self.rbuf[h] + data
        *lines, self.rbuf[h] = buf.split(b'\n')
        return [json.loads(line) for line in lines]

    def check_procs(self):
        for h, p in self.procs.items():
            if h not in self.lost and p.poll() is not None:
                raise AgentFailed('agent on %s exited with code %s (log: %s)'
                                  % (h, p.returncode, self.logs[h]), h)

    def liveness(self):
        """[(host, 'lost' message)] for the agents that exited or went
        quiet since the last call: the run goes on without them."""
        out = []
        for h, p in self.procs.items():
            if h not in self.lost and p.poll() is not None:
                out.append((h, self.lose(h, 'agent on %s exited with code %s '
                                         '(log: %s)' % (h, p.returncode,
                                                        self.logs[h]))))
        now = time.monotonic()
        for h, seen in list(self.last_seen.items()):
            if now - seen > STUCK_S:
                out.append((h, self.lose(h, 'agent on %s sent nothing for '
                                         '%.0f s: stuck (log: %s)'
                                         % (h, now - seen, self.logs[h]))))
        return out

    def kill(self, h):
        """Kill the agent of ``h`` (SIGKILL, by its process; a fault)."""
        p = self.procs.get(h)
        if p is not None and p.poll() is None:
            p.kill()
