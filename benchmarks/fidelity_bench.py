"""Fidelity benchmark (issue 10; needs root and OVS for the emulator):
every baseline on every experiment of the fidelity suite
(experiments/fidelity/*.yaml), on the simulator once (it is
deterministic) and on the emulator ``--reps`` times, and the error matrix
between the backends:

  - mean per-job |error| of the JCT and mean per-coflow |error| of the
    CCT, emulator against simulator (mean and range over the reps),
    against the targets: jobs <= 10%, coflows <= 15%; once per simulator
    packet model (``--sim-packets``, default both: ``none``, the plain
    fluid model, and ``emulated``, the emulator's packets, MTU x scale,
    serialised on every busy hop: what is left against it is not the
    emulator's packet resolution);
  - per experiment, in how many reps the two backends rank the policies
    the same way (average CCT; no pair in opposite orders beyond a 5%
    tie);
  - per run, the emulator's TCP retransmissions, retransmission timeouts
    and the time senders were held (run.json; absent fields are '-'),
    which say whether a result was shaped by loss;
  - per experiment and policy, the emulator against itself: the same
    errors between its reps (every ordered pair), its own spread;
  - per experiment, the simulator's own ranking ('=' within the tie) and
    how many pairs of policies it puts apart: the pairs on which the
    ranking check can fail (with `--backend sim` this checks the suite).

An emulator run that fails (raises) is recorded with its error and the
benchmark goes on; a rep with a failed or missing run is left out of the
ranking count.

    .venv/bin/python benchmarks/fidelity_bench.py [--reps N]
        [--only d3-ring,ft-mixed] [--policies fair,sebf] [--backend sim]
        [--sim-packets none,emulated] [--out DIR]

Every run's figures are appended to DIR/runs.jsonl as it ends (default
DIR: results/bench-fidelity/<time>), so an interrupted benchmark keeps
what it measured; the matrix goes to DIR/matrix.json and is printed.
"""
import argparse
import glob
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import crosscheck, experiment, metrics  # noqa: E402

SUITE = os.path.join(ROOT, 'experiments', 'fidelity')
POLICIES = ('fair', 'fifo', 'sebf', 'varys', 'aalo', 'sincronia')
METRIC = 'avg_cct_s'
TIE = 0.05
TARGET = {'job jct_s': 0.10, 'coflow cct_s': 0.15}
KINDS = tuple(TARGET)            # per-job JCT, per-coflow CCT


def suite(only=None):
    paths = sorted(glob.glob(os.path.join(SUITE, '*.yaml')))
    names = {os.path.splitext(os.path.basename(p))[0]: p for p in paths}
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            sys.exit('fidelity_bench: no suite experiment %r (known: %s)'
                     % (unknown[0], ', '.join(names)))
        return {n: names[n] for n in only}
    return names


def diagnostics(out):
    """TCP retransmissions, timeouts and held time of an emulator run
    (run.json's backend_info); a field the run did not record is None."""
    try:
        with open(os.path.join(out, 'run.json')) as f:
            b = json.load(f).get('backend_info') or {}
    except (OSError, ValueError):
        return {}
    by_conn = b.get('tcp_retransmits_by_connection')
    retrans = b.get('tcp_retransmits')
    if retrans is None and by_conn is not None:
        retrans = sum(v or 0 for v in by_conn.values())
    worst = max(by_conn.items(), key=lambda kv: kv[1] or 0) \
        if by_conn else None
    timeouts = b.get('tcp_timeouts_by_host')
    paused = b.get('paused_s')
    if paused is None and b.get('paused_s_by_connection') is not None:
        paused = sum(v or 0 for v in b['paused_s_by_connection'].values())
    rto = b.get('tcp_rto_recovery_s_by_connection')
    lost = {k: sum((b.get(k) or {}).values()) for k in (
        'queue_drops_by_interface', 'ovs_drops_by_port',
        'socket_drops_by_port') if k in b}
    return {'retransmits': retrans,
            'drops': sum(lost.values()) if lost else None,
            'drops_at': {k.split('_')[0]: n for k, n in lost.items() if n},
            'worst_connection': list(worst) if worst else None,
            'timeouts': None if timeouts is None else
            sum(v or 0 for v in timeouts.values()),
            'rto_s': None if rto is None else
            round(sum(v or 0 for v in rto.values()), 3),
            'paused_s': paused}


