"""``netsched export RUN --format perfetto``: a run's event log as a
Chrome trace-event JSON file, which ui.perfetto.dev and chrome://tracing
open. ``--format chakra``: the run's plan (its experiment.yaml built
again) as Chakra ET files, one per rank (workload.chakra.export), so
ASTRA-sim can run the same workload.

Tracks: a process per host, with a thread of its compute (the spans
each iteration's ``iter`` event carries) and its sends and receives as
async slices (a host has many transfers at once, which nested slices
cannot show), one per flow on the sender's track and on the receiver's;
a process per job with a thread per worker whose slices are its
iterations; a process "links" with a counter per link, its
utilisation over each sampling window; and a process "policy" whose
instant events are the decisions the log records (classes, per-send
classes, rates, time shifts, placements, circuits). Times are in
microseconds since the run's start, as the format wants.
"""
import json
import os

from ..errors import ConfigError
from .. import events as evlog

FORMATS = ('perfetto', 'chakra')
# the log's events that are a policy's (or circuit scheduler's) decisions
DECISIONS = ('classes', 'send_classes', 'rates', 'shifts', 'placement',
             'circuit_decision', 'reroute')
US = 1e6


class _Ids(dict):
    """name -> a number, in the order first asked for (from ``first``)."""

    def __init__(self, first=1):
        super().__init__()
        self.next = first

    def __missing__(self, name):
        n = self[name] = self.next
        self.next += 1
        return n


def trace(evs):
    """The trace-event dict of a run's events."""
    out, pids, tids = [], _Ids(), _Ids()
    meta = []

    def process(name, sort):
        if name not in pids:
            meta.append({'ph': 'M', 'name': 'process_name', 'pid': pids[name],
                         'tid': 0, 'args': {'name': name}})
            meta.append({'ph': 'M', 'name': 'process_sort_index',
                         'pid': pids[name], 'tid': 0,
                         'args': {'sort_index': sort}})
        return pids[name]

    def thread(pid, name):
        key = (pid, name)
        if key not in tids:
            meta.append({'ph': 'M', 'name': 'thread_name', 'pid': pid,
                         'tid': tids[key], 'args': {'name': name}})
        return tids[key]

    last_iter = {}
    job_start = {}
    for e in evs:
        ev, t = e.get('ev'), float(e.get('t', 0.0))
        if ev == 'flow':
            start = float(e.get('start', t))
            for host, what, other in (('src', 'send', 'dst'),
                                      ('dst', 'recv', 'src')):
                pid = process('host %s' % e[host], 0)
                base = {'cat': what, 'pid': pid, 'tid': thread(pid, what),
                        'name': '%s %s' % (what, e.get('coflow')),
                        'id2': {'local': '%s-%s' % (what, e.get('id'))}}
                out.append(dict(base, ph='b', ts=start * US, args={
                    'flow': e.get('id'), 'coflow': e.get('coflow'),
                    'peer': e.get(other), 'bytes': e.get('bytes')}))
                out.append(dict(base, ph='e', ts=t * US))
        elif ev == 'job_start':
            job_start[e['job']] = t
        elif ev == 'iter':
            job, w = e.get('job'), e.get('worker')
            begin = last_iter.get((job, w), job_start.get(job, 0.0))
            pid = process('job %s' % job, 1)
            out.append({'ph': 'X', 'cat': 'iteration', 'pid': pid,
                        'tid': thread(pid, 'worker %s' % w),
                        'name': 'iteration %s' % e.get('iter'),
                        'ts': begin * US, 'dur': max(t - begin, 0.0) * US,
                        'args': {'loss': e.get('loss')}})
            last_iter[job, w] = t
            if e.get('host') is not None:
                pid = process('host %s' % e['host'], 0)
                for a, b in e.get('compute') or ():
                    out.append({'ph': 'X', 'cat': 'compute', 'pid': pid,
                                'tid': thread(pid, 'compute'),
                                'name': 'compute %s/%s' % (job, e.get('iter')),
                                'ts': a * US, 'dur': max(b - a, 0.0) * US})
        elif ev == 'links':
            pid = process('links', 2)
            dt = float(e.get('dt', 0.0))
            for link, u in (e.get('util') or {}).items():
                out.append({'ph': 'C', 'pid': pid, 'tid': 0,
                            'name': str(link), 'ts': max(t - dt, 0.0) * US,
                            'args': {'util': float(u)}})
        elif ev in DECISIONS:
            pid = process('policy', 3)
            out.append({'ph': 'i', 's': 'p', 'cat': 'decision', 'pid': pid,
                        'tid': thread(pid, 'decisions'), 'name': ev,
                        'ts': t * US, 'args': {k: v for k, v in e.items()
                                               if k not in ('t', 'ev')}})
    return {'traceEvents': meta + sorted(out, key=lambda x: x['ts']),
            'displayTimeUnit': 'ms',
            'otherData': {'source': 'netsched export'}}


def write(run_dir, fmt='perfetto', out=None):
    """Write ``run_dir``'s trace (default ``run_dir/trace.perfetto.json``,
    for chakra the folder ``run_dir/chakra``); returns its path."""
    if fmt not in FORMATS:
        raise ConfigError('--format %s: want one of %s' % (
            fmt, ', '.join(FORMATS)))
    if fmt == 'chakra':
        return chakra(run_dir, out)
    log = os.path.join(run_dir, 'events.jsonl')
    if not os.path.isfile(log):
        raise ConfigError('%s: not a run folder (no events.jsonl)'
                          % run_dir)
    doc = trace(evlog.read(log))
    out = out or os.path.join(run_dir, 'trace.perfetto.json')
    try:
        with open(out + '.tmp', 'w') as f:
            json.dump(doc, f, separators=(',', ':'))
        os.replace(out + '.tmp', out)
    except OSError as e:
        raise ConfigError('%s: cannot be written: %s' % (
            out, e.strerror)) from None
    return out


def chakra(run_dir, out=None):
    """The plan of the run in ``run_dir`` as Chakra ET files
    ``<out>/<experiment name>.<rank>.et`` (default ``run_dir/chakra``);
    returns the folder. The plan is built again from the run's
    experiment.yaml, as the run built it."""
    from . import experiment
    from .paths import safe_name
    from ..workload import chakra as et, taskgraph
    path = os.path.join(run_dir, 'experiment.yaml')
    if not os.path.isfile(path):
        raise ConfigError('%s: not a run folder (no experiment.yaml)'
                          % run_dir)
    exp = experiment.load(path)
    if not exp.jobs and not exp.tuning:
        raise ConfigError('%s: the run has no jobs (a coflow trace alone): '
                          'nothing to write as Chakra' % run_dir)
    out = out or os.path.join(run_dir, 'chakra')
    name = exp.name               # the run's, where its summary says
    try:
        with open(os.path.join(run_dir, 'summary.json')) as f:
            name = json.load(f).get('experiment') or name
    except (OSError, ValueError):
        pass
    try:
        et.export(taskgraph.build(exp), out, safe_name(str(name)))
    except OSError as e:
        raise ConfigError('%s: cannot be written: %s' % (
            out, e.strerror)) from None
    except ConfigError as e:
        raise ConfigError('%s: --format chakra: %s' % (run_dir, e)) \
            from None
    return out
