"""Circuit scheduling on the hybrid fabric (issue 13), on both backends:
experiments/hybrid.yaml under each circuit scheduler (none: the packet
core alone; matching; osdl) across a sweep of the OCS's reconfiguration
delay. Per run: average JCT and iteration time, the share of inter-rack
bytes carried on circuits, circuit utilisation, reconfigurations and
time in blackout. The simulator runs once (it is deterministic), the
emulator ``--reps`` times (needs root and OVS; ``--sim-only`` not).

    .venv/bin/python benchmarks/circuit_bench.py [--delays-ms 1,10,50,200]
        [--schedulers none,matching,osdl] [--reps 1] [--sim-only]

Every run's figures are appended to results/bench-circuits.jsonl as it
ends (an interrupted sweep keeps what it measured); the table is printed
at the end.
"""
import argparse
import json
import os
import re
import sys
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import crosscheck, experiment  # noqa: E402

EXP = os.path.join(ROOT, 'experiments', 'hybrid.yaml')


def load(delay_ms, scheduler, backend):
    """The hybrid experiment with this reconfiguration delay."""
    with open(EXP) as f:
        d = yaml.safe_load(f)
    d['topology'] = re.sub(r'reconfig_ms=[0-9.]+', 'reconfig_ms=%g'
                           % delay_ms, d['topology'])
    return experiment.from_dict(d, EXP, backend=backend,
                                circuits=scheduler)


def figures(s):
    c = (s.get('circuits') or {}).get('total') or {}
    t = s['totals']
    return {'avg_jct_s': t['avg_jct_s'],
            'avg_iteration_s': t['avg_iteration_s'],
            'share': c.get('share', 0.0),
            'utilisation': c.get('utilisation'),
            'reconfigurations': c.get('reconfigurations', 0),
            'blackout_s': c.get('blackout_s', 0.0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--delays-ms', default='1,10,50,200')
    ap.add_argument('--schedulers', default='none,matching,osdl')
    ap.add_argument('--reps', type=int, default=1)
    ap.add_argument('--sim-only', action='store_true')
    a = ap.parse_args()
    delays = [float(x) for x in a.delays_ms.split(',')]
    res = os.path.join(ROOT, 'results')
    os.makedirs(res, exist_ok=True)
    runs = os.path.join(res, 'bench-circuits.jsonl')
    backends = [('sim', 1)] + ([] if a.sim_only else [('emu', a.reps)])
    rows = []
    for sched in a.schedulers.split(','):
        # the packet core alone does not depend on the delay
        for delay in (delays[:1] if sched == 'none' else delays):
            for backend, reps in backends:
                for rep in range(reps):
                    out = os.path.join(res, 'bench-circuits', '%s-%g-%s-%d'
                                       % (sched, delay, backend, rep))
                    t0 = time.monotonic()
                    try:
                        s = crosscheck.run_one(load(delay, sched, backend),
                                               out, say=lambda m: None)
                        fig, err = figures(s), None
                    except Exception as e:          # recorded, goes on
                        fig, err = {}, '%s: %s' % (type(e).__name__, e)
                    rec = dict(scheduler=sched, delay_ms=delay,
                               backend=backend, rep=rep, error=err,
                               wall_s=round(time.monotonic() - t0, 1), **fig)
                    with open(runs, 'a') as f:
                        f.write(json.dumps(rec) + '\n')
                    rows.append(rec)
                    print('%-8s %6g ms %s rep %d: %s' % (
                        sched, delay, backend, rep, err or
                        'JCT %.3f s, iteration %.4f s, circuits %.0f%% of '
                        'bytes, utilisation %s, %d reconfigurations'
                        % (fig['avg_jct_s'], fig['avg_iteration_s'],
                           100 * fig['share'],
                           '-' if fig['utilisation'] is None
                           else '%.2f' % fig['utilisation'],
                           fig['reconfigurations'])), flush=True)
    print()
    print('%-9s %8s %-4s %4s %14s %16s %8s %7s %8s' % (
        'scheduler', 'delay', 'back', 'reps', 'avg JCT s', 'iteration s',
        'share', 'util', 'reconf'))
    keys = sorted({(r['scheduler'], r['delay_ms'], r['backend'])
                   for r in rows if not r['error']},
                  key=lambda k: (k[0], k[1], k[2] != 'sim'))
    for k in keys:
        rs = [r for r in rows if (r['scheduler'], r['delay_ms'],
                                  r['backend']) == k and not r['error']]

        def span(f, fmt):
            v = [r[f] for r in rs if r[f] is not None]
            if not v:
                return '-'
            if len(v) == 1 or min(v) == max(v):
                return fmt % v[0]
            return (fmt + '-' + fmt) % (min(v), max(v))
        print('%-9s %6g ms %-4s %4d %14s %16s %8s %7s %8s' % (
            k[0], k[1], k[2], len(rs), span('avg_jct_s', '%.3f'),
            span('avg_iteration_s', '%.4f'), span('share', '%.2f'),
            span('utilisation', '%.2f'), span('reconfigurations', '%d')))


if __name__ == '__main__':
    main()
