"""Which policies help which kind of LLM traffic: a sweep of
experiments/llm-mix.yaml (or any sweep of collective jobs) read per job
kind and per kind of traffic.

    .venv/bin/python benchmarks/llm_mix_table.py SWEEP_DIR [--baseline fair]
        [--markdown]

Two tables, each policy against the baseline, paired by seed (the same
seed places the jobs the same way under every policy), as the sweep's
report pairs its ratios (pipeline.stats.ratio_ci: the geometric mean of
the per-seed ratios with a 95% Student's t interval on their logs):

- per job kind (the jobs' model): the mean iteration time of its jobs;
- per job kind and kind of traffic (a coflow's name after
  ``<job>/<iteration>/`` up to its first dot: ``tp`` tensor-parallel
  all-reduce steps, ``pp`` pipeline sends, ``dp`` data-parallel
  all-reduce steps, ``ep`` expert all-to-alls): the mean CCT of its
  coflows.

Below 1 the policy is faster; ``*`` marks an interval that excludes 1.
"""
import argparse
import csv
import math
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import stats  # noqa: E402


def job_kinds(run_dir):
    """{job id: its model} from a run folder's experiment.yaml."""
    with open(os.path.join(run_dir, 'experiment.yaml')) as f:
        d = yaml.safe_load(f)
    return {j['id']: str(j['model']) for j in d.get('jobs', [])}


def traffic(run_dir, kinds):
    """{(job kind, traffic kind): mean CCT} of a run's coflows."""
    sums = {}
    with open(os.path.join(run_dir, 'coflows.csv')) as f:
        for row in csv.DictReader(f):
            parts = row['coflow'].split('/', 2)
            if len(parts) < 3 or parts[0] not in kinds or not row['cct_s']:
                continue
            key = (kinds[parts[0]], parts[2].split('.')[0])
            s = sums.setdefault(key, [0.0, 0])
            s[0] += float(row['cct_s'])
            s[1] += 1
    return {k: s / n for k, (s, n) in sums.items() if n}


def read(sweep_dir):
    """Per (policy, seed): {'iter': {job kind: mean iteration s},
    'cct': {(job kind, traffic kind): mean CCT}} of the runs that
    finished."""
    out = {}
    with open(os.path.join(sweep_dir, 'runs.csv')) as f:
        for row in csv.DictReader(f):
            if row['status'] != 'ok':
                continue
            run_dir = os.path.join(sweep_dir, row['out'] or row['run'])
            kinds = job_kinds(run_dir)
            per = {}
            for jid, kind in kinds.items():
                v = row.get('iter_mean_s[%s]' % jid)
                if v:
                    per.setdefault(kind, []).append(float(v))
            out[(row['policy'], int(row['seed']))] = {
                'iter': {k: sum(v) / len(v) for k, v in per.items()},
                'cct': traffic(run_dir, kinds)}
    return out


def ratios(runs, baseline, what):
    """{policy: {key: (ratio, low, high, n)}} of ``what`` ('iter' or
    'cct') against the baseline, paired by seed."""
    policies = []
    for p, _ in runs:
        if p not in policies:
            policies.append(p)
    keys = sorted({k for r in runs.values() for k in r[what]})
    out = {}
    for p in policies:
        if p == baseline:
            continue
        row = {}
        for k in keys:
            pairs = [(r[what].get(k), runs[(baseline, s)][what].get(k))
                     for (q, s), r in runs.items()
                     if q == p and (baseline, s) in runs]
            row[k] = stats.ratio_ci(pairs)
        out[p] = row
    return keys, out


def cell(r):
    ratio, lo, hi, n = r
    if ratio is None:
        return '-'
    if lo is None:
        return '%.2f (1 seed)' % ratio
    mark = '*' if stats.verdict(ratio, lo, hi) != 'no difference' else ''
    return '%.2f%s (%.2f-%.2f)' % (ratio, mark, lo, hi)


def show(title, keys, table, markdown, label):
    heads = ['policy'] + [label(k) for k in keys]
    rows = [[p] + [cell(table[p][k]) for k in keys] for p in table]
    print(title)
    if markdown:
        print('| ' + ' | '.join(heads) + ' |')
        print('|' + '---|' * len(heads))
        for r in rows:
            print('| ' + ' | '.join(r) + ' |')
    else:
        w = [max(len(x) for x in col) for col in zip(heads, *rows)]
        for r in [heads] + rows:
            print('  '.join(x.ljust(n) for x, n in zip(r, w)))
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('sweep')
    ap.add_argument('--baseline', default='fair')
    ap.add_argument('--markdown', action='store_true')
    a = ap.parse_args()
    runs = read(a.sweep)
    if not any(p == a.baseline for p, _ in runs):
        sys.exit('%s: no finished run of the baseline %s'
                 % (a.sweep, a.baseline))
    seeds = sorted({s for _, s in runs})
    print('%s: %d runs, seeds %s; ratio to %s (95%% CI over paired '
          'seeds; * the interval excludes 1; below 1 is faster)\n'
          % (a.sweep, len(runs), ','.join(map(str, seeds)), a.baseline))
    keys, table = ratios(runs, a.baseline, 'iter')
    show('Mean iteration time, per job kind', keys, table, a.markdown,
         str)
    keys, table = ratios(runs, a.baseline, 'cct')
    show('Mean CCT, per job kind and traffic (tp: tensor all-reduce step, '
         'pp: pipeline send, dp: data-parallel all-reduce step, ep: expert '
         'all-to-all)', keys, table, a.markdown, lambda k: '%s %s' % k)
    base = [runs[(a.baseline, s)] for s in seeds if (a.baseline, s) in runs]
    print('%s itself (geometric mean over seeds): %s' % (a.baseline, '; '.join(
        '%s iteration %.3f s' % (k, math.exp(sum(
            math.log(b['iter'][k]) for b in base) / len(base)))
        for k in sorted(base[0]['iter']))))


if __name__ == '__main__':
    main()
