"""The circuit scheduler registry: names to classes, make(), which
checks a scheduler's parameters, and what `netsched policies` lists.
Every built-in scheduler module registers itself on import; schedulers
from outside the package come by module path or entry point
(netsched.spec.resolve), so every process that makes one by name finds
the same one."""
from .. import spec

REGISTRY = {}
# the entry-point group an installed package adds circuit schedulers to
GROUP = 'netsched.circuits'


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def make(name, params=None, where='circuits'):
    """A circuit scheduler by name (built-in, entry point, or
    ``package.module:ClassName``), with its parameters checked
    (spec.make: an unknown name or parameter, or a bad value, is a
    ConfigError naming it and ``where`` it was asked for)."""
    from .base import CircuitScheduler
    return spec.make(REGISTRY, 'circuit scheduler', name, params, where,
                     CircuitScheduler, GROUP)


def parse_spec(text, where='--circuits'):
    """A scheduler named with parameters, ``name:key=value:key=value``
    (``matching:period_s=0.05``): (name, {key: value}); numbers are read
    as numbers. The name and the keys are checked by make()."""
    return spec.parse(text, where, 'matching:period_s=0.05')


def catalogue(where='netsched policies'):
    """Every circuit scheduler a name reaches: [(name, origin, instance
    with default parameters, or the ConfigError making it raised)],
    built-ins first, then entry points, each by name."""
    return spec.catalogue(REGISTRY, 'circuit scheduler', GROUP, make, where)


def describe(sched):
    """What `netsched policies` says of a circuit scheduler instance: its
    parameters with defaults, a one-line description (one scheduler per
    module: the module's docstring first) and how each backend carries
    out its decisions, read off the attributes the backends read
    (base.CircuitScheduler)."""
    cls = type(sched)
    return {'name': sched.name, 'params': dict(cls.params),
            'description': spec.summary(cls, module_first=True),
            'attributes': {'decides_on': sched.decides_on,
                           'needs': list(sched.needs),
                           'static': sched.static},
            'backends': backend_notes(sched)}


def backend_notes(sched):
    """{'sim': [...], 'emu': [...]}: how the simulator and the emulator
    carry out this scheduler's decisions, from decides_on and needs."""
    when = {'period': 'at the start and at its recheck_at',
            'jobs': 'at the start, when the set of jobs changes and at its '
                    'recheck_at',
            'never': None}.get(sched.decides_on, sched.decides_on)
    if sched.static or when is None:
        both = 'asked once at most; its circuits never change'
        return {'sim': [both], 'emu': [both]}
    sim = ['asked %s; a new configuration waits for the last to finish, '
           "and new circuits go dark for the OCS's reconfiguration delay"
           % when]
    emu = ['asked %s by the controller; each reconfiguration step is a '
           'FlowMod batch confirmed by barriers (ToRs leave, OCS drops, '
           'blackout, OCS joins, ToRs enter)' % when]
    if 'demand' in sched.needs:
        sim.append('reads the ToR demand matrix exactly')
        emu.append('reads the ToR demand from the transfers the agents '
                   'registered (in flight and not yet started)')
    if 'jobs' in sched.needs:
        both = "reads the jobs' per-iteration traffic between racks"
        sim.append(both)
        emu.append(both)
    return {'sim': sim, 'emu': emu}
