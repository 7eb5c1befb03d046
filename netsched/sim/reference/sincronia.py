"""``model: sincronia``: a coflow trace on a big switch, by the rules of
Sincronia's offline simulator, so that netsched gives its average CCTs
(BSSI and SEBF orderings, greedy and MADD rates).

Reconstructed from the public source of that simulator
(github.com/sincronia-coflow/simulator, offlinesim/): main.cpp (reading
and the loop), scheduler.cpp (greedy and MADD rates, the tolerances),
primal_dual.cpp (BSSI), heuristics.cpp (SEBF and Gamma), coflow.cpp,
ports.cpp; and how its input is made from the Facebook trace,
generate_trace.sh with github.com/sincronia-coflow/workload-generator's
trace_producer.py (``FB-UP``). Its rules, all followed here:

- **Offline.** Every coflow is released at once (main.cpp reads the
  arrival times and drops them) and its CCT runs from then. Here the
  trace's coflows must all arrive at one moment (``trace: time_scale:
  0``); a trace whose arrivals differ is refused.
- **Reading.** Sizes are whole MB (2^20 bytes): trace_producer.py
  truncates a reducer's MB to an integer and splits it over the coflow's
  mappers by integer division (Python 2), and main.cpp reads sizes as
  integers; one flow per mapper for each reducer, reducer by reducer. A
  flow left with 0 MB carries nothing (not logged, as the engine leaves
  out empty flows); a coflow left with none ends as it arrives. (On the
  Facebook trace this changes nothing: every reducer's MB is a whole
  multiple of its coflow's mappers.)
- **Time.** Every port moves 1 MB per unit of its clock (ports.cpp);
  here a unit is 1 MB at ``link_bps`` (1/128 s at 2^30 bit/s).
- **Order**, fixed once at the start on the whole sizes. BSSI
  (primal_dual.cpp): repeatedly the most loaded port among the coflows
  not yet placed (senders before receivers, then the lowest port, on a
  tie), the coflow with the smallest residual weight / its bytes there
  goes last (on a tie the first in trace order), the others' weights
  drop. SEBF (heuristics.cpp): a stable sort on Gamma, the largest bytes
  one of the coflow's ports carries, ties in trace order.
- **Greedy rates** (scheduler.cpp, assign_rates_to_flows): at each event
  the coflows in order, each one's flows in order, each flow whose two
  ports are both free takes the whole port (min of what is free at its
  two ends, always all of it): strict priority, a greedy matching. The
  next event is the first of those flows to end.
- **MADD rates** (assign_MADD_rates_to_flows): at each event, the
  coflows in order; one that has bytes at a port nothing is left of
  (under 9.3e-13 of the port) is skipped; every other one gets MADD
  rates on what the ones before it left (each flow remaining / Gamma,
  Gamma over the capacity left), and a flow of it that finds a port
  full is marked as if done. The skipped coflows share what is left per
  port (min of free/n at each end, n the flows there whose both ends
  have some). Then every flow not marked, coflows in order, adds min(free
  at its sender, free at its receiver). The next event is the smallest
  Gamma of the coflows served: a flow that ends before it (a back-filled
  or a skipped coflow's one) frees nothing until then. Amounts under
  2^-20 MB (one byte) are nothing.

Policies: ``sincronia`` is BSSI with greedy rates (PD GREEDY), as
netsched's ``sincronia`` is BSSI with a strict-priority, work-conserving
allocation; ``sebf`` is SEBF with greedy rates (SEBF GREEDY), strict
priority by Gamma like netsched's ``sebf``; ``varys`` is SEBF with MADD
(SEBF MADD), the simulator's Varys. Its MADD does share and back-fill,
but only until the next MADD event (what ends in between frees
nothing), where netsched's ``varys`` back-fills whenever a flow ends.

Coflows are ordered with netsched's own policy code, which computes the
same orders: BSSI by ``policies.sincronia.bssi_order`` and SEBF by
``policies.varys.sebf_order`` on a snapshot of the whole sizes in which
the trace's order is the arrival order, uplinks before downlinks (the
simulator's order of ports). primal_dual.cpp weighs BSSI in 32-bit
floats and bssi_order in 64-bit ones: on the offline set (the first 200
Facebook coflows) the orders are the same, and so is every coflow's CCT
(greedy rates: exactly; MADD: to the 6 digits the simulator prints).

Departures: a rack pair listed twice in one coflow adds up in BSSI here
(primal_dual.cpp keeps the last; the Facebook trace has none); a coflow
without bytes goes first rather than where primal_dual.cpp's unset index
leaves it; inside a coflow, MADD caps a flow at what its ports had
before the coflow rather than after its siblings (the same up to
rounding); ``timeout_s`` stops the run at the first event past it.
"""
import math
import time

