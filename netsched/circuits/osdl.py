"""``osdl``: job-aware circuit scheduling and placement after OSDL.

What is known: the survey's OSDL places distributed DL training jobs on
a hybrid fabric and schedules them across its optical circuit switch and
its electrical packet core, giving circuits to the jobs' heaviest
communication and deciding a job's circuit and packet bandwidth
together. Everything concrete below is reconstructed: the cost model,
the greedy order, when to stop, how planes are chosen, and how a
placement is scored.

**The cost model.** A job's communication time per iteration is the
time its slowest *resource* takes to move its bytes of one iteration
(``JobTraffic.pair_bytes``), all jobs communicating at once:

- a ToR pair {i, j} with ``n`` circuits (on any planes) carries all the
  traffic between racks i and j, every job's, at ``n * circuit_bps``
  each direction (two resources: i->j and j->i);
- traffic between racks without a circuit crosses the packet core: it
  leaves through ToR i's uplink and enters through ToR j's downlink,
  each ``packet_bps[i]`` (the core beyond the uplinks is taken as
  non-blocking; oversubscription is in ``packet_bps``).

Jobs share a resource of capacity ``c`` by processor sharing (per-job
fair sharing, all starting together, work-conserving): job j with ``b_j``
bytes on it is done after ``sum_m min(b_m, b_j) / c``. So giving a pair
a circuit both shortens the jobs whose traffic moves onto it and frees
packet bandwidth for the jobs left on the core: circuit and packet
bandwidth are decided together, through one model.

**The greedy** (``assign``). Start with no circuits. Repeatedly, take
the jobs in order of their current communication time, longest first
(the straggler gains most, and a job's iteration waits for its slowest
transfer), and for each, its ToR pairs by its bytes on them, heaviest
first (the larger direction; a pair may get a second circuit on another
plane); the first pair with a plane where both ToRs have a free port,
whose circuit shortens that job's time and lengthens no job's, gets it,
on the lowest such plane. When no circuit shortens any job's time, a
circuit that leaves the job's time as it is but takes one of its
slowest resources off the bottleneck (fewer resources at its time) is
taken in the same order: a ring all-reduce over three racks needs
circuits on all three of its pairs before its time drops, and no single
one of them shortens it. Stop when neither kind is left. Jobs with no
iterations left are ignored; traffic of no job gets no circuit.

The choice is a function of the jobs (and the fabric's static part)
only, memoised on them: the decision changes when the set of jobs does.
The planes of the result are then renamed (whole matchings permuted,
which keeps it valid) to keep as many of the circuits there now as
possible, so a new job does not move circuits between planes for
nothing. ``place`` runs the same greedy with each candidate placement
of a new job among the jobs placed before it, and takes the candidate
whose job has the shortest communication time (its heavy pairs get
circuits if there are free ports for them), then the shortest total
over all jobs, then the first.
"""
import math
from collections import Counter, defaultdict

import networkx as nx

from .base import CircuitDecision, CircuitScheduler, check_circuits
from .registry import register

MEMO = 64                     # decisions remembered (sets of jobs)


@register
class OSDL(CircuitScheduler):
    name = 'osdl'
    decides_on = 'jobs'
    needs = ('jobs',)

    def __init__(self, **params):
        super().__init__(**params)
        self._memo = {}

    def decide(self, snap):
        T, P = snap.n_tors, int(snap.planes)
        now = check_circuits(snap.circuits, T, P)
        jobs = active(snap.jobs)
        key = (job_key(jobs), fabric_key(snap))
        chosen = self._memo.get(key)
        if chosen is None:
            chosen = self._memo[key] = assign(jobs, snap)
            if len(self._memo) > MEMO:
                self._memo.pop(next(iter(self._memo)))
        return CircuitDecision(check_circuits(relabel(chosen, now, P), T, P))

    def place(self, jobs, candidates, snap):
        """The candidate whose job communicates fastest once the greedy
        has given circuits to it and the jobs placed before (``jobs``,
        {id: JobTraffic}); ties: the shortest total over all jobs, then
        the first. ``candidates``: the job on each candidate placement (a
        JobTraffic each); ``snap``: the fabric (static part read)."""
        best = None
        for idx, cand in enumerate(candidates):
            js = active(dict(jobs, **{cand.id: cand}))
            t = expected_times(js, assign(js, snap), snap)
            score = (t.get(cand.id, 0.0), sum(t.values()), idx)
            if best is None or _before(score, best):
                best = score
        return 0 if best is None else best[2]


def active(jobs):
    """The jobs with iterations left, by id."""
    return {j: v for j, v in sorted(jobs.items()) if v.iterations_left > 0}


def job_key(jobs):
    return tuple((j, tuple(sorted((tuple(int(x) for x in p), float(b))
                                  for p, b in v.pair_bytes.items())))
                 for j, v in sorted(jobs.items()))


def fabric_key(snap):
    return (tuple(snap.tors), int(snap.planes), float(snap.circuit_bps),
            tuple(float(x) for x in snap.packet_bps))


