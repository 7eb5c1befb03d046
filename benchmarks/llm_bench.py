"""LLM workloads on the simulator: speed and scale (issue 44, item 7).

    .venv/bin/python benchmarks/llm_bench.py [--reps 3] [--table-reps 1]
        [--skip-table] [--only gpt|moe]

(a) one iteration of a GPT-3 13B job on 128 hosts with 3D parallelism
    (tensor 4, pipeline 4 with 8 micro-batches, data 8) on a k=8
    fat-tree at 100 Gbit/s, per-flow fair sharing: CPU seconds (target
    5 s);
(b) a 1,024-host fat-tree (k=16) with an MoE job: Mixtral-8x7B, tensor
    2 x data 128 with expert parallelism 8 (256 hosts placed at random
    across the fabric), its dispatch and combine all-to-alls among each
    8 replicas in every expert layer, its gradients by halving-doubling,
    one iteration: wall seconds (target 2 minutes). An all-to-all of
    all 1,024 hosts is not a workload the plan can hold: it needs a
    connection per pair, 1,047,552, and a plan has at most 20,000
    (taskgraph.Plan.conn);
(c) how wall time grows: the GPT-3 job's data parallelism from 1 to 8
    (16 to 128 hosts) and its micro-batches from 1 to 16, and the MoE
    job's data parallelism from 16 to 128 (32 to 256 hosts).

Each measurement is a whole `netsched run` without figures (the
experiment and its plan built, the admission estimate, the simulation,
its event log, the metrics and every output file) in a process of its
own, so that its CPU time and peak memory are its own; (a) and (b) are
repeated ``--reps`` times and printed as the median and the range.
Figures go to results/bench-llm.json as they arrive.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import experiment, run  # noqa: E402

LINK_GBPS = 100
TARGET_GPT_CPU_S = 5.0
TARGET_MOE_WALL_S = 120.0


def gpt_exp(dp=8, micro_batches=8, k=8):
    """GPT-3 13B, tensor 4 x pipeline 4 x data ``dp``, one iteration."""
    return {'name': 'bench-llm-gpt', 'backend': 'sim',
            'topology': 'fattree,%d' % k, 'link_gbps': LINK_GBPS,
            'policy': 'fair', 'seed': 1,
            'jobs': [{'id': 'gpt', 'model': 'gpt3-13b',
                      'workers': 16 * dp, 'iterations': 1,
                      'parallelism': {'tp': 4, 'pp': 4, 'dp': dp,
                                      'micro_batches': micro_batches}}]}


def moe_exp(dp=128, k=16):
    """Mixtral-8x7B, tensor 2 x data ``dp``, expert 8, one iteration,
    placed at random."""
    return {'name': 'bench-llm-moe', 'backend': 'sim',
            'topology': 'fattree,%d' % k, 'link_gbps': LINK_GBPS,
            'policy': 'fair', 'seed': 1,
            'jobs': [{'id': 'moe', 'model': 'mixtral-8x7b',
                      'workers': 2 * dp, 'iterations': 1,
                      'placement': 'random',
                      'collective': 'halving-doubling',
                      'parallelism': {'tp': 2, 'ep': 8, 'dp': dp}}]}


def one(case, arg):
    """One measurement (in its own process): a JSON line on stdout."""
    t0, c0 = time.monotonic(), time.process_time()
    with tempfile.TemporaryDirectory(prefix='bench-llm-') as tmp:
        d = (gpt_exp if case == 'gpt' else moe_exp)(**arg)
        exp = experiment.from_dict(d, os.path.join(tmp, 'bench.yaml'))
        marks = {}

        def say(m):
            if m.endswith('connections'):          # the plan is built
                marks['plan'] = (time.monotonic(), time.process_time())
        out, s = run.execute(exp, os.path.join(tmp, 'run'), say=say)
        wall, cpu = time.monotonic() - t0, time.process_time() - c0
        with open(os.path.join(out, 'run.json')) as f:
            rj = json.load(f)
    plan = marks.get('plan', (t0, c0))
    print(json.dumps({
        'case': case, 'arg': arg, 'workers': exp.jobs[0].workers,
        'flows': s['flows']['count'],
        'events': rj['backend_info']['events'],
        'iteration_s': next(iter(s['jobs'].values()))['jct_s'],
        'wall_s': wall, 'cpu_s': cpu, 'plan_cpu_s': plan[1] - c0,
        'sim_wall_s': rj['wall_s'],
        'maxrss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        / 1024.0}))


def child(case, arg):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), '--one',
                        case, json.dumps(arg)], capture_output=True,
                       text=True)
    if r.returncode:
        sys.exit('%s %s failed:\n%s' % (case, arg, r.stderr[-3000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def spread(xs):
    return '%.1f (%.1f-%.1f)' % (statistics.median(xs), min(xs), max(xs))


def repeated(label, case, arg, reps, res, save):
    rows = []
    for _ in range(reps):
        rows.append(child(case, arg))
        res[label] = rows
        save()
    r = rows[0]
    print('%s: %d flows, %d events, simulated %.3f s; CPU %s s, wall '
          '%s s over %d runs (median, range); peak %.0f MB' % (
              label, r['flows'], r['events'], r['iteration_s'],
              spread([x['cpu_s'] for x in rows]),
              spread([x['wall_s'] for x in rows]), len(rows),
              max(x['maxrss_mb'] for x in rows)), flush=True)
    return rows


def table(title, case, args, reps, res, save):
    print(title)
    print('%-22s %9s %8s %8s %8s %9s %8s' % (
        'case', 'flows', 'events', 'cpu s', 'wall s', 'plan cpu', 'max MB'))
    rows = res.setdefault(title, [])
    for arg in args:
        got = [child(case, arg) for _ in range(reps)]
        rows.append(got)
        save()
        print('%-22s %9d %8d %8.1f %8.1f %9.1f %8.0f' % (
            ', '.join('%s=%s' % kv for kv in sorted(arg.items())),
            got[0]['flows'], got[0]['events'],
            statistics.median(x['cpu_s'] for x in got),
            statistics.median(x['wall_s'] for x in got),
            statistics.median(x['plan_cpu_s'] for x in got),
            max(x['maxrss_mb'] for x in got)), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--table-reps', type=int, default=1)
    ap.add_argument('--skip-table', action='store_true')
    ap.add_argument('--only', choices=('gpt', 'moe'))
    ap.add_argument('--one', nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        return one(a.one[0], json.loads(a.one[1]))
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    path = os.path.join(ROOT, 'results', 'bench-llm.json')
    res = {}

    def save():
        with open(path, 'w') as f:
            json.dump(res, f, indent=1)
    if a.only in (None, 'gpt'):
        rows = repeated('(a) GPT-3 13B, tp 4 x pp 4 x dp 8, 8 micro-batches, '
                        '128 hosts, one iteration', 'gpt', {}, a.reps, res,
                        save)
        cpu = statistics.median(x['cpu_s'] for x in rows)
        print('    target %.0f CPU s: %s' % (
            TARGET_GPT_CPU_S, 'met' if cpu <= TARGET_GPT_CPU_S else
            'missed (%.1fx over)' % (cpu / TARGET_GPT_CPU_S)))
    if a.only in (None, 'moe'):
        rows = repeated('(b) Mixtral-8x7B, tp 2 x dp 128, ep 8, 256 hosts '
                        'of a 1,024-host fat-tree, one iteration', 'moe', {},
                        a.reps, res, save)
        wall = statistics.median(x['wall_s'] for x in rows)
        print('    target %.0f wall s: %s' % (
            TARGET_MOE_WALL_S, 'met' if wall <= TARGET_MOE_WALL_S else
            'missed (%.1fx over)' % (wall / TARGET_MOE_WALL_S)))
    if a.skip_table:
        return
    if a.only in (None, 'gpt'):
        table('(c) GPT-3 13B, 8 micro-batches, by data parallelism (hosts = '
              '16 dp)', 'gpt', [{'dp': dp} for dp in (1, 2, 4, 8)],
              a.table_reps, res, save)
        table('(c) GPT-3 13B, 128 hosts, by micro-batches', 'gpt',
              [{'micro_batches': m} for m in (1, 2, 4, 8, 16)],
              a.table_reps, res, save)
    if a.only in (None, 'moe'):
        table('(c) Mixtral-8x7B on the 1,024-host fat-tree, by data '
              'parallelism (hosts = 2 dp)', 'moe',
              [{'dp': dp} for dp in (16, 32, 64, 128)], a.table_reps, res,
              save)


if __name__ == '__main__':
    main()
