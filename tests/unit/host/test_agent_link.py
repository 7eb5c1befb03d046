"""The agent's channel to the controller (host.agent.ControllerLink)
across a controller restart, against a fake controller on a Unix socket:
the link reconnects to the same path, registers again with the host's
progress (sends begun, transfers received, marks), then sends what was
queued meanwhile. No emulator, no controller app."""
import json
import os
import queue
import shutil
import socket
import tempfile
import threading
import time

import pytest

from netsched.host.agent import ControllerLink

PLAN = {'conns': [{'id': 1, 'sport': 40001, 'dport': 5000,
                   'dst_ip': '10.0.1.2'}],
        'jobs': {'a': {'iterations': 2, 'bytes_per_iteration': 1e6}},
        'tasks': [{'kind': 'send', 'id': i, 'coflow': 'a/%d' % k,
                   'job': 'a', 'bytes': 1e6, 'conn': 1, 'dst': 'hr0',
                   'iter': k, 'urgency': None, 'position': None,
                   'deps': []} for k, i in enumerate((1, 2))]
        + [{'kind': 'compute', 'id': 5, 'deps': []}]}
REPORTS = ['start', 'recv', 'mark']


class FakeController:
    """A controller's socket: it keeps every line agents send and answers
    each registration with ``reply``."""

    def __init__(self, path, reply=None):
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(4)
        self.reply = reply or {'ok': True, 'reports': REPORTS,
                               'classes': {}}
        self.got = queue.Queue()
        self.conns = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._client, args=(conn,),
                             daemon=True).start()

    def _client(self, conn):
        try:
            for line in conn.makefile('rb'):
                m = json.loads(line)
                self.got.put(m)
                if m['op'] == 'register':
                    conn.sendall((json.dumps(self.reply) + '\n').encode())
        except (OSError, ValueError):
            pass

    def next(self, timeout_s=5.0):
        return self.got.get(timeout=timeout_s)

    def push(self, msg):
        self.conns[-1].sendall((json.dumps(msg) + '\n').encode())

    def kill(self):
        """The process dies: its listener and connections close; its
        socket file stays, as a killed process leaves it. (Shut first:
        an accept blocked in a thread keeps a listener merely closed.)"""
        try:
            self.srv.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.srv.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


@pytest.fixture
def path():
    d = tempfile.mkdtemp(prefix='ns-link-')          # AF_UNIX: short
    try:
        yield os.path.join(d, 'ctl.sock')
    finally:
        shutil.rmtree(d, ignore_errors=True)


def restart(path, **kw):
    """A new controller on the same path (it replaces the stale file)."""
    os.unlink(path)
    return FakeController(path, **kw)


