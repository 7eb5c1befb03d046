"""Cross-check of the backends: one experiment, several policies, run
on two or three of the simulator, ns-3 and the emulator; do they rank
the policies the same way, and how far apart are their per-job and
per-coflow results?

Ranking is by one total of summary.json (lower is better). Two policies
whose totals differ by less than ``tie`` (relative) on a backend are a tie
there; a pair of policies counts against two backends only when one
backend puts them in one order and the other in the opposite order, both
beyond the tie margin. Every pair of backends is compared: the second's
results against the first's, in the order sim, ns3, emu (sim-ns3,
sim-emu, ns3-emu).
"""
import json
import os

from . import experiment, metrics, run
from ..errors import ConfigError

METRICS = tuple(metrics.TOTALS)
# the backends a crosscheck can run, in the order it runs them (quickest
# first: the simulator checks the experiment before anything slow starts)
# and the order of each pair
KNOWN = ('sim', 'ns3', 'emu')
BACKENDS = ('sim', 'emu')        # the default, and an old report's
NAMES = {'sim': 'simulator', 'ns3': 'ns-3', 'emu': 'emulator'}


def parse_backends(text):
    """--backends 'a,b[,c]': two or three of sim, ns3 and emu, no repeats;
    returned in the order they run (KNOWN). A ConfigError naming the
    option and the value otherwise."""
    names = [b.strip() for b in (text or '').split(',') if b.strip()]
    bad = [b for b in names if b not in KNOWN]
    if bad:
        raise ConfigError('--backends: unknown backend %r in %r (known: %s)'
                          % (bad[0], text, ', '.join(KNOWN)))
    if len(set(names)) != len(names):
        raise ConfigError('--backends names a backend twice: %r' % text)
    if len(names) < 2:
        raise ConfigError('--backends needs at least two of %s, got %r'
                          % (', '.join(KNOWN), text))
    return tuple(b for b in KNOWN if b in names)


def pair_name(a, b):
    return '%s-%s' % (a, b)


def backend_pairs(backends):
    """Every pair (a, b) of the backends, a before b in KNOWN's order."""
    bs = [b for b in KNOWN if b in backends]
    return [(a, b) for i, a in enumerate(bs) for b in bs[i + 1:]]


def backends_of(report):
    """The backends of a report (crosscheck.json), in their order; one
    written before --backends (or cut short before it said) is sim, emu."""
    return list(report.get('backends') or BACKENDS)


def pairs_of(report):
    """{pair name: pair} of a report, as ``pairs`` has them; an older
    report (simulator and emulator only) gives its one pair from its
    ``errors``, ``disagreements`` and ``parts``; one cut short, none."""
    if 'pairs' in report:
        return report['pairs']
    if 'errors' not in report:
        return {}
    bad = report.get('disagreements') or []
    return {pair_name(*BACKENDS): {
        'backends': list(BACKENDS), 'errors': report['errors'],
        'disagreements': bad, 'agree': report.get('agree', not bad),
        'parts': report.get('parts') or {}}}


def order(a, b, tie):
    """-1 if a is better (lower) than b beyond the margin, 1 if worse, 0
    for a tie."""
    if a is None or b is None:
        return 0
    if abs(a - b) <= tie * max(abs(a), abs(b)):
        return 0
    return -1 if a < b else 1


def ranking(values):
    """Policies from best to worst."""
    return sorted(values, key=lambda p: (values[p] is None, values[p] or 0))


def disagreements(a, b, tie):
    """Pairs (p, q) of policies that one backend's totals (``a``: {policy:
    total}) order p before q and the other's (``b``) q before p, both
    beyond the tie margin."""
    out = []
    pols = list(a)
    for i, p in enumerate(pols):
        for q in pols[i + 1:]:
            if order(a[p], a[q], tie) * order(b[p], b[q], tie) < 0:
                out.append((p, q))
    return out


