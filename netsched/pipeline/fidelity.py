"""The fidelity analysis (issue 10): how far the emulator's results are
from the simulator's on the fidelity suite (experiments/fidelity/*.yaml),
and how far each backend is from itself.

Here are the suite, its policies and its targets (defined once: the
fidelity benchmark, the sensitivity benchmark and the tests take them
from here), and what is computed from finished runs' summaries:

  - per run, its per-job JCT and per-coflow CCT errors against the
    simulator's (one per simulator packet model) and the emulator's TCP
    diagnostics (run.json, metrics.diagnostics): ``emu_record``;
  - per experiment and policy, those errors over the reps as spreads,
    marked against the targets, and per experiment in how many reps the
    backends rank the policies the same way: ``matrix``;
  - the simulator's own ranking and the pairs it puts apart:
    ``sim_ranking``;
  - a backend against itself, between every ordered pair of its reps:
    ``self_errors``;
  - the timing disturbance the sensitivity benchmark puts into the
    simulator's input: ``jittered``;

and the text tables of all that. benchmarks/fidelity_bench.py and
benchmarks/sensitivity_bench.py run the experiments and print these.
"""
import copy
import glob
import os
import random

from .. import ROOT
from ..errors import ConfigError
from . import crosscheck, metrics, verdict

SUITE = os.path.join(ROOT, 'experiments', 'fidelity')
POLICIES = ('fair', 'fifo', 'sebf', 'varys', 'aalo', 'sincronia')
METRIC = 'avg_cct_s'             # the total the policies are ranked by
TIE = 0.05                       # totals this close (relative) tie
# the most mean per-job JCT / per-coflow CCT |error| of the emulator
# against the simulator that meets the target
TARGET = {'job jct_s': 0.10, 'coflow cct_s': 0.15}
KINDS = tuple(TARGET)            # per-job JCT, per-coflow CCT


def suite(only=None):
    """{name: path} of the suite's experiments (all, or those named in
    ``only``, in its order); an unknown name is a ConfigError."""
    paths = sorted(glob.glob(os.path.join(SUITE, '*.yaml')))
    names = {os.path.splitext(os.path.basename(p))[0]: p for p in paths}
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ConfigError('no suite experiment %r (known: %s)'
                              % (unknown[0], ', '.join(names)))
        return {n: names[n] for n in only}
    return names


