"""Metrics from an event log, written as CSV and summary.json (their
figures: netsched.pipeline.plots).

Everything here reads only the event log (netsched.events), so both
backends get identical treatment. summary.json is a stable format
(``format: netsched-summary/1``), documented in docs/experiment-format.md.
"""
import contextlib
import csv
import io
import json
import math
import operator
import os
from collections.abc import Mapping

import numpy as np

from .. import events as evlog
from . import shapes, verdict

SUMMARY_FORMAT = 'netsched-summary/1'
# the run totals (summary.json 'totals') a comparison is made on, lower
# is better for each, with the words that name them
TOTALS = {'avg_jct_s': 'average JCT', 'p95_jct_s': 'p95 JCT',
          'avg_iteration_s': 'mean iteration time',
          'avg_early_iteration_s': 'early iteration time',
          'avg_cct_s': 'average CCT', 'p95_cct_s': 'p95 CCT',
          'avg_sct_s': 'average SCT',
          'front_tensor_s': 'front-layer tensor latency'}


# the events a run writes of itself, not of what it measured
RUN_EVENTS = ('run_start', 'run_end', 'run_incomplete')


def _stats(x):
    x = np.asarray(x, float)
    if len(x) == 0:
        return {'mean': None, 'p50': None, 'p99': None}
    return {'mean': float(x.mean()), 'p50': float(np.percentile(x, 50)),
            'p99': float(np.percentile(x, 99))}


class Flows:
    """The received flows (``flow`` events) in log order, as columns:
    iterating gives (id, coflow, src, dst, bytes, start, end) tuples.
    ``plain``: every id an int, every name a str and every bytes, start
    and end a float (flows.csv is then written without the csv module,
    the same text)."""

    def __init__(self):
        self.id, self.coflow, self.src, self.dst = [], [], [], []
        self.bytes, self.start, self.end = [], [], []
        self.plain = True
        self._fct = None

    def append(self, i, c, s, d, b, st, t):
        for col, x in zip(self._columns(), (i, c, s, d, b, st, t)):
            col.append(x)
        self.plain = self.plain and type(i) is int and type(c) is str \
            and type(s) is str and type(d) is str and type(b) is float \
            and type(st) is float and type(t) is float
        self._fct = None

    def extend(self, cols):
        """A block of events.scan's flow columns."""
        for col, x in zip(self._columns(), (
                cols.id, cols.coflow, cols.src, cols.dst, cols.bytes,
                cols.start, cols.t)):
            col.extend(x)
        self.plain = self.plain and not cols.ints
        self._fct = None

    def _columns(self):
        return (self.id, self.coflow, self.src, self.dst, self.bytes,
                self.start, self.end)

    def __len__(self):
        return len(self.id)

    def __iter__(self):
        return zip(*self._columns())

    def fct(self):
        """Each flow's end - start, in order."""
        if self._fct is None:
            self._fct = list(map(operator.sub, self.end, self.start))
        return self._fct