def errors(a, b):
    """Mean |relative error| of b against a, per kind of result."""
    st = metrics.error_stats(metrics.compare(a, b))
    return {kind: st.get(kind, {}).get('mean_abs')
            for kind in ('job jct_s', 'coflow cct_s')}


def compare_pair(a, b, policies, summaries, totals, tie):
    """Backend b against backend a: per policy the mean |relative error|
    of b's jobs and coflows against a's (``errors``) and each stage's or
    job's time on both (``parts``); the pairs of policies the two order
    oppositely (``disagreements``) and whether there are none
    (``agree``). ``summaries``: {(backend, policy): summary}; ``totals``:
    {backend: {policy: total}}."""
    bad = disagreements(totals[a], totals[b], tie)
    return {'backends': [a, b],
            'errors': {p: errors(summaries[a, p], summaries[b, p])
                       for p in policies},
            'disagreements': bad, 'agree': not bad,
            'parts': {p: parts(summaries[a, p], summaries[b, p])
                      for p in policies}}


def build(backends, policies, summaries, metric='avg_cct_s', tie=0.05,
          sim_packets=None, emulator=None):
    """The report of finished runs (``summaries``: {(backend, policy):
    summary} of every backend and policy): each backend's totals and
    ranking, every pair of backends (``pairs``: {'sim-ns3': compare_pair},
    in KNOWN's order), the pairs of policies some two backends order
    oppositely (``disagreements``) and whether there are none (``agree``).
    With two backends the one pair's ``errors`` and ``parts`` are also at
    the top, as a report had them before --backends; ``sim_packets``
    where the simulator ran, ``emulator`` (emulator_health per policy)
    where the emulator did."""
    backends = [b for b in KNOWN if b in backends]
    totals = {b: {p: summaries[b, p]['totals'].get(metric)
                  for p in policies} for b in backends}
    pairs = {pair_name(a, b): compare_pair(a, b, policies, summaries,
                                           totals, tie)
             for a, b in backend_pairs(backends)}
    apart = {tuple(pq) for pr in pairs.values()
             for pq in pr['disagreements']}
    bad = [(p, q) for i, p in enumerate(policies)
           for q in policies[i + 1:] if (p, q) in apart]
    report = {'metric': metric, 'tie': tie, 'backends': backends,
              'totals': totals,
              'ranking': {b: ranking(totals[b]) for b in backends},
              'pairs': pairs, 'disagreements': bad, 'agree': not bad}
    if len(pairs) == 1:
        only, = pairs.values()
        report.update(errors=only['errors'], parts=only['parts'])
    if 'sim' in backends:
        report['sim_packets'] = sim_packets
    if 'emu' in backends and emulator is not None:
        report['emulator'] = emulator
    return report


def check_args(policies, metric, tie):
    from .. import policies as pol
    if metric not in METRICS:
        raise ConfigError('--metric must be one of %s, got %r'
                          % (', '.join(METRICS), metric))
    if not 0 <= tie < 1:
        raise ConfigError('--tie must be in [0, 1), got %r' % tie)
    if len(policies) < 2:
        raise ConfigError('--policies needs at least two policies, got %r'
                          % ','.join(policies))
    if len(set(policies)) != len(policies):
        raise ConfigError('--policies names a policy twice: %r'
                          % ','.join(policies))
    for p in policies:
        name, params = pol.parse_spec(p, where='--policies')
        pol.make(name, params, where='--policies: %s' % p)


def run_one(exp, out, say=print):
    """One backend under one policy (an Experiment from experiment.load
    with both set); returns its summary."""
    _, s = run.execute(exp, out, say=say)
    return s


