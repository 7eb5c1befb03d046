"""A policy or circuit scheduler named with parameters on the command
line, ``name:key=value:key=value``: one parser for both registries, one
resolver of names to classes, and one maker that checks a class's
parameters.

A name is one of three things, resolved alike in every process that asks
(the experiment check, the simulator, the controller, a sweep's runs):

- a built-in, registered by its module in the package (``sebf``);
- an entry point's name in the registry's group (``netsched.policies``,
  ``netsched.circuits``): what an installed package adds without editing
  netsched; a name a built-in has too is an error naming both;
- a module path, ``package.module:ClassName``: a class in any module
  Python can import (sys.path, PYTHONPATH, and the directory netsched
  was started in, which the emulator passes on to its controller in
  IMPORT_DIR_ENV).
"""
import importlib
import os
import sys
import traceback
from importlib import metadata

from .errors import ConfigError

# the directory a module path may also be imported from: the one netsched
# was started in (a child started elsewhere, the emulator's controller,
# is given it here)
IMPORT_DIR_ENV = 'NETSCHED_IMPORT_DIR'


def parse(spec, where, example):
    """(name, {key: value}) of ``spec``; numbers are read as numbers.
    The name and the keys are the registry's to check. ``example``: a
    well-formed spec for the error message. A first segment after the
    name that is a Python name (no ``=``) is a class name:
    ``package.module:ClassName:k=v`` gives the name
    ``package.module:ClassName`` (resolve() reads it as a module path)."""
    name, *parts = str(spec).split(':')
    if parts and all(p.isidentifier() for p in parts[0].split('.')):
        name += ':' + parts.pop(0)
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


def make(registry, kind, name, params, where, base=None, group=None):
    """An instance of the class ``name`` names (:func:`resolve`: built-in,
    entry point of ``group``, or module path; it must subclass ``base``)
    with its parameters checked: an unknown name or parameter, or a bad
    value, is a ConfigError naming it (``kind``: what the registry holds,
    'policy'; ``where``: where it was asked for). A numeric parameter
    (its default is a number) must be a positive number, or >= 0 where
    the class lists it in ``zero_ok``; a whole number where its default
    is an int. The instance's ``name`` is the name it was asked by, so
    that what a backend reports matches what the experiment says."""
    cls = resolve(registry, kind, name, where, base, group)
    params = dict(params or {})
    zero_ok = getattr(cls, 'zero_ok', ())
    out = {}
    for k, default in cls.params.items():
        v = params.pop(k, default)
        out[k] = _checked(where, k, v, default, k in zero_ok)
    if params:
        bad = sorted(params, key=str)[0]          # keys of any type
        raise ConfigError('%s: %s %s has no parameter %r (it has: %s)%s'
                          % (where, kind, name, bad,
                             ', '.join(cls.params) or 'none',
                             did_you_mean(bad, cls.params)))
    obj = cls(**out)
    if getattr(obj, 'name', None) != name:
        obj.name = name
    return obj


def resolve(registry, kind, name, where, base=None, group=None):
    """The class ``name`` names: ``package.module:ClassName`` (a colon) is
    a module path; otherwise a built-in of ``registry`` or an entry point
    of ``group``. Every failure is a ConfigError naming ``name`` and
    ``where``: no such name, module or class, a module that fails to
    import, a class that is not a subclass of ``base``, an entry point
    whose name a built-in (or another entry point) has too."""
    name = str(name)
    mod, colon, attr = name.partition(':')
    eps = entry_points(registry, kind, group, where)
    if colon:
        if mod in registry or mod in eps:
            raise ConfigError('%s: %s %r takes parameters as key=value after '
                              'the name, got %r (a module path is '
                              'package.module:ClassName)'
                              % (where, kind, mod, attr))
        cls = _from_module(mod, attr, kind, name, where)
    elif name in registry:
        cls = registry[name]
    elif name in eps:
        cls = _from_entry_point(eps[name], kind, where)
    else:
        known = ', '.join(sorted(set(registry) | set(eps)))
        if '.' in name:
            raise ConfigError('%s: unknown %s %r: a module path names its '
                              'class, %s:ClassName (known names: %s)'
                              % (where, kind, name, name, known))
        raise ConfigError('%s: unknown %s %r (known: %s; or '
                          'package.module:ClassName)%s'
                          % (where, kind, name, known, did_you_mean(
                              name, set(registry) | set(eps))))
    _check_class(cls, base, kind, name, where)
    return cls