class _Index(dict):
    """Name -> number, numbered as first seen."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __missing__(self, name):
        self.names.append(name)
        n = self[name] = len(self.names) - 1
        return n


LINK_BLOCK = 1 << 20     # links samples made into arrays at a time


class LinkSamples(Mapping):
    """The ``links`` events' samples: link name -> [(t, dt, util)] in log
    order, its names in the order first seen (a dict as compute made it
    before). Kept as arrays of link numbers, utilisations and event
    numbers, made every LINK_BLOCK samples (a large fat-tree's run has
    millions), each link's busy time (sum of dt * util, in log order)
    and peak summed then; a link's list is made when asked for. An
    event with a time, dt or utilisation that is not a float (or is NaN)
    turns it into the lists themselves, the sums then made by summarize
    as ever."""

    def __init__(self):
        self._index = _Index()
        self._t, self._dt = [], []          # per event
        self._idx, self._u, self._ev = [], [], []      # arrays per block
        self._pend_idx, self._pend_u, self._pend_n = [], [], []
        self._busy, self._peak = np.zeros(0), np.zeros(0)
        self._lists = None        # name -> samples, where not plain
        self._rows = None         # per link: its samples' positions

    def add(self, t, dt, util):
        if self._lists is None:
            u = list(util.values())
            if type(t) is float and type(dt) is float and \
                    set(map(type, u)) <= {float}:
                self._t.append(t)
                self._dt.append(dt)
                self._pend_idx += map(self._index.__getitem__, util)
                self._pend_u += u
                self._pend_n.append(len(u))
                self._rows = None
                if len(self._pend_u) >= LINK_BLOCK:
                    self._flush()
                return
            self._to_lists()
        for name, x in util.items():
            self._lists.setdefault(name, []).append((t, dt, x))

    def _flush(self):
        """The pending samples into arrays and the sums; the lists where
        one is NaN."""
        if not self._pend_n:
            return
        self._arrays()
        idx, u, ev = self._idx[-1], self._u[-1], self._ev[-1]
        if np.isnan(u).any():
            self._to_lists()
            return
        n = len(self._index.names)
        if n > len(self._busy):
            grow = n - len(self._busy)
            self._busy = np.r_[self._busy, np.zeros(grow)]
            self._peak = np.r_[self._peak, np.full(grow, -np.inf)]
        # in log order, a sample at a time: the sums a loop would make
        np.add.at(self._busy, idx, np.asarray(self._dt)[ev] * u)
        np.maximum.at(self._peak, idx, u)

    def _arrays(self):
        """The pending samples into arrays, not summed."""
        if self._pend_n:
            first = len(self._t) - len(self._pend_n)
            self._idx.append(np.array(self._pend_idx, np.int64))
            self._u.append(np.array(self._pend_u, float))
            self._ev.append(np.repeat(np.arange(first, len(self._t)),
                                      self._pend_n))
            self._pend_idx, self._pend_u, self._pend_n = [], [], []
            self._rows = None

    def _to_lists(self):
        """From here on the samples as lists (the dict compute made)."""
        self._arrays()
        self._lists = {name: self[name] for name in self._index.names}

    def totals(self):
        """{name: (busy, peak)} in the order first seen; None where the
        samples are kept as lists."""
        self._flush()
        if self._lists is not None:
            return None
        return {name: (b, p) for name, b, p in zip(
            self._index.names, self._busy.tolist(), self._peak.tolist())}

    def __len__(self):
        if self._lists is not None:
            return len(self._lists)
        return len(self._index.names)

    def __iter__(self):
        if self._lists is not None:
            return iter(self._lists)
        return iter(self._index.names)

    def __contains__(self, name):
        if self._lists is not None:
            return name in self._lists
        return dict.__contains__(self._index, name)

    def __getitem__(self, name):
        if self._lists is None:
            self._flush()
        if self._lists is not None:
            return self._lists[name]
        if not dict.__contains__(self._index, name):
            raise KeyError(name)
        if self._rows is None:
            idx = np.concatenate(self._idx) if self._idx else \
                np.zeros(0, np.int64)
            ev = np.concatenate(self._ev) if self._ev else \
                np.zeros(0, np.int64)
            order = np.argsort(idx, kind='stable')
            cuts = np.searchsorted(idx[order], np.arange(
                len(self._index.names) + 1))
            u = np.concatenate(self._u) if self._u else np.zeros(0)
            self._rows = (order, cuts, ev, u)
        order, cuts, ev, u = self._rows
        k = dict.__getitem__(self._index, name)
        pos = order[cuts[k]:cuts[k + 1]]
        t, dt = self._t, self._dt
        return [(t[e], dt[e], x) for e, x in zip(ev[pos].tolist(),
                                                  u[pos].tolist())]


def compute(evs, last=None):
    """Per-job, per-coflow, per-stage, per-flow and per-link results.
    ``evs``: the events, or blocks of the simulator's flow lines among
    them (events.FlowColumns, from :func:`from_log`); ``last``: then a
    function giving the kind of the log's last event not of RUN_EVENTS,
    called once all are read."""
    jobs, iters, coflows, stages, flows = {}, {}, {}, {}, Flows()
    tensors = []                  # (urgency, ready, received) per send
    link_util = LinkSamples()
    shifts, placements = {}, {}   # CASSINI: job -> grid and gates
    steps = []                    # a hybrid fabric's circuits: its
    decided = []                  # decisions and reconfiguration steps
    t_end = 0.0
    stage_start = {}
    outages = []                  # faults: links down/up, the reroutes
    failed = {}                   # job -> why it failed (an agent killed)
    wrote, reads = {}, {}         # emulator: flow -> last write, 1st read
    started, ended, stops = None, False, []   # the run's own records
    fidelity = None
    workers = {}                  # job -> iter events that end an iteration
    for e in evs:
        if type(e) is evlog.FlowColumns:
            flows.extend(e)
            if e.urgency is not None:
                tensors.extend((u, r, t) for u, r, t in zip(
                    e.urgency, e.ready, e.t) if u is not None)
            t_end = max(t_end, max(e.t) + 0.0)
            continue
        t = e['t']
        k = e['ev']
        t_end = max(t_end, t + e.get('dt', 0.0))
        if k == 'job_start':
            jobs.setdefault(e['job'], {'arrival_s': t, 'end_s': None})
            if e.get('workers'):
                workers[e['job']] = e['workers']
        elif k == 'job_end':
            jobs.setdefault(e['job'], {'arrival_s': None})['end_s'] = t
        elif k == 'iter':
            key = (e['job'], e['iter'])
            rec = iters.setdefault(key, {'end_s': t, 'loss': e.get('loss'),
                                         'workers': 0})
            rec['end_s'] = max(rec['end_s'], t)
            rec['workers'] += 1
        elif k == 'coflow':
            coflows[e['coflow']] = {'arrival_s': t, 'bytes': e['bytes'],
                                    'job': e.get('job'), 'end_s': None}
        elif k == 'coflow_end':
            coflows.setdefault(e['coflow'], {'arrival_s': None,
                                             'bytes': None})['end_s'] = t
        elif k == 'stage_start':
            stage_start[e['stage']] = t
        elif k == 'stage_end':
            stages[e['stage']] = {'start_s': stage_start.get(e['stage']),
                                  'end_s': t}
        elif k == 'flow':
            flows.append(e['id'], e['coflow'], e['src'], e['dst'],
                         e['bytes'], e['start'], t)
            if e.get('urgency') is not None:
                tensors.append((e['urgency'], e.get('ready', e['start']), t))
            if 'first_read' in e:
                reads[e['id']] = e['first_read']
        elif k == 'writes':               # an agent's, when it ended
            wrote.update((int(i), w) for i, w in e['wrote'].items())
        elif k == 'links':
            link_util.add(t, e['dt'], e['util'])
        elif k == 'shifts':                # None: released
            for j, v in e['shifts'].items():
                rec = shifts.setdefault(j, {'grid': None, 'gates': [],
                                            'since': None})
                if v and v != rec['grid']:
                    rec['grid'], rec['since'] = v, t
        elif k == 'gate':
            shifts.setdefault(e['job'], {'grid': None, 'gates': [],
                                         'since': None})[
                'gates'].append((t, e['start'], e['drift']))
        elif k == 'placement':
            placements[e['job']] = {'candidates': e['candidates'],
                                    'chosen': e['chosen'], 'by': e['by']}
        elif k == 'circuits':             # n: the decision before it
            steps.append((t, e['step'], [tuple(c) for c in e['circuits']],
                          len(decided) - 1))
        elif k == 'circuit_decision':
            decided.append((t, e.get('scheduler')))
        elif k in ('fault', 'reroute'):
            outages.append(e)
        elif k == 'job_failed':
            failed[e['job']] = e.get('reason')
            jobs.setdefault(e['job'], {'arrival_s': None, 'end_s': None})
        elif k == 'run_start':
            started = e
        elif k == 'fidelity':             # the emulator's own measures
            fidelity = e.get('figures')
        elif k == 'run_end':
            ended = True
        elif k == 'run_incomplete':
            stops.append(e)
    if stops or not ended or failed:
        _drop_unfinished_iterations(jobs, iters, workers)
    m = {'jobs': jobs, 'iters': iters, 'coflows': coflows,
         'stages': stages, 'flows': flows, 'links': link_util,
         'tensors': tensors, 'duration_s': t_end, 'shifts': shifts,
         'placements': placements, 'faults': outages, 'failed': failed,
         'sides': {i: (wrote.get(i), reads.get(i))
                   for i in set(wrote) | set(reads)},
         'circuits': {'steps': steps, 'decisions': decided}
         if steps or decided else None,
         'fidelity': fidelity,
         'log': {'start': started, 'ended': ended, 'stops': stops,
                 'last_event': last() if last else next(
                     (e['ev'] for e in reversed(evs)
                      if e['ev'] not in RUN_EVENTS), None)}}
    m['iteration_times'] = iteration_times(m)
    return m


# a job is hurt by an outage when it made progress this many times slower
# over it than elsewhere: above what the emulator's port changes cost a
# job that shares no link with the fault (the switches' CPU,
# docs/emulation.md)
HURT_SLOWDOWN = 1.3


def fault_summary(m):
    """Each outage of the run's faults (a fault's 'down' to its 'up', or
    to the run's end): when, what, the reroutes it caused (on the
    emulator: when the controller's new routes were in every switch),
    and what it cost each job: its iterations that overlapped the outage
    against its other iterations (``extra_s``: the sum of their excess
    over the mean of the others; a fault can also help a job whose flows
    it moves off a shared link, so it may be negative; ``slowdown``: how
    many times slower the job progressed over the outage (the parts of
    its iterations inside it) than its other iterations went, ``hurt``
    from HURT_SLOWDOWN up). Events are
    taken in time order: the emulator's reroutes reach the event log
    once applied, after later faults perhaps."""
    its = m['iteration_times']
    out, open_, closed = [], {}, []
    for e in sorted(m['faults'], key=lambda e: (e['t'], e['ev'] != 'fault')):
        if e['ev'] == 'fault':
            key = (e['kind'], e['target'])
            closed = []
            if e['what'] == 'down':
                rec = {'kind': e['kind'], 'target': e['target'],
                       'links': e['links'], 'down_s': e['t'], 'up_s': None,
                       'reroutes': []}
                open_[key] = rec
                out.append(rec)
            elif key in open_:
                closed = [open_.pop(key)]
                closed[0]['up_s'] = e['t']
        else:          # a reroute: the outages open or just closed
            for rec in list(open_.values()) + closed:
                rec['reroutes'].append({k: v for k, v in e.items()
                                        if k != 'ev'})
    for rec in out:
        a = rec['down_s']
        b = rec['up_s'] if rec['up_s'] is not None else m['duration_s']
        jobs = {}
        for job, rows in sorted(its.items()):
            during, other, inside, work = [], [], 0.0, 0.0
            for _, end, dur, _ in rows:
                if dur is None:
                    continue
                over = min(end, b) - max(end - dur, a)
                (during if over > 0 else other).append(dur)
                if over > 0 and dur > 0:
                    inside += over
                    work += over / dur
            if not during:
                continue
            base = float(np.mean(other)) if other else None
            mean = float(np.mean(during))
            # the job's pace over the outage itself (iterations' parts
            # inside it) against its pace elsewhere
            slow = inside / work / base if base and work else None
            jobs[job] = {'iterations': len(during), 'iteration_s': mean,
                         'other_iteration_s': base,
                         'extra_s': None if base is None else
                         float(sum(d - base for d in during)),
                         'slowdown': slow,
                         'hurt': slow is not None and slow >= HURT_SLOWDOWN}
        rec['jobs'] = jobs
        rec['hurt'] = sorted(j for j, r in jobs.items() if r['hurt'])
    return out


GAP_FLOWS = 8         # transfers listed in the longest gap


def longest_gap(m):
    """The longest time with transfers in flight and none ending (the
    emulator's; a stall shows here), and which side each transfer in
    flight was on over it, from the sender's last write and the
    receiver's first read (``sides``): ``writing`` (the sender had not
    written it all by the gap's end), ``in the network`` (written before
    the gap began, its first bytes read only after it ended) or
    ``reading`` (its first bytes read before the gap ended, its last
    after). Times in s from the run's start."""
    fl = sorted(m['flows'], key=lambda f: f[6])
    if not fl:
        return None
    ends = np.array([f[6] for f in fl], float)
    starts = np.array([f[5] for f in fl], float)
    # between one end and the next, the transfers in flight are those
    # ending later: the gap runs from the later of the last end and the
    # earliest of their starts
    first = np.minimum.accumulate(starts[::-1])[::-1]
    prev = np.r_[0.0, ends[:-1]]
    begin = np.maximum(prev, first)
    i = int(np.argmax(ends - begin))
    a, b = float(begin[i]), float(ends[i])
    rows = []
    for g in sorted(fl, key=lambda g: g[5]):
        if not (g[5] < b and g[6] > a) or g[6] == b:
            continue
        wrote, first = m['sides'].get(g[0], (None, None))
        side = None
        if wrote is not None and wrote >= b:
            side = 'writing'
        elif first is not None and first >= b:
            side = 'in the network'
        elif first is not None:
            side = 'reading'
        rows.append({'id': g[0], 'src': g[2], 'dst': g[3], 'start': g[5],
                     'wrote': wrote, 'first_read': first, 'end': g[6],
                     'side': side})
    return {'from_s': a, 'to_s': b, 'gap_s': b - a,
            'in_flight': len(rows), 'transfers': rows[:GAP_FLOWS]}


