"""Local peers only: the coordinator's socket and its run folder are
their owner's alone, and an agent lost mid-run is let go (its jobs fail)
rather than stopping the run. The controller's socket is checked where
the app is launched (test_ryu_shell)."""
import os
import socket
import tempfile

from netsched.emulator import agents, runstate


def test_the_agents_socket_and_the_run_folder_are_the_owners():
    d = tempfile.mkdtemp(prefix='ns-peers-')        # AF_UNIX: short path
    try:
        st = runstate.RunState('r1', runs_dir=d).create([], [])
        assert os.stat(st.dir).st_mode & 0o777 == 0o700
        pool = agents.AgentPool(['h1'], os.path.join(st.dir, 'coord.sock'))
        assert os.stat(pool.path).st_mode & 0o777 == 0o600
        pool.close()
    finally:
        import shutil
        shutil.rmtree(d, ignore_errors=True)


class _Proc:
    def __init__(self, code=None):
        self.returncode = code
        self.killed = False

    def poll(self):
        return self.returncode

    def kill(self):
        self.killed = True
        self.returncode = -9


def test_a_lost_agent_is_let_go_and_the_others_go_on(tmp_path):
    d = tempfile.mkdtemp(prefix='ns-peers-')
    pool = agents.AgentPool(['h1', 'h2'], os.path.join(d, 'c.sock'))
    try:
        import selectors
        pool.sel = selectors.DefaultSelector()
        for h in ('h1', 'h2'):
            a, b = socket.socketpair()
            a.setblocking(False)
            pool.sock[h] = (a, None)
            pool.rbuf[h] = b''
            pool.sel.register(a, selectors.EVENT_READ, h)
            pool.last_seen[h] = 1e18             # not stuck
            pool.logs[h] = 'agent-%s.log' % h
            pool.procs[h] = _Proc()
            setattr(pool, '_peer_' + h, b)
        # h1's agent is killed: it exits, its channel closes
        pool.kill('h1')
        assert pool.procs['h1'].killed
        getattr(pool, '_peer_h1').close()
        getattr(pool, '_peer_h2').sendall(b'{"op":"hb"}\n')
        got = dict(pool.poll(1.0))
        assert got['h2'] == {'op': 'hb'}
        assert got['h1'] == {'op': 'lost', 'why': 'agent on h1 exited with '
                             'code -9 (log: agent-h1.log)'}
        # let go: no more liveness alarms, no more sends to it
        assert pool.liveness() == []
        pool.send('h1', {'op': 'release'})
        pool.send('h2', {'op': 'release'})
        assert getattr(pool, '_peer_h2').recv(100) == b'{"op":"release"}\n'
        # another agent that exits on its own is found by liveness
        pool.procs['h2'].returncode = 3
        assert pool.liveness() == [('h2', {'op': 'lost', 'why': 'agent on '
                                           'h2 exited with code 3 (log: '
                                           'agent-h2.log)'})]
        assert set(pool.lost) == {'h1', 'h2'}
    finally:
        pool.server.close()
        import shutil
        shutil.rmtree(d, ignore_errors=True)
