"""The policy registry: names to classes, make(), which checks a
policy's parameters, and what `netsched policies` lists. Every built-in
policy module registers itself on import; policies from outside the
package come by module path or entry point (netsched.spec.resolve), so
every process that makes a policy by name finds the same one."""
from .. import spec
from ..errors import ConfigError

REGISTRY = {}
# the entry-point group an installed package adds policies to
GROUP = 'netsched.policies'


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def make(name, params=None, where='policy'):
    """A policy by name (built-in, entry point, or
    ``package.module:ClassName``), with its parameters checked
    (spec.make; a yes/no or one-of parameter by :func:`declared`). A
    policy from outside the package has each decision checked as it
    leaves decide() (:class:`CheckedDecide`)."""
    from .base import Policy
    cls = spec.resolve(REGISTRY, 'policy', name, where, Policy, GROUP)
    params = declared(cls, name, params, where)
    obj = spec.make(REGISTRY, 'policy', name, params, where, Policy, GROUP)
    if REGISTRY.get(str(name)) is not cls:
        # the built-ins are tested and their decisions are on the hot
        # path (thousands a run); another's are checked, a policy's first
        # runs being where its mistakes are
        obj.decide = CheckedDecide(obj)
    return obj


YES = ('true', 'yes', 'on', '1')
NO = ('false', 'no', 'off', '0')


def declared(cls, name, params, where):
    """``params`` with each yes/no parameter (its default a bool) made a
    bool and each one-of parameter (named in the class's ``choices``:
    {parameter: (allowed values)}) checked; a ConfigError naming the
    policy, the parameter and the value otherwise (``maybe`` is not a
    yes/no)."""
    import difflib
    out = dict(params or {})
    choices = getattr(cls, 'choices', None) or {}
    for k, v in out.items():
        default = cls.params.get(k) if isinstance(k, str) else None
        if isinstance(default, bool) and not isinstance(v, bool):
            text = str(v).strip().lower()
            if isinstance(v, (int, float, str)) and text in YES + NO:
                out[k] = text in YES
            else:
                raise ConfigError('%s %s: %s must be true or false, got %r'
                                  % (where, name, k, v))
        allowed = choices.get(k)
        if allowed is not None and out[k] not in allowed:
            close = [a for a in map(str, allowed)
                     if a.lower() == str(v).lower()] or \
                difflib.get_close_matches(str(v), list(map(str, allowed)), 1)
            raise ConfigError('%s %s: %s must be one of %s, got %r%s'
                              % (where, name, k, ', '.join(
                                  map(str, allowed)), v,
                                 '; did you mean %r?' % close[0]
                                 if close else ''))
    return out


class CheckedDecide:
    """An outside policy's decide(), its every Decision checked
    (base.check_decision) and an exception it raises made one line that
    names the policy and where in its own code: never a traceback from
    inside netsched."""

    def __init__(self, policy):
        self.policy = policy
        self.decide = type(policy).decide.__get__(policy)

    def __call__(self, snap):
        from .base import check_decision
        name = getattr(self.policy, 'name', type(self.policy).__name__)
        try:
            d = self.decide(snap)
        except ConfigError:
            raise
        except Exception as e:
            import traceback
            tb = traceback.extract_tb(e.__traceback__)
            at = ' (%s, line %d)' % (tb[-1].filename, tb[-1].lineno) \
                if tb else ''
            raise ConfigError('policy %s: decide() raised %s: %s%s' % (
                name, type(e).__name__, e, at)) from None
        return check_decision(d, snap, name)


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
