"""netsched's Ryu controller as a process of an emulation run: started
with a fabric description (topology, classes, policy, control socket),
waited for, stopped by its recorded pid."""
import json
import os
import subprocess
import sys
import time

from . import runstate
from .. import ROOT
from ..control.channel import ControlClient, fabric_description
from ..errors import ConfigError, NetschedError
from ..spec import IMPORT_DIR_ENV

CONTROLLER_APP = os.path.join(ROOT, 'controllers', 'netsched_app.py')
CONTROLLER_LAUNCHER = os.path.join(ROOT, 'controllers', 'launch.py')
START_TIMEOUT_S = 20.0
# the frameworks the app loads under (controllers/sdn_framework.py)
FRAMEWORKS = ('ryu', 'os-ken')
DEFAULT_FRAMEWORK = 'ryu'


def check_framework(name):
    """A framework name the launcher knows, or a ConfigError."""
    if name not in FRAMEWORKS:
        raise ConfigError('framework must be one of %s, got %r'
                          % (', '.join(FRAMEWORKS), name))
    return name


def ryu_command(port, host=None, framework=DEFAULT_FRAMEWORK):
    """The command line that runs netsched's app: ryu-manager's (the
    launcher's default) or, with framework 'os-ken', os-ken's."""
    args = [sys.executable, CONTROLLER_LAUNCHER]
    if check_framework(framework) != DEFAULT_FRAMEWORK:
        args += ['--framework', framework]
    if host:
        args += ['--ofp-listen-host', host]
    return args + ['--ofp-tcp-listen-port', str(port), CONTROLLER_APP]


def ryu_env(desc_path):
    # the controller runs in the run's folder: a policy named by module
    # path is looked for where netsched was started, as in this process
    env = dict(os.environ, NETSCHED_FABRIC=desc_path,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    env[IMPORT_DIR_ENV] = os.environ.get(IMPORT_DIR_ENV) or os.getcwd()
    return env


class ControllerProcess:
    """The controller app for one fabric (its ControllerSpec), run in
    ``state``'s directory under ``framework`` ('ryu' or 'os-ken'), its
    control socket there."""

    def __init__(self, state, spec, framework=DEFAULT_FRAMEWORK):
        self.state = state
        self.framework = check_framework(framework)
        self.socket_path = os.path.join(state.dir, 'ctl.sock')
        self.desc = fabric_description(spec, self.socket_path)
        self.proc = None
        self.log_path = os.path.join(state.dir, 'ryu.log')

    def client(self, timeout_s=10.0):
        return ControlClient(self.socket_path, timeout_s).connect(wait_s=5)

    def start(self, port, again=False):
        """Start the controller (``again``: after it was killed, a fault:
        its log goes on in the same file)."""
        desc_path = os.path.join(self.state.dir, 'fabric.json')
        with open(desc_path, 'w') as f:
            json.dump(self.desc, f)
        with open(self.log_path, 'a' if again else 'w') as logf:
            self.proc = subprocess.Popen(
                ryu_command(port, '127.0.0.1', self.framework), stdout=logf,
                stderr=subprocess.STDOUT, env=ryu_env(desc_path),
                start_new_session=True, cwd=self.state.dir)
        self._start_time = runstate.proc_start(self.proc.pid)
        self.state.add_pid(self.proc.pid, 'ryu controller')
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            self.check_alive()
            if os.path.exists(self.socket_path):
                try:
                    with self.client(5) as c:
                        c.status()
                    return
                except NetschedError:
                    pass
            if time.monotonic() > deadline:
                raise NetschedError('the controller did not start within '
                                    '%.0f s: %s' % (START_TIMEOUT_S,
                                                    self.tail()))
            time.sleep(0.1)

    def check_alive(self):
        if self.proc is not None and self.proc.poll() is not None:
            raise NetschedError('the controller exited: %s' % self.tail())

    def wait_ready(self, timeout_s):
        """Until every switch confirmed its program by barrier."""
        deadline = time.monotonic() + timeout_s
        with self.client() as c:
            while True:
                st = c.status()
                if st['all_ready']:
                    return
                self.check_alive()
                if time.monotonic() > deadline:
                    raise NetschedError(
                        '%d of %d switches ready after %.0f s'
                        % (st['ready'], st['switches'], timeout_s))
                time.sleep(0.1)

    def stop(self):
        if self.proc is not None:
            runstate.stop_pid(self.proc.pid, self._start_time)
            self.proc = None

    def tail(self, n=15):
        try:
            with open(self.log_path) as f:
                return ''.join(f.readlines()[-n:]).strip() or '(empty log)'
        except OSError:
            return '(no log)'
