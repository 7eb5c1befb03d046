"""``model: coflowsim``: a coflow trace on a big switch, by CoflowSim's
rules, so that netsched gives CoflowSim's average CCTs (FAIR, FIFO,
SEBF, DARK).

Reconstructed from CoflowSim's public source (github.com/coflow/coflowsim,
src/main/java/coflowsim/): simulators/Simulator.java (the loop),
simulators/FlowSimulator.java (FAIR), simulators/CoflowSimulator.java
(FIFO and SEBF), simulators/CoflowSimulatorDark.java (DARK),
traceproducers/CoflowBenchmarkTraceProducer.java,
datastructures/Job.java and datastructures/ReduceTask.java (how the
trace is read), utils/Constants.java. Its rules, all followed here:

- **Reading.** A reducer's MB become bytes rounded up to whole MB (2^20
  bytes); mappers and reducers in one rack merge into one; each
  reducer's bytes are then rounded up to a multiple of (mappers) MB and
  split equally, one flow per mapper rack, at least 1 MB each.
- **Time.** Its clock counts ms with 1024 to the second (a port moves
  port/8 bytes a second of them), reads the trace's arrival ms on that
  clock, and steps 1024 / (port MB/s) ms at a time (8 ms at 1 Gbit/s =
  2^30 bit/s: 1 MB per step at full rate). Times are written here as its
  ms / 1000 (the unit its averages are quoted in). Coflows are admitted
  in epochs of 10 of its seconds: every coflow whose arrival falls in
  (E, E + 10240] starts at E, and its CCT runs from E to the end of the
  step its last byte moves in. Amounts at or below 1e-3 (bytes, bit/s)
  are nothing.
- **FAIR.** Every step each flow moves min(port/n at its receiver,
  port/n at its sender) (n: the flows there now), with no refill of
  what a flow bottlenecked elsewhere leaves.
- **FIFO, SEBF.** Rates are set only when coflows are admitted or one
  ends: in order (FIFO: admission; SEBF: the coflow's static skew, the
  largest bytes one of its ports carries, fixed at arrival), each coflow
  gets MADD rates (every flow remaining * 8 / Gamma, Gamma over the
  capacity the ones before it left, a receiver's bytes read from its
  reducer's count, below); a coflow that meets a port already full is
  skipped; the skipped ones share what is left per port (min of free/n
  at each end, no refill); then, coflows in earliest-deadline order
  (deadline: start + skew / port * U(1, 2) s, U from Java's Random(17)
  in arrival order, as its main() sets it even without deadlines), each
  flow in (reducer rack, mapper rack) order takes min(free at its
  sender, free at its receiver). A flow that ends frees nothing until
  the next of those moments.
- **DARK.** Queues K = 10 with thresholds 10 MB x 10^k of bytes sent;
  a coflow moves down when its bytes sent exceed one (checked when
  coflows are admitted or one ends) and joins the end of its new
  queue; queues in strict priority, coflows in queue order; each coflow
  shares what the ones before it left per port (min of free/n at each
  end); no back-fill.
- **Arithmetic (FIFO, SEBF, DARK).** Every step a flow loses min(its
  bytes a step, what it has left) and its reducer's count loses the
  same, flow after flow, in doubles; a flow within 1e-3 bytes of its end
  is dropped with that rest still in the count; a reducer ends when its
  count or its flows run out. The rounding matters: MADD at a receiver
  reads the count, and where it has drifted above the flows' bytes the
  receiver keeps a few bit/s free, so the next coflow there gets MADD
  rates on them instead of being skipped and sharing. Here every
  subtraction rounds as Java's does (``drain`` and ``count_down`` in
  coflowsim_java.py), though not one step at a time: within one binade of
  doubles n equal subtractions are one exact multiplication, and only
  the steps that leave a binade or in which flows end are taken one by
  one. Measured on the Facebook trace under SEBF: 522 of 526 CCTs equal
  CoflowSim's to the ms; rounding once per jump instead gave 503, and an
  average 3% lower.

Coflows are ordered with netsched's own policy code where the rule is
the same: SEBF by ``policies.varys.sebf_order`` and FIFO by
``policies.base.arrival_order`` over a snapshot of every coflow as it
arrives (CoflowSim sorts on the skew at arrival, not on what remains,
and keeps coflows that tie in the trace's order, so the snapshot's
arrival is the admission sequence); DARK's thresholds are the ``aalo``
policy's (its parameters apply), but a coflow moves when its bytes sent
exceed a threshold rather than reach it, and a queue is in order of
entry rather than arrival, as CoflowSim has it.

Departures (with them the averages on the Facebook trace are within
0.05% of CoflowSim's): a rack's flows are not cut off after 128 MB in one step
(CoflowSim's cap, which a 1 MB step never reaches); a reducer with 0 MB
(CoflowSim gives its flows 1 MB each yet counts it done after its first
step) ends when its flows do; under FAIR a reducer ends with its flows
(its count is not kept); the flows of a reducer whose count ran out
first keep moving until they end (CoflowSim stops moving them at the
next admission but still counts their bytes at their senders), and
those of a coflow that ended so end with it in the event log.
``timeout_s`` is taken at epoch starts, as CoflowSim takes its end time.
"""
import math
import time

