"""A run's summary (summary.json) from its measures: per job, coflow,
stage and link, the totals, the faults, circuits, time shifts and
tensor latencies; the one-line account of a run that did not finish;
the comparison of two summaries.
"""
import math

import numpy as np

from .. import verdict
from .logread import Flows, LinkSamples


SUMMARY_FORMAT = 'netsched-summary/1'


# the run totals (summary.json 'totals') a comparison is made on, lower
# is better for each, with the words that name them
TOTALS = {'avg_jct_s': 'average JCT', 'p95_jct_s': 'p95 JCT',
          'avg_iteration_s': 'mean iteration time',
          'avg_early_iteration_s': 'early iteration time',
          'avg_cct_s': 'average CCT', 'p95_cct_s': 'p95 CCT',
          'avg_sct_s': 'average SCT',
          'front_tensor_s': 'front-layer tensor latency'}


def _stats(x):
    x = np.asarray(x, float)
    if len(x) == 0:
        return {'mean': None, 'p50': None, 'p99': None}
    return {'mean': float(x.mean()), 'p50': float(np.percentile(x, 50)),
            'p99': float(np.percentile(x, 99))}


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


def graph(meta):
    """The run's topology graph from the summary's meta (topology,
    link_bps), or None."""
    from ... import topology
    try:
        return topology.parse_spec(meta['topology'],
                                   link_bps=float(meta['link_bps']))
    except Exception:            # no topology in the meta: no rates
        return None


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
        'circuits': circuit_summary(m, graph(meta))
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
    if m.get('packets'):
        # ns-3's packet-level facts: TCP's trouble, drops, and per port
        # its drops and deepest queue per class
        out['packets'] = m['packets']
    if m.get('fidelity'):
        figures = m['fidelity']
        share = verdict.floor_share(m['coflows'], m.get('class_changes', ()),
                                    verdict.floor_class(meta.get('queues')))
        if share is not None:
            figures = dict(figures, classes={'floor_share': round(share, 4)})
        out['fidelity'] = verdict.judge(figures, out)
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
