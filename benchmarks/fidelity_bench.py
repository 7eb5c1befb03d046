"""Fidelity benchmark (issue 10; needs root and OVS for the emulator):
every baseline on every experiment of the fidelity suite
(experiments/fidelity/*.yaml), on the simulator once (it is
deterministic) and on the emulator ``--reps`` times, and the error matrix
between the backends:

  - mean per-job |error| of the JCT and mean per-coflow |error| of the
    CCT, emulator against simulator (mean and range over the reps),
    against the targets: jobs <= 10%, coflows <= 15%; once per simulator
    packet model (``--sim-packets``, default both: ``none``, the plain
    fluid model, and ``emulated``, the emulator's packets, MTU x scale,
    serialised on every busy hop: what is left against it is not the
    emulator's packet resolution);
  - per experiment, in how many reps the two backends rank the policies
    the same way (average CCT; no pair in opposite orders beyond a 5%
    tie);
  - per run, the emulator's TCP retransmissions, retransmission timeouts
    and the time senders were held (run.json; absent fields are '-'),
    which say whether a result was shaped by loss;
  - per experiment and policy, the emulator against itself: the same
    errors between its reps (every ordered pair), its own spread;
  - per experiment, the simulator's own ranking ('=' within the tie) and
    how many pairs of policies it puts apart: the pairs on which the
    ranking check can fail (with `--backend sim` this checks the suite).

An emulator run that fails (raises) is recorded with its error and the
benchmark goes on; a rep with a failed or missing run is left out of the
ranking count.

    .venv/bin/python benchmarks/fidelity_bench.py [--reps N]
        [--only d3-ring,ft-mixed] [--policies fair,sebf] [--backend sim]
        [--sim-packets none,emulated] [--out DIR]

Every run's figures are appended to DIR/runs.jsonl as it ends (default
DIR: results/bench-fidelity/<time>), so an interrupted benchmark keeps
what it measured; the matrix goes to DIR/matrix.json and is printed.
This file runs the experiments; the targets and what is computed from the
runs (errors, spreads, rankings, the tables) are netsched.pipeline.fidelity.
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.errors import ConfigError  # noqa: E402
from netsched.pipeline import crosscheck, experiment, overrides  # noqa: E402
from netsched.pipeline import fidelity, metrics  # noqa: E402
from netsched.pipeline.fidelity import (  # noqa: E402
    METRIC, POLICIES, TARGET, TIE)


def main(argv=None):  # noqa: C901 (the options, one branch each)
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--only', help='comma-separated suite experiments')
    ap.add_argument('--policies', default=','.join(POLICIES))
    ap.add_argument('--backend', choices=('both', 'sim'), default='both')
    ap.add_argument('--sim-packets', default='none,emulated',
                    help="the simulator's packet models to compare with "
                    '(comma-separated: none, dc, emulated)')
    ap.add_argument('--reuse', metavar='DIR',
                    help="take the emulator's runs from an earlier "
                    "benchmark's DIR (its <experiment>/emu-<policy>-<rep>) "
                    'instead of running them: the simulator models '
                    'against the same emulator runs')
    ap.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                    help='an experiment key for every run of the matrix, on '
                    'both backends (class_map=share); repeatable')
    ap.add_argument('--out')
    a = ap.parse_args(argv)
    policies = a.policies.split(',')
    try:
        sets = overrides.single(a.set, 'the matrix runs one setting')
    except ConfigError as e:
        sys.exit('fidelity_bench: %s' % e)
    models = a.sim_packets.split(',')
    bad = [m for m in models if m not in experiment.SIM_PACKETS]
    if bad or not models or len(set(models)) != len(models):
        sys.exit('fidelity_bench: --sim-packets takes distinct names '
                 'among %s, got %r' % (', '.join(experiment.SIM_PACKETS),
                                       a.sim_packets))
    crosscheck.check_args(policies, METRIC, TIE)
    # check every experiment under every policy before anything runs
    try:
        exps = fidelity.suite(a.only.split(',') if a.only else None)
        loaded = {(n, 'emu', p): experiment.load(path, backend='emu',
                                                 policy=p, sets=sets)
                  for n, path in exps.items() for p in policies}
        loaded.update({(n, m, p): experiment.load(
            path, backend='sim', policy=p, sim_packets=m, sets=sets)
            for n, path in exps.items() for m in models for p in policies})
    except ConfigError as e:
        sys.exit('fidelity_bench: %s' % e)
    out_dir = a.out or os.path.join(ROOT, 'results', 'bench-fidelity',
                                    time.strftime('%Y%m%d-%H%M%S'))
    os.makedirs(out_dir, exist_ok=True)
    log = open(os.path.join(out_dir, 'runs.jsonl'), 'a')
    t0 = time.monotonic()

    def say(msg):
        print('[%7.1fs] %s' % (time.monotonic() - t0, msg), flush=True)

    def quiet(msg):
        pass

    sims = {m: {} for m in models}        # model -> experiment -> totals
    summaries = {}                        # (experiment, policy) -> {model:}
    records = []
    emu_runs = {}                         # (experiment, policy) -> {rep:}
    for n in exps:
        for m in models:
            sims[m][n] = {}
            for p in policies:
                s = crosscheck.run_one(loaded[n, m, p], os.path.join(
                    out_dir, n, 'sim-%s-%s' % (m, p)), quiet)
                sims[m][n][p] = s['totals']
                summaries.setdefault((n, p), {})[m] = s
                log.write(json.dumps({'experiment': n, 'backend': 'sim',
                                      'sim_packets': m, 'policy': p,
                                      'totals': s['totals']}) + '\n')
                log.flush()
            say(fidelity.simulator_line(n, m, sims[m][n], policies))
    if a.reuse:
        for rep in range(a.reps):
            for n in exps:
                for p in policies:
                    out = os.path.join(a.reuse, n, 'emu-%s-%d' % (p, rep))
                    path = os.path.join(out, 'summary.json')
                    if not os.path.exists(path):
                        continue
                    with open(path) as f:
                        s = json.load(f)
                    rec = fidelity.emu_record(n, p, rep, summaries[n, p], s,
                                              out)
                    records.append(rec)
                    emu_runs.setdefault((n, p), {})[rep] = s
                    log.write(json.dumps(rec) + '\n')
        say('%d emulator runs taken from %s' % (len(records), a.reuse))
    elif a.backend == 'both':
        runs = a.reps * len(exps) * len(policies)
        done = 0
        for rep in range(a.reps):
            for n in exps:
                for p in policies:
                    out = os.path.join(out_dir, n, 'emu-%s-%d' % (p, rep))
                    try:
                        s = crosscheck.run_one(loaded[n, 'emu', p], out,
                                               quiet)
                        rec = fidelity.emu_record(n, p, rep, summaries[n, p],
                                                  s, out)
                        emu_runs.setdefault((n, p), {})[rep] = s
                    except Exception as e:    # the run tore itself down;
                        rec = {'experiment': n, 'backend': 'emu',   # go on
                               'policy': p, 'rep': rep, 'total': None,
                               'error': '%s: %s' % (type(e).__name__, e),
                               'diag': metrics.diagnostics(out)}
                    records.append(rec)
                    log.write(json.dumps(rec) + '\n')
                    log.flush()
                    done += 1
                    say(fidelity.progress(done, runs, rec, {
                        m: sims[m][n][p].get(METRIC) for m in models}))
    ms = {m: fidelity.matrix(records, sims[m], policies, m)
          for m in models}
    selfs = fidelity.self_errors(emu_runs)
    with open(os.path.join(out_dir, 'matrix.json'), 'w') as f:
        json.dump({'reps': a.reps, 'policies': policies, 'targets': TARGET,
                   'tie': TIE, 'matrix': ms, 'sim': sims,
                   'emulator_self': selfs,
                   'verdicts': fidelity.verdict_rows(records, models[0])},
                  f, indent=1)
    for m in models:
        print('\n== against the simulator with sim_packets: %s ==' % m)
        print(fidelity.table(ms[m], policies))
    if any(c['job jct_s'] or c['coflow cct_s']
           for row in selfs.values() for c in row.values()):
        print('\n== the emulator against itself ==')
        print(fidelity.self_table(selfs, policies))
    rows = fidelity.verdict_rows(records, models[0])
    if rows:
        print('\n== the verdict of each emulator run against its error '
              '(sim_packets: %s) ==' % models[0])
        print(fidelity.verdict_table(rows))
    print('results: %s' % out_dir)
    return 0


if __name__ == '__main__':
    sys.exit(main())
