"""OpenFlow 1.3 programs for netsched's switches, as plain values.

Nothing here imports Ryu: functions return FlowMod values (table,
priority, match, actions, ...) that the Ryu app in controllers/ turns
into messages one for one. That keeps the rules testable as golden data
and the controller a thin shell.

Tables:
  0 CLASSIFY  reserved for scheduling: rules set the DSCP (and so the
              priority class) of a match; everything then goes to 1
  1 FORWARD   one rule per destination host (IPv4 and ARP); a single
              next hop is an output, several write the next-hop set's id
              into the metadata and go to 2
  2 ECMP      the 5-tuple hash of netsched.routing as masked matches
An optical circuit switch (a hybrid fabric's OCS plane) has none of
these: its only rules are its circuits, in table 0, each port of a
circuit output to the other (:func:`circuit_rules`).
Cookies carry the owner in the top byte, so one owner's rules are
removed with one masked delete: routing, circuits, manual classification rules
(``set_class`` on the control channel), and the scheduler, whose rules
carry the serial number of the coflow (or job) that owns them in the
low bits, so a finished coflow's rules go with one exact-cookie delete.
"""
import ipaddress
import itertools
from dataclasses import dataclass

from .. import qos
from .. import routing
from .. import topology as topo
from ..errors import ConfigError

CLASSIFY_TABLE, FORWARD_TABLE, ECMP_TABLE = 0, 1, 2
ALL_TABLES = 0xff
OWNER_SHIFT = 56
OWNER_MASK = 0xff << OWNER_SHIFT
OWNER_ROUTING, OWNER_CLASSIFY, OWNER_SCHEDULE, OWNER_CIRCUIT = 1, 2, 3, 4
CIRCUIT_PRIORITY = 100
SCHEDULE_PRIORITY = 200        # above manual classification rules (100)
ETH_IP, ETH_ARP = 0x0800, 0x0806

# match fields a scheduling rule may use, with their value type
CLASSIFY_FIELDS = {'in_port': int, 'ipv4_src': str, 'ipv4_dst': str,
                   'ip_proto': int, 'tcp_src': int, 'tcp_dst': int,
                   'udp_src': int, 'udp_dst': int, 'ip_dscp': int}
_L4 = {'tcp_src': 6, 'tcp_dst': 6, 'udp_src': 17, 'udp_dst': 17}
_HASH_FIELD = {6: {'l4_src': 'tcp_src', 'l4_dst': 'tcp_dst'},
               17: {'l4_src': 'udp_src', 'l4_dst': 'udp_dst'}}


def cookie(owner, n=0):
    """The owner in the top byte, so one masked delete removes every
    rule of that owner."""
    return (owner << OWNER_SHIFT) | n


@dataclass(frozen=True)
class FlowMod:
    """One OpenFlow 1.3 flow-table modification.

    match: sorted tuple of (field, value) with value an int, a dotted
    IPv4 string, or a (value, mask) pair. actions: tuple of
    ('output', port) or ('set_field', field, value), applied in order.
    """
    table: int
    priority: int = 0
    match: tuple = ()
    actions: tuple = ()
    goto: int = None
    metadata: tuple = None          # (value, mask) for write-metadata
    cookie: int = 0
    cookie_mask: int = 0
    command: str = 'add'            # 'add', 'delete' or 'delete_strict'

    def to_dict(self):
        """As JSON-able data: golden tests and the status display."""
        d = {'command': self.command, 'table': self.table,
             'priority': self.priority, 'cookie': self.cookie,
             'match': {k: list(v) if isinstance(v, tuple) else v
                       for k, v in self.match},
             'actions': [list(a) for a in self.actions]}
        if self.goto is not None:
            d['goto'] = self.goto
        if self.metadata is not None:
            d['metadata'] = list(self.metadata)
        if self.cookie_mask:
            d['cookie_mask'] = self.cookie_mask
        return d


def _m(**kw):
    return tuple(sorted(kw.items()))


def delete_owner(owner):
    """Remove every rule of one owner, in all tables."""
    return FlowMod(table=ALL_TABLES, command='delete',
                   cookie=cookie(owner), cookie_mask=OWNER_MASK)


def delete_all():
    """Every rule of every table: a connecting switch's clean slate, so
    no rule of an earlier run survives."""
    return FlowMod(table=ALL_TABLES, command='delete')


METADATA_MASK = (1 << 64) - 1


def set_id(ports):
    """A next-hop set's id, written into the metadata: the bitmask of its
    ports, so that a set keeps its id (and its ECMP rules stay as they
    are) when a link failure adds or removes other sets."""
    if max(ports) > 64:
        raise ConfigError('port %d: ECMP next-hop sets are port bitmasks in '
                          'the 64-bit metadata, so ports stop at 64'
                          % max(ports))
    return sum(1 << (p - 1) for p in set(ports))


