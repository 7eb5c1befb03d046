"""ns-3 backend speed: wall time and packet hops per second of wall time
(every packet, data or ACK, counted once per port it leaves) for one
transfer, a permutation on fat-trees k=4 and k=8, at 10 and 100 Gbit/s,
and (``--demo``) the demo experiment under fair sharing.

    .venv/bin/python benchmarks/ns3_bench.py [--reps 3] [--demo]
        [--mb 1000] [--perm-mb 100]

No root needed. Figures go to results/bench-ns3.json; the spread is the
min-max over the repetitions, each in a process of its own (ns-3 keeps
global state).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def one(case, gbps, mb):
    """One measurement, in this process: (wall s, simulated s, hops)."""
    from netsched import topology as topo
    from netsched.ns3 import probe, loader
    loader.load()                      # not timed: cppyy compiles core.h
    size = int(mb * 1e6)
    if case == 'transfer':
        g = topo.dumbbell(1, link_bps=gbps * 1e9)
        ts = [probe.Transfer('hl0', 'hr0', size)]
    else:
        k = int(case.split(',')[1])
        g = topo.fat_tree(k, link_bps=gbps * 1e9)
        hosts = topo.hosts(g)
        n = len(hosts)
        # host i to the host half the fabric away: every flow crosses the
        # core
        ts = [probe.Transfer(h, hosts[(i + n // 2) % n], size)
              for i, h in enumerate(hosts)]
    t0 = time.monotonic()
    done, info = probe.run(g, ts, until_s=3600)
    wall = time.monotonic() - t0
    return {'wall_s': wall, 'sim_s': max(done), 'packet_hops':
            info['packet_hops'], 'hops_per_s': info['packet_hops'] / wall}


def demo():
    from netsched.pipeline import experiment, run
    exp = experiment.load(os.path.join(ROOT, 'experiments', 'demo.yaml'),
                          backend='ns3')
    out = os.path.join(ROOT, 'results', 'bench-ns3-demo')
    t0 = time.monotonic()
    _, s = run.execute(exp, out, say=lambda *a: None)
    wall = time.monotonic() - t0
    with open(os.path.join(out, 'run.json')) as f:
        info = json.load(f)['backend_info']
    return {'wall_s': wall, 'sim_s': max(j['jct_s']
                                         for j in s['jobs'].values()),
            'avg_jct_s': s['avg_jct_s'] if 'avg_jct_s' in s else None,
            'packet_hops': info['packets'].get('packet_hops'),
            'ns3_wall_s': info['ns3']['wall_s']}


def child(args):
    """Run one case in a fresh process; its JSON result."""
    cmd = [sys.executable, os.path.abspath(__file__), '--child'] + args
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    lines = [x for x in r.stdout.splitlines() if x.startswith('{')]
    if r.returncode != 0 or not lines:
        raise SystemExit('ns3_bench: %s failed:\n%s' % (' '.join(args),
                                                        r.stderr[-2000:]))
    return json.loads(lines[-1])


def spread(xs):
    return '%.3g-%.3g' % (min(xs), max(xs)) if len(xs) > 1 \
        else '%.3g' % xs[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--mb', type=float, default=1000,
                    help='the single transfer (MB)')
    ap.add_argument('--perm-mb', type=float, default=100,
                    help="each host's transfer in the permutations (MB)")
    ap.add_argument('--demo', action='store_true',
                    help='also the demo under fair sharing (minutes)')
    ap.add_argument('--child', nargs='*', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        if a.child[0] == 'demo':
            print(json.dumps(demo()))
        else:
            print(json.dumps(one(a.child[0], float(a.child[1]),
                                 float(a.child[2]))))
        return
    cases = [('transfer', g, a.mb) for g in (10, 100)] + \
        [('fattree,%d' % k, g, a.perm_mb) for k in (4, 8) for g in (10, 100)]
    out = {'cases': [], 'machine': os.uname().release}
    print('%-12s %6s %8s %10s %14s %16s' % ('case', 'Gbit/s', 'MB each',
                                            'sim s', 'wall s',
                                            'packet hops/s'))
    for case, gbps, mb in cases:
        runs = [child([case, str(gbps), str(mb)]) for _ in range(a.reps)]
        rec = {'case': case, 'gbps': gbps, 'mb': mb, 'runs': runs}
        out['cases'].append(rec)
        print('%-12s %6g %8g %10.4f %14s %16s' % (
            case, gbps, mb, runs[0]['sim_s'],
            spread([r['wall_s'] for r in runs]),
            spread([r['hops_per_s'] for r in runs])))
    if a.demo:
        runs = [child(['demo']) for _ in range(a.reps)]
        out['demo'] = runs
        print('demo (fair): wall %s s' % spread([r['wall_s'] for r in runs]))
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    with open(os.path.join(ROOT, 'results', 'bench-ns3.json'), 'w') as f:
        json.dump(out, f, indent=1)


if __name__ == '__main__':
    main()