import numpy as np

from ...errors import ConfigError
from ...policies import sincronia as psinc
from ...policies import varys
from . import TraceFlows

MB = 2 ** 20
EPS = 0.00000000000093132257       # scheduler.cpp: free capacity, per unit
SIZE_EPS = 0.000000953674316       # scheduler.cpp: bytes left, MB (1 byte)
INT_MAX = 2147483647.0             # scheduler.cpp: no event yet

POLICIES = {
    'sincronia': 'BSSI ordering (PD, primal_dual.cpp) with greedy rates '
                 '(GREEDY)',
    'sebf': 'SEBF ordering (SEBF, heuristics.cpp) with greedy rates '
            '(GREEDY)',
    'varys': 'SEBF ordering with MADD rates (MADD): skipped coflows share, '
             'back-fill until the next MADD event only',
}
ORDER = {'sincronia': 'bssi', 'sebf': 'sebf', 'varys': 'sebf'}
RATES = {'sincronia': 'greedy', 'sebf': 'greedy', 'varys': 'madd'}


class Coflows(TraceFlows):
    """The trace as the offline simulator reads it: per coflow its flows
    (a contiguous range, reducer by reducer, the mappers in the trace's
    order) with whole MB each, its bytes and width; per flow its racks.
    Flows of 0 MB are dropped. ``ports``: the trace's racks."""

    unit = MB                   # sizes are whole MB

    def __init__(self, coflows, ports):
        super().__init__(coflows, ports)
        self.mb = np.bincount(self.job, self.size, len(coflows))

    def flows_of(self, c):
        """Per reducer, one flow from each mapper (racks as the trace
        lists them): whole MB per reducer, then integer division by the
        mappers; a reducer whose flows would be 0 MB has none."""
        n = len(c.mappers)
        runs = []
        for rack, b in c.reducers:
            share = int(b / MB) // n
            if share > 0:
                runs.append((c.mappers, rack, share))
        return runs, n * len(c.reducers)

    def rank(self, how, link_bps):
        """Each coflow's place in the order (0 first): ``bssi`` or
        ``sebf``."""
        snap = self.snapshot(link_bps)
        load = snap.coflow_port_bytes()
        if how == 'bssi':
            return psinc.bssi_order(load)
        return varys.sebf_order(snap, load)


