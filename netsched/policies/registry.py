"""The policy registry: names to classes, and make(), which checks a
policy's parameters (every policy module registers itself on import)."""
from .. import spec

REGISTRY = {}


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def make(name, params=None, where='policy'):
    """A policy by name, with its parameters checked (spec.make)."""
    from . import load_all
    load_all()
    return spec.make(REGISTRY, 'policy', name, params, where)


def parse_spec(text, where='--policy'):
    """A policy named with parameters, ``name:key=value:key=value``
    (``geryon:classes=1``): (name, {key: value}); numbers are read as
    numbers. The name and the keys are checked by make()."""
    return spec.parse(text, where, 'geryon:classes=1')
