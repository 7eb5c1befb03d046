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

A switch that never answers a barrier must not hold what waits behind
it forever: :meth:`Outbox.overdue` names the batches in flight for longer
than a timeout, and :meth:`Outbox.expire` gives up on one (its waiters
are not called; they time out on their own) and hands back the next.

Pure bookkeeping (no framework, no clock): the Ryu/os-ken shell passes
the time in and sends what :meth:`Outbox.offer`,
:meth:`Outbox.confirmed` and :meth:`Outbox.expire` hand back.
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
        self._since = {}        # dpid -> when the in-flight batch left
        self._waiting = {}      # dpid -> _Batch

    def offer(self, dpid, mods, done=None, now=0.0):
        """FlowMods for ``dpid`` and a callback for when the switch has
        them. Returns the batch to send now (then closed by a barrier),
        or None: one is in flight, and these wait for its barrier."""
        if dpid not in self._flying:
            self._flying[dpid] = [] if done is None else [done]
            self._since[dpid] = now
            return list(mods)
        self._waiting.setdefault(dpid, _Batch()).add(mods, done)
        return None

    def confirmed(self, dpid, now=0.0):
        """The barrier of ``dpid``'s batch in flight returned: (the
        callbacks to call, the next batch to send now or None)."""
        dones = self._flying.pop(dpid, [])
        self._since.pop(dpid, None)
        nxt = self._waiting.pop(dpid, None)
        if nxt is None:
            return dones, None
        self._flying[dpid] = nxt.dones
        self._since[dpid] = now
        return dones, nxt.mods

    def overdue(self, now, timeout_s):
        """The switches whose batch in flight left over ``timeout_s``
        ago and has had no barrier reply."""
        return sorted(d for d, t in self._since.items()
                      if now - t > timeout_s)

    def expire(self, dpid, now=0.0):
        """Give up on ``dpid``'s batch in flight (its barrier reply is
        taken as lost): the next batch to send now, or None. The lost
        batch's callbacks are not called."""
        _, nxt = self.confirmed(dpid, now)
        return nxt

    def waiting(self, dpid):
        """How many FlowMods wait for ``dpid``."""
        b = self._waiting.get(dpid)
        return 0 if b is None else len(b.mods)

    def drop(self, dpid):
        """The switch disconnected: forget its batches (it is programmed
        anew from its table when it connects again)."""
        self._flying.pop(dpid, None)
        self._since.pop(dpid, None)
        self._waiting.pop(dpid, None)
