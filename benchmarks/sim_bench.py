"""Simulator benchmark: the Facebook coflow trace under every baseline
(average and p95 CCT, wall time), and a k=16 fat-tree (1024 hosts) with a
synthetic DL workload of more than 10,000 flows (wall time).

    .venv/bin/python benchmarks/sim_bench.py [--trace PATH] [--limit N]
        [--policies fair,varys,...] [--skip-fattree]

Figures go to results/bench-sim.json as they arrive.
"""
import argparse
import hashlib
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import experiment, run  # noqa: E402

FB = os.path.join(ROOT, '..', 'shared', 'data', 'FB2010-1Hr-150-0.txt')


def _sha256(path):
    """The event log's digest: runs of one model write the same log."""
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--trace', default=FB)
    ap.add_argument('--limit', type=int)
    ap.add_argument('--policies', default='fair,fifo,sebf,varys,aalo,'
                                          'sincronia')
    ap.add_argument('--skip-fattree', action='store_true')
    ap.add_argument('--reps', type=int, default=1,
                    help='runs per policy (wall time: the spread)')
    a = ap.parse_args()
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    out_path = os.path.join(ROOT, 'results', 'bench-sim.json')
    res = {'trace': {}, 'fattree': None}

    def save():
        with open(out_path, 'w') as f:
            json.dump(res, f, indent=1)

    base = os.path.join(ROOT, 'experiments', 'fb-trace.yaml')
    print('Facebook trace, 150 x 1 Gbit/s (2^30) ports, big switch%s'
          % (', first %d coflows' % a.limit if a.limit else ''))
    print('%-10s %9s %9s %9s %8s %8s %8s  %s' % (
        'policy', 'avg CCT', 'p95 CCT', 'done', 'wall s', 'sim s', 'cpu s',
        'log sha256'))
    for pol in a.policies.split(','):
        exp = experiment.load(base, policy=pol, trace=a.trace)
        if a.limit:
            exp = experiment.from_dict(
                dict(exp.raw, trace={'path': exp.trace.path,
                                     'limit': a.limit}), base, policy=pol)
        runs = []
        for rep in range(a.reps):
            out_dir = os.path.join(ROOT, 'results', 'bench-sim-fb-' + pol)
            c0, t0 = time.process_time(), time.monotonic()
            out, s = run.execute(exp, out_dir, say=lambda m: None,
                                 plots=False)
            wall, cpu = time.monotonic() - t0, time.process_time() - c0
            with open(os.path.join(out, 'run.json')) as f:
                sim_wall = json.load(f)['wall_s']
            runs.append({'wall_s': wall, 'sim_wall_s': sim_wall,
                         'cpu_s': cpu,
                         'log_sha256': _sha256(os.path.join(
                             out, 'events.jsonl'))})
            t = s['totals']
            res['trace'][pol] = {'avg_cct_s': t['avg_cct_s'],
                                 'p95_cct_s': t['p95_cct_s'],
                                 'coflows_done': t['coflows_done'],
                                 'wall_s': min(r['wall_s'] for r in runs),
                                 'runs': runs}
            save()
            print('%-10s %8.2fs %8.2fs %9d %8.1f %8.1f %8.1f  %s' % (
                pol, t['avg_cct_s'], t['p95_cct_s'], t['coflows_done'], wall,
                sim_wall, cpu, runs[-1]['log_sha256'][:12]), flush=True)
    if 'fair' in res['trace']:
        for pol, r in res['trace'].items():
            print('  %-10s average CCT %.2fx better than fair'
                  % (pol, res['trace']['fair']['avg_cct_s'] / r['avg_cct_s']))
    if a.skip_fattree:
        return
    jobs = [dict(id='r%d' % i, model='resnet50', pattern='ring', workers=8,
                 iterations=2, placement='random') for i in range(64)]
    exp = experiment.from_dict({'name': 'k16', 'backend': 'sim',
                                'topology': 'fattree,16', 'link_gbps': 10,
                                'policy': 'fair', 'jobs': jobs}, 'k16.yaml')
    t0 = time.monotonic()
    out, s = run.execute(exp, os.path.join(ROOT, 'results',
                                           'bench-sim-k16'),
                         say=lambda m: None, plots=False)
    wall = time.monotonic() - t0
    res['fattree'] = {'hosts': 1024, 'jobs': len(jobs),
                      'flows': s['flows']['count'], 'wall_s': wall}
    save()
    print('k=16 fat-tree, 1024 hosts, %d ring jobs x 8 workers: %d flows in '
          '%.1f s' % (len(jobs), s['flows']['count'], wall))


if __name__ == '__main__':
    main()
