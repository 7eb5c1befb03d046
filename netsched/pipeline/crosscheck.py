"""Cross-check of the two backends: one experiment, several policies, run
on the simulator and on the emulator; do both rank the policies the same
way, and how far apart are their per-job and per-coflow results?

Ranking is by one total of summary.json (lower is better). Two policies
whose totals differ by less than ``tie`` (relative) on a backend are a tie
there; a pair counts against the backends only when one backend puts
them in one order and the other in the opposite order, both beyond the
tie margin.
"""
import json
import os

from . import experiment, metrics, run
from ..errors import ConfigError

METRICS = tuple(metrics.TOTALS)
BACKENDS = ('sim', 'emu')


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


def disagreements(sim, emu, tie):
    """Pairs (p, q) that one backend orders p before q and the other q
    before p, both beyond the tie margin."""
    out = []
    pols = list(sim)
    for i, p in enumerate(pols):
        for q in pols[i + 1:]:
            if order(sim[p], sim[q], tie) * order(emu[p], emu[q], tie) < 0:
                out.append((p, q))
    return out


def errors(a, b):
    """Mean |relative error| of b against a, per kind of result."""
    st = metrics.error_stats(metrics.compare(a, b))
    return {kind: st.get(kind, {}).get('mean_abs')
            for kind in ('job jct_s', 'coflow cct_s')}


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
    _, s = run.execute(exp, out, say=say, plots=False)
    return s


def crosscheck(path, policies, out_dir, metric='avg_cct_s', tie=0.05,
               say=print, sim_packets=None, trace=None):
    """Run every policy on both backends (simulator first: it is quick
    and checks the experiment before any emulation starts); the
    simulator with ``sim_packets`` (None: the file's, else none, dc or
    emulated: experiment.SIM_PACKETS), ``trace`` the coflow trace
    file in place of the experiment's (--trace). Results go to
    out_dir/<backend>-<policy>; a summary of each run is kept as it
    arrives. Returns the report dict."""
    check_args(policies, metric, tie)
    exps = {(b, p): experiment.load(
        path, backend=b, policy=p, trace=trace,
        sim_packets=sim_packets if b == 'sim' else None)
            for b in BACKENDS for p in policies}
    totals = {b: {} for b in BACKENDS}
    summaries = {}
    os.makedirs(out_dir, exist_ok=True)
    for b in BACKENDS:
        for p in policies:
            out = os.path.join(out_dir, '%s-%s' % (b, p))
            say('crosscheck: %s on %s -> %s' % (p, b, out))
            s = run_one(exps[b, p], out, say)
            summaries[b, p] = s
            totals[b][p] = s['totals'].get(metric)
            _save(out_dir, {'metric': metric, 'totals': totals})
    errs = {p: errors(summaries['sim', p], summaries['emu', p])
            for p in policies}
    bad = disagreements(totals['sim'], totals['emu'], tie)
    report = {'metric': metric, 'tie': tie, 'totals': totals,
              'sim_packets': exps['sim', policies[0]].sim_packets,
              'ranking': {b: ranking(totals[b]) for b in BACKENDS},
              'errors': errs, 'disagreements': bad, 'agree': not bad,
              'emulator': {p: emulator_health(
                  os.path.join(out_dir, 'emu-' + p), summaries['emu', p])
                  for p in policies},
              'parts': {p: parts(summaries['sim', p], summaries['emu', p])
                        for p in policies}}
    _save(out_dir, report)
    return report


def emulator_health(out, summary):
    """What the emulator's run measured of itself that moves its totals
    away from the fluid model's: TCP timeouts (and the connection longest
    in timeout recovery), packets dropped, the longest time no transfer
    finished and how many were in flight then, and the controller's
    decisions with the slowest one's time to the switches. A
    disagreement is read against these (docs/emulation.md)."""
    # fidelity imports this module: imported here, not at the top
    from . import fidelity
    info = fidelity.backend_info(out) or {}
    d = fidelity.diagnostics(out, info)
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
    }


def parts(sim, emu):
    """Each stage's completion time (else each job's) on both backends:
    where a total's difference comes from."""
    key, val = ('stages', 'sct_s') if sim.get('stages') else \
        ('jobs', 'jct_s')
    a, b = sim.get(key) or {}, emu.get(key) or {}
    return {k: [a[k].get(val), (b.get(k) or {}).get(val)] for k in sorted(a)}


def _save(out_dir, report):
    with open(os.path.join(out_dir, 'crosscheck.json'), 'w') as f:
        json.dump(report, f, indent=1)


def table(report):
    m = report['metric']
    lines = ['%-12s %14s %14s %12s %12s' % (
        'policy', 'sim ' + m, 'emu ' + m, 'jobs |err|', 'coflows |err|')]

    def f(x, fmt):
        return '-' if x is None else fmt % x
    for p in report['totals']['sim']:
        e = report['errors'][p]
        lines.append('%-12s %14s %14s %12s %12s' % (
            p, f(report['totals']['sim'][p], '%.4f'),
            f(report['totals']['emu'][p], '%.4f'),
            f(None if e['job jct_s'] is None else 100 * e['job jct_s'],
              '%.1f%%'),
            f(None if e['coflow cct_s'] is None
              else 100 * e['coflow cct_s'], '%.1f%%')))
    if report.get('sim_packets', 'none') != 'none':
        lines.append('simulator packets: %s (fluid.Network.set_packets)'
                     % report['sim_packets'])
    for b in BACKENDS:
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
                h['drops'], f(h['longest_gap_s'], '%.3f'),
                h['longest_gap_in_flight'], h['decisions'],
                h['applied_ms_max']))
    apart = sorted({p for pq in report.get('disagreements') or ()
                    for p in pq} & set(report.get('parts') or ()))
    for p in apart:
        lines.append('%s sim/emu: %s' % (p, ', '.join(
            '%s %s/%s' % (k, f(a, '%.3f'), f(b, '%.3f'))
            for k, (a, b) in report['parts'][p].items())))
    if report['agree']:
        lines.append('the backends rank the policies the same way '
                     '(ties within %g%%)' % (100 * report['tie']))
    else:
        lines.append('the backends DISAGREE on: %s' % ', '.join(
            '%s vs %s' % tuple(pq) for pq in report['disagreements']))
    return '\n'.join(lines)
