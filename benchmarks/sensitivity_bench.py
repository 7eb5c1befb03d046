"""Sensitivity benchmark (issue 10; simulator only, no root needed): how
far the simulator moves when its timing is disturbed by about as much as
the emulator's is.

The emulator's timing differs from the simulator's by a fraction of a
ms to a few ms everywhere: an agent starts a transfer 0.25-0.9 ms
(median; p90 0.6-1.3 ms) after what it waited for arrived
(docs/fidelity.md), a new coflow
waits 3-7 ms for its class, rules reach the switches a few ms after a
decision. Per experiment and policy this runs the simulator ``--reps``
times with each job's arrival delayed by a uniform draw in [0,
``--jitter-ms``] and each send started a uniform draw in [0,
``--send-jitter-ms``] after its connection takes it (the simulator's
measuring knob ``simulator: {send_jitter_ms, send_jitter_seed}``; rep r
draws with seed r),
and prints the fidelity bench's errors (mean per-job |JCT error|, mean
per-coflow |CCT error|) twice:

  - against the simulator's run of the file as it is: the bias such
    delays put into the fluid model's results, and their spread;
  - one rep against another (every ordered pair): the spread alone, the
    figure to set beside the fidelity bench's "emulator against
    itself". Where the simulator's reps agree closely and the
    emulator's do not, the emulator's spread does not come from such
    timing noise but from something the fluid model lacks.

Experiments without jobs (a coflow trace) are skipped.

    .venv/bin/python benchmarks/sensitivity_bench.py [--reps 5]
        [--jitter-ms 1] [--send-jitter-ms 1] [--only ft-mixed,d3-ring]
        [--policies fair,sebf] [--out DIR]

Each run's errors are appended to DIR/runs.jsonl as it ends (default
DIR: results/bench-sensitivity/<time>); the tables are printed and saved
to DIR/table.json.
"""
import argparse
import copy
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import crosscheck, experiment  # noqa: E402
from netsched import policies as pol  # noqa: E402
from netsched.errors import ConfigError  # noqa: E402
from netsched.pipeline import fidelity  # noqa: E402
from netsched.pipeline.fidelity import jittered  # noqa: E402


def send_jittered(d, ms, seed):
    """A copy of an experiment dict with the simulator's send jitter set
    (the measuring knob ``simulator.send_jitter_ms``, seeded); ``d``
    itself for 0."""
    if not ms > 0:
        return d
    d = copy.deepcopy(d)
    d['simulator'] = dict(d.get('simulator') or {}, send_jitter_ms=float(ms),
                          send_jitter_seed=int(seed))
    return d


def run_sim(d, path, policy, out, say):
    exp = experiment.from_dict(d, path, backend='sim', policy=policy,
                               sim_packets='none')
    return crosscheck.run_one(exp, out, say=say)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--jitter-ms', type=float, default=1.0,
                    help="each job's arrival delayed by up to this")
    ap.add_argument('--send-jitter-ms', type=float, default=1.0,
                    help='each send started up to this after its '
                    'connection takes it (simulator.send_jitter_ms)')
    ap.add_argument('--only', help='comma-separated suite experiments')
    ap.add_argument('--policies', default=','.join(fidelity.POLICIES))
    ap.add_argument('--out')
    a = ap.parse_args(argv)
    if a.reps < 1:
        sys.exit('sensitivity_bench: --reps must be at least 1')
    if a.jitter_ms < 0 or a.send_jitter_ms < 0 or \
            not a.jitter_ms + a.send_jitter_ms > 0:
        sys.exit('sensitivity_bench: --jitter-ms and --send-jitter-ms '
                 'take ms >= 0, one of them positive')
    policies = a.policies.split(',')
    for p in policies:
        try:
            name, params = pol.parse_spec(p, where='--policies')
            pol.make(name, params, where='--policies: %s' % p)
        except ConfigError as e:
            sys.exit('sensitivity_bench: %s' % e)
    try:
        paths = fidelity.suite(a.only.split(',') if a.only else None)
    except ConfigError as e:
        sys.exit('sensitivity_bench: %s' % e)
    out = a.out or os.path.join(ROOT, 'results', 'bench-sensitivity',
                                time.strftime('%Y%m%d-%H%M%S'))
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()

    def say(msg):
        print('[%7.1fs] %s' % (time.monotonic() - t0, msg), flush=True)

    quiet = lambda *_: None                               # noqa: E731
    table, pairs = {}, {}
    with open(os.path.join(out, 'runs.jsonl'), 'a') as log:
        for name, path in paths.items():
            d = experiment.load_yaml(path)
            if not d.get('jobs'):
                say('%s: no jobs (a trace): skipped' % name)
                continue
            for p in policies:
                base = run_sim(d, path, p,
                               os.path.join(out, name, 'sim-%s' % p), quiet)
                errs, runs = [], {}
                for r in range(a.reps):
                    s = run_sim(send_jittered(jittered(
                        d, a.jitter_ms / 1e3, r), a.send_jitter_ms, r), path,
                        p, os.path.join(out, name, 'jit-%s-%d' % (p, r)),
                        quiet)
                    e = crosscheck.errors(base, s)
                    errs.append(e)
                    runs[r] = s
                    log.write(json.dumps({'experiment': name, 'policy': p,
                                          'rep': r, 'jitter_ms': a.jitter_ms,
                                          'send_jitter_ms': a.send_jitter_ms,
                                          'errors': e}) + '\n')
                    log.flush()
                table.setdefault(name, {})[p] = {
                    k: fidelity.spread([e[k] for e in errs])
                    for k in fidelity.KINDS}
                pairs.setdefault(name, {}).update(
                    fidelity.self_errors({(name, p): runs})[name])
                c, q = table[name][p], pairs[name][p]
                say('%-12s %-10s against the file: jobs %s, coflows %s; '
                    'between reps: jobs %s, coflows %s' % (
                        name, p, fidelity.pct(c['job jct_s']),
                        fidelity.pct(c['coflow cct_s']),
                        fidelity.pct(q['job jct_s']),
                        fidelity.pct(q['coflow cct_s'])))
    with open(os.path.join(out, 'table.json'), 'w') as f:
        json.dump({'reps': a.reps, 'jitter_ms': a.jitter_ms,
                   'send_jitter_ms': a.send_jitter_ms,
                   'table': table, 'between_reps': pairs}, f, indent=1)
    print('\nthe simulator, each job arriving up to %g ms later and each '
          'send starting up to %g ms later than planned (%d reps), mean '
          '|error| %%' % (a.jitter_ms, a.send_jitter_ms, a.reps))
    print('\n== against the file as it is (the noise\'s bias and spread) ==')
    print(fidelity.self_table(table, policies, 'each rep against the run '
                              'of the file as it is'))
    if a.reps > 1:
        print('\n== one rep against another (the spread alone; the '
              'fidelity bench prints the emulator\'s) ==')
        print(fidelity.self_table(pairs, policies))
    print('results: %s' % out)


if __name__ == '__main__':
    main()
