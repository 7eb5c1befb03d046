"""What the controller is started with: one frozen ControllerSpec, built
and checked once -- from an experiment (``from_experiment``) or from a
topology and the emulated rate of its fastest link (``for_link``) -- and
handed whole to the fabric, the controller process and the Ryu app,
which receives it as JSON (``to_json``; the fabric description).

Pure: no framework, no I/O."""
import json
import math
from dataclasses import dataclass, field, replace

from .. import qos
from .. import topology as topo
from ..errors import ConfigError

KNOBS = ('floor_release', 'hold_starved')


@dataclass(frozen=True)
class ControllerSpec:
    """The controller's settings:
      g             the topology graph (netsched.topology)
      queues        strict-priority classes per egress port (1..8)
      scale         data-center units per emulated unit
      policy        the scheduling policy's name (None: routes only) and
      policy_params its parameters
      circuits      a hybrid fabric's circuit scheduler, (name, params)
                    (netsched.circuits), or None
      class_map     how ranks map onto the classes (None: the default)
      scheduler     the scheduler's measuring knobs ({'floor_release',
                    'hold_starved'}: booleans)
      decision_log  where the controller appends its decisions (JSON
                    lines), or None
      socket        the control channel's Unix socket (None: not placed
                    yet; the controller process places it)
    """
    g: object = field(compare=False, repr=False)
    queues: int = 8
    scale: float = 1.0
    policy: str = None
    policy_params: dict = field(default_factory=dict)
    circuits: tuple = None
    class_map: str = None
    scheduler: dict = field(default_factory=dict)
    decision_log: str = None
    socket: str = None

    def __post_init__(self):
        qos.check_queues(self.queues)
        s = self.scale
        if isinstance(s, bool) or not isinstance(s, (int, float)) or \
                not (math.isfinite(s) and s > 0):
            raise ConfigError('scale must be a positive number, got %r'
                              % (s,))
        if self.policy_params is not None and \
                not isinstance(self.policy_params, dict):
            raise ConfigError('policy parameters must be a mapping, got %r'
                              % (self.policy_params,))
        c = self.circuits
        if c is not None and not (isinstance(c, (tuple, list))
                                  and len(c) == 2):
            raise ConfigError('circuits must be (name, params), got %r'
                              % (c,))
        knobs = self.scheduler or {}
        # the copies and normal forms it keeps (frozen: set once, here)
        set_ = object.__setattr__
        set_(self, 'scale', float(s))
        set_(self, 'policy_params', dict(self.policy_params or {}))
        set_(self, 'circuits', None if c is None else (c[0], dict(c[1])))
        set_(self, 'scheduler', {k: bool(knobs.get(k)) for k in KNOBS})

    @classmethod
    def from_experiment(cls, exp, decision_log=None, g=None):
        """The controller an experiment runs (pipeline.experiment's
        Experiment) on the emulator; ``g``: its graph if built already
        (exp.graph())."""
        return cls(exp.graph() if g is None else g, exp.queues, exp.scale,
                   exp.policy, exp.policy_params, exp.circuits, exp.class_map,
                   exp.knobs.scheduler(), decision_log)

    @classmethod
    def for_link(cls, g, link_mbps, **settings):
        """A controller for topology ``g`` with its fastest link emulated
        at ``link_mbps`` Mbit/s (every link scaled by the same factor);
        ``settings``: the other fields."""
        check_link_mbps(link_mbps)
        cap = max(d['capacity_bps'] for _, _, d in g.edges(data=True))
        return cls(g, scale=cap / (float(link_mbps) * 1e6), **settings)

    def link_mbps(self):
        """The emulated rate of the fastest link, Mbit/s."""
        cap = max(d['capacity_bps'] for _, _, d in self.g.edges(data=True))
        return cap / self.scale / 1e6

    def placed(self, **fields):
        """The same spec with ``fields`` set (the socket and the decision
        log the controller process places)."""
        return replace(self, **fields)

    def to_dict(self):
        """The fabric description the controller app loads (JSON-ready):
        the topology, Q, the control socket, the policy, the scale, the
        decision log, the circuit scheduler, the class map and the
        scheduler's knobs."""
        return {'topology': topo.to_dict(self.g), 'queues': self.queues,
                'socket': self.socket,
                'policy': {'name': self.policy,
                           'params': dict(self.policy_params)},
                'scale': self.scale, 'decision_log': self.decision_log,
                'circuits': None if self.circuits is None else
                {'name': self.circuits[0],
                 'params': dict(self.circuits[1])},
                'class_map': self.class_map,
                'scheduler': dict(self.scheduler)}

    @classmethod
    def from_dict(cls, desc):
        """A spec back from its fabric description (to_dict)."""
        p = desc.get('policy') or {}
        c = desc.get('circuits') or {}
        return cls(topo.from_dict(desc['topology']), desc['queues'],
                   desc.get('scale', 1.0), p.get('name') or None,
                   p.get('params') or {},
                   (c['name'], c.get('params') or {}) if c.get('name')
                   else None, desc.get('class_map'),
                   desc.get('scheduler') or {}, desc.get('decision_log'),
                   desc.get('socket'))

    def to_json(self):
        """The fabric description as JSON text."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text):
        """A spec back from to_json's text."""
        return cls.from_dict(json.loads(text))


def check_link_mbps(link_mbps):
    """The emulated rate of the fastest link, or a ConfigError."""
    if not (isinstance(link_mbps, (int, float)) and 0 < link_mbps <= 1000):
        raise ConfigError('link_mbps must be in (0, 1000], got %r '
                          '(Mininet links stop at 1 Gbit/s)' % (link_mbps,))
    return link_mbps
