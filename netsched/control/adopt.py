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

Pure: no framework, no I/O (ControllerCore.on_connect asks Adoption).
"""
from . import openflow as of
from .. import qos
from ..errors import ConfigError

OWNERS = {of.OWNER_ROUTING: 'routing', of.OWNER_CLASSIFY: 'classify',
          of.OWNER_SCHEDULE: 'schedule', of.OWNER_CIRCUIT: 'circuit'}
EXACT = (1 << 64) - 1
SERIAL_MASK = EXACT & ~of.OWNER_MASK
# how long an adopted scheduler rule waits for its host's agent: an agent
# tries to register again for 30 s after losing the controller
# (host.agent.ControllerLink.GIVE_UP_S); past that it never will, and
# nothing else would remove the rule
GRACE_S = 35.0
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


class Adoption:
    """The switches adopted with netsched's rules (their routes kept
    until every link's state is known, the scheduler rules kept until
    their hosts' agents are back) and the records of it."""

    def __init__(self):
        self.routes_pending = {}        # dpid -> when adopted, routes kept
        self.kept = {}                  # dpid -> {key: scheduler rule held}
        self.kept_at = {}               # dpid -> when those were adopted
        self.records = {}               # dpid -> 'adopt' record, for the app
        self.serials_held_since = None  # agents back before the switches

    def forget(self, dpid):
        """A switch got the clean-slate program: nothing of it is kept."""
        self.routes_pending.pop(dpid, None)
        self.kept.pop(dpid, None)

    def adopt(self, dpid, sw, routes, table, now, core):
        """A switch that holds netsched's rules keeps them: it is sent
        only the difference between what it holds and what ``core`` (the
        ControllerCore: its links, manual rules and scheduler) wants,
        never a wipe and never a rule it has.
          Routes (routing and circuit owners): the routes around the
            links down now, once every switch-to-switch link's state is
            known from the port description of one of its ends; until
            then the routes held stay (a link that went down while the
            controller was away is known only from its switches' ports,
            and routing over it meanwhile would drop packets), and
            on_port_desc or settle reconciles them. ECMP rules of
            next-hop sets no longer used stay, as a reroute leaves them.
          Manual classification rules: recovered into the manual rules
            (id from the cookie, match and class from the entry), new ids
            counted on above the largest; one this core made and cleared
            since goes.
          Scheduler rules: the scheduler's own (a switch that reconnected
            to this controller) are resent where missing; the others are
            kept until the scheduler's first decision after their hosts
            registered replaces them (replace), and coflow serials start
            above the largest they carry, so no new cookie is an old
            one's.
        A rule of no netsched owner is foreign and left alone."""
        links, manual, sched = core.links, core.manual, core.scheduler
        held = {}
        for m in table:
            held.setdefault(OWNERS.get(owner(m.cookie)),
                            []).append(canonical(m))
        mine = held.get('routing', []) + held.get('circuit', [])
        if core.circuits is not None or links.known():
            mods = diff(mine, routes, keep_unused_sets=True)
            links.routes[dpid] = after(mine, mods)
            self.routes_pending.pop(dpid, None)
        else:
            mods = []
            links.routes[dpid] = mine
            self.routes_pending[dpid] = now
        recovered = []
        for m in held.get('classify', ()):
            r = read_classify(m, manual.queues)
            if r is not None and manual.recover(*r):
                recovered.append(r[0])
        want = manual.mods() if dpid in core.ingress else []
        mods += diff(held.get('classify', []), want)
        sch = held.get('schedule', [])
        want = [] if sched is None else sched.rules.replay(dpid)
        have = {key(m): m for m in sch}
        keys = {key(m) for m in want}
        mods += [m for m in want if have.get(key(m)) != m]
        kept = {key(m): m for m in sch if key(m) not in keys}
        if sched is None:                # nothing would ever replace them
            mods += [delete(m) for m in kept.values()]
            kept = {}
        else:
            sched.intake.serial_floor = max(
                [sched.intake.serial_floor] + [serial(m.cookie) for m in sch])
        if kept:
            self.kept[dpid] = kept
            self.kept_at[dpid] = now
        else:
            self.kept.pop(dpid, None)
        touched = {key(m) for m in mods}
        ours = [m for k, v in held.items() if k is not None for m in v]
        self.records[dpid] = {
            'kind': 'adopt', 't': now, 'switch': sw,
            'adopted': sum(key(m) not in touched for m in ours),
            'sent': len(mods),
            'held': {str(k or 'foreign'): len(v)
                     for k, v in sorted(held.items(), key=lambda x: str(
                         x[0] or 'foreign'))},
            'recovered_rules': recovered, 'schedule_kept': len(kept),
            'routes_pending': dpid in self.routes_pending,
            'applied_ms': None}
        return mods

    def reconcile(self, out, now, links, connected, switch_of):
        """The routes of the adopted switches that kept theirs: the
        difference to the routes around the links down now."""
        new, n = links.live(), 0
        for dpid in sorted(self.routes_pending):
            if dpid in connected:
                d = diff(links.routes[dpid],
                         of.route_rules(new, switch_of[dpid]),
                         keep_unused_sets=True)
                links.routes[dpid] = after(links.routes[dpid], d)
                if d:
                    out.mods.setdefault(dpid, []).extend(d)
                    n += len(d)
        self.routes_pending = {}
        out.log.append({'kind': 'adopt_routes', 't': now,
                        'links_down': sorted(links.down),
                        'flow_mods': n, 'applied_ms': None})

    def replace(self, out, demand):
        """The scheduler decided: the scheduler rules adopted from the
        switches whose source host has registered since (``demand``'s
        hosts) are replaced by the decision's, or go where it has none
        for their connection (with one deleted, the host's own DSCP marks
        class its packets, as for any connection without a rule)."""
        for dpid in sorted(self.kept):
            kept = self.kept[dpid]
            new = {key(m) for m in out.mods.get(dpid, ())
                   if m.command == 'add'}
            gone = [k for k, m in kept.items() if demand.by_ip.get(
                dict(m.match).get('ipv4_src')) in demand.hosts]
            dels = [delete(kept.pop(k)) for k in gone if k not in new]
            for k in gone:
                kept.pop(k, None)
            if dels:
                out.mods.setdefault(dpid, []).extend(dels)
            if not kept:
                del self.kept[dpid]

    def expire(self, out, now, switch_of):
        """The scheduler rules adopted GRACE_S ago or more whose hosts
        never registered go (their agents died or gave up while the
        controller was away): deleted, with an ``adopt_expired``
        record."""
        for dpid in sorted(self.kept):
            if now - self.kept_at[dpid] < GRACE_S:
                continue
            kept = self.kept.pop(dpid)
            out.mods.setdefault(dpid, []).extend(
                delete(m) for m in kept.values())
            out.log.append({'kind': 'adopt_expired', 't': now,
                            'switch': switch_of.get(dpid, str(dpid)),
                            'flow_mods': len(kept), 'applied_ms': None})