import numpy as np

from ...errors import ConfigError
from ...policies import base as pbase
from ...policies import varys
from . import TraceFlows
from .coflowsim_java import ZERO, JavaRandom, count_down, drain

MB = 2 ** 20
SECOND_MS = 1024             # its clock's ms in a second
EPOCH_MS = 10 * SECOND_MS    # admission epoch (CoflowSim.main)
END_MS = 86400 * SECOND_MS   # its SIMULATION_ENDTIME_MILLIS
DEADLINE_SEED = 17           # Simulator.mergeTasksByRack's Random
DEADLINE_FACTOR = 1.0        # CoflowSim.main's deadlineMultRandomFactor

POLICIES = {
    'fair': 'FAIR (FlowSimulator): per flow min(port/n at the receiver, '
            'port/n at the sender) every step, no refill',
    'fifo': 'FIFO (CoflowSimulator): admission order, MADD rates, skipped '
            'coflows share, back-fill in deadline order',
    'varys': 'SEBF (CoflowSimulator): static-skew order, MADD rates, '
             'skipped coflows share, back-fill in deadline order',
    'sebf': "SEBF (CoflowSimulator), the same as varys: CoflowSim's only "
            'SEBF runs MADD rates',
    'aalo': 'DARK (CoflowSimulatorDark): D-CLAS queues by bytes sent, FIFO '
            'by entry in a queue, per-port fair share inside a coflow',
}
KIND = {'fair': 'fair', 'fifo': 'madd', 'varys': 'madd', 'sebf': 'madd',
        'aalo': 'dark'}