def did_you_mean(word, names):
    """'; did you mean 'X'?' for the one of ``names`` closest to
    ``word`` (difflib), '' where none is close: a typo's fix, said where
    the error names it."""
    import difflib
    names = sorted(str(n) for n in names)
    close = [n for n in names if n.lower() == str(word).lower()] or \
        difflib.get_close_matches(str(word), names, 1)
    return '; did you mean %r?' % close[0] if close else ''


_FOUND = {}        # (group, sys.path) -> its entry points


def entry_points(registry, kind, group, where='entry points'):
    """{name: EntryPoint} of ``group`` (none if ``group`` is None). A name
    that a built-in of ``registry`` has, or that two installed packages
    give, is a ConfigError naming both: which would run is not clear."""
    if group is None:
        return {}
    key = (group, tuple(sys.path))
    if key not in _FOUND:               # a scan of sys.path costs ~20 ms
        _FOUND[key] = tuple(metadata.entry_points(group=group))
    out = {}
    for ep in _FOUND[key]:
        if ep.name in registry:
            b = registry[ep.name]
            raise ConfigError(
                '%s: %s %r of entry point %s clashes with the built-in %s '
                '%r (%s.%s): rename the entry point'
                % (where, kind, ep.name, _origin(ep), kind, ep.name,
                   b.__module__, b.__qualname__))
        if ep.name in out:
            raise ConfigError('%s: %s %r is given by two entry points: %s '
                              'and %s' % (where, kind, ep.name,
                                          _origin(out[ep.name]),
                                          _origin(ep)))
        out[ep.name] = ep
    return out


def _origin(ep):
    """An entry point as the errors name it: its group, value, package."""
    dist = getattr(ep, 'dist', None)
    return '%s = %s in group %s%s' % (
        ep.name, ep.value, ep.group,
        ' (package %s %s)' % (dist.name, dist.version) if dist else '')


def _importable():
    """Put the directory netsched was started in on sys.path, as
    ``python -m`` would, but at the end, so that it shadows nothing
    installed."""
    d = os.environ.get(IMPORT_DIR_ENV) or os.getcwd()
    if d not in sys.path:
        sys.path.append(d)


def _from_module(mod, attr, kind, name, where):
    _importable()
    if not mod or not all(p.isidentifier() for p in mod.split('.')):
        raise ConfigError('%s: %s %r: %r is not a module path (want '
                          'package.module:ClassName)' % (where, kind, name,
                                                         mod))
    try:
        m = importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name and (mod == e.name or mod.startswith(e.name + '.')):
            raise ConfigError('%s: %s %r: no module named %r (looked in '
                              'sys.path, PYTHONPATH and %s)'
                              % (where, kind, name, e.name,
                                 os.environ.get(IMPORT_DIR_ENV)
                                 or os.getcwd())) from None
        raise ConfigError(_failed(where, kind, name, mod, e)) from None
    except Exception as e:               # the module's own error, shown
        raise ConfigError(_failed(where, kind, name, mod, e)) from None
    obj = m
    for part in attr.split('.'):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ConfigError('%s: %s %r: module %s has no %r'
                              % (where, kind, name, mod, attr))
    return obj


def _from_entry_point(ep, kind, where):
    try:
        return ep.load()
    except Exception as e:               # the package's own error, shown
        raise ConfigError(_failed(where, kind, ep.name, _origin(ep), e)) \
            from None


def _failed(where, kind, name, what, e):
    """An import that raised, in one line: the error and where it rose."""
    # the innermost frame of the module's own code, not the import system's
    tb = [f for f in traceback.extract_tb(e.__traceback__)
          if not f.filename.startswith('<frozen') and f.filename != __file__
          and '%simportlib%s' % (os.sep, os.sep) not in f.filename]
    at = (' (%s, line %d)' % (tb[-1].filename, tb[-1].lineno)
          if tb and not isinstance(e, SyntaxError) else '')
    return ('%s: %s %r: importing %s failed: %s: %s%s'
            % (where, kind, name, what, type(e).__name__, e, at))