def _portsets(g, switch, circuits=()):
    """Forwarding table plus the id of every multi-port set."""
    table = routing.forwarding_table(g, switch, circuits)
    sets = sorted({p for p in table.values() if len(p) > 1})
    return table, {p: set_id(p) for p in sets}


def route_rules(g, switch, circuits=()):
    """Tables 0-2 for one switch: the classification default, one
    forwarding rule per destination, and the ECMP hash rules (a ToR's
    over the live ``circuits`` it sends over, see routing)."""
    ck = cookie(OWNER_ROUTING)
    rules = [FlowMod(table=CLASSIFY_TABLE, priority=0, goto=FORWARD_TABLE,
                     cookie=ck)]
    table, set_ids = _portsets(g, switch, circuits)
    for host in topo.hosts(g):
        ports = table.get(host)
        if not ports:
            continue
        ip = g.nodes[host]['ip']
        if len(ports) == 1:
            rules.append(FlowMod(FORWARD_TABLE, 100,
                                 _m(eth_type=ETH_IP, ipv4_dst=ip),
                                 (('output', ports[0]),), cookie=ck))
        else:
            rules.append(FlowMod(FORWARD_TABLE, 100,
                                 _m(eth_type=ETH_IP, ipv4_dst=ip),
                                 goto=ECMP_TABLE,
                                 metadata=(set_ids[ports], METADATA_MASK),
                                 cookie=ck))
        rules.append(FlowMod(FORWARD_TABLE, 100,
                             _m(eth_type=ETH_ARP, arp_tpa=ip),
                             (('output', ports[0]),), cookie=ck))
    sw_salt = routing.salt(g, switch)
    for ports, sid in sorted(set_ids.items(), key=lambda x: x[1]):
        rules += ecmp_rules(ports, sid, sw_salt, ck)
    return rules


def _ip_bits(v):
    return str(ipaddress.IPv4Address(v))


def ecmp_rules(ports, sid, salt=0, ck=0):
    """Table-2 rules that pick one of ports by routing's 5-tuple hash
    (as read by a switch with this salt)."""
    n = len(ports)
    b = routing.hash_bits(n)
    mask = (1 << b) - 1
    rules = []
    for proto, prio in ((routing.TCP, 20), (routing.UDP, 20), (None, 10)):
        fields = routing.hash_fields(n, proto is not None)
        for values in itertools.product(range(1 << b), repeat=len(fields)):
            v = 0
            match = {'eth_type': ETH_IP, 'metadata': (sid, METADATA_MASK)}
            if proto is not None:
                match['ip_proto'] = proto
            for f, val in zip(fields, values):
                v ^= val
                if f in ('ipv4_src', 'ipv4_dst'):
                    match[f] = (_ip_bits(val), _ip_bits(mask))
                else:
                    sh = routing.field_shift(f, n, salt)
                    match[_HASH_FIELD[proto][f]] = (val << sh, mask << sh)
            out = ports[routing.bucket_to_index(v, n)]
            rules.append(FlowMod(ECMP_TABLE, prio, _m(**match),
                                 (('output', out),), cookie=ck))
    return rules


def switch_program(g, switch, circuits=()):
    """Everything a switch gets when it connects: a clean slate, then
    its routes (over the ``circuits`` ToRs send over), or for an optical
    circuit switch its live circuits. Classification rules are added on
    top by the caller."""
    if g.nodes[switch]['role'] == topo.OCS:
        return [delete_all()] + [m for c in sorted(circuits)
                                 if c[0] == switch
                                 for m in circuit_rules(g, c)]
    return [delete_all()] + route_rules(g, switch, circuits)


def circuit_rules(g, circuit, command='add'):
    """The two rules of a circuit (topology.circuit: plane, ToR, ToR) in
    its plane: each ToR's port output to the other's; ``delete_strict``
    to remove them."""
    plane, a, b = circuit
    ck = cookie(OWNER_CIRCUIT)
    out = []
    for u, v in ((a, b), (b, a)):
        if command == 'add':
            out.append(FlowMod(CLASSIFY_TABLE, CIRCUIT_PRIORITY,
                               _m(in_port=topo.port(g, plane, u)),
                               (('output', topo.port(g, plane, v)),),
                               cookie=ck))
        else:
            out.append(FlowMod(CLASSIFY_TABLE, CIRCUIT_PRIORITY,
                               _m(in_port=topo.port(g, plane, u)),
                               command='delete_strict', cookie=ck,
                               cookie_mask=OWNER_MASK))
    return out