def spread(xs):
    """Mean, min, max and count of the values that are not None; None
    without any."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {'mean': sum(xs) / len(xs), 'min': min(xs), 'max': max(xs),
            'n': len(xs)}


def sim_ranking(totals, policies):
    """The simulator's order of the policies (by METRIC, best first) as
    text, '=' between neighbours within the tie, '<' beyond it, and how
    many of the pairs it puts apart beyond the tie (the pairs on which
    the ranking check can fail: with none it is vacuous)."""
    vals = {p: (totals.get(p) or {}).get(METRIC) for p in policies}
    ranked = crosscheck.ranking(vals)
    text = ranked[0] if ranked else ''
    for a, b in zip(ranked, ranked[1:]):
        text += ' %s %s' % ('=' if crosscheck.order(vals[a], vals[b], TIE)
                            == 0 else '<', b)
    apart = sum(1 for i, p in enumerate(policies) for q in policies[i + 1:]
                if crosscheck.order(vals[p], vals[q], TIE) != 0)
    n = len(policies)
    return {'order': text, 'pairs_apart': apart, 'pairs': n * (n - 1) // 2}


def matrix(records, sims, policies, model='none'):
    """Errors against the simulator's packet model ``model`` (records
    carry them per model: 'errors_by_model'; a failed run's record has
    none). Per experiment and policy: error spreads over the reps, target
    marks, totals; per experiment, reps whose ranking agrees (a rep in
    which a policy's run is missing or failed is not counted) and the
    simulator's own ranking. Records with an 'error' are failed runs;
    sims: {experiment: {policy: totals}}."""
    out = {}
    records = [dict(r, errors=r['errors_by_model'][model],
                    missing=r['missing_by_model'][model])
               if 'errors_by_model' in r else r for r in records]
    for name in sorted({r['experiment'] for r in records} | set(sims)):
        exp_sims = sims.get(name, {})
        reps = sorted({r['rep'] for r in records if r['experiment'] == name})
        cells = {}
        for p in policies:
            rs = [r for r in records if r['experiment'] == name
                  and r['policy'] == p and not r.get('error')]
            failed = sum(1 for r in records if r['experiment'] == name
                         and r['policy'] == p and r.get('error'))
            cell = {'sim': (exp_sims.get(p) or {}).get(METRIC),
                    'failed': failed,
                    'unfinished': spread([sum((r.get('missing') or {})
                                              .values()) for r in rs]),
                    'emu': spread([r['total'] for r in rs]),
                    'jobs': spread([r['errors']['job jct_s'] for r in rs]),
                    'coflows': spread([r['errors']['coflow cct_s']
                                       for r in rs]),
                    'retransmits': spread([r['diag'].get('retransmits')
                                           for r in rs]),
                    'timeouts': spread([r['diag'].get('timeouts')
                                        for r in rs]),
                    'rto_s': spread([r['diag'].get('rto_s')
                                     for r in rs]),
                    'paused_s': spread([r['diag'].get('paused_s')
                                        for r in rs])}
            cell['meets'] = {k: (cell[key]['max'] <= TARGET[k]
                                 if cell[key] else None)
                             for k, key in (('job jct_s', 'jobs'),
                                            ('coflow cct_s', 'coflows'))}
            cells[p] = cell
        agree = []
        for rep in reps:
            emu = {r['policy']: r['total'] for r in records
                   if r['experiment'] == name and r['rep'] == rep
                   and not r.get('error')}
            if set(emu) != set(policies):
                continue                 # an interrupted rep, a failed run
            sim = {p: (exp_sims.get(p) or {}).get(METRIC) for p in policies}
            agree.append(not crosscheck.disagreements(sim, emu, TIE))
        out[name] = {'policies': cells, 'reps': len(agree),
                     'ranking_agrees': sum(agree),
                     'sim_ranking': sim_ranking(exp_sims, policies)}
    return out


def self_errors(runs):
    """A backend against itself (the emulator in the fidelity benchmark,
    the simulator under noise in the sensitivity benchmark): per
    experiment and policy, the errors (jobs, coflows) between every
    ordered pair of its reps (crosscheck.errors, one rep's summary
    against another's), as spreads; runs: {(experiment, policy): {rep:
    summary}}. Where the emulator's is as large as its error against the
    simulator, its own spread is the gap, not a difference of the
    models."""
    out = {}
    for (name, p), reps in sorted(runs.items()):
        pairs = [crosscheck.errors(reps[i], reps[j])
                 for i in sorted(reps) for j in sorted(reps) if i != j]
        out.setdefault(name, {})[p] = {k: spread([e[k] for e in pairs])
                                       for k in KINDS}
    return out


def emu_record(name, policy, rep, sims, s, out):
    """One emulator run's record against the simulator's summaries (one
    per packet model): total, per-job/per-coflow errors and items one
    backend did not finish, per model; diagnostics (``out``: the run's
    folder)."""
    errs, missing = {}, {}
    for m, sim in sims.items():
        st = metrics.error_stats(metrics.compare(sim, s))
        errs[m] = crosscheck.errors(sim, s)
        missing[m] = {k: st.get(k, {}).get('missing', 0)
                      for k in ('job jct_s', 'coflow cct_s')}
    return {'experiment': name, 'backend': 'emu', 'policy': policy,
            'rep': rep, 'total': s['totals'].get(METRIC),
            'errors_by_model': errs, 'missing_by_model': missing,
            'diag': metrics.diagnostics(out),
            # what the run measured of itself, to judge again under other
            # limits (verdict_rows)
            'fidelity': (s.get('fidelity') or {}).get('figures'),
            'ccts': [c.get('cct_s') for c in (s.get('coflows') or {})
                     .values()]}


def within_targets(errors):
    """Whether a run's errors meet both targets (a kind the run has no
    value for, as the trace's jobs, is not held against it)."""
    return all(errors.get(k) is None or errors[k] <= TARGET[k]
               for k in KINDS)


