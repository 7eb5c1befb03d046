"""Emulator workload benchmark (root): per pattern, measured / analytical
communication time; the agents' CPU overhead; and how many concurrent jobs
this machine carries before iteration times drift more than 10% from the
analytical model.

    .venv/bin/python benchmarks/workload_bench.py [--max-jobs 32]
        [--only-concurrency]

Figures go to results/bench-workload.json as they arrive.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import experiment, run  # noqa: E402
from netsched.workload import models, taskgraph as workload  # noqa: E402

LINK = 10e9
SCALE = 500


def emu(name, jobs, topology='fattree,4'):
    exp = experiment.from_dict({
        'name': name, 'backend': 'emu', 'topology': topology,
        'link_gbps': 10, 'scale': SCALE, 'policy': 'fair', 'jobs': jobs,
        'timeout_s': 300}, name + '.yaml')
    out, s = run.execute(exp, os.path.join(ROOT, 'results', 'bench-wl-' +
                                           name), say=lambda m: None)
    with open(os.path.join(out, 'run.json')) as f:
        info = json.load(f)['backend_info']
    return s, info


def edge_jobs(k):
    """2-worker jobs that fit, each under one edge switch of fattree,k."""
    return k * (k // 2) * ((k // 2) // 2)


def placement(k, i):
    per_edge = (k // 2) // 2
    edge, slot = divmod(i, per_edge)
    pod, e = divmod(edge, k // 2)
    return ['h%d_%d_%d' % (pod, e, 2 * slot), 'h%d_%d_%d' % (pod, e,
                                                            2 * slot + 1)]


def comm(s, job):
    x = [c['cct_s'] for k, c in s['coflows'].items()
         if k.startswith(job + '/') and c['cct_s'] is not None]
    return sum(x) / len(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--max-jobs', type=int, default=32)
    ap.add_argument('--only-concurrency', action='store_true')
    a = ap.parse_args()
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    path = os.path.join(ROOT, 'results', 'bench-workload.json')
    res = {'patterns': {}, 'concurrency': []}

    def save():
        with open(path, 'w') as f:
            json.dump(res, f, indent=1)
    m = models.get('resnet50')
    cases = {
        'ring (4 workers)': ([dict(
            id='r', model='resnet50', pattern='ring', workers=4,
            iterations=8, compute_scale=0,
            placement=['h0_0_0', 'h0_0_1', 'h0_1_0', 'h0_1_1'])],
            workload.analytical_comm_s(m, 'ring', 4, LINK)),
        'ps (3 workers, 1 shard)': ([dict(
            id='r', model='resnet50', pattern='ps', workers=3, ps_shards=1,
            iterations=8, compute_scale=0,
            placement=['h1_0_0', 'h2_0_0', 'h3_0_0', 'h0_0_0'])],
            workload.analytical_comm_s(m, 'ps', 3, LINK)),
    }
    print('resnet50 gradients, 10 Gbit/s links, scale %d (20 Mbit/s '
          'emulated)' % SCALE)
    for name, (jobs, want) in cases.items():
        if a.only_concurrency:
            break
        s, info = emu(name.split()[0], jobs)
        got = comm(s, 'r')
        res['patterns'][name] = {'measured_s': got, 'analytical_s': want,
                                 'ratio': got / want,
                                 'agent_cpu_s': info.get('agent_cpu_s'),
                                 'run_s': info.get('run_s')}
        save()
        cpu = info.get('agent_cpu_s')
        print('%-26s measured %.3f s, analytical %.3f s, ratio %.2f; '
              'agents used %s CPU-s in %.1f s' % (
                  name, got, want, got / want,
                  '-' if cpu is None else '%.2f' % cpu, info['run_s']),
              flush=True)
    # concurrency: 2-worker rings under one edge switch each (no shared
    # links), 1, 2, 4, ... at once, on the smallest fat-tree that holds
    # them (k=4: 8 jobs, k=6: 18, k=8: 32), until one drifts > 10%
    want = workload.analytical_comm_s(m, 'ring', 2, LINK)

    def concurrent(n):
        k = next(k for k in (4, 6, 8, 10) if edge_jobs(k) >= n)
        jobs = [dict(id='j%d' % i, model='resnet50', pattern='ring',
                     workers=2, iterations=6, compute_scale=0,
                     placement=placement(k, i)) for i in range(n)]
        s, info = emu('conc%d' % n, jobs, 'fattree,%d' % k)
        worst = max(comm(s, 'j%d' % i) for i in range(n)) / want
        res['concurrency'].append({'jobs': n, 'workers': 2 * n, 'k': k,
                                   'worst_ratio': worst,
                                   'agent_cpu_s': info.get('agent_cpu_s')})
        save()
        print('%2d concurrent jobs (%2d workers, k=%d): worst '
              'measured/analytical %.2f%s' % (
                  n, 2 * n, k, worst,
                  '  > 10% drift' if worst > 1.1 else ''), flush=True)
        return worst <= 1.1
    good, n = 0, 1
    while n <= min(a.max_jobs, edge_jobs(10)):
        if not concurrent(n):
            # one step of bisection between the last good count and n
            mid = (good + n) // 2
            if good < mid < n and concurrent(mid):
                good = mid
            break
        good, n = n, 2 * n
    print('carries %s concurrent jobs (%d workers) within 10%% of the model'
          % (good or 'no', 2 * good))


if __name__ == '__main__':
    main()