def rule_diff(old, new, keep_unused_sets=False):
    """FlowMods that turn a switch's rules ``old`` into ``new`` (both
    lists of 'add' FlowMods), in an order that drops no packet on the
    way (a switch applies one connection's messages in order): the ECMP
    rules of new next-hop sets first, then the other rules that are new
    or changed (an add replaces a rule of the same match and priority:
    a destination now pointing at a new set), and last the deletes
    (strict) of the rules whose (table, priority, match) is gone.
    ``keep_unused_sets``: leave the ECMP rules of next-hop sets no longer
    used where they are (no rule points at them; a set's rules are the
    same whenever it is used, so they serve it again when it returns):
    a reroute then costs the switches fewer FlowMods."""
    key = lambda m: (m.table, m.priority, m.match)    # noqa: E731
    keep = {key(m) for m in new}
    if keep_unused_sets:
        keep |= {key(m) for m in old if m.table == ECMP_TABLE}
    have = set(old)
    dels = [FlowMod(m.table, m.priority, m.match, command='delete_strict',
                    cookie=m.cookie, cookie_mask=OWNER_MASK)
            for m in old if key(m) not in keep]
    adds = [m for m in new if m not in have]
    return [m for m in adds if m.table == ECMP_TABLE] + \
        [m for m in adds if m.table != ECMP_TABLE] + dels


# --- classification (scheduling) ----------------------------------------

def check_match(match):
    """Validate a scheduling match; returns it as a normalised dict."""
    if not isinstance(match, dict) or not match:
        raise ConfigError('match must be a non-empty mapping of fields '
                          '(%s)' % ', '.join(sorted(CLASSIFY_FIELDS)))
    out = {}
    for k, v in match.items():
        if k not in CLASSIFY_FIELDS:
            raise ConfigError('match: unknown field %r (known: %s)'
                              % (k, ', '.join(sorted(CLASSIFY_FIELDS))))
        kind = CLASSIFY_FIELDS[k]
        if kind is str:
            try:
                v = str(ipaddress.IPv4Address(v))
            except (ipaddress.AddressValueError, ValueError):
                raise ConfigError('match: %s=%r is not an IPv4 address'
                                  % (k, v)) from None
        elif not isinstance(v, int) or isinstance(v, bool) or v < 0 \
                or v > 0xffff:
            raise ConfigError('match: %s=%r is not a valid number' % (k, v))
        out[k] = v
    for k in list(out):
        if k in _L4:
            proto = out.setdefault('ip_proto', _L4[k])
            if proto != _L4[k]:
                raise ConfigError('match: %s needs ip_proto=%d, got %d'
                                  % (k, _L4[k], proto))
    return out


def classify_rule(match, cls, q, rule_id, priority=100,
                  owner=OWNER_CLASSIFY):
    """Table-0 rule: packets matching get class cls (via its DSCP)."""
    m = dict(check_match(match), eth_type=ETH_IP)
    return FlowMod(CLASSIFY_TABLE, priority, _m(**m),
                   (('set_field', 'ip_dscp', qos.class_dscp(cls, q)),),
                   goto=FORWARD_TABLE, cookie=cookie(owner, rule_id))


def classify_delete(rule_id=None, owner=OWNER_CLASSIFY):
    """Delete one classification rule (by id) or all of one owner's."""
    if rule_id is None:
        return delete_owner(owner)
    return FlowMod(table=CLASSIFY_TABLE, command='delete',
                   cookie=cookie(owner, rule_id),
                   cookie_mask=(1 << 64) - 1)


def connection_match(src_ip, dst_ip, sport, dport):
    """The match of one TCP connection's data direction (its 5-tuple)."""
    return {'ipv4_src': src_ip, 'ipv4_dst': dst_ip, 'ip_proto': 6,
            'tcp_src': sport, 'tcp_dst': dport}


def schedule_rule(match, cls, q, owner_id):
    """The scheduler's rule for one connection: its class, owned by the
    coflow (or job) ``owner_id``."""
    return classify_rule(match, cls, q, owner_id, SCHEDULE_PRIORITY,
                         OWNER_SCHEDULE)


def schedule_delete_rule(match, owner_id):
    """The scheduler's rule of one connection (exact match, priority)."""
    m = dict(check_match(match), eth_type=ETH_IP)
    return FlowMod(CLASSIFY_TABLE, SCHEDULE_PRIORITY, _m(**m),
                   command='delete_strict',
                   cookie=cookie(OWNER_SCHEDULE, owner_id),
                   cookie_mask=(1 << 64) - 1)


def schedule_delete(owner_id=None):
    """Every scheduler rule of one owner (None: of every owner)."""
    return classify_delete(owner_id, OWNER_SCHEDULE)


def ingress_switches(g):
    """Switches with at least one host attached: where packets enter."""
    return [s for s in topo.switches(g)
            if any(g.nodes[m]['role'] == topo.HOST for m in g[s])]