def verdict_rows(records, model='none', limits=None):
    """Per emulator run that finished and measured itself: its errors
    against the simulator's ``model``, whether they meet the targets,
    and its verdict judged again under ``limits`` (default: the
    verdict's own)."""
    rows = []
    for r in records:
        figs = r.get('fidelity')
        if r.get('error') or not figs:
            continue
        e = r['errors_by_model'][model] if 'errors_by_model' in r \
            else r['errors']
        summary = {'coflows': {str(i): {'cct_s': c}
                               for i, c in enumerate(r.get('ccts') or ())}}
        v = verdict.judge(figs, summary, limits or verdict.LIMITS)
        rows.append({'experiment': r['experiment'], 'policy': r['policy'],
                     'rep': r['rep'], 'errors': e,
                     'within': within_targets(e), 'verdict': v['verdict'],
                     'lags': v['lags'], 'causes': v['causes']})
    return rows


def confusion(rows):
    """{(verdict, within targets): runs} over verdict_rows."""
    out = {(v, w): 0 for v in (verdict.FAITHFUL, verdict.DEGRADED)
           for w in (True, False)}
    for r in rows:
        out[r['verdict'], r['within']] += 1
    return out


def verdict_table(rows):
    """The runs with their errors, verdicts and lags, then the confusion
    matrix, as text."""
    keys = ('datapath', 'agents', 'controller', 'tcp', 'packets_jobs',
            'packets_coflows')
    lines = ['%-12s %-10s %3s %7s %7s %6s %-9s %s' % (
        'experiment', 'policy', 'rep', 'jobs', 'coflows', 'target',
        'verdict', ' '.join('%10s' % k for k in keys))]
    for r in rows:
        e = r['errors']
        lines.append('%-12s %-10s %3d %7s %7s %6s %-9s %s' % (
            r['experiment'], r['policy'], r['rep'],
            _pc(e.get('job jct_s')), _pc(e.get('coflow cct_s')),
            'meets' if r['within'] else 'MISSES', r['verdict'],
            ' '.join('%10s' % _pc(r['lags'].get(k)) for k in keys)))
    c = confusion(rows)
    lines += ['lags: each as a %% of the run\'s time scale (median ideal '
              'coflow time); packets_*: the simulator with the emulator\'s '
              'packets against its fluid model (limits: %s)' % ', '.join(
                  '%s %.1f%%' % (k, 100 * v) for k, v in
                  verdict.LIMITS.items()),
              'verdict against the targets (%d runs):' % len(rows),
              '  faithful: %d meet, %d miss' % (
                  c['faithful', True], c['faithful', False]),
              '  degraded: %d meet, %d miss' % (
                  c['degraded', True], c['degraded', False])]
    return '\n'.join(lines)


def _pc(x):
    return '-' if x is None else '%.1f' % (100 * x)


def jittered(d, jitter_s, seed):
    """A copy of an experiment dict with every job's arrival_s delayed by
    a uniform draw in [0, jitter_s] (jobs in file order, one draw each)."""
    rng = random.Random(seed)
    d = copy.deepcopy(d)
    for job in d.get('jobs') or ():
        job['arrival_s'] = float(job.get('arrival_s', 0.0)) + \
            rng.uniform(0.0, jitter_s)
    return d


def self_table(selfs, policies, what='one rep against another, over '
               'every ordered pair of reps'):
    """Per experiment, 'jobs / coflows' mean |error| % per policy, of
    spreads {experiment: {policy: {kind: spread}}}; ``what`` they are
    errors of, in the footer."""
    lines = ['%-12s %s' % ('experiment', ' '.join('%-11s' % p
                                                  for p in policies))]
    for name, row in selfs.items():
        cells = []
        for p in policies:
            c = row.get(p) or {}
            j, k = c.get('job jct_s'), c.get('coflow cct_s')
            cells.append('%-11s' % ('-' if not (j or k) else '%s / %s' % (
                '-' if not j else '%.0f' % (100 * j['mean']),
                '-' if not k else '%.0f' % (100 * k['mean']))))
        lines.append('%-12s %s' % (name, ' '.join(cells)))
    lines.append('cells: mean per-job / per-coflow |error| %%, %s' % what)
    return '\n'.join(lines)


def notes(cell):
    """Failed runs and runs that left items unfinished, after a row."""
    out = ''
    if cell.get('failed'):
        out += '  %d failed' % cell['failed']
    u = cell.get('unfinished')
    if u and u['max']:
        out += '  unfinished items (max %d)' % u['max']
    return out


