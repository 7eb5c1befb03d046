"""An event log read into the run's measures (compute, from_log): jobs,
iterations, coflows, stages, flows and the links' samples, as both
backends write them (netsched.events); and the check of each event's
shape (check_log).
"""
import gc
import operator
from collections.abc import Mapping

import numpy as np

from ... import events as evlog
from ...errors import ConfigError
from .. import shapes


# the events a run writes of itself, not of what it measured
RUN_EVENTS = ('run_start', 'run_end', 'run_incomplete')


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


def compute(evs, last=None):  # noqa: C901 (one branch per event kind)
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
    class_changes = []            # (t, {coflow: class}) as decided
    packet_facts = None           # ns-3: drops, retransmissions, queues
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
        elif k == 'classes':
            class_changes.append((t, e['classes']))
        elif k == 'fidelity':             # the emulator's own measures
            fidelity = e.get('figures')
        elif k == 'packets':
            packet_facts = {f: v for f, v in e.items()
                            if f not in ('t', 'ev')}
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
         'fidelity': fidelity, 'class_changes': class_changes,
         'packets': packet_facts,
         'log': {'start': started, 'ended': ended, 'stops': stops,
                 'last_event': last() if last else next(
                     (e['ev'] for e in reversed(evs)
                      if e['ev'] not in RUN_EVENTS), None)}}
    m['iteration_times'] = iteration_times(m)
    return m


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
    # the collector paused: reading a long log makes an object per event
    # and keeps them, so its collections meanwhile free nothing
    was = gc.isenabled()
    gc.disable()
    try:
        return compute(items(), last=lambda: seen[1])
    finally:
        if was:
            gc.enable()


def check_log(path):
    """The first event of the log at ``path`` that is not as a run writes
    it (a field missing, or of another type: shapes.EVENTS), as a
    ConfigError naming the line, the field and its value; None where
    every event is. (A log that is not JSON lines is an error of
    events.scan.)"""
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
