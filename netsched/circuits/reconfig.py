"""Moving an optical circuit switch from the circuits it has to the ones
a scheduler decided: the steps both backends take, in order (pure: time
comes in, actions go out; the emulator's controller turns them into
FlowMods, the simulator's circuit driver into new paths).

  1. route  the circuits that stay: ToRs stop sending over the ones
            that go (their racks' traffic takes the packet core);
  2. remove the circuits that go: the OCS drops their port pairs; the
            blackout of the new circuits' ports starts;
  3. add    after the reconfiguration delay, the new circuits: the OCS
            joins their ports;
  4. route  every decided circuit: ToRs send over the new ones too.

Each step waits until the previous one is confirmed (:meth:`done`: on
the emulator when every switch it touched answered its barrier, in the
simulator at once), so no ToR sends into a circuit the OCS has not
joined, and nothing crosses a circuit during its blackout. A step with
nothing to do is skipped; with nothing to add there is no blackout. A
new decision is taken only when the last reconfiguration has finished.
Circuits are whatever hashable values the caller uses (the schedulers'
(plane, i, j)).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Action:
    kind: str             # 'route', 'remove' or 'add'
    circuits: frozenset   # route: the circuits ToRs send over from now on
    token: int            # give it back to done() once it is in place


STEPS = ('leave', 'drop', 'dark', 'join', 'enter')


class Reconfig:
    """The circuits a fabric has (``live``: joined by the OCS; ``routed``:
    what the ToRs send over) and the reconfiguration under way, if any."""

    def __init__(self, reconfig_s, live=frozenset()):
        self.reconfig_s = float(reconfig_s)
        self.live = frozenset(live)
        self.routed = self.live
        self.since = {}               # circuit -> when it came up
        self.target = None            # the decided circuits, while moving
        self.state = None             # the next of STEPS to take
        self.pending = None           # the action awaiting confirmation
        self.dark_until = None        # end of the blackout under way
        self.reconfigurations = 0
        self._tokens = 0

    @property
    def idle(self):
        return self.target is None

    @property
    def wake_at(self):
        """When :meth:`wake` has something to do (None: nothing)."""
        return self.dark_until if self.pending is None else None

    def start(self, wanted, now):
        """Begin moving to ``wanted`` (only when idle); returns the first
        actions (none if nothing changes)."""
        if not self.idle:
            raise ValueError('a reconfiguration is under way')
        wanted = frozenset(wanted)
        if wanted == self.live:
            return []
        self.target, self.state = wanted, 'leave'
        self.reconfigurations += 1
        return self._go(now)

    def done(self, token, now):
        """The pending action is in place: what follows now, if anything."""
        if self.pending is None or self.pending.token != token:
            return []
        self.pending = None
        return self._go(now)

    def wake(self, now):
        """The actions due at ``now`` (the end of a blackout)."""
        if self.pending is None and self.state == 'dark':
            return self._go(now)
        return []

    def _act(self, kind, circuits, then):
        self._tokens += 1
        self.state = then
        self.pending = Action(kind, frozenset(circuits), self._tokens)
        return [self.pending]

    def _go(self, now):
        while self.state is not None:
            st, target = self.state, self.target
            if st == 'leave':
                keep = self.live & target
                if self.routed != keep:
                    self.routed = keep
                    return self._act('route', keep, 'drop')
                self.state = 'drop'
            elif st == 'drop':
                gone = self.live - target
                self.state = 'dark'
                if gone:
                    self.live -= gone
                    for c in gone:
                        self.since.pop(c, None)
                    return self._act('remove', gone, 'dark')
            elif st == 'dark':
                new = target - self.live
                if not new:
                    self.state = 'enter'
                    continue
                if self.dark_until is None:
                    self.dark_until = now + self.reconfig_s
                if now < self.dark_until - 1e-12:
                    return []
                self.dark_until = None
                return self._act('add', new, 'join')
            elif st == 'join':
                for c in target - self.live:
                    self.since[c] = now
                self.live = target
                self.state = 'enter'
            elif st == 'enter':
                if self.routed != target:
                    self.routed = target
                    return self._act('route', target, 'finish')
                self.state = 'finish'
            else:                                   # finish
                self.state = self.target = None
        return []
