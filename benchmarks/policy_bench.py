"""The seed policies' effects (issues 11 and 12), on both backends: each policy's
experiment in experiments/ run under the policy and its baselines, the
headline metric of each as a ratio (baseline / policy: > 1 means the
policy is better), with the paper's figure beside it. The simulator runs
once (it is deterministic), the emulator ``--reps`` times (spread shown
as min-max). Needs root and OVS for the emulator (``--sim-only`` not).

    .venv/bin/python benchmarks/policy_bench.py [--reps 3] [--sim-only]
        [--only jpas,beamer]

Every run's summary totals are appended to results/bench-policies.jsonl
as the run ends, so an interrupted benchmark keeps what it measured;
results/bench-policies.json has the table.
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import crosscheck, experiment  # noqa: E402

# case: (experiment, baselines, metrics (lower is better), the paper's
# figure for the effect[, the policy if the case is not named after it])
PROPHET_PAPER = ('Prophet (ICPP 2021): up to 40% faster training than '
                 'priority-based communication scheduling (ByteScheduler)')
CASSINI_PAPER = ('CASSINI (NSDI 2024): up to 1.6x better average and 2.5x '
                 'better tail JCT than Themis/Pollux')
CASES = {
    'jpas': ('jpas.yaml', ('fair', 'fifo'),
             ('avg_jct_s', 'avg_early_iteration_s'),
             'JPAS (JNCA 2020): early-stage jobs first; the abstract gives '
             'no figure'),
    'geryon': ('geryon.yaml', ('fair', 'geryon:classes=1'),
               ('avg_iteration_s', 'front_tensor_s'),
               'Geryon (INFOCOM 2020): flow scheduling alone up to 1.2x over '
               'parameter partition + slicing'),
    'tensorexpress': ('tensorexpress.yaml', ('fair', 'p3'),
                      ('avg_iteration_s', 'front_tensor_s'),
                      'TensorExpress (CLOUD 2020): tensor latency up to '
                      '2.5x, blocking time up to 2.44x'),
    'beamer': ('beamer.yaml', ('sincronia', 'fifo', 'fair'),
               ('avg_sct_s',),
               'Beamer (TNSM 2022): beats Sincronia, FIFO-LM and fair '
               'sharing on average SCT; the abstract gives no figure'),
    # fair: FIFO (ready order); p3: strict per-tensor priority; every
    # policy sends the experiments' same 4 MB partitions
    'prophet': ('prophet.yaml', ('fair', 'p3'),
                ('avg_iteration_s', 'front_tensor_s'), PROPHET_PAPER),
    'prophet-compete': ('prophet-compete.yaml', ('fair', 'p3'),
                        ('avg_iteration_s', 'front_tensor_s'),
                        PROPHET_PAPER, 'prophet'),
    # fair: no shifts (and, on the fat-tree, each job's first candidate);
    # shifts=none: CASSINI's placement without shifts; shifts=random:
    # CASSINI's placement and gate, random shifts
    'cassini': ('cassini-pair.yaml', ('fair', 'cassini:shifts=random'),
                ('avg_iteration_s', 'avg_jct_s'), CASSINI_PAPER),
    'cassini-twins': ('cassini-twins.yaml', ('fair', 'cassini:shifts=random'),
                      ('avg_iteration_s', 'avg_jct_s'), CASSINI_PAPER,
                      'cassini'),
    'cassini-fattree': ('cassini-fattree.yaml',
                        ('fair', 'cassini:shifts=none',
                         'cassini:shifts=random'),
                        ('avg_jct_s', 'avg_iteration_s'), CASSINI_PAPER,
                        'cassini'),
}


def run(path, pol, backend, out):
    exp = experiment.load(path, backend=backend, policy=pol)
    return crosscheck.run_one(exp, out, say=lambda m: None)['totals']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--sim-only', action='store_true')
    ap.add_argument('--only', help='comma-separated policies')
    a = ap.parse_args()
    res_dir = os.path.join(ROOT, 'results')
    os.makedirs(res_dir, exist_ok=True)
    runs_path = os.path.join(res_dir, 'bench-policies.jsonl')
    table = {}
    cases = [c for c in CASES if not a.only or c in a.only.split(',')]
    backends = [('sim', 1)] + ([] if a.sim_only else [('emu', a.reps)])
    for name in cases:
        fname, base, mets, paper = CASES[name][:4]
        policy = CASES[name][4] if len(CASES[name]) > 4 else name
        path = os.path.join(ROOT, 'experiments', fname)
        for backend, reps in backends:
            vals = {}
            for rep in range(reps):
                for pol in (policy,) + base:
                    out = os.path.join(res_dir, 'bench-policies', '%s-%s-%s-%d'
                                       % (name, backend, pol.replace(':', '_'),
                                          rep))
                    t0 = time.monotonic()
                    try:
                        tot = run(path, pol, backend, out)
                        err = None
                    except Exception as e:          # recorded, goes on
                        tot, err = {}, '%s: %s' % (type(e).__name__, e)
                    rec = {'case': name, 'backend': backend, 'policy': pol,
                           'rep': rep, 'wall_s': time.monotonic() - t0,
                           'totals': tot, 'error': err}
                    with open(runs_path, 'a') as f:
                        f.write(json.dumps(rec) + '\n')
                    print('%s %s %s rep %d: %s' % (
                        name, backend, pol, rep, err or ', '.join(
                            '%s %.4f' % (m, tot[m]) for m in mets
                            if tot.get(m) is not None)), flush=True)
                    for m in mets:
                        if tot.get(m) is not None:
                            vals.setdefault((pol, m), []).append(tot[m])
            for b in base:
                for m in mets:
                    mine, theirs = vals.get((policy, m)), vals.get((b, m))
                    if not mine or not theirs:
                        continue
                    ratios = [t / p for t, p in zip(theirs, mine)]
                    table.setdefault(name, []).append({
                        'backend': backend, 'baseline': b, 'metric': m,
                        'reps': len(ratios),
                        'ratio_mean': sum(ratios) / len(ratios),
                        'ratio_min': min(ratios), 'ratio_max': max(ratios),
                        'paper': paper})
            with open(os.path.join(res_dir, 'bench-policies.json'), 'w') as f:
                json.dump(table, f, indent=1)
    print()
    print('%-16s %-4s %-18s %-22s %4s %16s' % (
        'policy', 'back', 'baseline', 'metric', 'reps',
        'baseline/policy'))
    for name, rows in table.items():
        for r in rows:
            spread = ('' if r['reps'] == 1 else ' (%.2f-%.2f)'
                      % (r['ratio_min'], r['ratio_max']))
            print('%-16s %-4s %-18s %-22s %4d %8.2fx%s' % (
                name, r['backend'], r['baseline'], r['metric'], r['reps'],
                r['ratio_mean'], spread))
        print('   paper: %s' % CASES[name][3])


if __name__ == '__main__':
    main()