class Simulation:
    """One run of the offline simulator's loop over ``cof`` in the order
    ``rank``, rates ``greedy`` or ``madd``; times in its units (1 MB at a
    port's rate). ``on_event(t, flows, coflows)`` is told the flows and
    coflows that end at each event; ``watch(t, dt, flows, rates)`` (for
    tests) the rates (ports' shares) of the flows that move from t to
    t + dt. After :meth:`run`: ``flow_end`` and ``coflow_end`` (NaN: not
    ended), ``events``."""

    def __init__(self, cof, rank, rates, on_event=None, until=math.inf,
                 watch=None):
        self.c = cof
        self.order = np.argsort(rank, kind='stable')
        self.rates = rates
        self.on_event = on_event
        self.until = until
        self.watch = watch
        self.flow_end = np.full(len(cof.size), np.nan)
        self.coflow_end = np.full(len(cof.ids), np.nan)
        self.coflow_end[cof.first[:-1] == cof.first[1:]] = 0.0
        self.left = np.diff(cof.first)          # flows not ended, per coflow
        self.events = 0

    def run(self):
        if len(self.c.size):
            (self._greedy if self.rates == 'greedy' else self._madd)()
        return self

    def _tell(self, t, flows):
        """Flows ``flows`` (ids) end at ``t``: their coflows that have
        none left end too."""
        c = self.c
        self.flow_end[flows] = t
        jobs, n = np.unique(c.job[flows], return_counts=True)
        self.left[jobs] -= n
        ended = jobs[self.left[jobs] == 0].tolist()
        self.coflow_end[ended] = t
        if self.on_event is not None:
            self.on_event(t, flows, ended)

    # --- greedy rates -------------------------------------------------
    def _greedy(self):
        """assign_rates_to_flows at every event. Every grant takes a whole
        port at both ends, so the rates are the greedy matching of the
        flows in priority order; only the first unfinished flow between
        two racks can be in it (a later one meets the same two ports), and
        a flow ends only while in it. The matching is kept from event to
        event: ports freed by the flows that end are refilled in priority
        order, and a port taken from a later flow frees that flow's other
        end, which is refilled in turn."""
        c, P = self.c, self.c.ports
        prio = np.concatenate([np.arange(c.first[j], c.first[j + 1])
                               for j in self.order])    # position -> flow
        src, dst = c.src[prio], c.dst[prio]
        rem = c.size[prio].copy()
        # flows between the same two racks, in priority order: a linked
        # list per rack pair, its head in H (position, inf: none)
        key = src * P + dst
        by = np.lexsort((np.arange(len(key)), key))
        nxt = np.full(len(key), -1, np.int64)
        same = key[by[1:]] == key[by[:-1]]
        nxt[by[:-1][same]] = by[1:][same]
        heads = by[np.r_[True, ~same]]
        H = np.full((P, P), np.inf)
        H[src[heads], dst[heads]] = heads
        m = _Matching(H, src, dst, rem)
        m.refill(np.arange(P), np.arange(P), 0.0)
        now = 0.0
        while True:
            t = m.fin.min()
            if not np.isfinite(t) or t > self.until:
                break
            if self.watch is not None:
                held = m.ms[np.isfinite(m.ms)].astype(np.int64)
                self.watch(now, t - now, prio[held], np.ones(len(held)))
            now = t
            self.events += 1
            done_s = np.flatnonzero(m.fin == t)
            pos = m.ms[done_s].astype(np.int64)
            r = dst[pos]
            m.ms[done_s] = m.mr[r] = m.fin[done_s] = np.inf
            rem[pos] = 0.0
            n = nxt[pos]
            H[done_s, r] = np.where(n >= 0, n, np.inf)
            self._tell(t, np.sort(prio[pos]))
            m.refill(done_s, r, t)

    # --- MADD rates ---------------------------------------------------
    def _madd(self):
        """assign_MADD_rates_to_flows at every event (module docstring)."""
        c, P = self.c, self.c.ports
        rem = c.size.copy()
        marked = np.zeros(len(rem), bool)   # its completion_time is set
        gone = np.zeros(len(c.ids), bool)   # the coflow's is
        order = [j for j in self.order.tolist() if c.first[j] < c.first[j + 1]]
        t = 0.0
        while (rem > SIZE_EPS).any() and t <= self.until:
            self.events += 1
            free_s, free_r = np.ones(P), np.ones(P)
            bw = np.zeros(len(rem))
            sched = np.zeros(len(rem), bool)
            step, skipped = INT_MAX, []
            for j in order:
                if gone[j]:
                    continue
                a, b = c.first[j], c.first[j + 1]
                rc, s, d = rem[a:b], c.src[a:b], c.dst[a:b]
                if not (rc > SIZE_EPS).any():
                    gone[j] = True
                    continue
                out = np.bincount(s, rc, P)
                into = np.bincount(d, rc, P)
                o, i = out > SIZE_EPS, into > SIZE_EPS
                if (free_s[o] < EPS).any() or (free_r[i] < EPS).any():
                    skipped.append(j)
                    marked[a:b] |= rc <= SIZE_EPS
                    continue
                gamma = max((out[o] / free_s[o]).max(initial=-1.0),
                            (into[i] / free_r[i]).max(initial=-1.0))
                ok = (rc > SIZE_EPS) & (free_s[s] > EPS) & (free_r[d] > EPS)
                marked[a:b] |= ~ok
                rate = np.where(ok, rc / gamma, 0.0)
                rate = np.minimum(rate, np.minimum(free_s[s], free_r[d]))
                bw[a:b] = rate
                sched[a:b] = ok
                free_s -= np.bincount(s, rate, P)
                free_r -= np.bincount(d, rate, P)
                step = min(step, gamma)
            if skipped:
                f = np.concatenate([np.arange(c.first[j], c.first[j + 1])
                                    for j in skipped])
                s, d = c.src[f], c.dst[f]
                ok = (free_s[s] > EPS) & (free_r[d] > EPS) \
                    & (rem[f] > SIZE_EPS)
                f, s, d = f[ok], s[ok], d[ok]
                n_s = np.bincount(s, minlength=P)
                n_r = np.bincount(d, minlength=P)
                share = np.minimum(free_s[s] / n_s[s], free_r[d] / n_r[d])
                share[share < EPS] = 0.0
                bw[f] = share
                sched[f] = True
                free_s -= np.bincount(s, share, P)
                free_r -= np.bincount(d, share, P)
            f = np.concatenate([np.arange(c.first[j], c.first[j + 1])
                                for j in order if not gone[j]])
            self._backfill(f[~marked[f]], free_s, free_r, bw, sched)
            if self.watch is not None:
                self.watch(t, step, np.flatnonzero(sched), bw[sched])
            moved = np.minimum(rem[sched], bw[sched] * step)
            before = rem > 0
            rem[sched] -= moved
            rem[rem < SIZE_EPS] = 0.0
            t += step
            ended = np.flatnonzero(before & (rem == 0))
            if len(ended):
                self._tell(t, ended)

    def _backfill(self, f, free_s, free_r, bw, sched, chunk=512):
        """Flows ``f`` in order each add min(free at the sender, free at
        the receiver) where both have some. Each grant fills one of its
        ports, so the next flow with both ends free is looked for ``chunk``
        flows at a time, until one side has nothing free."""
        c = self.c
        s_ok, r_ok = free_s > EPS, free_r > EPS
        f = f[s_ok[c.src[f]] & r_ok[c.dst[f]]]
        src, dst = c.src[f], c.dst[f]
        pos = 0
        while pos < len(f) and s_ok.any() and r_ok.any():
            nz = np.flatnonzero(s_ok[src[pos:pos + chunk]]
                                & r_ok[dst[pos:pos + chunk]])
            if not len(nz):
                pos += chunk
                continue
            pos += int(nz[0])
            s, d = src[pos], dst[pos]
            a = min(free_s[s], free_r[d])
            if a < EPS:
                a = 0.0
            bw[f[pos]] += a
            sched[f[pos]] = True
            free_s[s] -= a
            free_r[d] -= a
            s_ok[s] = free_s[s] > EPS
            r_ok[d] = free_r[d] > EPS
            pos += 1


