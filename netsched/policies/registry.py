"""The policy registry: names to classes, and make(), which checks a
policy's parameters (every policy module registers itself on import)."""
from ..spec import parse
from ..errors import ConfigError

REGISTRY = {}


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def make(name, params=None, where='policy'):
    """A policy by name, with its parameters checked."""
    from . import load_all
    load_all()
    if name not in REGISTRY:
        raise ConfigError('%s: unknown policy %r (known: %s)'
                          % (where, name, ', '.join(sorted(REGISTRY))))
    cls = REGISTRY[name]
    params = dict(params or {})
    out = {}
    for k, default in cls.params.items():
        v = params.pop(k, default)
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            if (not isinstance(v, (int, float)) or isinstance(v, bool)
                    or v <= 0):
                raise ConfigError('%s: %s: must be a positive number, got %r'
                                  % (where, k, v))
            if isinstance(default, int):     # a count: 2.0 is 2, 0.5 is not
                if v != int(v):
                    raise ConfigError('%s: %s: must be a whole number, got '
                                      '%r' % (where, k, v))
                v = int(v)
        out[k] = v
    if params:
        raise ConfigError('%s: policy %s has no parameter %r (it has: %s)'
                          % (where, name, sorted(params)[0],
                             ', '.join(cls.params) or 'none'))
    return cls(**out)


def parse_spec(spec, where='--policy'):
    """A policy named with parameters, ``name:key=value:key=value``
    (``geryon:classes=1``): (name, {key: value}); numbers are read as
    numbers. The name and the keys are checked by make()."""
    return parse(spec, where, 'geryon:classes=1')
