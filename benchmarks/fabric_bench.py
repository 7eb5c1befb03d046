"""Emulator capacity benchmark (needs root and OVS; `make bench`).

Prints, and writes to results/bench-fabric.json as each figure arrives:
  - k=4 fat-tree start-up and teardown time
  - 8 and 16 concurrent greedy cross-pod TCP flows on a k=4 fat-tree at
    10, 20, 50 and 100 Mbit/s links: each flow's goodput as a fraction of
    its max-min fair share (over its actual ECMP path, in TCP goodput
    terms), and the fabric's aggregate goodput
  - the highest link rate at which every flow stays >= 90% of its share
  - the largest fat-tree k that starts here, with its start-up time
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from netsched.emulator import measure  # noqa: E402
from netsched import topology as topo  # noqa: E402
from netsched.control.spec import ControllerSpec  # noqa: E402
from netsched.emulator.fabric import Fabric  # noqa: E402
from netsched.errors import NetschedError  # noqa: E402


class Results:
    def __init__(self, path):
        self.path = path
        self.data = {'started': time.strftime('%Y-%m-%d %H:%M:%S')}
        os.makedirs(os.path.dirname(path), exist_ok=True)

    def put(self, key, value):
        self.data[key] = value
        with open(self.path, 'w') as f:
            json.dump(self.data, f, indent=1)


def say(msg):
    print(msg, flush=True)


def startup(res, reps):
    ups, downs = [], []
    for i in range(reps):
        fab = Fabric(ControllerSpec.for_link(topo.fat_tree(4), 20))
        with fab:
            pass
        ups.append(fab.timings['startup_s'])
        downs.append(fab.timings['teardown_s'])
        say('  k=4 start-up %.1f s, teardown %.1f s' % (ups[-1], downs[-1]))
    res.put('k4_startup_s', ups)
    res.put('k4_teardown_s', downs)
    return ups, downs


def flow_set(g, n):
    hs = topo.hosts(g)
    half = len(hs) // 2
    pairs = [(hs[i], hs[(i + half) % len(hs)]) for i in range(n)]
    return pairs


def throughput(res, rates, counts, seconds, skip):
    table = {}
    for rate in rates:
        g = topo.fat_tree(4)
        with Fabric(ControllerSpec.for_link(g, rate)) as fab:
            eff = measure.goodput_efficiency(fab.mtu)
            for n in counts:
                flows = [measure.Flow(s, d, 50000 + i, 5500 + i, seconds)
                         for i, (s, d) in enumerate(flow_set(g, n))]
                measure.run_iperf(fab, flows)
                shares = measure.fair_shares(fab, flows)
                fr = [f.mean_bps(skip) / (s * eff)
                      for f, s in zip(flows, shares)]
                agg = sum(f.mean_bps(skip) for f in flows)
                row = {'fractions': [round(x, 3) for x in fr],
                       'min': round(min(fr), 3),
                       'mean': round(sum(fr) / len(fr), 3),
                       'aggregate_mbps': round(agg / 1e6, 1),
                       'fair_share_mbps': [round(s / 1e6, 2) for s in shares],
                       'retransmits': [f.retransmits for f in flows]}
                table['%g/%d' % (rate, n)] = row
                res.put('throughput', table)
                say('  %5g Mbit/s links, %2d flows: fraction of fair share '
                    'min %.2f mean %.2f, aggregate %.1f Mbit/s'
                    % (rate, n, row['min'], row['mean'], row['aggregate_mbps']))
    best = {}
    for n in counts:
        ok = [r for r in rates if table['%g/%d' % (r, n)]['min'] >= 0.9]
        best[n] = max(ok) if ok else None
    res.put('highest_rate_all_flows_90pct', best)
    return table, best


def largest_k(res, ks, budget_s):
    got = {}
    for k in ks:
        fab = Fabric(ControllerSpec.for_link(topo.fat_tree(k), 10),
                     ready_timeout_s=budget_s)
        t0 = time.monotonic()
        try:
            with fab:
                pass
        except NetschedError as e:
            say('  k=%d did not start: %s' % (k, e))
            break
        got[k] = {'startup_s': round(fab.timings['startup_s'], 1),
                  'teardown_s': round(fab.timings['teardown_s'], 1),
                  'hosts': k ** 3 // 4, 'switches': 5 * k * k // 4}
        res.put('fat_tree_sizes', got)
        say('  k=%d (%d hosts, %d switches): start-up %.1f s, teardown %.1f s'
            % (k, k ** 3 // 4, 5 * k * k // 4, fab.timings['startup_s'],
               fab.timings['teardown_s']))
        if time.monotonic() - t0 > budget_s:
            break
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default='results/bench-fabric.json')
    ap.add_argument('--seconds', type=int, default=10)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--max-k', type=int, default=10)
    ap.add_argument('--k-budget-s', type=float, default=300)
    a = ap.parse_args()
    res = Results(a.out)
    say('fat-tree k=4 start-up and teardown')
    ups, downs = startup(res, a.reps)
    say('greedy cross-pod flows on a k=4 fat-tree (%d s each)' % a.seconds)
    table, best = throughput(res, [10, 20, 50, 100], [8, 16], a.seconds, 3)
    say('largest fat-tree that starts')
    sizes = largest_k(res, range(6, a.max_k + 1, 2), a.k_budget_s)
    say('\nsummary')
    say('  k=4 start-up %.1f s (mean of %d), teardown %.1f s'
        % (sum(ups) / len(ups), len(ups), sum(downs) / len(downs)))
    for n, r in best.items():
        say('  %d flows: every flow >= 90%% of fair share up to %s'
            % (n, '%g Mbit/s' % r if r is not None else
               'none of the rates tested'))
    if sizes:
        k = max(sizes)
        say('  largest fat-tree started: k=%d in %.1f s' % (k, sizes[k]['startup_s']))
    say('results: %s' % a.out)


if __name__ == '__main__':
    main()