def _drop_unfinished_iterations(jobs, iters, workers):
    """A run that stopped early (no ``run_end``, or a ``run_incomplete``):
    an iteration of a job that did not finish ends with its last
    worker's ``iter`` event, so one that fewer of its workers reported
    than its ``job_start`` says it has (``workers``; a log without it:
    than reported the job's fullest iteration) was cut off, and is left
    out."""
    full = dict(workers)
    for (job, _), rec in iters.items():
        if job not in workers:
            full[job] = max(full.get(job, 0), rec['workers'])
    for key in [k for k, rec in iters.items()
                if rec['workers'] < full[k[0]]
                and jobs.get(k[0], {}).get('end_s') is None]:
        del iters[key]


TENSOR_PARTS = 4      # tensor latency by quarter of the forward pass
EARLY_PART = 4        # a job's early stage: its first quarter of iterations


def tensor_latency(tensors):
    """Latency (ready to received) of the sends of model data, by where
    their data sits in the next forward pass: ``front_s`` for the first
    quarter of the model's bytes (the layers the next forward pass needs
    first), ``by_quarter_s`` the mean per quarter, ``all_s`` all."""
    if not tensors:
        return None
    u = np.array([x[0] for x in tensors], float)
    lat = np.array([x[2] - x[1] for x in tensors], float)
    part = np.minimum((u * TENSOR_PARTS).astype(int), TENSOR_PARTS - 1)
    return {'count': len(lat), 'front_s': _stats(lat[part == 0]),
            'all_s': _stats(lat),
            'by_quarter_s': [float(lat[part == q].mean())
                             if (part == q).any() else None
                             for q in range(TENSOR_PARTS)]}


