"""The emulated fabric: a topology graph brought up in Mininet with
userspace Open vSwitch switches, strict-priority tc classes on every
link egress, and netsched's Ryu controller.

    with Fabric(fat_tree(4), link_mbps=20) as fab:
        fab.host('h0_0_0').cmd('ping -c1 10.1.0.2')

Teardown always runs -- after success, an exception, SIGINT or SIGTERM --
and removes exactly what the run created. Before creating anything the
run records the names it will use (runstate.py), so `netsched clean` can
finish the job if the process is killed outright.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from functools import partial

from . import control, ovs, qos, runstate
from . import topology as topo
from .ctlclient import ControlClient
from .errors import ConfigError, NetschedError, PrerequisiteError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTROLLER_APP = os.path.join(ROOT, 'controllers', 'netsched_app.py')
CONTROLLER_LAUNCHER = os.path.join(ROOT, 'controllers', 'launch.py')
SNDBUF_BYTES = 64 << 20         # OVS shared tx buffer (see ovs.py)


def _mininet():
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        raise PrerequisiteError('Mininet is not installed: run `make setup` '
                                '(as root)') from None
    from mininet.link import Link
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import OVSSwitch, RemoteController
    from mininet.topo import Topo
    return Mininet, Topo, Link, OVSSwitch, RemoteController, setLogLevel


def mininet_topo(g):
    """A mininet.topo.Topo with the graph's names, addresses, datapath
    ids and port numbers (usable with `mn --custom` too)."""
    Topo = _mininet()[1]

    class GraphTopo(Topo):
        def build(self):
            for n in topo.switches(g):
                self.addSwitch(n, dpid='%016x' % g.nodes[n]['dpid'],
                               protocols='OpenFlow13')
            for n in topo.hosts(g):
                d = g.nodes[n]
                self.addHost(n, ip=d['ip'] + '/8', mac=d['mac'])
            for u, v, d in sorted(g.edges(data=True),
                                  key=lambda e: topo.link_id(e[0], e[1])):
                self.addLink(u, v, port1=d['ports'][u], port2=d['ports'][v])

    return GraphTopo()


def intf_name(node, port):
    return '%s-eth%d' % (node, port)


def switch_interfaces(g):
    return sorted(intf_name(s, d['ports'][s])
                  for u, v, d in g.edges(data=True) for s in (u, v)
                  if g.nodes[s]['role'] != topo.HOST)


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Fabric:
    """An emulated fabric. Parameters:
      g             topology graph (netsched.topology)
      link_mbps     emulated rate of the fastest link; every link is
                    scaled by the same factor (capacity_bps / scale)
      queues        strict-priority classes per egress port (1..8)
      mtu           MTU of every interface (jumbo frames by default:
                    the emulator's capacity is packets per second)
      queue_packets pfifo limit of every class (of every bucket, with
                    fair_queues)
      fair_queues   0, or 2/4/8/16 hashed round-robin buckets per class:
                    stochastic per-connection fairness (netsched.qos)
      controller    True to run netsched's Ryu controller
    """

    def __init__(self, g, link_mbps=20.0, queues=8, mtu=9000,
                 queue_packets=32, fair_queues=16, controller=True, log=None,
                 run_id=None, ready_timeout_s=60.0):
        if not (isinstance(link_mbps, (int, float)) and 0 < link_mbps <= 1000):
            raise ConfigError('link_mbps must be in (0, 1000], got %r '
                              '(Mininet links stop at 1 Gbit/s)' % (link_mbps,))
        if not isinstance(mtu, int) or not 576 <= mtu <= 9000:
            raise ConfigError('mtu must be an integer in 576..9000, got %r'
                              % (mtu,))
        if not isinstance(queue_packets, int) or queue_packets < 1:
            raise ConfigError('queue_packets must be a positive integer, '
                              'got %r' % (queue_packets,))
        self.g = g
        self.queues = qos.check_queues(queues)
        self.link_mbps = float(link_mbps)
        self.mtu = mtu
        self.queue_packets = queue_packets
        self.fair_queues = qos.check_buckets(fair_queues)
        self.use_controller = controller
        self.ready_timeout_s = ready_timeout_s
        self.log = log or (lambda msg: None)
        self.run_id = run_id or time.strftime('%Y%m%d-%H%M%S-') + \
            uuid.uuid4().hex[:6]
        cap = max(d['capacity_bps'] for _, _, d in g.edges(data=True))
        self.scale = cap / (self.link_mbps * 1e6)   # DC bps per emulated bps
        self.net = None
        self.state = None
        self.ryu = None
        self.socket_path = None
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

    def client(self, timeout_s=10.0):
        return ControlClient(self.socket_path, timeout_s).connect(wait_s=5)

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
            self._start_controller(port)
        self.timings['controller_s'] = time.monotonic() - t0

        class Controller(RemoteController):
            # Mininet probes with telnet and can choke on Ryu's binary
            # HELLO (DESIGN.md); we check the controller ourselves.
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
        self._configure_interfaces()
        self._static_arp()
        self.timings['interfaces_s'] = time.monotonic() - t2
        t3 = time.monotonic()
        if self.use_controller:
            self._wait_ready()
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
        if self.net is not None:
            try:
                self.net.stop()
            except Exception as e:          # keep tearing down
                errors.append('mininet stop: %s' % e)
            self.net = None
        if self.ryu is not None:
            runstate.stop_pid(self.ryu.pid, self._ryu_start)
            self.ryu = None
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

    def _start_controller(self, port):
        self.socket_path = os.path.join(self.state.dir, 'ctl.sock')
        desc_path = os.path.join(self.state.dir, 'fabric.json')
        with open(desc_path, 'w') as f:
            json.dump(control.fabric_description(
                self.g, self.queues, self.socket_path), f)
        env = dict(os.environ, NETSCHED_FABRIC=desc_path,
                   PYTHONPATH=ROOT + os.pathsep +
                   os.environ.get('PYTHONPATH', ''))
        self.ryu_log = os.path.join(self.state.dir, 'ryu.log')
        with open(self.ryu_log, 'w') as logf:
            self.ryu = subprocess.Popen(
                [sys.executable, CONTROLLER_LAUNCHER,
                 '--ofp-listen-host', '127.0.0.1',
                 '--ofp-tcp-listen-port', str(port), CONTROLLER_APP],
                stdout=logf, stderr=subprocess.STDOUT, env=env,
                start_new_session=True, cwd=self.state.dir)
        self._ryu_start = runstate.proc_start(self.ryu.pid)
        self.state.add_pid(self.ryu.pid, 'ryu controller')
        deadline = time.monotonic() + 20
        while True:
            if self.ryu.poll() is not None:
                raise NetschedError('the controller exited: %s'
                                    % self._ryu_tail())
            if os.path.exists(self.socket_path):
                try:
                    with self.client(5) as c:
                        c.status()
                    return
                except NetschedError:
                    pass
            if time.monotonic() > deadline:
                raise NetschedError('the controller did not start within '
                                    '20 s: %s' % self._ryu_tail())
            time.sleep(0.1)

    def _ryu_tail(self, n=15):
        try:
            with open(self.ryu_log) as f:
                return ''.join(f.readlines()[-n:]).strip() or '(empty log)'
        except OSError:
            return '(no log)'

    def _wait_ready(self):
        deadline = time.monotonic() + self.ready_timeout_s
        with self.client() as c:
            while True:
                st = c.status()
                if st['all_ready']:
                    return
                if self.ryu.poll() is not None:
                    raise NetschedError('the controller exited: %s'
                                        % self._ryu_tail())
                if time.monotonic() > deadline:
                    raise NetschedError(
                        '%d of %d switches ready after %.0f s'
                        % (st['ready'], st['switches'],
                           self.ready_timeout_s))
                time.sleep(0.1)

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

    def _iface_script(self, node_name, intfs):
        """Shell lines for MTU and offloads, plus tc batch lines."""
        sh, tc = [], []
        for intf, rate in intfs:
            sh.append('ip link set dev %s mtu %d' % (intf, self.mtu))
            sh.append('ethtool -K %s tx off tso off gso off gro off '
                      '>/dev/null 2>&1' % intf)
            tc += qos.tc_batch(intf, rate, self.queues, self.mtu,
                               self.queue_packets, self.fair_queues)
        return sh, tc

    def _configure_interfaces(self):
        per_node = {}
        for u, v, d in self.g.edges(data=True):
            rate = d['capacity_bps'] / self.scale
            for n in (u, v):
                per_node.setdefault(n, []).append(
                    (intf_name(n, d['ports'][n]), rate))
        root_sh, root_tc = [], []
        for n, intfs in sorted(per_node.items()):
            sh, tc = self._iface_script(n, intfs)
            if self.g.nodes[n]['role'] == topo.HOST:
                # a persistent connection that idles between transfers
                # (gradient exchanges) keeps its window, as data-center
                # training stacks are set up to; per network namespace
                sh.append('sysctl -qw net.ipv4.tcp_slow_start_after_idle=0')
                self._run_in_host(n, sh, tc)
            else:
                root_sh += sh
                root_tc += tc
        _run_checked(['sh', '-c', '; '.join(root_sh)], 'interface set-up')
        _tc_batch(root_tc, lambda args: _run_checked(args, 'tc set-up'))

    def _run_in_host(self, name, sh, tc):
        h = self.host(name)
        with tempfile.NamedTemporaryFile('w', suffix='.tc', delete=False) as f:
            f.write('\n'.join(tc) + '\n')
        try:
            out = h.cmd('; '.join(sh) + '; tc -batch %s; echo rc=$?' % f.name)
        finally:
            os.unlink(f.name)
        if 'rc=0' not in out:
            raise NetschedError('tc set-up failed in host %s: %s'
                                % (name, out.strip()[-300:]))

    def _static_arp(self):
        hosts = topo.hosts(self.g)
        for n in hosts:
            cmds = ['ip neigh replace %s lladdr %s dev %s nud permanent'
                    % (self.g.nodes[m]['ip'], self.g.nodes[m]['mac'],
                       intf_name(n, 0)) for m in hosts if m != n]
            if cmds:
                self.host(n).cmd('; '.join(cmds))

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


def _run_checked(args, what):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise NetschedError('%s failed: %s' % (what, (r.stderr or
                                                      r.stdout)[-400:]))
    return r


def _tc_batch(lines, run):
    with tempfile.NamedTemporaryFile('w', suffix='.tc', delete=False) as f:
        f.write('\n'.join(lines) + '\n')
    try:
        run(['tc', '-batch', f.name])
    finally:
        os.unlink(f.name)
