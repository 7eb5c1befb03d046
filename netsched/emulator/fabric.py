"""The emulated fabric: a topology graph brought up in Mininet with
userspace Open vSwitch switches, strict-priority tc classes on every
link egress, and netsched's Ryu controller.

    with Fabric(ControllerSpec.for_link(fat_tree(4), 20)) as fab:
        fab.host('h0_0_0').cmd('ping -c1 10.1.0.2')

Teardown always runs -- after success, an exception, SIGINT or SIGTERM --
and removes exactly what the run created. Before creating anything the
run records the names it will use (runstate.py), so `netsched clean` can
finish the job if the process is killed outright.
"""
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from functools import partial

from . import interfaces, ovs, runstate
from .. import qos
from .. import topology as topo
from ..errors import ConfigError, NetschedError, PrerequisiteError
from .controller import ControllerProcess
from .mininet_adapter import (_mininet, intf_name, mininet_topo,
                              switch_interfaces)

SNDBUF_BYTES = 64 << 20         # OVS shared tx buffer (see ovs.py)


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Fabric:
    """An emulated fabric. Parameters:
      spec          the controller's ControllerSpec (control.spec): the
                    topology graph, the strict-priority classes per
                    egress port, the scale (the fastest link is emulated
                    at its capacity / scale; every link is scaled by the
                    same factor), the policy, the circuit scheduler, the
                    class map, the scheduler's knobs and the decision log
      mtu           MTU of every interface (jumbo frames by default:
                    the emulator's capacity is packets per second)
      queue_packets pfifo limit of every class (of every bucket, with
                    fair_queues)
      fair_queues   0, or 2/4/8/16 hashed round-robin buckets per class:
                    stochastic per-connection fairness (netsched.qos)
      controller    True to run netsched's Ryu controller (with a policy
                    or circuits and no decision log, it logs in the
                    run's state directory)
      framework     the SDN framework the controller app runs under:
                    'ryu' (the default) or 'os-ken'
      host_tcp      the hosts' measuring knobs (interfaces.host_commands:
                    minimum RTO, initial and clamped window, sysctls),
                    or None: none
    """

    def __init__(self, spec, mtu=9000, queue_packets=qos.QUEUE_PACKETS,
                 fair_queues=16, controller=True, log=None, run_id=None,
                 ready_timeout_s=60.0, host_tcp=None, framework='ryu'):
        link_mbps = spec.link_mbps()
        # the rate back from the scale may pass a 1000 asked for by ulps
        if not 0 < link_mbps <= 1000 * (1 + 1e-12):
            raise ConfigError('link_mbps must be in (0, 1000], got %r '
                              '(Mininet links stop at 1 Gbit/s)' % (link_mbps,))
        if not isinstance(mtu, int) or not 576 <= mtu <= 9000:
            raise ConfigError('mtu must be an integer in 576..9000, got %r'
                              % (mtu,))
        if not isinstance(queue_packets, int) or queue_packets < 1:
            raise ConfigError('queue_packets must be a positive integer, '
                              'got %r' % (queue_packets,))
        self.spec = spec
        self.g = spec.g
        self.queues = spec.queues
        self.link_mbps = link_mbps
        self.mtu = mtu
        self.queue_packets = queue_packets
        self.fair_queues = qos.check_buckets(fair_queues)
        self.use_controller = controller
        self.policy = spec.policy
        self.decision_log = spec.decision_log
        self.framework = framework
        self.host_tcp = host_tcp
        self.ready_timeout_s = ready_timeout_s
        self.log = log or (lambda msg: None)
        self.run_id = run_id or time.strftime('%Y%m%d-%H%M%S-') + \
            uuid.uuid4().hex[:6]
        self.scale = spec.scale         # DC bps per emulated bps
        self.net = None
        self.state = None
        self.controller = None
        self.sndbuf = None
        self.timings = {}
        self._procs = []
        self._old_handlers = None

    # --- public ----------------------------------------------------------
    def rate_bps(self, u, v):
        """Emulated rate of link u-v."""
        return self.g[u][v]['capacity_bps'] / self.scale

    def host(self, name):
        return self.net.get(name)

    def hosts(self):
        return [self.net.get(n) for n in topo.hosts(self.g)]

    def ip(self, name):
        return self.g.nodes[name]['ip']

    def popen(self, host, args, **kwargs):
        """Start a process inside a host; it is stopped at teardown."""
        p = self.host(host).popen(args, **kwargs)
        self.state.add_pid(p.pid, '%s: %s' % (host, ' '.join(map(str, args))))
        self._procs.append(p)
        return p

    def set_links(self, link_ids, up):
        """Take links (topology.link_id names) down or bring them back:
        one end's interface, whose veth peer loses its carrier with it,
        so both switches report their port down, as with a cut cable,
        and the controller reroutes."""
        for lid in sorted(link_ids):
            u, v = self._ends(lid)
            name = intf_name(u, topo.port(self.g, u, v))
            r = subprocess.run(['ip', 'link', 'set', 'dev', name,
                                'up' if up else 'down'],
                               capture_output=True, text=True)
            if r.returncode:
                raise NetschedError('cannot take %s %s: %s' % (
                    name, 'up' if up else 'down', r.stderr.strip()))

    def kill_controller(self):
        """A fault: the controller process is killed (by its pid); the
        switches go on forwarding on their rules (fail mode secure)."""
        self.controller.stop()

    def restart_controller(self):
        """Start the controller again after :meth:`kill_controller`: the
        switches reconnect (within their reconnect backoff, set short by
        :meth:`short_backoff`) and it adopts their rules."""
        self.controller.start(self.ctl_port, again=True)

    def short_backoff(self, ms=1000):
        """Have every switch retry a lost controller every ``ms`` at most
        (Open vSwitch waits up to 8 s by default)."""
        names = topo.switches(self.g)
        get = ['ovs-vsctl']
        for n in names:
            get += ['--', 'get', 'bridge', n, 'controller']
        r = subprocess.run(get, capture_output=True, text=True)
        uuids = [u for line in r.stdout.split('\n')
                 for u in line.strip('[] ').split(', ') if u]
        if r.returncode or not uuids:
            raise NetschedError('cannot read the switches\' controllers: %s'
                                % r.stderr.strip())
        cmd = ['ovs-vsctl']
        for u in uuids:
            cmd += ['--', 'set', 'controller', u, 'max_backoff=%d' % ms]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise NetschedError('cannot set the switches\' reconnect '
                                'backoff: %s' % r.stderr.strip())

    def _ends(self, lid):
        for u, v in self.g.edges():
            if topo.link_id(u, v) == lid:
                return u, v
        raise NetschedError('no link %s in the fabric' % lid)

    @property
    def socket_path(self):
        """The controller's control socket."""
        return self.controller.socket_path if self.controller else None

    def client(self, timeout_s=10.0):
        """A client of the controller's control channel."""
        return self.controller.client(timeout_s)

    # --- lifecycle ---------------------------------------------------------
    def __enter__(self):
        self._install_signal_handlers()
        try:
            self.start()
        except BaseException:
            self.stop()
            self._restore_signal_handlers()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.stop()
        finally:
            self._restore_signal_handlers()
        return False

    def start(self):
        t0 = time.monotonic()
        self._preflight()
        self.state = runstate.RunState(self.run_id).create(
            topo.switches(self.g), switch_interfaces(self.g))
        Mininet, _, Link, OVSSwitch, RemoteController, setLogLevel = \
            _mininet()
        setLogLevel('error')
        port = _free_port()
        if self.use_controller:
            if (self.policy or self.spec.circuits) and \
                    not self.decision_log:
                self.decision_log = os.path.join(self.state.dir,
                                                 'decisions.jsonl')
                self.spec = self.spec.placed(decision_log=self.decision_log)
            self.controller = ControllerProcess(
                self.state, self.spec, framework=self.framework)
            self.controller.start(port)
        self.ctl_port = port
        self.timings['controller_s'] = time.monotonic() - t0

        class Controller(RemoteController):
            # Mininet probes with telnet and can choke on Ryu's binary
            # HELLO (docs/emulation.md); we check the controller ourselves.
            def checkListening(self):
                pass

        t1 = time.monotonic()
        self.net = Mininet(
            topo=mininet_topo(self.g),
            switch=partial(OVSSwitch, datapath='user',
                           failMode='secure'),
            controller=partial(Controller, ip='127.0.0.1', port=port)
            if self.use_controller else None,
            link=Link, autoSetMacs=False, autoStaticArp=False, build=False)
        self.net.build()
        for h in self.net.hosts:
            self.state.add_pid(h.pid, 'mininet host %s' % h.name)
        self.net.start()
        self.timings['mininet_s'] = time.monotonic() - t1
        t2 = time.monotonic()
        interfaces.configure(self.net, self.g, self.scale, self.queues,
                             self.mtu, self.queue_packets, self.fair_queues,
                             self.host_tcp)
        interfaces.static_arp(self.net, self.g)
        self.timings['interfaces_s'] = time.monotonic() - t2
        t3 = time.monotonic()
        if self.use_controller:
            self.controller.wait_ready(self.ready_timeout_s)
        self.timings['switches_ready_s'] = time.monotonic() - t3
        if self.use_controller:         # without routes nothing crosses
            self._warm_up()
        self.timings['startup_s'] = time.monotonic() - t0
        self.log('fabric up: %d hosts, %d switches, links %.4g Mbit/s, '
                 'Q=%d, MTU %d (%.1f s)'
                 % (len(self.net.hosts), len(self.net.switches),
                    self.link_mbps, self.queues, self.mtu,
                    self.timings['startup_s']))

    def stop(self):
        """Tear down everything this run created. Safe to call twice."""
        if self.state is None:
            return
        t0 = time.monotonic()
        errors = []
        for p in reversed(self._procs):
            runstate.stop_pid(p.pid, runstate.proc_start(p.pid), 3)
        # the controller first: taking the links away would otherwise
        # have it reroute around every port as it goes (the switches fail
        # secure meanwhile)
        if self.controller is not None:
            self.controller.stop()
        if self.net is not None:
            try:
                self.net.stop()
            except Exception as e:          # keep tearing down
                errors.append('mininet stop: %s' % e)
            self.net = None
        left = self.state.remove_leftovers()
        if left:
            self.log('teardown removed leftovers: %s' % ', '.join(left))
        self.state.discard()
        self.state = None
        self.timings['teardown_s'] = time.monotonic() - t0
        if errors:
            raise NetschedError('; '.join(errors))

    # --- steps ---------------------------------------------------------------
    def _preflight(self):
        if os.geteuid() != 0:
            raise PrerequisiteError('the emulator needs root (Mininet, OVS)')
        _mininet()
        ovs.require_running()
        clash = sorted(set(topo.switches(self.g)) & set(ovs.bridges()))
        clash += runstate.interfaces_present(switch_interfaces(self.g))
        if clash:
            raise PrerequisiteError(
                'names this fabric needs already exist: %s. Another '
                'emulation is running, or one was killed: `netsched clean` '
                'removes what killed runs left' % ', '.join(clash[:6]))

    def _warm_up(self):
        """One ping across the fabric: it proves a path works and makes
        ovs-vswitchd create its shared send socket, which is then
        enlarged (it is created with the system default, ~208 KiB)."""
        hs = topo.hosts(self.g)
        out = self.host(hs[0]).cmd('ping -c1 -W2 %s' % self.ip(hs[-1]))
        if ' 0% packet loss' not in out:
            raise NetschedError('fabric is up but %s cannot reach %s: %s'
                                % (hs[0], hs[-1], out.strip()[-200:]))
        self.sndbuf = ovs.ensure_sndbuf(SNDBUF_BYTES)
        if self.sndbuf is None:
            self.log('warning: OVS shared send socket not found; its '
                     'buffer stays at the system default')

    # --- signals -------------------------------------------------------------
    def _install_signal_handlers(self):
        if threading.current_thread() is not threading.main_thread():
            return

        def on_term(signum, frame):
            raise SystemExit(128 + signum)

        self._old_handlers = {s: signal.signal(s, on_term)
                              for s in (signal.SIGTERM, signal.SIGHUP)}

    def _restore_signal_handlers(self):
        for s, h in (self._old_handlers or {}).items():
            signal.signal(s, h)
        self._old_handlers = None
