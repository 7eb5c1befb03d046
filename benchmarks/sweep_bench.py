"""Sweep benchmark (simulator only, no root): what a sweep costs over the
same runs by hand, and what -j buys.

1. Overhead: N runs of one experiment with `netsched run` one after
   another, against `netsched sweep` of the same N runs with -j 1
   (without its report, which is timed apart: it is drawn once per
   sweep, not per run); the sweep's wall time per run over the plain
   run's (target: at most 1.10).
2. Parallelism: a 16-run simulated sweep with -j 2 against -j 1 (target:
   at least 1.7x faster on two cores).

    .venv/bin/python benchmarks/sweep_bench.py [--reps 3] [--runs 4]
        [--experiment experiments/fidelity/d2-ring.yaml]

Each figure is printed with its spread over the reps; all go to
results/bench-sweep.json as they arrive.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETSCHED = [sys.executable, '-m', 'netsched']


def timed(args):
    t0 = time.monotonic()
    subprocess.run(NETSCHED + args, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


def spread(xs):
    return '%.2f (%.2f-%.2f over %d)' % (sum(xs) / len(xs), min(xs),
                                         max(xs), len(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--runs', type=int, default=8,
                    help='runs in the overhead comparison')
    ap.add_argument('--parts', default='overhead,speedup')
    ap.add_argument('--experiment', default=os.path.join(
        ROOT, 'experiments', 'fidelity', 'd2-ring.yaml'))
    a = ap.parse_args()
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    out_path = os.path.join(ROOT, 'results', 'bench-sweep.json')
    res = {'experiment': os.path.relpath(a.experiment, ROOT),
           'cores': os.cpu_count(), 'overhead': [], 'speedup': []}

    def save():
        with open(out_path, 'w') as f:
            json.dump(res, f, indent=1)

    tmp = tempfile.mkdtemp(prefix='netsched-bench-sweep-')
    exp = a.experiment
    try:
        print('%s on the simulator, %d cores, %d reps'
              % (res['experiment'], res['cores'], a.reps))
        for rep in range(a.reps if 'overhead' in a.parts else 0):
            plain = sum(timed(['run', exp, '--backend', 'sim', '--seed',
                               str(s), '--out',
                               os.path.join(tmp, 'plain-%d-%d' % (rep, s))])
                        for s in range(1, a.runs + 1)) / a.runs
            out = os.path.join(tmp, 'sw-%d' % rep)
            swept = timed(['sweep', exp, '--backend', 'sim', '--seeds',
                           '1-%d' % a.runs, '-j', '1', '--no-report',
                           '--out', out]) / a.runs
            page = timed(['report', out])
            res['overhead'].append({'plain_s': plain, 'sweep_s': swept,
                                    'ratio': swept / plain,
                                    'report_s': page})
            save()
            print('  rep %d: netsched run %.2f s per run, in a sweep '
                  '(-j 1) %.2f s: %.3fx; the sweep\'s report %.1f s'
                  % (rep + 1, plain, swept, swept / plain, page))
        for rep in range(a.reps if 'speedup' in a.parts else 0):
            args = ['sweep', exp, '--backend', 'sim', '--policies',
                    'fair,fifo,sebf,varys', '--seeds', '1-4', '--no-report']
            one = timed(args + ['-j', '1', '--out',
                                os.path.join(tmp, 'j1-%d' % rep)])
            two = timed(args + ['-j', '2', '--out',
                                os.path.join(tmp, 'j2-%d' % rep)])
            res['speedup'].append({'j1_s': one, 'j2_s': two,
                                   'speedup': one / two})
            save()
            print('  rep %d: 16 runs -j 1 %.1f s, -j 2 %.1f s: %.2fx'
                  % (rep + 1, one, two, one / two))
        if res['overhead']:
            print('sweep overhead per run (target <= 1.10): %s; its report'
                  ' %s s' % (spread([r['ratio'] for r in res['overhead']]),
                             spread([r['report_s']
                                     for r in res['overhead']])))
        if res['speedup']:
            print('-j 2 speed-up on 16 runs (target >= 1.7): %s'
                  % spread([r['speedup'] for r in res['speedup']]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('figures: %s' % out_path)


if __name__ == '__main__':
    main()
