"""What a run created, recorded before it creates it, so that a run
that was killed can be cleaned up later by exact name and process id.

A run's record is /run/netsched/runs/<run id>/state.json (the folder:
NETSCHED_RUNS_DIR):
  {"run_id", "owner_pid", "owner_start", "bridges": [...],
   "interfaces": [...], "pids": [{"pid", "start", "what"}], "files": [...]}
Processes are identified by pid *and* start time (field 22 of
/proc/PID/stat), so a recycled pid is never killed. The run's controller
listens on ctl.sock in the same folder; `netsched status` finds a live
run's controller there (live_runs).
"""
import json
import os
import shutil
import signal
import subprocess
import time

from . import ovs

RUNS_DIR = os.environ.get('NETSCHED_RUNS_DIR', '/run/netsched/runs')
SOCKET_NAME = 'ctl.sock'        # a run's control socket, in its folder


def proc_start(pid):
    """Start time of a process in clock ticks, or None if it is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            s = f.read()
    except OSError:
        return None
    return int(s[s.rindex(')') + 2:].split()[19])


def alive(pid, start):
    return start is not None and proc_start(pid) == start


def stop_pid(pid, start, timeout_s=5.0):
    """SIGTERM, then SIGKILL after timeout, the process with this pid and
    start time -- and only that one."""
    if not alive(pid, start):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass
        if not alive(pid, start):
            return
        time.sleep(0.05)
    if alive(pid, start):
        os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


class RunState:
    def __init__(self, run_id, runs_dir=None):
        self.run_id = run_id
        self.dir = os.path.join(runs_dir or RUNS_DIR, run_id)
        self.path = os.path.join(self.dir, 'state.json')
        me = os.getpid()
        self.data = {'run_id': run_id, 'owner_pid': me,
                     'owner_start': proc_start(me), 'bridges': [],
                     'interfaces': [], 'pids': [], 'files': []}

    def create(self, bridges, interfaces):
        os.makedirs(self.dir, mode=0o700, exist_ok=False)
        self.data['bridges'] = list(bridges)
        self.data['interfaces'] = list(interfaces)
        self.save()
        return self

    def save(self):
        tmp = self.path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)

    def add_pid(self, pid, what):
        self.data['pids'].append({'pid': pid, 'start': proc_start(pid),
                                  'what': what})
        self.save()

    def add_file(self, path):
        self.data['files'].append(path)
        self.save()

    @classmethod
    def load(cls, path):
        with open(path) as f:
            data = json.load(f)
        st = cls.__new__(cls)
        st.run_id = data['run_id']
        st.dir = os.path.dirname(path)
        st.path = path
        st.data = data
        return st

    def owner_alive(self):
        return alive(self.data['owner_pid'], self.data['owner_start'])

    @property
    def socket(self):
        """The run's control socket (there while its controller runs)."""
        return os.path.join(self.dir, SOCKET_NAME)

    def remove_leftovers(self):
        """Stop recorded processes, delete recorded bridges, interfaces
        and files; returns a description of what was found."""
        found = []
        for p in reversed(self.data['pids']):
            if alive(p['pid'], p['start']):
                found.append('process %d (%s)' % (p['pid'], p['what']))
                stop_pid(p['pid'], p['start'])
        found += ['bridge %s' % b for b in ovs.del_bridges(self.data['bridges'])]
        present = set(_root_links())
        for intf in self.data['interfaces']:
            if intf in present:
                subprocess.run(['ip', 'link', 'del', 'dev', intf],
                               capture_output=True)
                found.append('interface %s' % intf)
        for path in self.data['files']:
            if os.path.exists(path):
                os.unlink(path)
        return found

    def discard(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def _root_links():
    out = subprocess.run(['ip', '-o', 'link', 'show'], capture_output=True,
                         text=True).stdout
    names = []
    for line in out.splitlines():
        parts = line.split(':', 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split('@')[0])
    return names


def interfaces_present(names):
    present = set(_root_links())
    return [n for n in names if n in present]


def recorded_runs(runs_dir=None):
    d = runs_dir or RUNS_DIR
    if not os.path.isdir(d):
        return []
    runs = []
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name, 'state.json')
        if os.path.exists(path):
            runs.append(RunState.load(path))
    return runs


def live_runs(runs_dir=None):
    """The recorded runs whose owner process is alive, the newest (the
    latest started owner) first."""
    return sorted((st for st in recorded_runs(runs_dir) if st.owner_alive()),
                  key=lambda st: st.data.get('owner_start') or 0,
                  reverse=True)


def clean(runs_dir=None, log=print):
    """Remove what killed runs left behind. Runs whose owner process is
    still alive are left alone. Returns the number of runs cleaned."""
    n = 0
    for st in recorded_runs(runs_dir):
        if st.owner_alive():
            log('run %s is still active (pid %d); left alone'
                % (st.run_id, st.data['owner_pid']))
            continue
        found = st.remove_leftovers()
        log('run %s: removed %s' % (st.run_id, ', '.join(found) or
                                     'nothing (already gone)'))
        st.discard()
        n += 1
    return n
