"""The manual classification rules (the channel's set_class and
clear_class): a match, a class and a priority per rule id, installed in
every ingress switch's classification table.

Pure: no framework, no I/O (ControllerCore sends what comes back)."""
from . import openflow as of
from .. import qos
from ..errors import NetschedError


class ManualRules:
    """The rules by id, and the ids made or recovered so far (a rule
    this controller cleared is not recovered from a switch again)."""

    def __init__(self, queues):
        self.queues = queues
        self.rules = {}                 # id -> (match dict, cls, priority)
        self.next_id = 1
        self.ids = set()                # ids made or recovered

    def set(self, req):
        """The id of the rule a set_class request asks for (the id of one
        with the same match and priority, which it replaces)."""
        match = of.check_match(req.get('match'))
        cls = req.get('cls')
        qos.class_dscp(cls, self.queues)            # validates cls
        prio = req.get('priority', 100)
        if not isinstance(prio, int) or not 1 <= prio <= 0xfffe:
            raise NetschedError('priority must be an integer in 1..65534')
        rid = next((i for i, (m, _, p) in self.rules.items()
                    if m == match and p == prio), None)
        if rid is None:
            rid, self.next_id = self.next_id, self.next_id + 1
        self.ids.add(rid)
        self.rules[rid] = (match, cls, prio)
        return rid

    def clear(self, rid):
        """The FlowMod that removes rule ``rid`` (None: every rule)."""
        if rid is None:
            self.rules.clear()
            return of.classify_delete()
        # a list for an id raised TypeError (unhashable) below
        if isinstance(rid, bool) or not isinstance(rid, int):
            raise NetschedError('clear_class: id must be a rule id (an '
                                'integer), got %r' % (rid,))
        if rid not in self.rules:
            raise NetschedError('no classification rule with id %r' % rid)
        del self.rules[rid]
        return of.classify_delete(rid)

    def recover(self, rid, match, cls, prio):
        """A rule read back from an adopted switch; False if its id was
        made or recovered before (cleared since: it goes)."""
        if rid in self.ids:
            return False
        self.ids.add(rid)
        self.rules[rid] = (match, cls, prio)
        self.next_id = max(self.next_id, rid + 1)
        return True

    def mod(self, rid):
        """The FlowMod of rule ``rid``."""
        match, cls, prio = self.rules[rid]
        return of.classify_rule(match, cls, self.queues, rid, prio)

    def mods(self):
        """Every rule's FlowMod, by id (an ingress switch's share)."""
        return [self.mod(i) for i in sorted(self.rules)]

    def listing(self):
        """The rules as the ``rules`` request lists them."""
        return [{'id': i, 'match': m, 'cls': c, 'priority': p}
                for i, (m, c, p) in sorted(self.rules.items())]