class _Matching:
    """The greedy matching of a big switch's flows in priority order
    (positions), kept as flows end. ``H[s, r]``: the first unfinished
    flow from sender s to receiver r (inf: none); ``ms``/``mr``: the flow
    holding each sender/receiver (inf: none); ``fin``: when the sender's
    flow ends; ``rem``: what a flow not held has left.

    A flow earlier than the holders of both its ends blocks; the earliest
    blocking flow is in the matching (every earlier one is settled), so
    it joins, displacing those holders. A flow can only start to block
    where a holder changed, so each such port keeps its earliest blocking
    flow (``bs``/``br``: position, ``ts``/``tr``: the other end), found
    anew when it changes or when that other end is taken."""

    def __init__(self, H, src, dst, rem):
        P = H.shape[0]
        self.H, self.src, self.dst, self.rem = H, src, dst, rem
        self.ms, self.mr, self.fin = (np.full(P, np.inf) for _ in range(3))
        self.bs, self.br = np.full(P, np.inf), np.full(P, np.inf)
        self.ts = np.full(P, -1, np.int64)      # -1: no blocking flow
        self.tr = np.full(P, -1, np.int64)

    def _senders(self, S):
        if len(S):
            sub = self.H[S]
            sub = np.where((sub < self.ms[S, None]) & (sub < self.mr), sub,
                           np.inf)
            k = sub.argmin(axis=1)
            v = sub[np.arange(len(S)), k]
            self.bs[S] = v
            self.ts[S] = np.where(v < np.inf, k, -1)

    def _receivers(self, R):
        if len(R):
            sub = self.H[:, R]
            sub = np.where((sub < self.mr[R]) & (sub < self.ms[:, None]), sub,
                           np.inf)
            k = sub.argmin(axis=0)
            v = sub[k, np.arange(len(R))]
            self.br[R] = v
            self.tr[R] = np.where(v < np.inf, k, -1)

    def refill(self, S, R, t):
        """Restore the matching at time ``t`` after the holders of
        senders ``S`` and receivers ``R`` changed."""
        ms, mr, fin, rem, src, dst = (self.ms, self.mr, self.fin, self.rem,
                                      self.src, self.dst)
        bs, br = self.bs, self.br
        self._senders(S)
        self._receivers(R)
        while True:
            i, j = int(bs.argmin()), int(br.argmin())
            if bs[i] <= br[j]:
                e, s, r = bs[i], i, int(self.ts[i])
            else:
                e, s, r = br[j], int(self.tr[j]), j
            if e == np.inf:
                return
            S, R = [], []
            q = ms[s]
            if q < np.inf:              # a later flow held the sender
                q = int(q)
                rem[q] = fin[s] - t
                mr[dst[q]] = np.inf
                R.append(int(dst[q]))
            q = mr[r]
            if q < np.inf:              # a later flow held the receiver
                q = int(q)
                o = int(src[q])
                rem[q] = fin[o] - t
                ms[o] = fin[o] = np.inf
                S.append(o)
            ms[s] = mr[r] = e
            fin[s] = t + rem[int(e)]
            bs[s] = br[r] = np.inf
            self.ts[s] = self.tr[r] = -1
            # ports whose blocking flow went to s or r look again
            S = np.r_[S, np.flatnonzero(self.ts == r)].astype(np.int64)
            R = np.r_[R, np.flatnonzero(self.tr == s)].astype(np.int64)
            self._senders(S)
            self._receivers(R)


