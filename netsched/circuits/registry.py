"""The circuit scheduler registry: names to classes, and make(), which
checks a scheduler's parameters (every scheduler module registers itself
on import)."""
from .. import spec

REGISTRY = {}


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def make(name, params=None, where='circuits'):
    """A circuit scheduler by name, with its parameters checked
    (spec.make: an unknown name or parameter, or a bad value, is a
    ConfigError naming it and ``where`` it was asked for)."""
    from . import load_all
    load_all()
    return spec.make(REGISTRY, 'circuit scheduler', name, params, where)


def parse_spec(text, where='--circuits'):
    """A scheduler named with parameters, ``name:key=value:key=value``
    (``matching:period_s=0.05``): (name, {key: value}); numbers are read
    as numbers. The name and the keys are checked by make()."""
    return spec.parse(text, where, 'matching:period_s=0.05')