def pct(s):
    """'mean% (min-max)' of a spread, '-' without one."""
    if not s:
        return '-'
    return '%.1f%% (%.1f-%.1f)' % (100 * s['mean'], 100 * s['min'],
                                  100 * s['max'])


def table(m, policies):
    """The matrix of one simulator packet model as text: a row per
    experiment and policy, the simulator's ranking and the reps in which
    the backends agree per experiment."""
    def mean(s, fmt):
        return '-' if not s else fmt % s['mean']
    lines = ['%-12s %-10s %8s %8s %22s %22s %9s %6s %6s' % (
        'experiment', 'policy', 'sim', 'emu',
        'jobs |err| <=%.0f%%' % (100 * TARGET['job jct_s']),
        'coflows |err| <=%.0f%%' % (100 * TARGET['coflow cct_s']),
        'retr/RTO', 'RTO s', 'held')]
    for name, e in m.items():
        for p in policies:
            c = e['policies'][p]
            mark = {k: {True: ' ', False: '!', None: '?'}[v]
                    for k, v in c['meets'].items()}
            lines.append('%-12s %-10s %8s %8s %21s%s %21s%s %9s %6s %6s%s' % (
                name, p, '-' if c['sim'] is None else '%.3f' % c['sim'],
                mean(c['emu'], '%.3f'),
                pct(c['jobs']), mark['job jct_s'], pct(c['coflows']),
                mark['coflow cct_s'],
                '%s/%s' % (mean(c['retransmits'], '%.0f'),
                           mean(c['timeouts'], '%.0f')),
                mean(c.get('rto_s'), '%.2f'),
                mean(c['paused_s'], '%.2f'), notes(c)))
        r = e.get('sim_ranking')
        if r:
            lines.append('%-12s simulator: %s (%d of %d pairs apart beyond '
                         '%d%%)' % (name, r['order'], r['pairs_apart'],
                                    r['pairs'], 100 * TIE))
        if e['reps'] or any(c['emu'] or c.get('failed')
                            for c in e['policies'].values()):
            lines.append('%-12s ranking: the backends agree in %d of %d reps '
                         '(ties within %d%%)' % (name, e['ranking_agrees'],
                                                 e['reps'], 100 * TIE))
    lines.append("'!' = misses the target in at least one rep, '?' = no "
                 'figure; ranges are min-max over the reps; retr/RTO: TCP '
                 'retransmissions / retransmission timeouts per run, held: '
                 's senders were held (means)')
    return '\n'.join(lines)


def _pct(x):
    return '-' if x is None else '%.1f%%' % (100 * x)


def _num(x, fmt='%.3f'):
    return '-' if x is None else fmt % x


def progress(done, runs, rec, sim_totals):
    """The line printed as an emulator run ends (or fails);
    sim_totals: the simulator's total per packet model."""
    head = '%d/%d %s %s rep %d' % (done, runs, rec['experiment'],
                                   rec['policy'], rec['rep'])
    if rec.get('error'):
        return '%s: FAILED (%s)' % (head, rec['error'])
    d = rec.get('diag') or {}
    missing = max(sum(m.values())
                  for m in rec['missing_by_model'].values())
    at = d.get('drops_at') or {}
    return '%s: emu %s; %s; %s retransmits%s%s' % (
        head, _num(rec['total']), '; '.join(
            'sim[%s] %s: jobs %s, coflows %s' % (
                m, _num(sim_totals[m]), _pct(e['job jct_s']),
                _pct(e['coflow cct_s']))
            for m, e in rec['errors_by_model'].items()),
        _num(d.get('retransmits'), '%d'),
        ', drops %s' % ' '.join('%s %d' % kv for kv in sorted(at.items()))
        if at else '',
        ', %d unfinished' % missing if missing else '')


def simulator_line(name, model, totals, policies):
    """The line printed as the simulator has run every policy on one
    experiment with one packet model (totals: {policy: totals})."""
    return '%s: simulator (packets %s) done (%s)' % (name, model, ', '.join(
        '%s %s' % (p, _num(totals[p].get(METRIC))) for p in policies))