def _check_class(cls, base, kind, name, where):
    if base is None:
        return
    if not (isinstance(cls, type) and issubclass(cls, base)):
        what = ('%s.%s' % (cls.__module__, cls.__qualname__)
                if isinstance(cls, type) else repr(cls))
        raise ConfigError('%s: %s %r: %s is not a subclass of %s.%s'
                          % (where, kind, name, what, base.__module__,
                             base.__qualname__))
    if not isinstance(cls.params, dict):
        raise ConfigError('%s: %s %r: its params must be a dict of '
                          'parameter -> default, got %r'
                          % (where, kind, name, cls.params))


def _checked(where, key, v, default, zero_ok):
    if not isinstance(default, (int, float)) or isinstance(default, bool):
        return v
    if (not isinstance(v, (int, float)) or isinstance(v, bool) or v != v
            or v < 0 or (v == 0 and not zero_ok)):
        raise ConfigError('%s: %s: must be a %s number, got %r'
                          % (where, key, 'non-negative' if zero_ok
                             else 'positive', v))
    # inf (or an int past float's range) is no setting: int(inf) raised
    # OverflowError
    if v > sys.float_info.max:
        raise ConfigError('%s: %s: must be a finite number, got %r'
                          % (where, key, v))
    if isinstance(default, int):         # a count: 2.0 is 2, 0.5 is not
        if v != int(v):
            raise ConfigError('%s: %s: must be a whole number, got %r'
                              % (where, key, v))
        v = int(v)
        # a count sizes arrays and loops (Aalo's num_queues: 1e12 asked
        # numpy for 8 TB)
        if v > MAX_COUNT:
            raise ConfigError('%s: %s: must be at most %d, got %r'
                              % (where, key, MAX_COUNT, v))
    # a period or time under the simulator's 1 us resolution never lets
    # its clock advance (a hybrid period_s: 1e-300 looped at t=0), and
    # one past 1e8 s is past the range it holds
    unit = {'_s': 1.0, '_ms': 1e-3}.get(key[-2:] if key.endswith('_s')
                                        else key[-3:])
    if unit is not None and v > 0 and not \
            MIN_TIME_S <= v * unit <= MAX_TIME_S:
        raise ConfigError('%s: %s: must be %s%g..%g s, got %r s'
                          % (where, key, '0 or ' if zero_ok else '',
                             MIN_TIME_S, MAX_TIME_S, v * unit))
    return v


# a parameter that counts something at most; a time parameter's range
MAX_COUNT = 10 ** 6
MIN_TIME_S, MAX_TIME_S = 1e-6, 1e8


def summary(cls, module_first=False, width=100):
    """A class's one-line description: the first sentence of its own
    docstring, else of its module's (``module_first``: the module's
    first, for registries of one class per module whose module docstring
    describes it), without reST markup and a leading ``name``:, cut to
    ``width`` characters at a word; '' if there is none."""
    mod = getattr(sys.modules.get(cls.__module__), '__doc__', None)
    own = cls.__dict__.get('__doc__')
    doc = ((mod or own) if module_first else (own or mod)) or ''
    text = ' '.join(doc.replace('``', '').split())
    if cls.__dict__.get('name') and text.startswith(cls.name + ':'):
        text = text[len(cls.name) + 1:].strip()
    text = text.split('. ')[0].rstrip('.')
    if len(text) > width:
        text = text[:width - 3].rsplit(' ', 1)[0].rstrip(',;:') + '...'
    return text


def catalogue(registry, kind, group, make, where):
    """Every name of a registry and its entry-point group: [(name, origin,
    instance with default parameters, or the ConfigError making it
    raised)], built-ins first, then entry points, each by name; an entry
    point that fails to load is listed with its error rather than hiding
    the others."""
    eps = entry_points(registry, kind, group, where)
    out = []
    for name in sorted(registry) + sorted(eps):
        origin = ('built-in' if name in registry else
                  'entry point %s' % eps[name].value)
        try:
            out.append((name, origin, make(name, where=where)))
        except ConfigError as e:
            out.append((name, origin, e))
    return out