def released_at_once(exp, coflows):
    """A ConfigError unless every coflow arrives at one moment (the
    offline simulator's only case)."""
    late = [c for c in coflows if c.arrival_s != coflows[0].arrival_s]
    if late:
        raise ConfigError(
            '%s: model sincronia is offline: every coflow is released at '
            'once, but coflow %s arrives at %g s and coflow %s at %g s (set '
            'trace: time_scale: 0)'
            % (exp.path or exp.name, coflows[0].id, coflows[0].arrival_s,
               late[0].id, late[0].arrival_s))


def check(exp):
    """What ``netsched check`` asks of the model beyond its policies:
    the trace's coflows all arrive at once."""
    from ...workload import trace
    released_at_once(exp, trace.load(exp.trace)[1])


def run(exp, coflows, racks, log, say):
    """Run ``exp`` (a trace on a big switch, every coflow arriving at
    once) by the offline simulator's rules into the open event log
    ``log``; returns the end time (s)."""
    if exp.policy not in POLICIES:
        raise ConfigError('%s: policy: model sincronia implements the '
                          'policies %s; got %r' % (exp.path or exp.name,
                                                   ', '.join(POLICIES),
                                                   exp.policy))
    released_at_once(exp, coflows)
    t0 = coflows[0].arrival_s if coflows else 0.0
    cof = Coflows(coflows, len(racks))
    unit = MB * 8.0 / exp.link_bps              # s per unit of its clock
    hosts = racks

    def write(t, flows, ended):
        ts = round(t0 + float(t) * unit, 9)
        lines = ['{"t":%r,"ev":"flow","id":%d,"coflow":"%s","src":"%s",'
                 '"dst":"%s","bytes":%r,"start":%r}\n'
                 % (ts, i, cof.ids[j], hosts[s], hosts[d], b * MB, t0)
                 for i, j, s, d, b in zip(
                     flows.tolist(), cof.job[flows].tolist(),
                     cof.src[flows].tolist(), cof.dst[flows].tolist(),
                     cof.size[flows].tolist())]
        log.write_raw(''.join(lines))
        for j in ended:
            log.write(ts, 'coflow_end', coflow=cof.ids[j])

    for j, cid in enumerate(cof.ids):
        log.write(t0, 'coflow', coflow=cid, bytes=float(cof.mb[j] * MB),
                  width=cof.width[j])
    for j in np.flatnonzero(cof.first[:-1] == cof.first[1:]).tolist():
        log.write(t0, 'coflow_end', coflow=cof.ids[j])
    wall = time.monotonic()
    rank = cof.rank(ORDER[exp.policy], exp.link_bps)
    until = math.inf if exp.timeout_s is None else \
        (exp.timeout_s - t0) / unit
    say('sincronia %s (offline simulator %s): %d coflows, %d flows'
        % (exp.policy, POLICIES[exp.policy].split(' (')[0], len(cof.ids),
           len(cof.size)))
    sim = Simulation(cof, rank, RATES[exp.policy], write, until).run()
    cct = sim.coflow_end[np.isfinite(sim.coflow_end)] * unit
    say('sincronia %s: %d of %d coflows ended, average CCT %.4f s; %d events, '
        '%.1f s' % (exp.policy, len(cct), len(cof.ids),
                    cct.mean() if len(cct) else math.nan, sim.events,
                    time.monotonic() - wall))
    return t0 + (float(cct.max()) if len(cct) else 0.0)
