"""The circuit scheduler registry: names to classes, and make(), which
checks a scheduler's parameters (every scheduler module registers itself
on import)."""
from ..spec import parse
from ..errors import ConfigError

REGISTRY = {}


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def make(name, params=None, where='circuits'):
    """A circuit scheduler by name, with its parameters checked: an
    unknown name or parameter, or a bad value, is a ConfigError naming
    it (and ``where`` it was asked for)."""
    from . import load_all
    load_all()
    if name not in REGISTRY:
        raise ConfigError('%s: unknown circuit scheduler %r (known: %s)'
                          % (where, name, ', '.join(sorted(REGISTRY))))
    cls = REGISTRY[name]
    params = dict(params or {})
    out = {}
    for k, default in cls.params.items():
        v = params.pop(k, default)
        out[k] = _checked(where, k, v, default, k in cls.zero_ok)
    if params:
        raise ConfigError('%s: circuit scheduler %s has no parameter %r '
                          '(it has: %s)' % (where, name, sorted(params)[0],
                                            ', '.join(cls.params) or 'none'))
    return cls(**out)


def _checked(where, key, v, default, zero_ok):
    if not isinstance(default, (int, float)) or isinstance(default, bool):
        return v
    if (not isinstance(v, (int, float)) or isinstance(v, bool) or v != v
            or v < 0 or (v == 0 and not zero_ok)):
        raise ConfigError('%s: %s: must be a %s number, got %r'
                          % (where, key, 'non-negative' if zero_ok
                             else 'positive', v))
    if isinstance(default, int):         # a count: 2.0 is 2, 0.5 is not
        if v != int(v):
            raise ConfigError('%s: %s: must be a whole number, got %r'
                              % (where, key, v))
        v = int(v)
    return v


def parse_spec(spec, where='--circuits'):
    """A scheduler named with parameters, ``name:key=value:key=value``
    (``matching:period_s=0.05``): (name, {key: value}); numbers are read
    as numbers. The name and the keys are checked by make()."""
    return parse(spec, where, 'matching:period_s=0.05')