def shift_summary(shifts):
    """Per time-shifted job (CASSINI): its grid as last decided (shift,
    period, tolerance), how many iteration starts were held on it, the
    mean wait, how many were later than the tolerance after a grid point
    (re-aligned to the next one, or drifting on where that was more
    than max_wait away), and the largest drift (ready time from the
    nearest grid point)."""
    out = {}
    for j, r in sorted(shifts.items()):
        if r['grid'] is None:
            continue
        shift, period, tol = r['grid'][:3]
        g = r['gates']
        waits = [start - t for t, start, _ in g]
        out[j] = {'shift_s': shift, 'period_s': period, 'tolerance_s': tol,
                  'max_wait_s': r['grid'][3] if len(r['grid']) > 3 else None,
                  'gated': len(g),
                  'wait_s_mean': float(np.mean(waits)) if waits else None,
                  'late': sum(1 for _, _, d in g if d > tol),
                  'max_abs_drift_s': max((abs(d) for _, _, d in g),
                                         default=None)}
    return out


CIRCLE_CAP_S = 10.0    # the longest unified circle drawn (as CASSINI's cap)


def circle_arcs(m, cap_s=CIRCLE_CAP_S):
    """The time-shifted jobs' communication folded onto their unified
    circle (circles.png), or None (no shifted job). The perimeter is the
    LCM of the jobs' grid periods (as last decided) rounded to 1 ms,
    at most ``cap_s``. Per job: its shift and period, ``grid`` (its grid
    points on the circle), ``arcs``: where its coflows that arrived
    after that grid was decided were active, from their arrival to their end
    (the log's end for one that did not end), each time t at (t mod
    perimeter) / perimeter of a turn, a coflow crossing the circle's
    start split in two, overlapping ones merged ([(from, to)] in turns,
    sorted). What the backend did, not the plan."""
    recs = {j: r for j, r in sorted(m.get('shifts', {}).items())
            if r['grid'] is not None}
    grids = {j: r['grid'] for j, r in recs.items()}
    if not grids:
        return None
    lcm = 1
    for _, period, *_ in grids.values():
        ms = max(1, int(round(period * 1e3)))
        lcm = lcm * ms // math.gcd(lcm, ms)
    per_ms = min(lcm, int(round(cap_s * 1e3)))
    per = per_ms / 1e3
    spans = {j: [] for j in grids}
    for c in m['coflows'].values():
        if c.get('job') in spans and c.get('arrival_s') is not None \
                and c['arrival_s'] > (recs[c['job']].get('since') or -1.0):
            end = c['end_s'] if c.get('end_s') is not None \
                else m['duration_s']
            spans[c['job']].append((c['arrival_s'], end))
    jobs = {}
    for j, (shift, period, *_) in grids.items():
        arcs = []
        for t0, t1 in spans[j]:
            a = (t0 % per) / per
            b = a + (t1 - t0) / per
            if b - a >= 1:
                arcs.append((0.0, 1.0))
            elif b > 1:
                arcs += [(a, 1.0), (0.0, b - 1)]
            else:
                arcs.append((a, b))
        merged = []
        for a, b in sorted(arcs):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        n = -(-per_ms // max(1, int(round(period * 1e3))))   # in [0, per)
        jobs[j] = {'shift_s': shift, 'period_s': period, 'arcs': merged,
                   'grid': sorted(((shift + k * period) % per) / per
                                  for k in range(n))}
    return {'perimeter_s': per, 'lcm_s': lcm / 1e3, 'capped': lcm / 1e3 > per,
            'jobs': jobs}


def circuit_schedule(m):
    """A hybrid fabric's circuits over time, from the ``circuits`` events
    (None without any): ``live``: {circuit: [(from, to)]}, from its
    'add' to the 'remove' that takes it (else the end of the run's
    traffic: the last flow received, or the log's end without flows; the
    emulator's log goes on for a second or so after it);
    ``dark``: {circuit: [(from, to)]}, the blackout before each set-up:
    from its reconfiguration's 'remove' (its decision when nothing was
    removed) to its 'add'; ``reconfigurations``: {decision: (blackout
    from, to)} of those that added circuits, and how many there were
    (``count``: every reconfiguration that removed or added any). A
    reconfiguration is the steps after a decision, up to the next one
    (both backends decide only when none is under way). Circuits are
    (plane, ToR, ToR) name tuples."""
    c = m.get('circuits')
    if not c:
        return None
    started = {n: t for n, (t, _) in enumerate(c['decisions'])}
    removed, opened, live, dark, recs = {}, {}, {}, {}, {}
    for t, step, circuits, n in c['steps']:
        if step == 'remove':
            removed.setdefault(n, t)
            for x in circuits:
                if x in opened:
                    live.setdefault(x, []).append((opened.pop(x), t))
        elif step == 'add':
            t0 = removed.get(n, started.get(n, t))
            recs.setdefault(n, (t0, t))
            for x in circuits:
                opened.setdefault(x, t)
                dark.setdefault(x, []).append((t0, t))
    end = _traffic_end(m)
    for x, t0 in opened.items():
        live.setdefault(x, []).append((t0, max(end, t0)))
    count = len({n for _, step, _, n in c['steps']
                 if step in ('remove', 'add')})
    return {'live': live, 'dark': dark, 'reconfigurations': recs,
            'count': count}


def _traffic_end(m):
    ends = [t for *_, t in m.get('flows', ())]
    return max(ends) if ends else m['duration_s']


def circuit_summary(m, g=None):
    """summary.json's ``circuits`` (None without circuit events;
    docs/experiment-format.md). Bytes come from the ``links`` samples of a
    circuit's two ToR->plane links while it was live (a ToR's port on a
    plane carries only the circuit live on it; a sample that spans two
    circuits of a port is split by their time live in it), converted
    with the link rates of ``g``, the run's graph (bytes, share and
    utilisation None without it)."""
    sched = circuit_schedule(m)
    if sched is None:
        return None
    ports = {}                     # "tor->plane" -> [(from, to, circuit)]
    for x, spans in sched['live'].items():
        for tor in x[1:]:
            ports.setdefault('%s->%s' % (tor, x[0]), []).extend(
                (a, b, x) for a, b in spans)
    carried = {x: 0.0 for x in sched['live']}
    packet = _circuit_bytes(m, g, ports, carried) if g is not None else None
    both = sum(carried.values()) + (packet or 0.0)
    per = {}
    for x in sorted(sched['live']):
        live_s = sum(b - a for a, b in sched['live'][x])
        rate = g[x[1]][x[0]]['capacity_bps'] / 8.0 if g is not None \
            else None
        per['%s:%s-%s' % x] = {
            'bytes': carried[x] if g is not None else None,
            'share': carried[x] / both if both else None,
            'utilisation': carried[x] / (2 * rate * live_s)
            if rate and live_s > 0 else None,
            'reconfigurations': len(sched['dark'].get(x, ())),
            'live_s': live_s,
            'blackout_s': sum(b - a for a, b in sched['dark'].get(x, ()))}
    total = float(sum(carried.values())) if g is not None else None
    live_all = float(sum(r['live_s'] for r in per.values()))
    room = sum(g[x[1]][x[0]]['capacity_bps'] / 8.0 * (b - a)
               for x, spans in sched['live'].items() for a, b in spans) \
        if g is not None else 0.0      # bytes one direction could carry
    return {'scheduler': next((s for _, s in m['circuits']['decisions']
                               if s), None),
            'decisions': len(m['circuits']['decisions']),
            'by_circuit': per,
            'total': {
                'bytes': total, 'packet_bytes': packet,
                'share': (total / both if both else 0.0)
                if g is not None else None,
                'utilisation': total / (2 * room) if room > 0 else None,
                'reconfigurations': sched['count'],
                'live_s': live_all,
                'blackout_s': sum(b - a for a, b in
                                  sched['reconfigurations'].values())}}


def _circuit_bytes(m, g, ports, carried):
    """Add each circuit's bytes to ``carried`` from the ``links`` samples
    of the ToR->plane links (``ports``: link -> [(from, to, circuit)]
    live on it); returns the bytes the ToRs sent up to the packet core
    (their links to switches that are not planes)."""
    packet = 0.0
    for link, samples in m['links'].items():
        u, _, v = link.partition('->')
        if u not in g or v not in g[u] or g.nodes[u]['role'] != 'leaf' \
                or g.nodes[v]['role'] == 'host':
            continue
        d = g[u][v]
        rate = d['capacity_bps'] / 8.0
        if not d.get('circuit'):
            packet += sum(dt * x * rate for _, dt, x in samples)
            continue
        for t, dt, x in samples:
            over = [(min(b, t + dt) - max(a, t), c)
                    for a, b, c in ports.get(link, ())
                    if min(b, t + dt) > max(a, t)]
            total = sum(o for o, _ in over)
            for o, c in over:
                carried[c] += x * dt * rate * o / total
    return packet


def _graph(meta):
    """The run's topology graph from the summary's meta (topology,
    link_bps), or None."""
    from .. import topology
    try:
        return topology.parse_spec(meta['topology'],
                                   link_bps=float(meta['link_bps']))
    except Exception:            # no topology in the meta: no rates
        return None


def iteration_times(m):
    """job -> [(iteration, end, duration or None, loss)] in order; an
    iteration lasts from the previous one's end (the job's arrival for
    the first) to its own."""
    out = {}
    for (job, it), rec in sorted(m['iters'].items()):
        rows = out.setdefault(job, [])
        start = rows[-1][1] if rows else m['jobs'].get(job, {}).get(
            'arrival_s')
        rows.append((it, rec['end_s'],
                     None if start is None else rec['end_s'] - start,
                     rec['loss']))
    return out


def summarize(m, meta, incomplete=None):
    """The summary.json dict (meta: backend, seed, scale, ... ).
    ``incomplete``: what stopped a run that did not finish
    (:func:`stop_state`); its summary then says ``complete: false`` and
    why, each job whether it ``finished``, and its job totals (JCT,
    iteration times) are over the jobs that finished only: a job cut off
    is not a slow one. A finished run's summary is as it always was."""
    jobs = {}
    for job, rec in sorted(m['jobs'].items()):
        rows = m['iteration_times'].get(job, [])
        ends = [end for _, end, _, _ in rows]
        start = rec.get('arrival_s')
        times = [d for _, _, d, _ in rows] if start is not None else []
        jct = (rec['end_s'] - start) if rec.get('end_s') is not None \
            and start is not None else None
        early = [d for d in times[:max(1, -(-len(times) // EARLY_PART))]
                 if d is not None]
        jobs[job] = {'arrival_s': start, 'jct_s': jct,
                     'iterations': len(ends),
                     'iteration_time_s': _stats(times),
                     'early_iteration_s': float(np.mean(early))
                     if early else None}
        if incomplete is not None:
            jobs[job]['finished'] = rec.get('end_s') is not None
        if job in m.get('failed', {}):
            jobs[job]['failed'] = m['failed'][job]
    coflows = {}
    for cid, rec in m['coflows'].items():
        cct = (rec['end_s'] - rec['arrival_s']) \
            if rec.get('end_s') is not None and rec['arrival_s'] is not None \
            else None
        coflows[cid] = {'arrival_s': rec['arrival_s'], 'cct_s': cct,
                        'bytes': rec['bytes']}
    stages = {sid: {'start_s': r['start_s'], 'end_s': r['end_s'],
                    'sct_s': (r['end_s'] - r['start_s'])
                    if r['start_s'] is not None else None}
              for sid, r in sorted(m['stages'].items())}
    dur = max(m['duration_s'], 1e-12)
    links = {}
    sums = m['links'].totals() if isinstance(m['links'], LinkSamples) \
        else None
    if sums is not None:         # summed as the events were read
        for name in sorted(sums):
            busy, peak = sums[name]
            links[name] = {'mean_util': busy / dur, 'peak_util': peak}
    for name, samples in sorted(m['links'].items()) if sums is None \
            else ():
        busy = sum(dt * u for _, dt, u in samples)
        links[name] = {'mean_util': busy / dur,
                       'peak_util': max(u for _, _, u in samples)}
    fct = m['flows'].fct() if isinstance(m['flows'], Flows) else \
        [t - s for _, _, _, _, _, s, t in m['flows']]
    ccts = [c['cct_s'] for c in coflows.values() if c['cct_s'] is not None]
    jcts = [j['jct_s'] for j in jobs.values() if j['jct_s'] is not None]
    # a job cut off (an unfinished run) or failed is not a slow one
    counted = [j for j in jobs.values() if j.get('finished', True)
               and not j.get('failed')]
    early = [j['early_iteration_s'] for j in counted
             if j['early_iteration_s'] is not None]
    its = [j['iteration_time_s']['mean'] for j in counted
           if j['iteration_time_s']['mean'] is not None]
    out_tensors = tensor_latency(m.get('tensors', []))
    out = {'format': SUMMARY_FORMAT}
    out.update(meta)
    out.update({
        'duration_s': m['duration_s'],
        'jobs': jobs, 'coflows': coflows, 'stages': stages, 'links': links,
        'flows': {'count': len(fct), 'fct_s': _stats(fct)},
        'tensors': out_tensors,
        'shifts': shift_summary(m.get('shifts', {})) or None,
        'placements': m.get('placements') or None,
        'circuits': circuit_summary(m, _graph(meta))
        if m.get('circuits') else None,
        'faults': fault_summary(m) if m.get('faults') else None,
        'longest_gap': longest_gap(m) if m.get('sides') else None,
        'totals': {
            'jobs_done': sum(1 for j in jobs.values()
                             if j['jct_s'] is not None),
            'avg_jct_s': float(np.mean(jcts)) if jcts else None,
            'p95_jct_s': float(np.percentile(jcts, 95)) if jcts else None,
            'avg_early_iteration_s': float(np.mean(early))
            if early else None,
            'avg_iteration_s': float(np.mean(its)) if its else None,
            'front_tensor_s': (out_tensors or {}).get('front_s', {})
            .get('mean'),
            'coflows_done': len(ccts),
            'avg_cct_s': float(np.mean(ccts)) if ccts else None,
            'p95_cct_s': float(np.percentile(ccts, 95)) if ccts else None,
            'avg_sct_s': float(np.mean([s['sct_s'] for s in stages.values()
                                        if s['sct_s'] is not None]))
            if stages else None}})
    if m.get('failed'):
        out['totals']['jobs_failed'] = len(m['failed'])
    if m.get('fidelity'):
        out['fidelity'] = verdict.judge(m['fidelity'], out)
    if incomplete is not None:
        out['complete'] = False
        cut = sorted(j for j, r in jobs.items() if not r['finished'])
        out['incomplete'] = dict(incomplete, stopped_s=m['duration_s'],
                                 unfinished_jobs=cut)
        out['totals'].update(
            jobs_unfinished=len(cut),
            coflows_unfinished=len(coflows) - len(ccts),
            iterations_done=sum(r['iterations'] for r in jobs.values()))
    return out


def _write_csv(path, header, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


class _Reprs(dict):
    """float -> repr (as the csv module writes a float), each value's
    made once; a zero's is not kept (0.0 and -0.0 are one key)."""

    def __missing__(self, x):
        r = repr(x)
        if x:
            self[x] = r
        return r


class _Scaled(dict):
    """float -> repr(float / scale), as _Reprs."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def __missing__(self, x):
        r = repr(x / self.scale)
        if x:
            self[x] = r
        return r


class _CsvText(dict):
    """str -> the csv module's text of it as a field (quoted where it
    must be)."""

    def __missing__(self, x):
        buf = io.StringIO()
        csv.writer(buf).writerow([x, ''])
        r = self[x] = buf.getvalue()[:-3]      # less ',' and '\r\n'
        return r


FLOW_ROWS = 1 << 16       # flows.csv rows made and written at a time


class _Tails(dict):
    """(bytes, start, end) -> a flows.csv row's text from its bytes on
    (bytes, bytes / scale, start, end, end - start): the flows of a
    coflow that end together share it. Not kept where one is 0 (0.0 and
    -0.0 are one key)."""

    def __init__(self, scale):
        super().__init__()
        self.reprs, self.scaled = _Reprs(), _Scaled(scale)

    def __missing__(self, key):
        b, st, t = key
        num = self.reprs.__getitem__
        r = ','.join((num(b), self.scaled[b], num(st), num(t), num(t - st)))
        if b and st and t:
            self[key] = r
        return r


def _write_flows(path, header, fl, scale):
    """flows.csv of a plain Flows: the text csv.writer gives its rows
    ([id, coflow, src, dst, bytes, bytes / scale, start, end, end -
    start]: ints as str, floats as repr, names quoted where they must
    be), each distinct value's text made once, FLOW_ROWS at a time."""
    names, tails = _CsvText(), _Tails(scale)
    name, tail = names.__getitem__, tails.__getitem__
    with open(path, 'w', newline='') as f:
        csv.writer(f).writerow(header)
        for a in range(0, len(fl), FLOW_ROWS):
            b = a + FLOW_ROWS
            f.write('\r\n'.join(map(','.join, zip(
                map(str, fl.id[a:b]), map(name, fl.coflow[a:b]),
                map(name, fl.src[a:b]), map(name, fl.dst[a:b]),
                map(tail, zip(fl.bytes[a:b], fl.start[a:b],
                              fl.end[a:b]))))) + '\r\n')
            if len(tails) > 1 << 18:       # a long run's many ends
                tails.clear()


def write(out_dir, m, summary):
    """CSV files and summary.json into out_dir."""
    scale = summary.get('scale', 1.0)
    _write_csv(os.path.join(out_dir, 'jobs.csv'),
               ['job', 'arrival_s', 'jct_s', 'iterations', 'iter_mean_s',
                'iter_p50_s', 'iter_p99_s'],
               [[j, r['arrival_s'], r['jct_s'], r['iterations'],
                 r['iteration_time_s']['mean'], r['iteration_time_s']['p50'],
                 r['iteration_time_s']['p99']]
                for j, r in summary['jobs'].items()])
    _write_csv(os.path.join(out_dir, 'iterations.csv'),
               ['job', 'iter', 'end_s', 'iteration_time_s', 'loss'],
               [[job, it, end, dur, loss]
                for job, rows in m['iteration_times'].items()
                for it, end, dur, loss in rows])
    _write_csv(os.path.join(out_dir, 'coflows.csv'),
               ['coflow', 'arrival_s', 'cct_s', 'bytes', 'emulated_bytes'],
               [[c, r['arrival_s'], r['cct_s'], r['bytes'],
                 None if r['bytes'] is None else r['bytes'] / scale]
                for c, r in summary['coflows'].items()])
    _write_csv(os.path.join(out_dir, 'stages.csv'),
               ['stage', 'start_s', 'end_s', 'sct_s'],
               [[s, r['start_s'], r['end_s'], r['sct_s']]
                for s, r in summary['stages'].items()])
    head = ['id', 'coflow', 'src', 'dst', 'bytes', 'emulated_bytes',
            'start_s', 'end_s', 'fct_s']
    fl = m['flows']
    if isinstance(fl, Flows) and fl.plain:
        _write_flows(os.path.join(out_dir, 'flows.csv'), head, fl, scale)
    else:
        _write_csv(os.path.join(out_dir, 'flows.csv'), head,
                   ([i, c, s, d, b, b / scale, st, t, t - st]
                    for i, c, s, d, b, st, t in fl))
    _write_csv(os.path.join(out_dir, 'links.csv'),
               ['link', 'mean_util', 'peak_util'],
               [[k, r['mean_util'], r['peak_util']]
                for k, r in summary['links'].items()])
    with open(os.path.join(out_dir, 'summary.json'), 'w') as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write('\n')


def from_log(path, cut=None):
    """compute() of the event log at ``path``, read by events.scan (a
    cut last line is left out, its number put in the list ``cut``)."""
    seen = [0, None]         # the last event not of RUN_EVENTS: line, kind

    def items():
        for cols, evs, last_flow in evlog.scan(path, cut):
            if cols is not None:
                yield cols
                if last_flow > seen[0]:
                    seen[:] = last_flow, 'flow'
            for n, e in evs:
                yield e
                if e['ev'] not in RUN_EVENTS and n > seen[0]:
                    seen[:] = n, e['ev']
    return compute(items(), last=lambda: seen[1])


# --- a run that did not finish ----------------------------------------------

def stop_state(m, record=None, cut_line=None):
    """None for a run that finished (its log has ``run_end`` and no
    ``run_incomplete``). Otherwise what stopped it: from the log's own
    ``run_incomplete`` event (a run writes it as it stops on Ctrl-C,
    SIGTERM or an error, the emulator on its timeout_s), else from its
    run record ``record`` (run.json; a run recorded as running whose
    process is gone was killed: SIGKILL, a crash or the machine going
    down leave no word). A dict: ``cause`` (killed, interrupted,
    terminated, failed, timeout or running), ``reason`` (a sentence),
    ``last_event`` (the log's last event kind) and ``cut_line`` (the
    number of a last line cut mid-write and left out, else None)."""
    log = m.get('log') or {}
    record = record or {}
    if log.get('ended') and not log.get('stops'):
        return None
    where = 'pid %s on %s' % (record.get('pid'), record.get('host'))
    if log.get('stops'):
        e = log['stops'][0]                # the first: what stopped it
        why = e.get('why') or 'stopped'
        cause = e.get('cause') or ('timeout' if 'timeout' in why
                                   else 'stopped')
    elif record.get('stopped'):           # the log could not say it
        cause = record['stopped'].get('cause', 'stopped')
        why = record['stopped'].get('reason', cause)
    elif record.get('status') == 'running':
        alive = process_alive(record)
        if alive:
            cause, why = 'running', 'still running (%s)' % where
        elif alive is False:
            cause, why = 'killed', ('killed: its process (%s) is gone and '
                                    'left no end in its log (SIGKILL, a '
                                    'crash or the machine stopping)' % where)
        else:
            cause, why = 'killed', ('its log stops without an end and its '
                                    'process (%s) is not on this machine: '
                                    'killed, or still running there' % where)
    else:
        cause, why = 'killed', ('killed: its log stops without an end and '
                                'it left no run record (run.json)')
    return {'cause': cause, 'reason': why, 'last_event': log.get(
        'last_event'), 'cut_line': cut_line}


def process_start(pid):
    """A process's start time in clock ticks since boot (/proc), to tell
    it from a later process given the same pid; None where unknown."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return int(f.read().rpartition(')')[2].split()[19])
    except (OSError, ValueError, IndexError, TypeError):
        return None


def process_alive(record):
    """Whether the process a run record (run.json) names still runs:
    True, False, or None where it cannot be told (another machine)."""
    import platform
    pid = record.get('pid')
    if not isinstance(pid, int) or record.get('host') != platform.node():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:            # alive, someone else's
        pass
    except (OSError, OverflowError):
        return False
    start = record.get('pid_start')
    now = process_start(pid)
    return start is None or now is None or now == start


def _record(path):
    """run.json as a reader of a run that did not finish takes it: {}
    where it is missing or not a JSON object; its ``meta`` and
    ``stopped`` left out where they are not as a run writes them (the
    event log is the run's measure, the record only adds to it)."""
    try:
        with open(os.path.join(path, 'run.json')) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(d, dict):
        return {}
    out = {}
    for k, v in d.items():
        shape = shapes.RUN_RECORD.get(k + '?')
        if shape is None or not shapes.problem(v, shape):
            out[k] = v
    return out


def _meta_guess(path, m):
    """A summary's meta for a run whose record does not hold it (a run
    from before run.json recorded it): experiment.yaml's keys as
    written, the backend, policy and seed from the log's ``run_start``."""
    import yaml
    from ..errors import ConfigError, yaml_loader
    try:
        with open(os.path.join(path, 'experiment.yaml')) as f:
            d = yaml.load(f, Loader=yaml_loader())
    except (OSError, ValueError, yaml.YAMLError, ConfigError):
        d = None
    d = d if isinstance(d, dict) else {}
    start = (m.get('log') or {}).get('start') or {}
    pol = d.get('policy')
    params = {k: v for k, v in pol.items() if k != 'name'} \
        if isinstance(pol, dict) else {}
    meta = {'experiment': d.get('name') or os.path.basename(
                os.path.abspath(path)),
            'backend': start.get('backend', d.get('backend')),
            'policy': start.get('policy', pol.get('name')
                                if isinstance(pol, dict) else pol),
            'policy_params': params, 'circuit_scheduler': None,
            'seed': start.get('seed', d.get('seed')),
            'scale': d.get('scale'), 'topology': d.get('topology'),
            'link_bps': d.get('link_bps'), 'queues': d.get('queues')}
    # a guess: a value of another type than a run records is left out
    meta = {k: None if shapes.problem(v, shapes.META[k + '?']) else v
            for k, v in meta.items()}
    meta['experiment'] = meta['experiment'] or os.path.basename(
        os.path.abspath(path))
    return meta


def partial(path):
    """(metrics, summary) of a run folder that holds no summary.json
    (killed, interrupted, failed or still running), from its event log
    as far as it goes: the summary marked ``complete: false`` with what
    stopped the run (:func:`stop_state`) and the time it stopped
    (``stopped_s``: the log's last time); a last line cut mid-write is
    left out and named. Its meta is the one run.json recorded as the run
    began. A log that did end (the run was stopped while writing its
    results) gives the finished run's summary."""
    cut = []
    with reading(path):
        m = from_log(os.path.join(path, 'events.jsonl'), cut)
        record = _record(path)
        stop = stop_state(m, record, cut[0] if cut else None)
        return m, summarize(m, record.get('meta') or _meta_guess(path, m),
                            stop)


def incomplete_text(summary, head='INCOMPLETE: '):
    """One line on a summary of a run that did not finish (None for a
    finished one), after ``head``: why it stopped, when, and what
    finished."""
    inc = summary.get('incomplete')
    if summary.get('complete', True) or not inc:
        return None
    tot = summary.get('totals') or {}       # a summary made by hand: '?'
    jobs, cofs = summary.get('jobs') or {}, summary.get('coflows') or {}
    done = ['%s of the %d jobs' % (tot.get('jobs_done', '?'), len(jobs))
            if jobs else None,
            '%s of the %d coflows' % (tot.get('coflows_done', '?'),
                                      len(cofs))
            if cofs else None]
    done = ' and '.join(x for x in done if x)
    done = ('%s it began' % done if done else 'nothing') + (
        ', %s iterations' % tot.get('iterations_done', '?') if jobs
        else '')
    return head + '%s; %s t=%.4g s (last event %s%s); finished: %s%s' % (
        inc['reason'], 'logged up to' if inc['cause'] == 'running'
        else 'stopped at', inc['stopped_s'], inc.get('last_event'),
        '; line %d cut mid-write, left out' % inc['cut_line']
        if inc.get('cut_line') else '', done,
        '; unfinished jobs: %s' % ', '.join(inc['unfinished_jobs'])
        if inc.get('unfinished_jobs') else '')


def load_summary(path):
    """summary.json of a results directory (or the file itself); for a
    run folder without one but with its event log, the summary of what
    the run measured, marked incomplete (:func:`partial`)."""
    from ..errors import ConfigError
    if os.path.isdir(path) and not os.path.isfile(
            os.path.join(path, 'summary.json')) and os.path.isfile(
            os.path.join(path, 'events.jsonl')):
        return partial(path)[1]
    p = os.path.join(path, 'summary.json') if os.path.isdir(path) else path
    try:
        with open(p) as f:
            s = json.load(f)
    except OSError as e:
        raise ConfigError('%s: %s' % (p, e.strerror)) from None
    except RecursionError:
        raise ConfigError('%s: not JSON (nested too deeply)' % p) from None
    except ValueError:                 # UnicodeDecodeError among them
        raise ConfigError('%s: not JSON' % p) from None
    if not isinstance(s, dict) or s.get('format') != SUMMARY_FORMAT:
        raise ConfigError('%s: not a netsched summary (%s)' % (
            p, 'format %s' % shapes.brief(s.get('format'))
            if isinstance(s, dict) else 'it is %s, not an object'
            % shapes.brief(s)))
    return shapes.check(s, shapes.SUMMARY, p)


def check_log(path):
    """The first event of the log at ``path`` that is not as a run writes
    it (a field missing, or of another type: shapes.EVENTS), as a
    ConfigError naming the line, the field and its value; None where
    every event is. (A log that is not JSON lines is an error of
    events.scan.)"""
    from ..errors import ConfigError
    for cols, evs, _ in evlog.scan(path):
        for n, e in evs:
            bad = shapes.event_problem(e)
            if bad is not None:
                key, want, got = bad
                return ConfigError('%s:%d: a %s event: %s: %s' % (
                    path, n, shapes.brief(e.get('ev'), 30), key,
                    'missing' if want.startswith('there') else
                    'want %s, got %s' % (want, shapes.brief(got))))
    return None


# what a reader of a damaged folder may raise, where its data is not as
# a run writes it
DAMAGE = (TypeError, KeyError, ValueError, AttributeError, IndexError,
          ZeroDivisionError, OverflowError)


@contextlib.contextmanager
def reading(folder):
    """Around code that reads the run folder ``folder``: an exception of
    DAMAGE (not a NetschedError) raised inside becomes the ConfigError
    that names the file, line and field where its summary.json or
    events.jsonl is damaged, if they are; else it goes on as it was (a
    bug, its traceback kept). The event log is checked only then: the
    readers' own speed is not paid for."""
    from ..errors import NetschedError
    try:
        yield
    except NetschedError:
        raise
    except DAMAGE:
        err = damage(folder)
        if err is None:
            raise
        raise err from None


def damage(folder):
    """The ConfigError that says what is damaged in the run folder
    ``folder`` (summary.json's shape, then each event's), or None."""
    from ..errors import ConfigError
    try:
        if os.path.isfile(os.path.join(folder, 'summary.json')):
            load_summary(os.path.join(folder, 'summary.json'))
        log = os.path.join(folder, 'events.jsonl')
        return check_log(log) if os.path.isfile(log) else None
    except ConfigError as e:
        return e


def error_stats(rows):
    """Per kind of compare() row: n, mean and max |relative error|, mean
    signed error, and how many items only one run has."""
    out = {}
    for kind in sorted({r[0] for r in rows}):
        errs = np.array([r[4] for r in rows if r[0] == kind
                         and r[4] is not None])
        missing = sum(1 for r in rows if r[0] == kind and r[4] is None)
        out[kind] = {'n': len(errs), 'missing': missing,
                     'mean_abs': float(np.abs(errs).mean()) if len(errs)
                     else None,
                     'max_abs': float(np.abs(errs).max()) if len(errs)
                     else None,
                     'mean': float(errs.mean()) if len(errs) else None}
    return out


def compare(a, b):
    """Per-job and per-coflow relative differences of b against a:
    rows (kind, id, value in a, value in b, relative error)."""
    rows = []

    def add(kind, key, x, y):
        if x is None or y is None:
            rows.append((kind, key, x, y, None))
        else:
            rows.append((kind, key, x, y, (y - x) / x if x else None))
    def iter_mean(job):        # a job cut off has no figure to compare
        return None if job.get('finished') is False else \
            job.get('iteration_time_s', {}).get('mean')
    for j in sorted(set(a['jobs']) | set(b['jobs'])):
        ja, jb = a['jobs'].get(j, {}), b['jobs'].get(j, {})
        add('job jct_s', j, ja.get('jct_s'), jb.get('jct_s'))
        add('job iter_mean_s', j, iter_mean(ja), iter_mean(jb))
    for c in sorted(set(a['coflows']) | set(b['coflows'])):
        add('coflow cct_s', c, a['coflows'].get(c, {}).get('cct_s'),
            b['coflows'].get(c, {}).get('cct_s'))
    return rows