def crosscheck(path, policies, out_dir, metric='avg_cct_s', tie=0.05,
               say=print, sim_packets=None, trace=None, backends=BACKENDS,
               ready=None):
    """Run every policy on each of ``backends`` (two or three of KNOWN),
    in KNOWN's order (the simulator first: it is quick and checks the
    experiment before anything slow starts); the simulator with
    ``sim_packets`` (None: the file's, else none, dc or emulated:
    experiment.SIM_PACKETS), ``trace`` the coflow trace file in place of
    the experiment's (--trace). ``ready()``, if given, is called once
    every run's experiment has loaded, before the first run starts (the
    command line checks there what a backend needs: root for the
    emulator). Results go to out_dir/<backend>-<policy>; a summary of
    the runs so far is kept as each arrives. Returns the report dict
    (build)."""
    check_args(policies, metric, tie)
    backends = parse_backends(','.join(backends))
    exps = {(b, p): experiment.load(
        path, backend=b, policy=p, trace=trace,
        sim_packets=sim_packets if b == 'sim' else None)
            for b in backends for p in policies}
    if ready is not None:
        ready()
    totals = {b: {} for b in backends}
    summaries = {}
    os.makedirs(out_dir, exist_ok=True)
    for b in backends:
        for p in policies:
            out = os.path.join(out_dir, '%s-%s' % (b, p))
            say('crosscheck: %s on %s -> %s' % (p, b, out))
            s = run_one(exps[b, p], out, say)
            summaries[b, p] = s
            totals[b][p] = s['totals'].get(metric)
            _save(out_dir, {'metric': metric, 'backends': list(backends),
                            'totals': totals})
    health = {p: emulator_health(os.path.join(out_dir, 'emu-' + p),
                                 summaries['emu', p])
              for p in policies} if 'emu' in backends else None
    report = build(backends, policies, summaries, metric, tie,
                   sim_packets=exps['sim', policies[0]].sim_packets
                   if 'sim' in backends else None, emulator=health)
    _save(out_dir, report)
    return report


def emulator_health(out, summary):
    """What the emulator's run measured of itself that moves its totals
    away from the fluid model's: TCP timeouts (and the connection longest
    in timeout recovery), packets dropped, the longest time no transfer
    finished and how many were in flight then, and the controller's
    decisions with the slowest one's time to the switches. A
    disagreement is read against these (docs/emulation.md)."""
    info = metrics.backend_info(out) or {}
    d = metrics.diagnostics(out, info)
    rto = info.get('tcp_rto_recovery_s_by_connection') or {}
    worst = max(rto, key=rto.get) if rto else None
    gap = summary.get('longest_gap') or {}
    ctl = info.get('controller') or {}
    return {
        'tcp_retransmits': d.get('retransmits'),
        'tcp_timeouts': d.get('timeouts') or 0,
        'rto_recovery_worst': [worst, rto[worst]] if worst else None,
        'drops': d.get('drops') or 0,
        'longest_gap_s': gap.get('gap_s'),
        'longest_gap_in_flight': gap.get('in_flight'),
        'decisions': ctl.get('decisions'),
        'applied_ms_max': ctl.get('applied_ms_max'),
        # the run's own verdict (pipeline.verdict): None for runs older
        # than it
        'verdict': (summary.get('fidelity') or {}).get('verdict'),
        'causes': (summary.get('fidelity') or {}).get('causes') or [],
    }


def parts(a, b):
    """Each stage's completion time (else each job's) on two backends
    (summaries a and b, a's stages or jobs): where a total's difference
    comes from."""
    key, val = ('stages', 'sct_s') if a.get('stages') else \
        ('jobs', 'jct_s')
    x, y = a.get(key) or {}, b.get(key) or {}
    return {k: [x[k].get(val), (y.get(k) or {}).get(val)] for k in sorted(x)}


def _save(out_dir, report):
    with open(os.path.join(out_dir, 'crosscheck.json'), 'w') as f:
        json.dump(report, f, indent=1)


def _f(x, fmt):
    return '-' if x is None else fmt % x


def _pct(x):
    return _f(None if x is None else 100 * x, '%.1f%%')