def resource_times(jobs, bundles, snap):
    """Per job, the times (s) its resources take for one iteration (see
    the module docstring), as {job: [(time, resource)]}; ``bundles``:
    {(i, j): circuits between ToRs i < j}."""
    load = defaultdict(dict)
    for jid, job in jobs.items():
        for (i, j), b in sorted(job.pair_bytes.items()):
            i, j = int(i), int(j)
            if i == j or not b > 0:
                continue
            if bundles.get((min(i, j), max(i, j)), 0):
                rs = (('circuit', i, j),)
            else:
                rs = (('up', i), ('down', j))
            for r in rs:
                load[r][jid] = load[r].get(jid, 0.0) + float(b)
    out = {jid: [] for jid in jobs}
    for r, per_job in load.items():
        if r[0] == 'circuit':
            cap = bundles[(min(r[1:]), max(r[1:]))] * snap.circuit_bps / 8.0
        else:
            cap = float(snap.packet_bps[r[1]]) / 8.0
        for jid, b in per_job.items():
            shared = sum(min(bm, b) for bm in per_job.values())
            out[jid].append((shared / cap if cap > 0 else math.inf, r))
    return out


def expected_times(jobs, circuits, snap):
    """{job: its communication time per iteration (s)} with these
    circuits ({(plane, i, j)})."""
    per = resource_times(jobs, _bundles(circuits), snap)
    return {j: max((t for t, _ in v), default=0.0) for j, v in per.items()}


def assign(jobs, snap):
    """The greedy of the module docstring: a frozenset of circuits."""
    T, P = snap.n_tors, int(snap.planes)
    circuits, used, bundles = set(), set(), Counter()
    if T < 2 or P < 1 or not snap.circuit_bps > 0:
        return frozenset()
    pairs = {jid: heaviest_pairs(job) for jid, job in jobs.items()}
    cur = resource_times(jobs, bundles, snap)
    while True:
        move = (_find(jobs, pairs, cur, bundles, used, snap, True)
                or _find(jobs, pairs, cur, bundles, used, snap, False))
        if move is None:
            return frozenset(circuits)
        (i, j), k, cur = move
        circuits.add((k, i, j))
        used.update({(k, i), (k, j)})
        bundles[(i, j)] += 1


def heaviest_pairs(job):
    """A job's ToR pairs (i < j), by its bytes on them (the larger
    direction), heaviest first; ties by pair."""
    per = defaultdict(lambda: [0.0, 0.0])
    for (i, j), b in job.pair_bytes.items():
        i, j = int(i), int(j)
        if i != j and b > 0:
            per[(min(i, j), max(i, j))][int(i > j)] += float(b)
    return sorted(per, key=lambda p: (-max(per[p]), p))


def _find(jobs, pairs, cur_res, bundles, used, snap, shorter):
    """The first move of the greedy's order: (pair, plane, resource times
    after) or None. ``shorter``: moves that shorten the job's time; else
    moves that only take a resource off its bottleneck. A circuit on a
    pair can do either for a job only if one of the job's bottleneck
    resources carries that pair's traffic: other pairs are not tried."""
    cur = _metrics(cur_res)
    for jid in sorted(jobs, key=lambda j: (-cur[j][0], j)):
        neck = {r for t, r in cur_res[jid] if _same(t, cur[jid][0])}
        for i, j in pairs[jid]:
            if not neck & _touched(i, j):
                continue
            k = next((k for k in range(int(snap.planes))
                      if (k, i) not in used and (k, j) not in used), None)
            if k is None:
                continue
            bundles[(i, j)] += 1
            after_res = resource_times(jobs, bundles, snap)
            bundles[(i, j)] -= 1
            after = _metrics(after_res)
            if any(after[m][0] > cur[m][0] and not _same(after[m][0],
                                                         cur[m][0])
                   for m in jobs):
                continue                    # it would slow a job down
            t0, n0 = cur[jid]
            t1, n1 = after[jid]
            if shorter and t1 < t0 and not _same(t1, t0):
                return (i, j), k, after_res
            if not shorter and _same(t1, t0) and n1 < n0:
                return (i, j), k, after_res
    return None


def _touched(i, j):
    """The resources whose load or capacity a circuit on {i, j} changes."""
    return {('up', i), ('down', j), ('up', j), ('down', i),
            ('circuit', i, j), ('circuit', j, i)}


def _metrics(per):
    """{job: (time, how many of its resources take that time)}."""
    out = {}
    for jid, v in per.items():
        t = max((x for x, _ in v), default=0.0)
        out[jid] = (t, sum(1 for x, _ in v if _same(x, t)) if v else 0)
    return out


def _same(a, b):
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _before(a, b):
    """Score a before score b: (time, total, index), times compared with
    a tolerance."""
    for x, y in zip(a[:2], b[:2]):
        if not _same(x, y):
            return x < y
    return a[2] < b[2]


def _bundles(circuits):
    return Counter((i, j) for _, i, j in circuits)


def relabel(circuits, now, planes):
    """The same circuits with their planes renamed (each plane's matching
    moved whole to one plane, a permutation) to keep as many of the
    circuits ``now`` as possible; ties keep a plane's own name."""
    if not circuits or not now or planes < 2:
        return frozenset(circuits)
    new = [{(i, j) for k, i, j in circuits if k == p} for p in range(planes)]
    old = [{(i, j) for k, i, j in now if k == p} for p in range(planes)]
    G = nx.Graph()
    for a in range(planes):
        for b in range(planes):
            w = len(new[a] & old[b]) * (planes + 1) + (a == b) + 1
            G.add_edge(('new', a), ('old', b), weight=w)
    to = {}
    for u, v in nx.max_weight_matching(G, maxcardinality=True):
        (_, a), (_, b) = sorted((u, v))       # 'new' < 'old'
        to[a] = b
    return frozenset((to[k], i, j) for k, i, j in circuits)
