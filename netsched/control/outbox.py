"""At most one batch of FlowMods in flight per switch.

A batch is in flight from its first FlowMod until the switch answers the
barrier that closes it. Decisions that come meanwhile do not go out at
once: their FlowMods wait in the switch's next batch, merged, and leave
when the barrier returns. Without this, a burst of decisions (a policy
that re-ranks many coflows at each arrival) queues batch after batch at
the switch, and each decision waits for every batch before it; with it,
a rule rewritten several times during one round trip is sent once, in
its last form.

Merging keeps OpenFlow's meaning. An ``add`` or ``delete_strict`` names
one rule (table, priority, match), so a later one replaces an earlier
one of the same rule still waiting. A non-strict ``delete`` can touch
many rules, so nothing after it replaces anything before it.

Pure bookkeeping (no framework): the Ryu/os-ken shell sends what
:meth:`Outbox.offer` and :meth:`Outbox.confirmed` hand back.
"""


class _Batch:
    """FlowMods waiting for a switch, merged, and who waits for them."""

    def __init__(self):
        self.mods = []
        self.at = {}            # rule key -> its index in mods
        self.dones = []

    def add(self, mods, done):
        for fm in mods:
            if fm.command == 'delete':
                self.at.clear()             # ordered against what follows
                self.mods.append(fm)
                continue
            key = (fm.table, fm.priority, fm.match)
            i = self.at.get(key)
            if i is None:
                self.at[key] = len(self.mods)
                self.mods.append(fm)
            else:
                self.mods[i] = fm
        if done is not None:
            self.dones.append(done)


class Outbox:
    """Per switch (dpid): the callbacks of the batch in flight and the
    batch waiting behind it."""

    def __init__(self):
        self._flying = {}       # dpid -> the in-flight batch's callbacks
        self._waiting = {}      # dpid -> _Batch

    def offer(self, dpid, mods, done=None):
        """FlowMods for ``dpid`` and a callback for when the switch has
        them. Returns the batch to send now (then closed by a barrier),
        or None: one is in flight, and these wait for its barrier."""
        if dpid not in self._flying:
            self._flying[dpid] = [] if done is None else [done]
            return list(mods)
        self._waiting.setdefault(dpid, _Batch()).add(mods, done)
        return None

    def confirmed(self, dpid):
        """The barrier of ``dpid``'s batch in flight returned: (the
        callbacks to call, the next batch to send now or None)."""
        dones = self._flying.pop(dpid, [])
        nxt = self._waiting.pop(dpid, None)
        if nxt is None:
            return dones, None
        self._flying[dpid] = nxt.dones
        return dones, nxt.mods

    def waiting(self, dpid):
        """How many FlowMods wait for ``dpid``."""
        b = self._waiting.get(dpid)
        return 0 if b is None else len(b.mods)

    def drop(self, dpid):
        """The switch disconnected: forget its batches (it is programmed
        anew from its table when it connects again)."""
        self._flying.pop(dpid, None)
        self._waiting.pop(dpid, None)
