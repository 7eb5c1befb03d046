"""A policy or circuit scheduler named with parameters on the command
line, ``name:key=value:key=value``: one parser for both registries, and
one maker that checks a registered class's parameters."""
from .errors import ConfigError


def parse(spec, where, example):
    """(name, {key: value}) of ``spec``; numbers are read as numbers.
    The name and the keys are the registry's to check. ``example``: a
    well-formed spec for the error message."""
    name, *parts = str(spec).split(':')
    params = {}
    for part in parts:
        key, eq, value = part.partition('=')
        if not eq or not key:
            raise ConfigError('%s: %r: parameters are key=value after the '
                              'name (e.g. %s), got %r'
                              % (where, spec, example, part))
        for kind in (int, float):
            try:
                value = kind(value)
                break
            except ValueError:
                pass
        params[key] = value
    return name, params


def make(registry, kind, name, params, where):
    """An instance of ``registry[name]`` with its parameters checked: an
    unknown name or parameter, or a bad value, is a ConfigError naming it
    (``kind``: what the registry holds, 'policy'; ``where``: where it was
    asked for). A numeric parameter (its default is a number) must be a
    positive number, or >= 0 where the class lists it in ``zero_ok``; a
    whole number where its default is an int."""
    if name not in registry:
        raise ConfigError('%s: unknown %s %r (known: %s)'
                          % (where, kind, name, ', '.join(sorted(registry))))
    cls = registry[name]
    params = dict(params or {})
    zero_ok = getattr(cls, 'zero_ok', ())
    out = {}
    for k, default in cls.params.items():
        v = params.pop(k, default)
        out[k] = _checked(where, k, v, default, k in zero_ok)
    if params:
        raise ConfigError('%s: %s %s has no parameter %r (it has: %s)'
                          % (where, kind, name, sorted(params)[0],
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
