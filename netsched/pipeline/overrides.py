"""``--set KEY=VALUE[,VALUE...]``: any experiment key by a dotted path.

A path walks the experiment file's mapping: names for mapping keys,
integers for list items (``jobs.0.workers``). ``policy_params.NAME``
where NAME is not a policy is a parameter of whichever policy runs
(``policy_params.classes=2,4,8`` under ``--policy geryon``). Values are
read as YAML scalars or flow collections (``8``, ``exact``, ``true``,
``[h0_0_0, h0_0_1]``); commas inside brackets or quotes do not split.

Overrides are applied to the file's mapping before it is checked, so a
bad key or value is reported by the same checks as a bad file, with the
override named.
"""
import copy
import json

import yaml

from ..errors import ConfigError, YamlAliasError, yaml_loader


def parse(text, where='--set'):
    """``KEY=V1,V2`` -> (path tuple, [values]). The path's components
    are str (mapping keys) or int (list indices)."""
    key, eq, rhs = str(text).partition('=')
    key = key.strip()
    if not eq or not key:
        raise ConfigError('%s: want KEY=VALUE[,VALUE...], got %r'
                          % (where, text))
    path = split_key(key, '%s %s' % (where, text))
    values = []
    for raw in _split(rhs):
        if not raw.strip():
            raise ConfigError('%s %s: empty value' % (where, text))
        try:                      # no aliases (errors.yaml_loader)
            values.append(yaml.load(raw, Loader=yaml_loader()))
        except YamlAliasError as e:
            raise ConfigError('%s %s: YAML anchors and aliases are not '
                              'accepted (%s)' % (where, text, e.token)) \
                from None
        except yaml.YAMLError as e:
            raise ConfigError('%s %s: value %r is not valid YAML: %s'
                              % (where, text, raw,
                                 str(e).splitlines()[0])) from None
        except RecursionError:        # the parser recurses once per level
            raise ConfigError('%s %s: value %r is not valid YAML: nested '
                              'too deeply' % (where, text, raw)) from None
    return path, values


def single(items, why='several values are a sweep (netsched sweep)'):
    """``--set KEY=VALUE`` texts with one value each (a list of values is
    a sweep): [(path, value)]."""
    out = []
    for text in items or ():
        path, values = parse(text)
        if len(values) != 1:
            raise ConfigError('--set %s: one value here; %s' % (text, why))
        out.append((path, values[0]))
    return out


def split_key(key, where='--set'):
    """``jobs.0.workers`` -> ('jobs', 0, 'workers')."""
    path = []
    for part in key.split('.'):
        if not part:
            raise ConfigError('%s: empty component in the key path' % where)
        # ASCII digits only: int('²') raised ValueError though '²'.isdigit()
        path.append(int(part) if part.isdigit() and part.isascii()
                    else part)
    return tuple(path)


def _split(text):
    """Split at the commas outside brackets, braces and quotes."""
    out, cur, depth, quote = [], [], 0, None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in '\'"':
            quote = ch
        elif ch in '[{':
            depth += 1
        elif ch in ']}':
            depth -= 1
        elif ch == ',' and depth == 0:
            out.append(''.join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append(''.join(cur))
    return out


def key_name(path):
    """The dotted key as the user wrote it."""
    return '.'.join(str(p) for p in path)


def value_text(v):
    """A value as a column cell and a folder-name part: YAML's flow
    form, without the trailing newline."""
    if isinstance(v, str):
        return v
    return yaml.safe_dump(v, default_flow_style=True).split('\n...')[0] \
        .strip()


def argv_text(v):
    """A value as ``--set KEY=...`` text that parse() reads back as the
    same value: strings quoted (``'10'`` stays a string, ``a,b`` one
    value), the rest in YAML's flow form."""
    if isinstance(v, str):
        return json.dumps(v)
    return yaml.safe_dump(v, default_flow_style=True,
                          width=float('inf')).split('\n...')[0].strip()


def running_policy(d, policy=None):
    """The policy name an experiment mapping runs (``--policy`` wins)."""
    if policy:                  # package.module:Class keeps its class
        from ..policies import parse_spec
        return parse_spec(policy)[0]
    pol = d.get('policy', 'fair') if isinstance(d, dict) else 'fair'
    if isinstance(pol, dict):
        return pol.get('name')
    return pol


def apply(d, sets, policy=None, where='--set'):
    """A copy of mapping ``d`` with every (path, value) of ``sets`` set.
    ``policy``: the --policy override, for ``policy_params.KEY``."""
    from .. import policies
    if not isinstance(d, dict):
        raise ConfigError('%s: the experiment is not a mapping' % where)
    out = copy.deepcopy(d)
    for path, value in sets:
        shown = '%s %s=%s' % (where, key_name(path), value_text(value))
        if path[0] == 'policy_params' and len(path) == 2 \
                and path[1] not in policies.REGISTRY:
            name = running_policy(out, policy)
            pol = out.get('policy')
            if policy is None and isinstance(pol, dict) and path[1] in pol:
                # the file's policy mapping would win over policy_params
                path = ('policy', path[1])
            else:
                path = ('policy_params', name, path[1])
        _set(out, path, value, shown)
    return out


def _set(d, path, value, shown):
    cur = d
    for i, part in enumerate(path):
        last = i == len(path) - 1
        here = key_name(path[:i]) or 'the experiment'
        if isinstance(cur, list):
            if not isinstance(part, int):
                raise ConfigError('%s: %s is a list; index it with a number,'
                                  ' got %r' % (shown, here, part))
            if not 0 <= part < len(cur):
                raise ConfigError('%s: %s has %d item(s); no index %d'
                                  % (shown, here, len(cur), part))
        elif isinstance(cur, dict):
            if isinstance(part, int):
                raise ConfigError('%s: %s is a mapping, not a list; no '
                                  'index %d' % (shown, here, part))
        else:
            raise ConfigError('%s: %s is %r, not a mapping or a list'
                              % (shown, here, cur))
        if last:
            cur[part] = value
        else:
            if isinstance(cur, dict) and cur.get(part) is None:
                cur[part] = {}
            cur = cur[part]