def table(report):
    """The report as text: each backend's totals per policy, each pair's
    errors, each backend's ranking, the emulator's own measures, each
    disagreeing pair's parts and the verdict (a report read back from
    crosscheck.json too, old ones included)."""
    m = report['metric']
    bs = backends_of(report)
    prs = pairs_of(report)
    tot = report['totals']
    pols = list(tot.get(bs[0]) or {})
    if len(prs) == 1:        # two backends: their errors beside the totals
        (_, pr), = prs.items()
        a, b = pr['backends']
        lines = ['%-12s %14s %14s %12s %12s' % (
            'policy', a + ' ' + m, b + ' ' + m, 'jobs |err|',
            'coflows |err|')]
        for p in pols:
            e = pr['errors'].get(p) or {}
            lines.append('%-12s %14s %14s %12s %12s' % (
                p, _f(tot[a].get(p), '%.4f'), _f(tot[b].get(p), '%.4f'),
                _pct(e.get('job jct_s')), _pct(e.get('coflow cct_s'))))
    else:
        lines = ['%-12s' % 'policy' + ''.join(' %14s' % (b + ' ' + m)
                                               for b in bs)]
        for p in pols:
            lines.append('%-12s' % p + ''.join(
                ' %14s' % _f((tot.get(b) or {}).get(p), '%.4f')
                for b in bs))
        lines.append('mean |relative error| per job / per coflow, of b '
                     'against a in each pair a-b:')
        lines.append('%-12s' % 'policy' + ''.join(' %17s' % n
                                                   for n in prs))
        for p in pols:
            lines.append('%-12s' % p + ''.join(' %17s' % ('%s / %s' % (
                _pct((pr['errors'].get(p) or {}).get('job jct_s')),
                _pct((pr['errors'].get(p) or {}).get('coflow cct_s'))))
                for pr in prs.values()))
    if report.get('sim_packets') not in (None, 'none'):
        lines.append('simulator packets: %s (fluid.Network.set_packets)'
                     % report['sim_packets'])
    for b in bs:
        lines.append('%s ranking (best first): %s'
                     % (b, ' < '.join(report['ranking'][b])))
    for p, h in sorted(report.get('emulator', {}).items()):
        w = h.get('rto_recovery_worst')
        lines.append(
            'emu %s: %s TCP timeouts (%s retransmits%s), %s drops, longest '
            'stall %s s with %s in flight, %s decisions (slowest applied '
            'in %s ms)' % (
                p, h['tcp_timeouts'], h['tcp_retransmits'],
                '; %s %.2f s in timeout recovery' % tuple(w) if w else '',
                h['drops'], _f(h['longest_gap_s'], '%.3f'),
                h['longest_gap_in_flight'], h['decisions'],
                h['applied_ms_max']))
        if h.get('verdict'):
            lines.append('emu %s: fidelity %s%s' % (
                p, h['verdict'].upper() if h['causes'] else h['verdict'],
                ': ' + '; '.join(h['causes']) if h['causes'] else ''))
    for pr in prs.values():
        a, b = pr['backends']
        apart = sorted({p for pq in pr.get('disagreements') or ()
                        for p in pq} & set(pr.get('parts') or ()))
        for p in apart:
            lines.append('%s %s/%s: %s' % (p, a, b, ', '.join(
                '%s %s/%s' % (k, _f(x, '%.3f'), _f(y, '%.3f'))
                for k, (x, y) in pr['parts'][p].items())))
    if len(prs) > 1:
        for n, pr in prs.items():
            lines.append('%s: %s' % (n, 'the same ranking' if pr['agree']
                                     else 'DISAGREE on %s' % ', '.join(
                                         '%s vs %s' % tuple(pq)
                                         for pq in pr['disagreements'])))
    if report['agree']:
        lines.append('the backends rank the policies the same way '
                     '(ties within %g%%)' % (100 * report['tie']))
    else:
        lines.append('the backends DISAGREE on: %s' % ', '.join(
            '%s vs %s' % tuple(pq) for pq in report['disagreements']))
    return '\n'.join(lines)
