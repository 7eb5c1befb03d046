"""The simulator's before/after check: a set of representative runs whose
event logs must stay identical, byte for byte, across changes that keep
the model (issue 28, item 4).

    .venv/bin/python benchmarks/sim_identity.py --save DIR   # reference
    .venv/bin/python benchmarks/sim_identity.py --check DIR  # compare
        [-k SUBSTRING] [--list]

``--save`` runs every case and keeps its events.jsonl in DIR; ``--check``
runs them again and compares each log with the saved one byte for byte.
To check a change, save with a copy of the tree as it was before it (run
this script from the copy: it imports the netsched beside it) and check
with the tree after it; the trace is $NETSCHED_TRACE's, else the one
beside the checkout.
Where two differ it says where: the first differing line, how many lines
differ and of which kinds, and the largest difference of any numeric
field (a float summation order that moved a completion by 1e-12 s shows
up as such, not as a bare "differs"). The comparison is strict: the
simulator writes equal-time events in a fixed order, so no reordering is
tolerated. Exit status 1 if any case differs.

The cases: the first 150 coflows of the Facebook trace on the big switch
under every baseline (the speed work's target), the demo, the dumbbell
and fat-tree fidelity experiments (one with packets), a hybrid fabric
with circuits, and the seed policies' own experiments (explicit rates,
per-send classes, time shifts, host senders).
"""
import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import experiment  # noqa: E402

FB = os.environ.get('NETSCHED_TRACE') or os.path.join(
    ROOT, '..', 'shared', 'data', 'FB2010-1Hr-150-0.txt')
BASELINES = ('fair', 'fifo', 'sebf', 'varys', 'aalo', 'sincronia')
FB_LIMIT = 150


def _cases():
    """(name, experiment file, policy or None, extra) in run order;
    extra: {'limit': N} for the trace, {'sim_packets': ...}."""
    out = []
    for p in BASELINES:
        out.append(('fb%d-%s' % (FB_LIMIT, p), 'experiments/fb-trace.yaml',
                    p, {'limit': FB_LIMIT}))
    for p in ('fair', 'sebf'):
        out.append(('demo-' + p, 'experiments/demo.yaml', p, {}))
    for f in ('d2-ring', 'd3-ring'):
        for p in BASELINES:
            out.append(('%s-%s' % (f, p), 'experiments/fidelity/%s.yaml' % f,
                        p, {}))
    for p in ('fair', 'sebf'):
        out.append(('d2-ring-packets-' + p, 'experiments/fidelity/d2-ring.yaml',
                    p, {'sim_packets': 'emulated'}))
    for f, pols in (('d4-mixed', ('aalo', 'varys')),
                    ('ft-mixed', ('fair', 'varys')),
                    ('ft-arrivals', ('sincronia', 'aalo')),
                    ('trace-slice', ('fair', 'sebf'))):
        for p in pols:
            out.append(('%s-%s' % (f, p), 'experiments/fidelity/%s.yaml' % f,
                        p, {}))
    out.append(('hybrid', 'experiments/hybrid.yaml', None, {}))
    for f in ('beamer', 'jpas', 'geryon', 'prophet', 'tensorexpress',
              'cassini-pair'):
        out.append((f, 'experiments/%s.yaml' % f, None, {}))
    return out


def _experiment(path, policy, extra):
    # experiments that read the trace find it where the benchmarks do
    os.environ.setdefault('NETSCHED_TRACE', FB)
    path = os.path.join(ROOT, path)
    kw = {'backend': 'sim', 'policy': policy}
    if 'sim_packets' in extra:
        kw['sim_packets'] = extra['sim_packets']
    if 'limit' in extra:
        exp = experiment.load(path, trace=FB, **kw)
        return experiment.from_dict(
            dict(exp.raw, trace={'path': exp.trace.path,
                                 'limit': extra['limit']}), path, **kw)
    return experiment.load(path, **kw)


def run_case(case, log_path):
    """Run one case on the simulator, its log into ``log_path``; wall s."""
    from netsched.sim import runner
    name, path, policy, extra = case
    exp = _experiment(path, policy, extra)
    t0 = time.monotonic()
    runner.run(exp, log_path, lambda m: None)
    return time.monotonic() - t0


def _numbers(x, prefix=''):
    """{field path: number} of one parsed event."""
    out = {}
    if isinstance(x, dict):
        for k, v in x.items():
            out.update(_numbers(v, prefix + '.' + k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out.update(_numbers(v, '%s[%d]' % (prefix, i)))
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        out[prefix] = x
    return out


def compare(ref_path, new_path):
    """None if the two logs are byte-identical, else a description of
    how they differ."""
    with open(ref_path, 'rb') as f:
        a = f.read()
    with open(new_path, 'rb') as f:
        b = f.read()
    if a == b:
        return None
    la, lb = a.decode().splitlines(), b.decode().splitlines()
    diff = [i for i in range(min(len(la), len(lb))) if la[i] != lb[i]]
    kinds, worst, worst_field = {}, 0.0, None
    for i in diff:
        ea, eb = json.loads(la[i]), json.loads(lb[i])
        kinds[ea.get('ev')] = kinds.get(ea.get('ev'), 0) + 1
        na, nb = _numbers(ea), _numbers(eb)
        for k in set(na) & set(nb):
            d = abs(na[k] - nb[k])
            if d > worst:
                worst, worst_field = d, '%s%s' % (ea.get('ev'), k)
    msg = ['%d vs %d lines, %d differ %s' % (len(la), len(lb), len(diff),
                                             json.dumps(kinds))]
    if diff:
        i = diff[0]
        msg.append('first at line %d:\n    - %s\n    + %s'
                   % (i + 1, la[i][:200], lb[i][:200]))
    if worst_field:
        msg.append('largest numeric difference %.3g (%s)'
                   % (worst, worst_field))
    return '\n  '.join(msg)


def main():
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument('--save', metavar='DIR')
    g.add_argument('--check', metavar='DIR')
    g.add_argument('--list', action='store_true')
    ap.add_argument('-k', default='', help='only cases whose name has this')
    a = ap.parse_args()
    cases = [c for c in _cases() if a.k in c[0]]
    if a.list:
        for c in cases:
            print(c[0])
        return 0
    bad = 0
    if a.save:
        os.makedirs(a.save, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='sim-identity-')
    total = 0.0
    for c in cases:
        if a.save:
            wall = run_case(c, os.path.join(a.save, c[0] + '.jsonl'))
            print('%-24s saved  %6.2f s' % (c[0], wall), flush=True)
        else:
            ref = os.path.join(a.check, c[0] + '.jsonl')
            new = os.path.join(tmp, c[0] + '.jsonl')
            wall = run_case(c, new)
            why = compare(ref, new)
            if why is None:
                os.remove(new)
            bad += why is not None
            print('%-24s %s %6.2f s%s' % (c[0], 'same ' if why is None
                                          else 'DIFFERS', wall,
                                          '' if why is None
                                          else '\n  ' + why), flush=True)
        total += wall
    print('%d cases, %d differ, %.1f s of simulation%s'
          % (len(cases), bad, total,
             '' if not bad else ' (new logs in %s)' % tmp))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