def spread(xs):
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
    simulator's own ranking. Records with an 'error' are failed runs."""
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
    """A backend against itself (the emulator here; the sensitivity bench
    uses it for the simulator under noise): per experiment and policy,
    the errors (jobs, coflows) between every ordered pair of its reps
    (crosscheck.errors, one rep's summary against another's), as
    spreads; runs: {(experiment, policy): {rep: summary}}. Where the
    emulator's is as large as its error against the simulator, its own
    spread is the gap, not a difference of the models."""
    out = {}
    for (name, p), reps in sorted(runs.items()):
        pairs = [crosscheck.errors(reps[i], reps[j])
                 for i in sorted(reps) for j in sorted(reps) if i != j]
        out.setdefault(name, {})[p] = {k: spread([e[k] for e in pairs])
                                       for k in KINDS}
    return out


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
    def mean(s, fmt):
        return '-' if not s else fmt % s['mean']
    lines = ['%-12s %-10s %8s %8s %22s %22s %9s %6s %6s' % (
        'experiment', 'policy', 'sim', 'emu', 'jobs |err| <=10%',
        'coflows |err| <=15%', 'retr/RTO', 'RTO s', 'held')]
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


def emu_record(name, policy, rep, sims, s, out):
    """One emulator run's record against the simulator's summaries (one
    per packet model): total, per-job/per-coflow errors and items one
    backend did not finish, per model; diagnostics."""
    errs, missing = {}, {}
    for m, sim in sims.items():
        st = metrics.error_stats(metrics.compare(sim, s))
        errs[m] = crosscheck.errors(sim, s)
        missing[m] = {k: st.get(k, {}).get('missing', 0)
                      for k in ('job jct_s', 'coflow cct_s')}
    return {'experiment': name, 'backend': 'emu', 'policy': policy,
            'rep': rep, 'total': s['totals'].get(METRIC),
            'errors_by_model': errs, 'missing_by_model': missing,
            'diag': diagnostics(out)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--only', help='comma-separated suite experiments')
    ap.add_argument('--policies', default=','.join(POLICIES))
    ap.add_argument('--backend', choices=('both', 'sim'), default='both')
    ap.add_argument('--sim-packets', default='none,emulated',
                    help="the simulator's packet models to compare with "
                    '(comma-separated: none, dc, emulated)')
    ap.add_argument('--reuse', metavar='DIR',
                    help="take the emulator's runs from an earlier "
                    "benchmark's DIR (its <experiment>/emu-<policy>-<rep>) "
                    'instead of running them: the simulator models '
                    'against the same emulator runs')
    ap.add_argument('--out')
    a = ap.parse_args(argv)
    policies = a.policies.split(',')
    models = a.sim_packets.split(',')
    bad = [m for m in models if m not in experiment.SIM_PACKETS]
    if bad or not models or len(set(models)) != len(models):
        sys.exit('fidelity_bench: --sim-packets takes distinct names '
                 'among %s, got %r' % (', '.join(experiment.SIM_PACKETS),
                                       a.sim_packets))
    crosscheck.check_args(policies, METRIC, TIE)
    exps = suite(a.only.split(',') if a.only else None)
    out_dir = a.out or os.path.join(ROOT, 'results', 'bench-fidelity',
                                    time.strftime('%Y%m%d-%H%M%S'))
    os.makedirs(out_dir, exist_ok=True)
    log = open(os.path.join(out_dir, 'runs.jsonl'), 'a')
    t0 = time.monotonic()

    def say(msg):
        print('[%7.1fs] %s' % (time.monotonic() - t0, msg), flush=True)

    def quiet(msg):
        pass

    # check every experiment under every policy before anything runs
    loaded = {(n, 'emu', p): experiment.load(path, backend='emu', policy=p)
              for n, path in exps.items() for p in policies}
    loaded.update({(n, m, p): experiment.load(path, backend='sim', policy=p,
                                              sim_packets=m)
                   for n, path in exps.items() for m in models
                   for p in policies})
    sims = {m: {} for m in models}        # model -> experiment -> totals
    summaries = {}                        # (experiment, policy) -> {model:}
    records = []
    emu_runs = {}                         # (experiment, policy) -> {rep:}
    for n in exps:
        for m in models:
            sims[m][n] = {}
            for p in policies:
                s = crosscheck.run_one(loaded[n, m, p], os.path.join(
                    out_dir, n, 'sim-%s-%s' % (m, p)), quiet)
                sims[m][n][p] = s['totals']
                summaries.setdefault((n, p), {})[m] = s
                log.write(json.dumps({'experiment': n, 'backend': 'sim',
                                      'sim_packets': m, 'policy': p,
                                      'totals': s['totals']}) + '\n')
                log.flush()
            say('%s: simulator (packets %s) done (%s)' % (n, m, ', '.join(
                '%s %s' % (p, _num(sims[m][n][p].get(METRIC)))
                for p in policies)))
    if a.reuse:
        for rep in range(a.reps):
            for n in exps:
                for p in policies:
                    out = os.path.join(a.reuse, n, 'emu-%s-%d' % (p, rep))
                    path = os.path.join(out, 'summary.json')
                    if not os.path.exists(path):
                        continue
                    with open(path) as f:
                        s = json.load(f)
                    rec = emu_record(n, p, rep, summaries[n, p], s, out)
                    records.append(rec)
                    emu_runs.setdefault((n, p), {})[rep] = s
                    log.write(json.dumps(rec) + '\n')
        say('%d emulator runs taken from %s' % (len(records), a.reuse))
    elif a.backend == 'both':
        runs = a.reps * len(exps) * len(policies)
        done = 0
        for rep in range(a.reps):
            for n in exps:
                for p in policies:
                    out = os.path.join(out_dir, n, 'emu-%s-%d' % (p, rep))
                    try:
                        s = crosscheck.run_one(loaded[n, 'emu', p], out,
                                               quiet)
                        rec = emu_record(n, p, rep, summaries[n, p], s, out)
                        emu_runs.setdefault((n, p), {})[rep] = s
                    except Exception as e:    # the run tore itself down;
                        rec = {'experiment': n, 'backend': 'emu',   # go on
                               'policy': p, 'rep': rep, 'total': None,
                               'error': '%s: %s' % (type(e).__name__, e),
                               'diag': diagnostics(out)}
                    records.append(rec)
                    log.write(json.dumps(rec) + '\n')
                    log.flush()
                    done += 1
                    say(progress(done, runs, rec, {
                        m: sims[m][n][p].get(METRIC) for m in models}))
    ms = {m: matrix(records, sims[m], policies, m) for m in models}
    selfs = self_errors(emu_runs)
    with open(os.path.join(out_dir, 'matrix.json'), 'w') as f:
        json.dump({'reps': a.reps, 'policies': policies, 'targets': TARGET,
                   'tie': TIE, 'matrix': ms, 'sim': sims,
                   'emulator_self': selfs}, f, indent=1)
    for m in models:
        print('\n== against the simulator with sim_packets: %s ==' % m)
        print(table(ms[m], policies))
    if any(c['job jct_s'] or c['coflow cct_s']
           for row in selfs.values() for c in row.values()):
        print('\n== the emulator against itself ==')
        print(self_table(selfs, policies))
    print('results: %s' % out_dir)
    return 0


if __name__ == '__main__':
    sys.exit(main())
