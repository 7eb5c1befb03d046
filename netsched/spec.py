"""A policy or circuit scheduler named with parameters on the command
line, ``name:key=value:key=value``: one parser for both registries."""
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