def until(cond, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, 'timed out'
        time.sleep(0.01)


def drain(inbox):
    out = []
    while not inbox.empty():
        out.append(inbox.get_nowait())
    return out


def test_the_link_reconnects_and_registers_again_with_its_progress(path):
    ctl = FakeController(path)
    inbox = queue.Queue()
    link = ControllerLink(path, inbox)
    link.register('hl0', 'r1', PLAN)
    first = ctl.next()
    assert first == {'op': 'register', 'host': 'hl0', 'run': 'r1',
                     'conns': PLAN['conns'], 'jobs': PLAN['jobs'],
                     'sends': [{k: t[k] for k in (
                         'id', 'coflow', 'job', 'bytes', 'conn', 'dst',
                         'iter', 'urgency', 'position')}
                         for t in PLAN['tasks'][:2]]}
    link.report(ev='start', task=1, ready=1.0, t=1.01)
    link.report(ev='recv', task=7, t=1.2)       # a transfer to this host
    link.report(ev='mark', job='a', iter=0, t=1.5, loss=None)
    assert drain(inbox) == [('flush',)]         # the first of a batch
    link.flush()
    assert [e['ev'] for e in ctl.next()['events']] == ['start', 'recv',
                                                        'mark']
    ctl.push({'op': 'classes', 'classes': {'a/0': 0}})
    until(lambda: not inbox.empty())
    assert drain(inbox) == [('ctl', {'op': 'classes', 'classes': {'a/0': 0}})]

    ctl.kill()
    until(lambda: link.state == 'reconnecting')
    # the data path goes on: a report queues, nothing is flushed meanwhile
    link.report(ev='start', task=2, ready=2.0, t=2.02)
    assert not link.pending() and drain(inbox) == []
    link.flush()
    time.sleep(0.35)                 # some attempts (every 0.1 s) fail
    assert link.state == 'reconnecting'
    ctl2 = restart(path, reply={'ok': True, 'reports': REPORTS,
                                'classes': {'a/1': 2}, 'sends': {}})
    again = ctl2.next()
    assert again == dict(first, started=[[1, 1.0], [2, 2.0]], done=[7],
                         marks=[{'job': 'a', 'iter': 0, 't': 1.5,
                                 'loss': None}])
    until(lambda: link.state == 'up' and inbox.qsize() == 2)
    # the restarted controller's classes, then the queued report
    assert drain(inbox) == [('ctl', {'op': 'classes', 'classes': {'a/1': 2},
                                     'sends': {}}), ('flush',)]
    assert link.pending()
    link.flush()
    assert ctl2.next() == {'op': 'report', 'events': [
        {'ev': 'start', 'task': 2, 'ready': 2.0, 't': 2.02}]}
    assert link.reconnects == 1
    ctl2.push({'op': 'rates', 'rates': {'2': 1000}})
    until(lambda: not inbox.empty())
    assert drain(inbox) == [('ctl', {'op': 'rates', 'rates': {'2': 1000}})]
    ctl2.kill()


def test_a_failed_write_requeues_the_reports_for_after_the_new_registration(
        path):
    ctl = FakeController(path)
    inbox = queue.Queue()
    link = ControllerLink(path, inbox)
    link.register('hl0', 'r1', PLAN)
    ctl.next()
    old_reader = link.rfile
    # the write goes to a channel whose other end is gone
    a, b = socket.socketpair()
    b.close()
    link.sock = a
    link.report(ev='start', task=1, ready=1.0, t=1.0)
    link.flush()
    again = ctl.next()              # the same controller, a new channel
    assert again['op'] == 'register' and again['started'] == [[1, 1.0]]
    until(lambda: link.state == 'up' and link.pending())
    link.flush()
    assert ctl.next() == {'op': 'report', 'events': [
        {'ev': 'start', 'task': 1, 'ready': 1.0, 't': 1.0}]}
    # the old channel's reader ending now is not a new break
    assert link.rfile is not old_reader
    ctl.conns[0].shutdown(socket.SHUT_RDWR)
    time.sleep(0.2)
    assert link.state == 'up' and link.reconnects == 1 and ctl.got.empty()
    ctl.kill()


def test_a_controller_that_does_not_come_back_is_given_up(path,
                                                          monkeypatch,
                                                          capsys):
    monkeypatch.setattr(ControllerLink, 'GIVE_UP_S', 0.3)
    ctl = FakeController(path)
    link = ControllerLink(path, queue.Queue())
    link.register('hl0', 'r1', PLAN)
    ctl.kill()
    until(lambda: link.state == 'lost', 3.0)
    link.report(ev='start', task=1, ready=1.0, t=1.0)
    assert not link.pending() and link.queued == []
    assert 'controller channel lost' in capsys.readouterr().err
    # one that refuses the registration is not asked again
    ctl = restart(path)
    link = ControllerLink(path, queue.Queue())
    link.register('hl0', 'r1', PLAN)
    ctl.next()
    ctl.kill()
    ctl2 = restart(path, reply={'ok': False, 'error': 'nope'})
    until(lambda: link.state == 'lost', 3.0)
    assert ctl2.next()['op'] == 'register'
    time.sleep(0.3)
    assert ctl2.got.empty()
    assert 'refused the re-registration: nope' in capsys.readouterr().err
    ctl2.kill()
