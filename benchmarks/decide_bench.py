"""Policy decision time at scale, in process (no root): what one decision
costs the simulator (and the controller's core, which builds the same
snapshot) with J concurrent DL jobs on a k=16 fat-tree (1024 hosts).

Each job is a 4-worker ring whose iteration coflow has one transfer in
flight per worker and three pending per worker (clairvoyant policies see
them), each a tensor somewhere in the model (urgency); its description
(iterations, bytes per iteration, link load per iteration, and its
profile: compute 0.1-0.6 s, first gradient ready at 60-100% of it, so
CASSINI has a circle per job), three loss reports, and for half of the
jobs a place in a tuning group of 8 configurations with two stages. The
snapshot is built by the controller's demand model (control.demand), as
at a decision; timed are the policy's decide() and the rate allocation
that follows (fluid.allocate, as the simulator's rate step does).
CASSINI memoises its decision on the jobs' profiles, so each of its
reps is a fresh instance: every rep times the whole solve (circles,
contended links, best shifts per link, affinity BFS).

    .venv/bin/python benchmarks/decide_bench.py [--jobs 10,100,1000]
        [--policies ...] [--reps 5]

Figures go to results/bench-decide.json as they arrive.
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched import fluid, policies  # noqa: E402
from netsched import topology as topo  # noqa: E402
from netsched.control.demand import Demand  # noqa: E402

WORKERS = 4
SENDS = 4                  # per worker and iteration: 1 in flight
MB = 1e6
MEMOISED = {'cassini'}     # a fresh instance each rep (decisions memoised)


def demand(g, net, jobs, seed):
    """A Demand holding ``jobs`` ring jobs mid-iteration."""
    rng = random.Random(seed)
    profiles = random.Random(seed + 1)   # apart: the same rings as before
    hosts = topo.hosts(g)
    d = Demand(g, net)
    per_host = {}
    tid = 0
    starts = []
    for j in range(jobs):
        ring = rng.sample(hosts, WORKERS)
        size = rng.choice([25, 100, 500]) * MB
        job = 'j%d' % j
        # its profile (CASSINI's circle): compute, and when its first
        # gradient is ready, varied per job
        compute = profiles.uniform(0.1, 0.6)
        meta = {'iterations': 10, 'bytes_per_iteration': 2 * size,
                'compute_s': compute,
                'first_send_s': compute * profiles.uniform(0.6, 1.0)}
        if j % 2:
            meta.update(group='g%d' % (j // 16), stage_ends=[5, 10])
        for w, h in enumerate(ring):
            reg = per_host.setdefault(h, {'conns': [], 'sends': [],
                                          'jobs': {}})
            reg['jobs'][job] = meta
            dst = ring[(w + 1) % WORKERS]
            cid = len(reg['conns']) + 1
            reg['conns'].append({'id': cid, 'sport': 20000 + tid % 20000,
                                 'dport': 7000,
                                 'dst_ip': g.nodes[dst]['ip']})
            for k in range(SENDS):
                tid += 1
                reg['sends'].append({
                    'id': tid, 'coflow': job + '/0', 'job': job,
                    'bytes': size / WORKERS / SENDS, 'conn': cid,
                    'dst': dst, 'iter': 0, 'urgency': rng.random()})
                if k == 0:
                    starts.append((tid, j))
    for h, reg in per_host.items():
        d.add_host(h, reg['conns'], reg['sends'], reg['jobs'])
    for tid, j in starts:
        d.start(d.sends[tid], 0.001 * j)
    for j in range(jobs):
        for k in range(3):
            # a curve of its own per job (JPAS fits each)
            d.mark('j%d' % j, k, 0.1 * k,
                   1.0 / (0.05 * (1 + j / jobs) * (k + 1) + 0.5)
                   + 0.1 * (j % 7) / 7)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--jobs', default='10,100,1000')
    ap.add_argument('--policies', default='fifo,sebf,varys,aalo,sincronia,'
                    'jpas,beamer,geryon,tensorexpress,cassini')
    ap.add_argument('--reps', type=int, default=5,
                    help='decisions on the same snapshot; the first is '
                    'cold (JPAS fits each job once per period, later '
                    'decisions reuse the fits): `decide max` shows it')
    a = ap.parse_args()
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    out_path = os.path.join(ROOT, 'results', 'bench-decide.json')
    g = topo.fat_tree(16)
    net = fluid.Network(g)
    res = {'topology': 'fattree,16', 'workers': WORKERS, 'runs': []}
    print('%-14s %6s %8s %12s %12s %12s' % (
        'policy', 'jobs', 'flows', 'decide p50', 'decide max', 'allocate'))
    for J in (int(x) for x in a.jobs.split(',')):
        d = demand(g, net, J, seed=J)
        for name in a.policies.split(','):
            pol = policies.make(name)
            snap, _, _ = d.snapshot(1.0, 8, pol.clairvoyant)
            dec, alloc = [], []
            for _ in range(a.reps):
                if name.split(':')[0] in MEMOISED:   # time the solve
                    pol = policies.make(name)
                t0 = time.perf_counter()
                out = pol.decide(snap)
                t1 = time.perf_counter()
                key = policies.flow_priority(snap, out)
                rates = (None if out.flow_rate is None
                         else np.asarray(out.flow_rate, float))
                fluid.allocate(snap.path_links, snap.flow_path, key,
                               snap.link_capacity, rates)
                t2 = time.perf_counter()
                dec.append(1e3 * (t1 - t0))
                alloc.append(1e3 * (t2 - t1))
            row = {'policy': name, 'jobs': J,
                   'flows': len(snap.flow_coflow),
                   'decide_ms_p50': float(np.median(dec)),
                   'decide_ms_max': float(max(dec)),
                   'allocate_ms_p50': float(np.median(alloc))}
            if out.job_shift is not None:
                row['shifted_jobs'] = len(out.job_shift)
            res['runs'].append(row)
            with open(out_path, 'w') as f:
                json.dump(res, f, indent=1)
            print('%-14s %6d %8d %9.2f ms %9.2f ms %9.2f ms' % (
                name, J, row['flows'], row['decide_ms_p50'],
                row['decide_ms_max'], row['allocate_ms_p50']), flush=True)
    print('figures: %s' % out_path)


if __name__ == '__main__':
    main()