def _round_up(nbytes, mb):
    """ReduceTask.roundToNearestNMB: whole bytes rounded up to a
    multiple of ``mb`` MB."""
    whole, mult = int(nbytes), mb * MB
    return mult * (whole // mult + (whole % mult > 0))


class Coflows(TraceFlows):
    """The trace as CoflowSim reads it, in admission order: per coflow
    its flows (a contiguous range, in (reducer rack, mapper rack) order),
    arrival and admission ms, bytes, width; per flow its racks and size
    (bytes). ``ports``: the trace's racks."""

    def __init__(self, coflows, ports):
        super().__init__(coflows, ports)
        n = len(coflows)
        # reducers: runs of one coflow's flows into one rack
        new = np.r_[True, (self.job[1:] != self.job[:-1])
                    | (self.dst[1:] != self.dst[:-1])] if len(self.job) \
            else np.zeros(0, bool)
        self.red = np.cumsum(new) - 1
        self.red_dst = self.dst[new]
        self.red_job = self.job[new]
        self.bytes = np.add.reduceat(self.size, self.first[:-1]) \
            if len(self.size) else np.zeros(n)
        # arrival on CoflowSim's clock (the trace's ms), and the epoch
        # that admits it: the first E with arrival <= E + EPOCH_MS
        self.arrival_ms = np.array([round(c.arrival_s * 1000.0, 6)
                                    for c in coflows])
        self.admit_ms = np.maximum(
            np.ceil(self.arrival_ms / EPOCH_MS) - 1, 0) * EPOCH_MS

    def flows_of(self, c):
        """One flow from each distinct mapper rack to each reducer rack
        (a rack's reducers merged, each rounded up to whole bytes), the
        reducer's bytes split evenly, rounded up, at least 1 MB."""
        maps = sorted(set(c.mappers))
        per = {}
        for rack, b in c.reducers:
            per[rack] = per.get(rack, 0) + _round_up(b, 1)
        return ([(maps, r, max(_round_up(per[r], len(maps)) / len(maps),
                               MB)) for r in sorted(per)],
                len(maps) * len(per))


def quantum_ms(link_bps, where='experiment'):
    """CoflowSim's time step: SECOND_MS / whole MB a port moves a
    second (Constants.SIMULATION_QUANTA); a ConfigError where that is
    under 1 ms (ports above 8 Gibit/s)."""
    mbps = int(link_bps / 8.0 / MB)
    q = SECOND_MS // mbps if mbps >= 1 else 0
    if not 1 <= q <= EPOCH_MS:
        raise ConfigError('%s: link_bps: model coflowsim steps 1024 ms / '
                          '(whole MB a port moves a second), outside 1 ms '
                          '.. one epoch at link_bps %g: CoflowSim runs ports '
                          'of 2^23 to 2^33 bit/s' % (where, link_bps))
    return q


class FairShare:
    """FlowSimulator.fairShare, kept by (sender, receiver) pair: every
    step each going flow moves min(unit/n at its receiver, unit/n at
    its sender) bytes (unit: a port's bytes a step; n: the going flows
    there), so the flows of a pair move alike. Per pair: ``served``,
    the bytes each of its flows has moved since the pair last emptied
    (as of step ``base``), its ``pace`` since then, its flows as a heap
    of the ``served`` at which each is done (within CoflowSim's 1e-3
    bytes), and ``first``, the step after which the first of them is.
    A flow ending changes the counts at its two ports: only those
    ports' rows and columns of pairs are brought up to date, so a step
    costs what changed, not every going flow. Steps are counted over
    the run (``step``), not in time: the loop maps them to its clock."""

    RENORM = float(2 ** 30)    # served beyond this: rebased (precision)

    def __init__(self, cof, link_bps, q):
        P = cof.ports
        self.c, self.P = cof, P
        self.unit = float(link_bps) / 8.0 * (1.0 * q / SECOND_MS)
        self.pair = cof.src * P + cof.dst
        self.heaps = {}
        self.n_pair = np.zeros(P * P, np.int64)
        self.served = np.zeros(P * P)
        self.base = np.zeros(P * P, np.int64)
        self.pace = np.zeros(P * P)
        self.done_at = np.full(P * P, np.inf)      # the heap's top
        self.first = np.full(P * P, np.inf)
        self.n_out = np.zeros(P, np.int64)
        self.n_in = np.zeros(P, np.int64)
        self.step = 0

    def admit(self, f):
        """Flows ``f`` start now."""
        import heapq
        P = self.P
        pairs = self.pair[f]
        own = np.flatnonzero(np.bincount(pairs, minlength=P * P))
        self._catch_up(own)
        served = self.served.tolist()
        heaps = self.heaps
        for i, p, b in zip(f.tolist(), pairs.tolist(),
                           self.c.size[f].tolist()):
            heapq.heappush(heaps.setdefault(p, []), (served[p] + b, i))
        for p in own.tolist():
            self.done_at[p] = heaps[p][0][0]
        self._count(f, own, 1)

    def advance(self, most):
        """Up to ``most`` steps, to the end of the first in which flows
        end: (steps, the flows that ended)."""
        import heapq
        nxt = self.first.min()
        if not nxt - self.step <= most:
            self.step += most
            return most, np.zeros(0, np.int64)
        nxt = int(nxt)
        steps = nxt - self.step
        self.step = nxt
        pairs = np.flatnonzero(self.first == nxt)
        gone = []
        for p in pairs.tolist():
            h = self.heaps[p]
            k = nxt - int(self.base[p])
            s, pace = float(self.served[p]), float(self.pace[p])
            while h and max(math.ceil((h[0][0] - s - ZERO) / pace), 1) <= k:
                gone.append(heapq.heappop(h)[1])
            self.done_at[p] = h[0][0] if h else np.inf
        gone = np.sort(np.array(gone, np.int64))
        self._count(gone, pairs, -1)
        return steps, gone

    def _catch_up(self, pairs):
        """``served`` of ``pairs`` brought up to this step; rebased to 0
        (with their heaps) where it grew large."""
        self.served[pairs] += (self.step - self.base[pairs]) * self.pace[pairs]
        self.base[pairs] = self.step
        for p in pairs[self.served[pairs] > self.RENORM].tolist():
            s = self.served[p]
            self.heaps[p] = [(t - s, i) for t, i in self.heaps[p]]
            self.done_at[p] -= s
            self.served[p] = 0.0

    def _count(self, f, pairs, sign):
        """Flows ``f`` start (sign 1) or end (-1), ``pairs`` theirs: the
        counts at their ports change, and with them the pace of pairs
        in those ports' rows and columns (taken as blocks of the
        pair matrix); those whose pace changed, and ``pairs`` (their
        first flows changed), get their ``first`` anew."""
        P = self.P
        src, dst = self.c.src[f], self.c.dst[f]
        np.add.at(self.n_pair, self.pair[f], sign)
        np.add.at(self.n_out, src, sign)
        np.add.at(self.n_in, dst, sign)
        empty = pairs[self.n_pair[pairs] == 0]
        self.served[empty] = 0.0
        self.pace[empty] = 0.0
        self.first[empty] = np.inf
        self.done_at[empty] = np.inf
        n2, p2 = self.n_pair.reshape(P, P), self.pace.reshape(P, P)
        rows = np.flatnonzero(np.bincount(src, minlength=P))
        cols = np.flatnonzero(np.bincount(dst, minlength=P))
        # unit / max(n) is min(unit / n_in, unit / n_out) to the bit
        # (pairs with no flow, where n may be 0, are masked out)
        with np.errstate(divide='ignore'):
            pr = self.unit / np.maximum(self.n_in[None, :],
                                        self.n_out[rows][:, None])
            pc = self.unit / np.maximum(self.n_in[cols][None, :],
                                        self.n_out[:, None])
        i, j = np.nonzero((pr != p2[rows]) & (n2[rows] > 0))
        self._refirst(rows[i] * P + j, pr[i, j])
        i, j = np.nonzero((pc != p2[:, cols]) & (n2[:, cols] > 0))
        self._refirst(i * P + cols[j], pc[i, j])
        keep = pairs[self.n_pair[pairs] > 0]
        self._refirst(keep, self.pace[keep])

    def _refirst(self, pairs, pace):
        """``pairs`` at ``pace`` from this step on: served brought up to
        now at the old pace, and the step their first flow ends."""
        self._catch_up(pairs)
        self.pace[pairs] = pace
        k = np.ceil((self.done_at[pairs] - self.served[pairs] - ZERO) / pace)
        self.first[pairs] = self.step + np.maximum(k, 1)


# Over 300 lines on purpose: it follows CoflowSim's simulator class method
# by method, so that the two can be read side by side.
class Simulation:
    """One run: ``kind`` fair, madd (FIFO, SEBF: ``rank`` gives the
    order, ``deadline_ms`` the back-fill's) or dark (``thresholds`` of
    bytes sent, Aalo's), writing to the event log ``log`` (None: none;
    ``hosts``: the host of each rack). After :meth:`run`, ``start_ms``
    and ``end_ms`` per coflow (NaN: not ended) and ``cct_ms``."""

    def __init__(self, cof, link_bps, kind, rank=None, thresholds=None,
                 deadline_ms=None, log=None, hosts=None, say=None,
                 timeout_s=None):
        self.c, self.kind = cof, kind
        self.cap = float(link_bps)
        self.q = quantum_ms(link_bps)
        self.steps_per_epoch = -(-EPOCH_MS // self.q)
        self.rank = rank
        self.thr = None if thresholds is None else np.asarray(thresholds,
                                                              float)
        self.deadline_ms = deadline_ms
        self.log, self.hosts, self.say = log, hosts, say
        self.end_at = END_MS if timeout_s is None else min(
            END_MS, timeout_s * 1000.0)
        n, F = len(cof.ids), len(cof.size)
        self.rem = cof.size.copy()
        self.rate = np.zeros(F)                     # bit/s
        self.per_step = np.zeros(F)                 # bytes a step
        self.fin_ms = np.full(F, np.nan)
        self.start_ms = np.full(n, np.nan)
        self.end_ms = np.full(n, np.nan)
        self.sent = np.zeros(n)                     # DARK: bytes sent
        self.live = np.zeros(0, np.int64)           # flows going, sorted
        self.active = []                            # coflows, admitted order
        self.queues = None
        if kind == 'dark':
            self.queues = [[] for _ in range(len(self.thr) + 1)]
            self.queue_of = np.zeros(n, np.int64)
        self.left = np.diff(cof.first)              # flows not ended
        # a reducer's bytes left as CoflowSim counts them (shuffleBytesLeft):
        # what its flows moved comes off, but a flow it drops within 1e-3
        # bytes of its end keeps that rest in the count until the reducer
        # ends, and MADD reads this count at the receiver
        self.red_left = np.bincount(cof.red, cof.size, len(cof.red_dst))
        self.red_done = np.zeros(len(cof.red_dst), bool)
        # a flow's bytes left (rem) are exact as of step base (at its rate
        # since); fin_step guesses the step it ends (within one step)
        self.base = np.zeros(F)
        self.fin_step = np.full(F, np.inf)
        self.fair = FairShare(cof, link_bps, self.q) if kind == 'fair' \
            else None
        self.recomputes = 0
        self.steps = 0

    # --- the loop (Simulator.simulate) ----------------------------------
    def run(self):
        """Epoch by epoch: admit, then steps until the epoch ends or no
        coflow is left (Simulator.simulate). Returns the last epoch's
        start (ms)."""
        c = self.c
        n = len(c.ids)
        nxt = 0
        E = c.admit_ms[0] if n else 0.0
        wall = time.monotonic()
        while E < self.end_at and (nxt < n or self.active):
            new = []
            while nxt < n and c.admit_ms[nxt] <= E:
                new.append(nxt)
                nxt += 1
            if new:
                self._admit(new, E)
            step = 0
            while step < self.steps_per_epoch and self.active:
                t = E + step * self.q
                done, ended = self._advance(t, self.steps_per_epoch - step)
                step += done
                if ended and self.kind != 'fair':
                    self._set_rates(E + (step - 1) * self.q)
            if self.say and time.monotonic() - wall > 5.0:
                wall = time.monotonic()
                self.say('coflowsim %s: t=%.0f s, %d of %d coflows ended'
                         % (self.kind, E / 1000.0,
                            np.isfinite(self.end_ms).sum(), n))
            E += EPOCH_MS
            if not self.active and nxt < n:
                E = max(E, c.admit_ms[nxt])
        return E

    @property
    def cct_ms(self):
        return self.end_ms - self.start_ms

    def _admit(self, new, E):
        c = self.c
        for j in new:
            self.start_ms[j] = E
            self.active.append(j)
            if self.queues is not None:
                self.queues[0].append(j)
            if self.log is not None:
                self.log.write(E / 1000.0, 'coflow', coflow=c.ids[j],
                               bytes=float(c.bytes[j]), width=c.width[j])
        add = np.arange(c.first[new[0]], c.first[new[-1] + 1])
        if self.kind == 'fair':
            self.fair.admit(add)
        else:
            self.base[add] = self.steps
            self.live = np.r_[self.live, add]
            self._set_rates(E)

    def _advance(self, t, most):
        """Move bytes from step start ``t`` on, at most ``most`` steps,
        up to the end of the first step in which a coflow (fair: a flow)
        ends. Returns (steps taken, whether a coflow ended)."""
        if self.kind == 'fair':
            steps, gone = self.fair.advance(most)
            self.steps += steps
            if not len(gone):
                return steps, False
            self.fin_ms[gone] = t + steps * self.q
            return steps, self._finished(gone)
        c, live = self.c, self.live
        per = self.per_step[live]
        job = c.job[live]
        cut = np.flatnonzero(np.r_[True, job[1:] != job[:-1]])
        guess = self.fin_step[live] - self.steps
        steps = int(min(np.maximum.reduceat(guess, cut).min(), most))
        # the flows that may end by then, step for step as Java runs them
        may = np.flatnonzero((per > 0) & (guess <= steps + 2))
        f = live[may]
        ahead = self.steps - self.base[f]
        x, k, done, last = drain(self.rem[f], per[may], ahead + steps)
        fin = np.full(len(live), np.inf)          # 1 = this step
        fin[may[done]] = k[done] - ahead[done]
        lastb = np.zeros(len(live))
        lastb[may] = last
        # the reducers' counts (CoflowSim ends a reducer when its count or
        # its flows run out, whichever first)
        red = c.red[live]
        rcut = np.flatnonzero(np.r_[True, red[1:] != red[:-1]])
        reds = red[rcut]
        flows_end = np.maximum.reduceat(fin, rcut)
        open_ = ~self.red_done[reds]
        rj = c.red_job[reds]
        moving = (per > 0) & open_[np.searchsorted(reds, red)]
        args = (self.red_left[reds], np.searchsorted(reds, red[moving]),
                per[moving], fin[moving], lastb[moving])
        left, zero_at = count_down(*args, steps)
        red_end = np.where(zero_at > 0, np.minimum(zero_at, flows_end),
                           flows_end)
        job_end = np.full(len(c.ids), -np.inf)
        np.maximum.at(job_end, rj[open_], red_end[open_])
        first = job_end[self.active].min()
        cut_short = first < steps
        if cut_short:                      # a count ended a coflow sooner
            steps = int(first)
            left, zero_at = count_down(*args, steps)
            red_end = np.where(zero_at > 0, np.minimum(zero_at, flows_end),
                               flows_end)
        closed = open_ & (red_end <= steps)
        self.red_left[reds] = left
        self.red_left[reds[closed]] = 0.0
        self.red_done[reds[closed]] = True
        ends = fin <= steps
        stay = ~ends[may]
        if cut_short:
            x[stay] = drain(self.rem[f[stay]], per[may[stay]],
                            ahead[stay] + steps)[0]
        self.rem[f[stay]] = x[stay]
        self.base[f[stay]] = self.steps + steps
        self.fin_step[f[stay]] = self.steps + steps + self._guess(
            x[stay], per[may[stay]])
        self.rem[live[ends]] = 0.0
        self.steps += steps
        ended = [j for j in self.active if job_end[j] <= steps]
        for j in ended:
            self.end_ms[j] = t + job_end[j] * self.q
        if not ends.any() and not ended:
            return steps, False
        # flows of a coflow whose reducers' counts ran out before them end
        # with it (CoflowSim stops tracking them)
        with_job = np.zeros(len(c.ids), bool)
        with_job[ended] = True
        out = ends | with_job[job]
        gone = live[out]
        self.fin_ms[gone] = t + np.where(ends[out], fin[out],
                                         job_end[c.job[gone]]) * self.q
        self.live = live[~out]
        return steps, self._finished(gone, ended)

    def _finished(self, gone, ended=None):
        """Flows ``gone`` ended (``fin_ms`` set), and coflows ``ended``
        (``end_ms`` set; None: those whose last flows these are): they
        leave, and are logged. Whether a coflow ended."""
        c = self.c
        self.left -= np.bincount(c.job[gone], minlength=len(c.ids))
        if ended is None:
            ended = [j for j in np.flatnonzero(np.bincount(
                c.job[gone], minlength=len(c.ids))).tolist()
                if self.left[j] == 0]
            for j in ended:
                self.end_ms[j] = np.nanmax(
                    self.fin_ms[c.first[j]:c.first[j + 1]])
        for j in ended:
            self.active.remove(j)
            if self.queues is not None:
                self.queues[self.queue_of[j]].remove(j)
        self._write(gone, ended)
        return bool(ended)

    # --- rates (CoflowSimulator, CoflowSimulatorDark) --------------------
    def _set_rates(self, t):
        """Every going flow's rate anew, at step start ``t``: the flows
        by coflow in ``self.live`` (sorted by coflow)."""
        self.recomputes += 1
        c = self.c
        self._settle(self.live)
        job = c.job[self.live]
        order = self._order()
        if not order:
            return
        lo = np.searchsorted(job, order)
        hi = np.searchsorted(job, order, side='right')
        flows = {j: self.live[a:b] for j, a, b in zip(order, lo, hi)}
        self.rate[self.live] = 0.0
        s_free = np.full(c.ports, self.cap)
        r_free = np.full(c.ports, self.cap)
        if self.kind == 'dark':
            for j in order:
                self._share(flows[j], s_free, r_free)
        else:
            skipped = [j for j in order
                       if not self._madd(flows[j], s_free, r_free)]
            if skipped:
                self._share(np.concatenate([flows[j] for j in skipped]),
                            s_free, r_free)
            edf = self._by_deadline(order, t)
            self._backfill(np.concatenate([flows[j] for j in edf]),
                           s_free, r_free)
        live = self.live
        per = self.rate[live] / 8.0 * (1.0 * self.q / SECOND_MS)
        self.per_step[live] = per
        self.fin_step[live] = self.steps + self._guess(self.rem[live], per)

    @staticmethod
    def _guess(rem, per):
        """Steps to a flow's end at ``per`` bytes a step, but for
        rounding (within one step: _advance checks those that matter)."""
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(per > 0, np.maximum(np.ceil((rem - ZERO) / per),
                                                1), np.inf)

    def _settle(self, f):
        """Flows ``f``'s bytes left brought up to this step, as Java's
        steps leave them."""
        f = f[self.base[f] < self.steps]
        go = f[self.per_step[f] > 0]
        if len(go):
            self.rem[go] = drain(self.rem[go], self.per_step[go],
                                 self.steps - self.base[go])[0]
        self.base[f] = self.steps

    def _by_deadline(self, order, t):
        """Coflows ``order`` by whole ms left to their deadlines at
        ``t`` (Java's int cast: toward zero), ties kept in ``order``."""
        return sorted(order, key=lambda j: int(
            self.start_ms[j] + self.deadline_ms[j] - t))

    def _order(self):
        """The going coflows in scheduling order."""
        if self.kind == 'dark':
            self._requeue()
            return [j for q in self.queues for j in q]
        return sorted(self.active, key=lambda j: self.rank[j])

    def _requeue(self):
        """CoflowSimulatorDark.updateJobOrder: a coflow whose bytes sent
        exceed its queue's threshold moves down, one queue per pass over
        the queues from the top, to the end of the next."""
        c = self.c
        for j in self.active:              # bytes sent (the flows settled)
            a, b = c.first[j], c.first[j + 1]
            self.sent[j] = (c.size[a:b] - self.rem[a:b]).sum()
        cur = np.searchsorted(self.thr, self.sent, side='left')
        for i in range(len(self.queues) - 1):
            move = [j for j in self.queues[i] if cur[j] > i]
            if move:
                self.queues[i] = [j for j in self.queues[i] if cur[j] <= i]
                self.queues[i + 1].extend(move)
                self.queue_of[move] = i + 1

    def _madd(self, f, s_free, r_free):
        """One coflow's MADD rates on the free capacity (updated); False
        if a port it needs is already full (skipped)."""
        c, P = self.c, self.c.ports
        src, dst, rem = c.src[f], c.dst[f], self.rem[f]
        out = np.bincount(src, rem, P)
        red = c.red[f]
        red = red[np.r_[True, red[1:] != red[:-1]]]
        into = np.zeros(P)
        into[c.red_dst[red]] = self.red_left[red]
        if ((out > 0) & (s_free <= ZERO)).any() or \
                ((into > 0) & (r_free <= ZERO)).any():
            return False
        alpha = max((out[out > 0] * 8 / s_free[out > 0]).max(initial=0.0),
                    (into[into > 0] * 8 / r_free[into > 0]).max(initial=0.0))
        rate = rem * 8 / alpha
        cap = np.minimum(s_free[src], r_free[dst])
        rate = np.where((rate > s_free[src]) | (rate > r_free[dst]), cap,
                        rate)
        self.rate[f] = rate
        s_free -= np.bincount(src, rate, P)
        r_free -= np.bincount(dst, rate, P)
        return True

    def _share(self, f, s_free, r_free):
        """Flows ``f`` share the free capacity (updated): each
        min(free/n at its sender, free/n at its receiver), n counting
        only flows whose both ends have some."""
        c, P = self.c, self.c.ports
        src, dst = c.src[f], c.dst[f]
        ok = (s_free[src] > ZERO) & (r_free[dst] > ZERO)
        f, src, dst = f[ok], src[ok], dst[ok]
        n_out = np.bincount(src, minlength=P)
        n_in = np.bincount(dst, minlength=P)
        rate = np.minimum(s_free[src] / n_out[src], r_free[dst] / n_in[dst])
        rate[rate <= ZERO] = 0.0
        self.rate[f] = rate
        s_free -= np.bincount(src, rate, P)
        r_free -= np.bincount(dst, rate, P)

    def _backfill(self, f, s_free, r_free, chunk=256):
        """Flows ``f`` in order each add min(free at the sender, free at
        the receiver). Each grant fills one of its two ports, so of the
        flows of one (sender, receiver) pair only the first can get
        anything: those are visited, ``chunk`` at a time, until one side
        has nothing free."""
        c, P = self.c, self.c.ports
        s_ok, r_ok = s_free > ZERO, r_free > ZERO
        f = f[s_ok[c.src[f]] & r_ok[c.dst[f]]]
        _, first = np.unique(c.src[f] * P + c.dst[f], return_index=True)
        f = f[np.sort(first)]
        src, dst = c.src[f], c.dst[f]
        pos, n_s, n_r = 0, s_ok.sum(), r_ok.sum()
        while pos < len(f) and n_s and n_r:
            ok = s_ok[src[pos:pos + chunk]] & r_ok[dst[pos:pos + chunk]]
            nz = np.flatnonzero(ok)
            if not len(nz):
                pos += chunk
                continue
            pos += int(nz[0])
            s, d = src[pos], dst[pos]
            a = min(s_free[s], r_free[d])
            self.rate[f[pos]] += a
            s_free[s] -= a
            r_free[d] -= a
            if s_free[s] <= ZERO:
                s_ok[s] = False
                n_s -= 1
            if r_free[d] <= ZERO:
                r_ok[d] = False
                n_r -= 1
            pos += 1

    # --- the event log ----------------------------------------------------
    def _write(self, gone, ended):
        if self.log is None:
            return
        c, hosts = self.c, self.hosts
        gone = gone[np.lexsort((gone, self.fin_ms[gone]))]
        lines = []
        job = c.job[gone]
        for i, j, s, d, b, e, st in zip(
                gone.tolist(), job.tolist(), c.src[gone].tolist(),
                c.dst[gone].tolist(), c.size[gone].tolist(),
                self.fin_ms[gone].tolist(), self.start_ms[job].tolist()):
            lines.append('{"t":%r,"ev":"flow","id":%d,"coflow":"%s",'
                         '"src":"%s","dst":"%s","bytes":%r,"start":%r}\n'
                         % (round(e / 1000.0, 9), i, c.ids[j], hosts[s],
                            hosts[d], b, round(st / 1000.0, 9)))
        self.log.write_raw(''.join(lines))
        for j in sorted(ended, key=lambda j: (self.end_ms[j], j)):
            self.log.write(self.end_ms[j] / 1000.0, 'coflow_end',
                           coflow=c.ids[j])


def deadlines_ms(alpha_bytes, link_bps):
    """Simulator.mergeTasksByRack's deadlines (ms) per coflow in
    arrival order: skew / port bytes a second x (1 + U[0, 1)) x 1000,
    U from Java's Random(17) (Job.calcAlphaDeadline)."""
    rng = JavaRandom(DEADLINE_SEED)
    per_s = link_bps / 8.0
    return np.array([a / per_s * (1.0 + rng.next_double() * DEADLINE_FACTOR)
                     * 1000 for a in alpha_bytes])


def simulation(exp, coflows, ports, log=None, hosts=None, say=None):
    """The Simulation of ``exp``'s policy over ``coflows`` (trace.load's)
    on ``ports`` racks: the order from netsched's policy code where
    CoflowSim's rule is the same (module docstring)."""
    from ... import policies
    kind = KIND[exp.policy]
    cof = Coflows(coflows, ports)
    rank = thr = dl = None
    if kind != 'fair' and len(cof.ids):
        snap = cof.snapshot(exp.link_bps)
        load = snap.coflow_port_bytes()
        if exp.policy == 'fifo':
            rank = pbase.arrival_order(snap)
        else:
            rank = varys.sebf_order(snap, load)
        dl = deadlines_ms(load.max(axis=1), exp.link_bps)
    if kind == 'dark':
        thr = policies.make(exp.policy, exp.policy_params).thresholds()
    return Simulation(cof, exp.link_bps, kind, rank, thr, dl, log, hosts,
                      say, exp.timeout_s)


def check(exp):
    """What else CoflowSim's rules need of ``exp`` (sim.reference.check
    asks): a time step of at least 1 ms."""
    quantum_ms(exp.link_bps, exp.path or exp.name)


def run(exp, coflows, racks, log, say):
    """Run ``exp`` (a trace on a big switch) by CoflowSim's rules into
    the open event log ``log``; returns the end time (s)."""
    if exp.policy not in POLICIES:
        raise ConfigError('%s: policy: model coflowsim implements the '
                          'policies %s; got %r' % (exp.path or exp.name,
                                                   ', '.join(POLICIES),
                                                   exp.policy))
    ports = len(racks)
    sim = simulation(exp, coflows, ports, log, racks, say)
    say('coflowsim %s (CoflowSim %s): %d coflows, %d flows, %d ms steps'
        % (exp.policy, POLICIES[exp.policy].split(' ')[0], len(coflows),
           len(sim.c.size), sim.q))
    sim.run()
    ended = sim.end_ms[np.isfinite(sim.end_ms)]
    cct = sim.cct_ms[np.isfinite(sim.cct_ms)]
    say('coflowsim %s: %d of %d coflows ended, average CCT %.2f s; %d rate '
        'settings, %d steps' % (exp.policy, len(cct), len(coflows),
                                cct.mean() / 1000.0 if len(cct) else
                                math.nan, sim.recomputes, sim.steps))
    return float(ended.max()) / 1000.0 if len(ended) else 0.0
