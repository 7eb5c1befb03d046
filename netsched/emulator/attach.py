"""A fabric that someone else brought up -- plain Mininet with
``mn --custom topologies/...`` beside ``netsched controller``, or
``netsched up`` -- whose controller runs netsched's app. ``netsched run
EXP --attach`` runs an experiment on it: it checks the controller
matches the experiment, then waits for agents started by hand in the
hosts (AgentPool prints nothing; the CLI prints the commands)."""
import shutil
import tempfile
import time
import uuid
from types import SimpleNamespace

from .. import topology as topo
from ..control.channel import ControlClient
from ..errors import ConfigError


class AttachedFabric:
    """What the runner needs of a fabric, for one it did not create."""

    def __init__(self, exp, controller_socket):
        self.g = exp.graph()
        self.socket_path = controller_socket
        self.link_mbps = exp.link_bps / exp.scale / 1e6
        cap = max(d['capacity_bps'] for _, _, d in self.g.edges(data=True))
        self.scale = cap / (self.link_mbps * 1e6)
        with ControlClient(controller_socket, 5.0).connect() as c:
            st = c.status()
        self._check(exp, st)
        self.policy = st['policy']
        self.queues = st['queues']
        self.decision_log = st.get('decision_log')
        self.run_id = time.strftime('%Y%m%d-%H%M%S-') + uuid.uuid4().hex[:6]
        self.timings = {}
        self.state = None

    def _check(self, exp, st):
        where = exp.path or exp.name
        hosts = topo.hosts(self.g)
        if st['hosts'] != hosts or st['switches'] != len(
                topo.switches(self.g)):
            raise ConfigError(
                '%s: topology %s does not match the controller\'s fabric '
                '(%d switches, hosts %s...)' % (
                    where, exp.topology, st['switches'],
                    ', '.join(st['hosts'][:4])))
        if not st['policy']:
            raise ConfigError('%s: the controller at %s runs no scheduling '
                              'policy: start it with --policy %s'
                              % (where, self.socket_path, exp.policy))
        if st['policy'] != exp.policy:
            raise ConfigError('%s: the experiment asks for policy %s, the '
                              'controller runs %s' % (where, exp.policy,
                                                      st['policy']))
        from ..policies.base import DEFAULT_CLASS_MAP
        running = st.get('class_map') or DEFAULT_CLASS_MAP
        if running != exp.class_map:
            raise ConfigError('%s: class_map %s, but the controller maps '
                              'ranks with %s (netsched controller '
                              '--class-map)' % (where, exp.class_map,
                                                running))
        # the measuring knobs: the controller's must be the experiment's;
        # the hosts' were set by whoever brought the fabric up
        want = exp.knobs.scheduler()
        running = st.get('scheduler') or {}
        for k in sorted(want):
            if bool(running.get(k)) != want[k]:
                raise ConfigError('%s: scheduler.%s %s, but the controller '
                                  'runs with %s (netsched controller --%s)'
                                  % (where, k, str(want[k]).lower(),
                                     str(bool(running.get(k))).lower(),
                                     k.replace('_', '-')))
        if any(v for k, v in exp.knobs.host_tcp().items()):
            raise ConfigError('%s: emulator.tcp (but congestion_control) and '
                              'emulator.host_sysctl are set up with the '
                              'fabric; an attached fabric was brought up '
                              'without them: run without --attach'
                              % where)
        if abs(st['scale'] - exp.scale) > 1e-9 * exp.scale:
            raise ConfigError('%s: scale %g, but the controller was started'
                              ' with scale %g (netsched controller --scale)'
                              % (where, exp.scale, st['scale']))
        if not st['all_ready']:
            raise ConfigError('%s: only %d of %d switches are connected to '
                              'the controller' % (where, st['ready'],
                                                  st['switches']))

    def rate_bps(self, u, v):
        """Emulated rate of link u-v."""
        return self.g[u][v]['capacity_bps'] / self.scale

    def __enter__(self):
        self.state = SimpleNamespace(
            dir=tempfile.mkdtemp(prefix='netsched-attach-'))
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.state.dir, ignore_errors=True)
        return False
