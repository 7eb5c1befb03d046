"""The fidelity verdict of an emulated run: faithful or degraded, and why.

The emulator measures itself as it runs (netsched.emulator.monitor): how
long the datapath holds packets beyond what the emulated links allow,
how late the agents act on the plan, how long the controller takes to
apply a decision, and TCP's timeouts. Each is set against the run's own
time scale, the median of its coflows' ideal times (each alone on the
fabric): a 5 ms lag is nothing in a 2 s exchange and a fifth of a 25 ms
one. A run is degraded when any
of them passes its limit; the limits are calibrated on the fidelity
suite against the simulator (docs/fidelity.md, "The verdict").
"""
import statistics

from ..qos import MAX_CLASSES

# the most each lag may be, as a fraction of the time scale (time_scale),
# for a run to count as faithful (docs/fidelity.md, "The verdict")
LIMITS = {
    'datapath': 0.02,     # probes' excess delay, p99
    # wake-ups for timers late, on average: each late wake-up delays
    # what it starts once, so the mean, not a tail that a run of a few
    # dozen wake-ups makes of its single worst, is what the mean errors
    # the targets bound can carry
    'agents': 0.03,
    'controller': 0.20,   # decisions applied, p95
    # time in timeout recovery, of all the coflows' time: under strict
    # priority most of it is time a starved connection waits anyway
    'tcp': 0.50,
    'probes_lost': 0.01,  # of the probes sent
    # the simulator with the emulator's packets and send starts against
    # its fluid model (pipeline.forecast), per job and per coflow: three
    # quarters and two thirds of the suite's targets, the rest left to
    # the emulator's run-to-run spread
    'packets_jobs': 0.075,
    'packets_coflows': 0.10,
    # the share of the coflows' time in which two or more of them shared
    # the lowest class, beyond the simulator's under the same policy
    'floor': 0.20,
    # the share of the bytes on connections too short in emulated packets
    # for TCP to find its share (pipeline.forecast.short_streams); the
    # suite has only none (its rings and servers) and all (the trace)
    'streams': 0.50,
}
FAITHFUL, DEGRADED = 'faithful', 'degraded'


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def time_scale(summary, figures=None):
    """The run's time scale in seconds: the median of its coflows' ideal
    times (each alone on the fabric, from the plan: what the emulator
    measured as ``ideal_cct_s_median``), else its median coflow
    completion time (None without either). The ideal one is preferred:
    a saturated datapath stretches every measured time, and lags set
    against stretched times would look small."""
    ideal = (figures or {}).get('ideal_cct_s_median')
    if ideal:
        return ideal
    return _median(c.get('cct_s') for c in
                   (summary.get('coflows') or {}).values())


