"""The scheduler's pacing: when it asks the policy again (at most once
per ``decide_gap_s``, which follows the measured cost of a decision, and
at the policy's recheck time) and the rates it paces the senders at
(policies that give per-flow rates).

Pure: no sockets, no clock (time comes in as ``now``)."""
import numpy as np

from .. import fluid

DECIDE_GAP_S = 0.002          # at most one decision per 2 ms
HOLD = -1                     # a transfer's "rate" while its sender holds it
COST_FACTOR = 2.0             # ... or per twice what a decision costs
COST_SMOOTHING = 0.2          # weight of the newest cost in the average


class DecisionClock:
    """When the policy is asked again: something changed or its recheck
    time came, and the last decision is at least ``gap_s`` old."""

    def __init__(self, gap_s=DECIDE_GAP_S):
        self.min_gap_s = self.gap_s = gap_s
        self.cost_s = 0.0
        self.restart()

    def restart(self):
        """A new run: no decision taken, none to recheck (the gap, which
        follows the controller's cost, stays)."""
        self.recheck_at = None
        self.last = None              # when the last decision was taken

    def due(self, now, dirty):
        """Whether to decide now (``dirty``: something changed)."""
        due = dirty or (self.recheck_at is not None
                        and now >= self.recheck_at)
        if due and self.last is not None and now - self.last < self.gap_s:
            return False
        return due

    def decided(self, now):
        """A decision is taken now; its recheck time is set after."""
        self.recheck_at = None
        self.last = now

    def note_cost(self, seconds):
        """What the last decision cost (measured by the caller): the gap
        between decisions follows a smoothed multiple of it."""
        self.cost_s += COST_SMOOTHING * (seconds - self.cost_s)
        self.gap_s = max(self.min_gap_s, COST_FACTOR * self.cost_s)


class RatePacer:
    """The rates the senders keep to (emulated bytes/s per send, HOLD
    while held), and whether rates limit the transfers at all."""

    def __init__(self, scale=1.0):
        self.scale = float(scale)
        self.rates = {}               # send -> emulated bytes/s
        self.limited = False

    def pace(self, snap, tasks, cls, explicit, out, demand, hold_only=False):
        """For policies that give per-flow rates (Varys' MADD): the fluid
        allocation of the transfers in flight, as the simulator computes
        it (the policy's rates reserved, the rest back-filled by class in
        strict priority), applied at the senders. Each transfer's rate is
        kept by its agent; one the allocation gives nothing is held (its
        sender writes nothing until it is given a rate, as Varys' daemons
        pause flows). Policies that only order coflows are left to the
        switches' classes: holding their starved transfers too was
        measured neutral on the emulator's error against the simulator
        (three ring jobs: SEBF 9.7% vs 11.3%, Sincronia 9.5% vs 11.8%,
        FIFO 19.6% vs 17.0% per coflow, without vs with), and the
        allocation at every decision doubled the controller's decision
        time with 10 jobs under SEBF. The measuring knob
        ``scheduler.hold_starved`` (docs/emulation.md)
        holds them all the same (``hold_only``: the rest go unlimited)."""
        # one flow per connection: the transfer its sender writes. The
        # others in flight on it are written whole and only drain; as
        # flows of their own they took shares of the link that the
        # writer was then paced below (six in flight: a sixth each)
        head = np.array([demand.writing(t) for t in tasks], bool)
        rate = np.zeros(len(tasks))
        if head.any():
            rate[head], _ = fluid.allocate(
                snap.path_links, snap.flow_path[head],
                np.asarray(cls)[snap.flow_coflow][head], snap.link_capacity,
                None if explicit is None else np.asarray(explicit)[head])
        per_host, logged = {}, {}
        for t, r, h in zip(tasks, rate.tolist(), head.tolist()):
            if not h:
                continue
            bps = r / self.scale / 8.0 if r > 0 else HOLD
            if hold_only and bps != HOLD:
                bps = 0                  # unlimited: its class decides
            old = self.rates.get(t.id, 0)
            if bps <= 0 or old <= 0:
                changed = bps != old
            else:
                changed = abs(bps - old) > 0.01 * old
            if changed:
                self.rates[t.id] = bps
                per_host.setdefault(t.host, {})[str(t.id)] = round(bps)
                logged[str(t.id)] = HOLD if bps == HOLD else round(r)
        # what a transfer's end frees must be given out again at once
        self.limited = True
        for h, rates in sorted(per_host.items()):
            out.pushes.setdefault(h, []).append({'op': 'rates',
                                                 'rates': rates})
        if logged:
            out.log.append({'kind': 'rates', 't': snap.t, 'rates': logged})
