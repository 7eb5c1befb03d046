"""The scheduler's rules in the switches: per connection, one rule in
the classification table of its ingress switch that sets the DSCP of
the connection's class, owned (cookie) by the coflow or job whose data
the connection carries now. When a connection has sent all it had of
that coflow its rule goes (with the next batch), so that its next
coflow's packets are classed by their agent's mark rather than by a
stale rule until the next decision.

The table keeps what is installed and turns a wanted state into the
FlowMods that reach it: only changes, deletes before adds, nothing
resent that has not changed. A finished owner's rules go with one
exact-cookie delete per switch.
"""
from dataclasses import dataclass

from . import openflow as of


@dataclass(frozen=True)
class Rule:
    """A connection's scheduler rule as installed; equality decides
    whether a change must be sent."""
    dpid: int
    match: tuple          # sorted (field, value) pairs
    cls: int
    owner: int            # owner serial (the cookie's low bits)


class RuleTable:
    """What the switches hold of the scheduler's rules, so that each
    decision sends only the difference."""

    def __init__(self, queues):
        self.queues = queues
        self.installed = {}          # connection key -> Rule

    def apply(self, wanted, released=(), idle=()):
        """FlowMods per dpid that take the switches from what is
        installed to ``wanted`` ({connection key: Rule}; connections not
        named keep their rule) after removing every rule of the owners
        in ``released`` (one cookie delete per switch) and then the rules
        of the ``idle`` connections that are left (one each)."""
        out = {}
        for owner in sorted(set(released)):
            keys = [k for k, r in self.installed.items() if r.owner == owner]
            for dpid in sorted({self.installed[k].dpid for k in keys}):
                out.setdefault(dpid, []).append(of.schedule_delete(owner))
            for k in keys:
                del self.installed[k]
        for key in sorted(set(idle) - set(wanted)):
            r = self.installed.pop(key, None)
            if r is not None:
                out.setdefault(r.dpid, []).append(
                    of.schedule_delete_rule(dict(r.match), r.owner))
        for key in sorted(wanted):
            rule = wanted[key]
            old = self.installed.get(key)
            if old == rule:
                continue
            if old is not None and old.dpid != rule.dpid:
                raise ValueError('connection %r moved switch' % (key,))
            self.installed[key] = rule
            out.setdefault(rule.dpid, []).append(self._mod(rule))
        return out

    def replay(self, dpid):
        """Every installed rule of a switch (it reconnected)."""
        return [self._mod(r) for _, r in sorted(self.installed.items())
                if r.dpid == dpid]

    def per_switch(self):
        """{dpid: [rule dicts]} of what is installed (for status)."""
        out = {}
        for key, r in sorted(self.installed.items()):
            out.setdefault(r.dpid, []).append(
                {'connection': list(key), 'match': dict(r.match),
                 'class': r.cls, 'owner': r.owner})
        return out

    def _mod(self, r):
        return of.schedule_rule(dict(r.match), r.cls, self.queues, r.owner)
