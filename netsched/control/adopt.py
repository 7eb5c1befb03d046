"""Adopting a switch that already holds netsched's rules: a restarted
controller (the switches failed secure and kept forwarding on them) or a
switch that reconnected without losing its table.

A switch's flow table comes in as FlowMod values (the app converts the
flow-stats reply entry for entry). Which rules are netsched's is read
from the owner in the cookie's top byte (openflow.cookie); every other
rule is foreign and left alone. What the switch reports is brought to
the form the core writes (a switch reports a field matched under an
all-ones mask as an exact match, and the core writes the ECMP set id's
metadata under a mask), so that a rule held and a rule wanted compare
equal when they are the same flow: otherwise a delete_strict of the old
form would remove the new rule just added in its place.

Pure: no framework, no I/O (ControllerCore.on_connect decides)."""
from . import openflow as of
from .. import qos
from ..errors import ConfigError

OWNERS = {of.OWNER_ROUTING: 'routing', of.OWNER_CLASSIFY: 'classify',
          of.OWNER_SCHEDULE: 'schedule', of.OWNER_CIRCUIT: 'circuit'}
EXACT = (1 << 64) - 1
SERIAL_MASK = EXACT & ~of.OWNER_MASK
# bits of the integer match fields netsched writes, for all-ones masks
_BITS = {'metadata': 64, 'in_port': 32, 'eth_type': 16, 'ip_proto': 8,
         'ip_dscp': 6, 'tcp_src': 16, 'tcp_dst': 16, 'udp_src': 16,
         'udp_dst': 16}


def owner(cookie):
    """The owner byte of a cookie (openflow.OWNER_*; 0 for a rule that
    is not netsched's)."""
    return (cookie or 0) >> of.OWNER_SHIFT


def serial(cookie):
    """The low bits of a cookie: a manual rule's id, a scheduler rule's
    owner serial."""
    return (cookie or 0) & SERIAL_MASK


def holds_netsched(table):
    """Whether a switch's table has any rule of netsched's: if not, it
    is a fresh switch and gets the clean-slate program."""
    return any(owner(m.cookie) in OWNERS for m in table)


def _full(field, mask):
    if isinstance(mask, str):
        return mask == '255.255.255.255'
    return field in _BITS and mask == (1 << _BITS[field]) - 1


def core_match(match):
    """A match as the core writes it: a field under an all-ones mask as
    its plain value, except the metadata (the next-hop set's id), which
    the core always writes with its mask."""
    out = {}
    for k, v in match:
        if isinstance(v, list):
            v = tuple(v)
        if isinstance(v, tuple) and _full(k, v[1]):
            v = v[0]
        if k == 'metadata' and not isinstance(v, tuple):
            v = (v, of.METADATA_MASK)
        out[k] = v
    return tuple(sorted(out.items()))


def canonical(fm):
    """A table entry (as the switch reports it) in the core's form: an
    'add' of its table, priority, match, instructions and cookie."""
    md = None if fm.metadata is None else tuple(fm.metadata)
    return of.FlowMod(fm.table, fm.priority, core_match(fm.match),
                      tuple(tuple(a) for a in fm.actions), fm.goto, md,
                      fm.cookie or 0)


def key(fm):
    """What identifies a flow in a switch: a new add with the same key
    replaces it."""
    return (fm.table, fm.priority, fm.match)


def delete(fm):
    """Remove exactly this rule: its table, priority, match and cookie."""
    return of.FlowMod(fm.table, fm.priority, fm.match,
                      command='delete_strict', cookie=fm.cookie,
                      cookie_mask=EXACT)


def diff(held, want, keep_unused_sets=False):
    """FlowMods that take a switch from ``held`` (canonical entries) to
    ``want`` (the core's adds): the ECMP rules of new next-hop sets
    first, then the other rules missing or different (an add replaces
    the rule of its key), then deletes of the rules held that are not
    wanted -- as openflow.rule_diff orders them, so that nothing is
    dropped on the way. A rule held exactly as wanted is not resent.
    ``keep_unused_sets``: ECMP rules held stay, as a reroute leaves them
    (openflow.rule_diff)."""
    have = {key(m): m for m in held}
    keys = {key(m) for m in want}
    adds = [m for m in want if have.get(key(m)) != m]
    return [m for m in adds if m.table == of.ECMP_TABLE] + \
        [m for m in adds if m.table != of.ECMP_TABLE] + \
        [delete(m) for m in held if key(m) not in keys and not (
            keep_unused_sets and m.table == of.ECMP_TABLE)]


def after(held, mods):
    """What a switch holds once ``mods`` (adds and strict deletes, as
    diff gives) are applied to ``held``."""
    out = {key(m): m for m in held}
    for m in mods:
        if m.command == 'add':
            out[key(m)] = m
        else:
            out.pop(key(m), None)
    return list(out.values())


def read_classify(fm, queues):
    """A manual classification rule recovered from its entry: (id,
    match, class, priority) as ControllerCore.rules keeps them (the id
    from the cookie, the match less the eth_type the rule adds, the
    class from the DSCP it sets); None if the entry is not one the core
    could have written (it is then removed)."""
    rid = serial(fm.cookie)
    match = {k: v for k, v in fm.match if k != 'eth_type'}
    if rid < 1 or dict(fm.match).get('eth_type') != of.ETH_IP or \
            fm.table != of.CLASSIFY_TABLE or fm.goto != of.FORWARD_TABLE \
            or len(fm.actions) != 1 or tuple(fm.actions[0][:2]) != (
                'set_field', 'ip_dscp'):
        return None
    try:
        match = of.check_match(match)
        dscp = fm.actions[0][2]
        cls = qos.dscp_class(dscp, queues)
        if qos.class_dscp(cls, queues) != dscp:
            return None
        if of.classify_rule(match, cls, queues, rid, fm.priority) != fm:
            return None
    except (ConfigError, TypeError, ValueError):
        return None
    return rid, match, cls, fm.priority
