"""Teardown runs after an exception, SIGINT and SIGTERM; after SIGKILL,
`netsched clean` removes what the run recorded."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from netsched.emulator import runstate
from netsched.control.spec import ControllerSpec
from netsched.emulator.fabric import Fabric
from netsched.topology import dumbbell, fat_tree

from .helpers import leftovers


def test_teardown_after_exception():
    g = dumbbell(2)
    with pytest.raises(RuntimeError, match='boom'):
        with Fabric(ControllerSpec.for_link(g, 10)) as f:
            pids = [(p['pid'], p['start']) for p in f.state.data['pids']]
            raise RuntimeError('boom')
    assert leftovers(g, pids) == []


def start_up(topology='dumbbell,2'):
    p = subprocess.Popen([sys.executable, '-m', 'netsched', 'up',
                          '--topology', topology, '--link-mbps', '10'],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    lines = []
    deadline = time.monotonic() + 90
    for line in p.stdout:
        lines.append(line)
        if 'Ctrl-C tears it down' in line or time.monotonic() > deadline:
            break
    assert p.poll() is None, ''.join(lines)
    state = None
    for path in glob.glob(os.path.join(runstate.RUNS_DIR, '*', 'state.json')):
        with open(path) as f:
            data = json.load(f)
        if data['owner_pid'] == p.pid:
            state = data
    assert state is not None, 'run state not recorded'
    return p, [(d['pid'], d['start']) for d in state['pids']], state


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGINT])
def test_teardown_on_signal(sig):
    p, pids, state = start_up()
    try:
        assert len(pids) >= 5 and all(runstate.alive(*x) for x in pids)
        p.send_signal(sig)
        out = p.communicate(timeout=60)[0]
    finally:
        if p.poll() is None:       # the signal did not stop it: SIGTERM
            p.terminate()
            p.communicate(timeout=60)
    assert leftovers(dumbbell(2), pids) == [], out
    assert not os.path.exists(os.path.join(runstate.RUNS_DIR,
                                           state['run_id'])), out


def test_clean_after_sigkill():
    p, pids, state = start_up()
    p.kill()
    p.wait()
    g = dumbbell(2)
    assert leftovers(g, pids), 'SIGKILL should leave the run behind'
    r = subprocess.run([sys.executable, '-m', 'netsched', 'clean'],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert state['run_id'] in r.stdout
    assert leftovers(g, pids) == []
    assert not os.path.exists(os.path.join(runstate.RUNS_DIR,
                                           state['run_id']))


def test_process_started_in_a_host_is_stopped_at_teardown():
    g = fat_tree(2)
    with Fabric(ControllerSpec.for_link(g, 10)) as f:
        p = f.popen('h0_0_0', ['sleep', '600'])
        rec = (p.pid, runstate.proc_start(p.pid))
        assert runstate.alive(*rec)
    assert not runstate.alive(*rec)
    assert leftovers(g) == []
