"""The policy registry: names to classes, make(), which checks a
policy's parameters, and what `netsched policies` lists. Every built-in
policy module registers itself on import; policies from outside the
package come by module path or entry point (netsched.spec.resolve), so
every process that makes a policy by name finds the same one."""
from .. import spec

REGISTRY = {}
# the entry-point group an installed package adds policies to
GROUP = 'netsched.policies'


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def make(name, params=None, where='policy'):
    """A policy by name (built-in, entry point, or
    ``package.module:ClassName``), with its parameters checked
    (spec.make)."""
    from . import load_all
    from .base import Policy
    load_all()
    return spec.make(REGISTRY, 'policy', name, params, where, Policy, GROUP)


def parse_spec(text, where='--policy'):
    """A policy named with parameters, ``name:key=value:key=value``
    (``geryon:classes=1``, ``mypkg.mod:MyPolicy:alpha=2``): (name,
    {key: value}); numbers are read as numbers. The name and the keys
    are checked by make()."""
    return spec.parse(text, where, 'geryon:classes=1')


def catalogue(where='netsched policies'):
    """Every policy a name reaches: [(name, origin, instance with default
    parameters, or the ConfigError that making it raised)], built-ins
    first, then entry points, each by name. An entry point that fails to
    load is listed with its error rather than hiding the others."""
    from . import load_all
    load_all()
    return spec.catalogue(REGISTRY, 'policy', GROUP, make, where)


def describe(policy):
    """What `netsched policies` says of a policy instance: its parameters
    with defaults, a one-line description (its class's docstring's first
    line, else its module's) and how each backend carries out what it
    decides, read off the attributes the backends read (base.Policy)."""
    return {'name': policy.name, 'params': dict(type(policy).params),
            'description': spec.summary(type(policy)),
            'attributes': {a: getattr(policy, a) for a in
                           ('decides_on', 'clairvoyant', 'static',
                            'classes', 'progress')},
            'backends': backend_notes(policy)}


def backend_notes(policy):
    """{'sim': [...], 'emu': [...]}: sentences on how the simulator and
    the emulator carry out this policy's decisions, from the attributes
    the backends act on (static, classes, decides_on, clairvoyant,
    progress, workload(), finest_bytes())."""
    sim, emu = [], []
    if policy.static:
        sim.append('decides nothing: flows share links max-min fairly')
        emu.append('decides nothing (the controller only routes): '
                   "connections share each class's fair queues")
    elif not policy.classes:
        both = ('classes no traffic (links shared fairly); what it decides '
                'besides (job time shifts) ')
        sim.append(both + 'the workload driver applies')
        emu.append(both + "the jobs' host agents apply")
    else:
        sim.append("ranks onto the experiment's Q classes (queues: exact: "
                   'the full order); flow_rate, if given, exactly, the '
                   'rest back-filled by class')
        emu.append("ranks onto the fabric's Q strict-priority classes "
                   '(class_map), a DSCP rule per connection; flow_rate, if '
                   "given, paced by the sender's agent; per-send classes, "
                   'if given, tagged by the host agents')
    if not policy.static:
        when = ('at every flow arrival and completion'
                if policy.decides_on != 'coflows' else
                'when flows arrive or a coflow ends')
        sim.append('asked %s, and at recheck_at' % when)
        emu.append('asked %s, and at recheck_at, at most once per 2 ms '
                   '(more when deciding costs more)' % when)
    if policy.clairvoyant:
        sim.append('sees the sends not yet started (pending_*)')
        emu.append('sees the sends not yet started: the agents register '
                   'every planned send with the controller up front')
    if policy.progress:
        sim.append('reads bytes sent exactly at every decision')
        emu.append('reads bytes sent as the agents report them, every '
                   "10 ms: it reacts at that polling period")
    elif not policy.static:
        emu.append('gets no progress reports: a transfer in flight shows '
                   'nothing sent until it ends (progress = True asks)')
    asks = policy.workload()
    if asks:
        shown = ', '.join('%s=%s' % kv for kv in sorted(asks.items()))
        sim.append('shapes the workload (%s), the same plan on both' % shown)
        emu.append('shapes the workload (%s): the host agents carry it '
                   'out' % shown)
    finest = policy.finest_bytes()
    if finest:
        raise_it = ('; an emulator experiment raises %s to '
                    'threshold_floor_windows TCP initial windows at its '
                    'scale, on both backends' % policy.finest_param
                    if policy.finest_param else '')
        emu.append('decides on amounts down to %.3g MB%s (netsched check '
                   'says where TCP cannot resolve it)'
                   % (finest / 2 ** 20, raise_it))
    return {'sim': sim, 'emu': emu}