def _get(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def judge(figures, summary, limits=LIMITS):
    """summary.json's ``fidelity`` for an emulated run: ``verdict``
    (faithful or degraded), ``causes`` (one line each, the cause first),
    ``lags`` (each lag as a fraction of the time scale), ``figures`` as
    measured and the ``limits`` used."""
    scale = time_scale(summary, figures)
    lags = {
        'datapath': _get(figures, 'datapath', 'excess_ms', 'p99'),
        'agents': _get(figures, 'agents', 'late_ms', 'mean'),
        'controller': _get(figures, 'controller', 'applied_ms', 'p95'),
    }
    tcp = figures.get('tcp') or {}
    causes = []
    rel = {}
    if scale:
        for k, ms in lags.items():
            if ms is None:
                continue
            rel[k] = max(0.0, ms) / 1e3 / scale
            if rel[k] > limits[k]:
                causes.append(_say(k, ms, rel[k], limits[k], scale))
        # time in timeout recovery against all the coflows' time
        busy = sum(c.get('cct_s') or 0.0 for c in
                   (summary.get('coflows') or {}).values())
        rto = tcp.get('rto_recovery_s') or 0.0
        rel['tcp'] = rto / busy if busy > 0 else 0.0
        if tcp.get('timeouts') and rel['tcp'] > limits['tcp']:
            causes.append(
                'tcp: %d retransmission timeouts, %.3f s in recovery, '
                '%.1f%% of the coflows\' time (limit %.0f%%)'
                % (tcp['timeouts'], rto, 100 * rel['tcp'],
                   100 * limits['tcp']))
    dp = figures.get('datapath') or {}
    if dp.get('probes_sent'):
        rel['probes_lost'] = dp['probes_lost'] / dp['probes_sent']
        if rel['probes_lost'] > limits['probes_lost']:
            causes.append('datapath: %d of %d probes lost (limit %.0f%%)'
                          % (dp['probes_lost'], dp['probes_sent'],
                             100 * limits['probes_lost']))
    causes += _packets(figures.get('packets'), limits, rel)
    causes += _streams(figures.get('packets'), limits, rel)
    causes += _floor(figures, limits, rel)
    if scale is None:
        causes.append('unknown: no coflow finished, nothing to set the '
                      'lags against')
    return {'verdict': DEGRADED if causes else FAITHFUL,
            'causes': causes, 'time_scale_s': scale,
            'lags': {k: round(v, 4) for k, v in rel.items()},
            'figures': figures, 'limits': dict(limits)}


def _packets(fc, limits, rel):
    """The packet forecast's cause (a list of at most one line), its
    figures into ``rel``."""
    if not fc:
        return []
    over = []
    for kind in ('jobs', 'coflows'):
        k = 'packets_' + kind
        if fc.get(kind) is None or k not in limits:
            continue
        rel[k] = fc[kind]
        if fc[kind] > limits[k]:
            over.append('%.1f%% per %s (limit %.1f%%)' % (
                100 * fc[kind], kind[:-1], 100 * limits[k]))
    if not over:
        return []
    return ['packets: at scale %g a %d-byte packet takes %.2f ms on the '
            'slowest emulated link, and with packets that coarse and sends '
            'starting up to %g ms late, as the agents start them, the '
            'simulator parts from its fluid model by %s: the emulated '
            'network answers differently from the one it stands for, '
            'however well the datapath keeps up'
            % (fc['scale'], fc['mtu'], fc['packet_ms'], fc.get('start_ms', 0),
               ' and '.join(over))]


def _streams(fc, limits, rel):
    """The short streams' cause (a list of at most one line), their
    share into ``rel``."""
    share = (fc or {}).get('short_share')
    if share is None or 'streams' not in limits:
        return []
    rel['streams'] = share
    if share <= limits['streams']:
        return []
    return ['streams: %.0f%% of the bytes go on connections of at most %d '
            'packets at scale %g, which end within three rounds of slow '
            'start: their senders put them into the network before any '
            'congestion signal returns, and the queues, not TCP, share the '
            'links (limit %.0f%%); at the real rates the same connections '
            'are %g times longer'
            % (100 * share, fc['short_packets'], fc['scale'],
               100 * limits['streams'], fc['scale'])]


def floor_class(queues):
    """The lowest class of a run whose meta says ``queues`` (a number
    of classes, or 'exact': the most a switch port has)."""
    return (queues if isinstance(queues, int) else MAX_CLASSES) - 1


def floor_share(coflows, changes, floor):
    """The share of the time some coflow is under way (first arrival to
    last end) in which two or more coflows under way sat in class
    ``floor`` or below: where a policy's order has run out of classes.
    ``coflows``: {id: {arrival_s, end_s}}; ``changes``: (t, {coflow:
    class}) as decided (a coflow not yet classed is in class 0). None
    when no coflow both arrived and ended."""
    marks = []
    for c, r in coflows.items():
        if r.get('arrival_s') is not None and r.get('end_s') is not None:
            marks.append((r['arrival_s'], 1, c))
            marks.append((r['end_s'], -1, c))
    if not marks:
        return None
    marks += [(t, 0, ch) for t, ch in changes]
    marks.sort(key=lambda m: (m[0], m[1]))
    begin, end = marks[0][0], max(m[0] for m in marks if m[1] == -1)
    cls, live, crowded, last = {}, set(), 0.0, begin
    for t, kind, what in marks:
        if sum(cls.get(c, 0) >= floor for c in live) >= 2:
            crowded += min(t, end) - min(last, end)
        last = t
        if kind == 0:
            cls.update(what)
        elif kind == 1:
            live.add(what)
        else:
            live.discard(what)
    return crowded / (end - begin) if end > begin else 0.0


def _floor(figures, limits, rel):
    """The lowest class's crowding beyond the simulator's (a list of at
    most one cause), its figure into ``rel``."""
    own = (figures.get('classes') or {}).get('floor_share')
    sim = (figures.get('packets') or {}).get('floor_share')
    if own is None or sim is None or 'floor' not in limits:
        return []
    rel['floor'] = max(0.0, own - sim)
    if rel['floor'] <= limits['floor']:
        return []
    return ['classes: two or more coflows shared the lowest class for '
            '%.0f%% of the coflows\' time, against %.0f%% in the simulator '
            'under the same policy (limit %.0f points more): the policy\'s '
            'order fell into one class (classes only move down, so each swap '
            'of ranks pushes the coflows behind it lower)'
            % (100 * own, 100 * sim, 100 * limits['floor'])]


_WHAT = {
    'datapath': 'probes held %.1f ms beyond the emulated links (p99)',
    'agents': 'agents woke %.1f ms late for the plan (mean of wake-ups)',
    'controller': 'decisions applied %.1f ms after their report (p95)',
}


def _say(k, ms, rel, limit, scale):
    return '%s: %s, %.1f%% of the median ideal coflow time %.3f s (limit ' \
        '%.0f%%)' % (k, _WHAT[k] % ms, 100 * rel, scale, 100 * limit)


def line(fid):
    """The verdict in one console line."""
    if not fid:
        return None
    if fid['verdict'] == FAITHFUL:
        lags = fid.get('lags') or {}
        worst = max(((v / fid['limits'][k], k) for k, v in lags.items()
                     if k in fid['limits']), default=None)
        tail = '' if worst is None else ' (closest to its limit: %s at ' \
            '%.0f%% of it)' % (worst[1], 100 * worst[0])
        return 'fidelity: faithful%s' % tail
    return 'fidelity: DEGRADED: ' + '; '.join(fid['causes'])
