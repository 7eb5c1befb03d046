"""CASSINI and Prophet (issue 12) on the real emulator: both backends
rank each against its baseline the same way, and the emulator shows the
effect in what the hosts observed (iteration times, when each job's
communication began, front-layer tensor arrival)."""
import json
import os

import yaml

from netsched import events
from netsched.pipeline import experiment, run

from .helpers import ROOT, check, summary


def iterations(tmp_path, run, job):
    """A job's iteration times in one run, in order (an iteration ends
    when its last worker marks it)."""
    ends = {}
    for e in events.read(str(tmp_path / run / 'events.jsonl')):
        if e['ev'] == 'iter' and e['job'] == job:
            ends[e['iter']] = max(ends.get(e['iter'], 0.0), e['t'])
    t = [ends[k] for k in sorted(ends)]
    return [b - a for a, b in zip([0.0] + t, t)]


def alone(tmp_path, name, job):
    """One job of an experiment run alone on the emulator: its mean
    iteration time."""
    path = os.path.join(ROOT, 'experiments', name + '.yaml')
    d = yaml.safe_load(open(path))
    d['jobs'] = [j for j in d['jobs'] if j['id'] == job]
    for j in d['jobs']:
        j['model'] = os.path.normpath(os.path.join(ROOT, 'experiments',
                                                   j['model']))
    p = tmp_path / ('alone-%s.yaml' % job)
    p.write_text(json.dumps(d))
    _, s = run.execute(experiment.load(str(p), policy='fair'),
                       str(tmp_path / ('alone-' + job)), say=lambda m: None)
    return s['jobs'][job]['iteration_time_s']['mean']


def mean(x):
    return sum(x) / len(x)


# Iterations 2-4: the shifts are decided as the first iteration's
# communication starts, and iteration 1 waits once for its grid point.
# Unshifted twins start in lock-step; in the fluid model they stay so
# (equal shares, no perturbation), on the emulator TCP gives one a few
# ms more, it starts its next phase earlier, and they drift apart over
# ~8 iterations (docs/policies.md, cassini): compared is the stretch where
# they are still in each other's way.
SETTLED = slice(2, 5)


def test_cassini_keeps_two_compatible_jobs_near_their_times_alone(tmp_path):
    rep, why = check('cassini-twins', ['cassini', 'fair'], 'avg_iteration_s',
                     tmp_path)
    t_alone = alone(tmp_path, 'cassini-twins', 'a')
    for j in ('a', 'b'):
        cas = iterations(tmp_path, 'emu-cassini', j)
        fair = iterations(tmp_path, 'emu-fair', j)
        assert len(cas) == len(fair) == 10, (cas, fair)
        # shifted: the job's time alone and the 2% slack of its grid
        assert mean(cas[SETTLED]) < 1.06 * t_alone, (j, cas, t_alone)
        assert mean(cas[2:]) < 1.06 * t_alone, (j, cas, t_alone)
        # unshifted, over the same iterations: in each other's way
        assert mean(fair[SETTLED]) > 1.08 * t_alone, (j, fair, t_alone)
    # the agents kept the shift: after its first (aligning) start, no
    # worker started later than the tolerance after its grid point, and
    # every communication phase of b began the decided shift after one
    # of a's, as the hosts reported them
    s = summary(tmp_path, 'emu', 'cassini')['shifts']
    per, tol = s['a']['period_s'], s['a']['tolerance_s']
    evs = events.read(str(tmp_path / 'emu-cassini' / 'events.jsonl'))
    gates = {}
    for e in evs:
        if e['ev'] == 'gate':
            gates.setdefault((e['job'], e['worker']), []).append(e)
    assert len(gates) == 4, gates
    for key, g in gates.items():
        assert len(g) >= 8, key
        assert all(e['drift'] <= tol for e in g[1:]), (key, g)
    delta = (s['b']['shift_s'] - s['a']['shift_s']) % per
    assert 0.1 <= delta <= per - 0.1, s          # apart by a comm phase
    decided = min(e['t'] for e in evs if e['ev'] == 'shifts')
    arr = {j: [e['t'] for e in evs if e['ev'] == 'coflow'
               and e.get('job') == j] for j in ('a', 'b')}
    later = [t for t in arr['b'] if t > decided + 2 * per]
    assert len(later) >= 6, arr
    for tb in later:
        off = min(abs(((tb - ta - delta) + per / 2) % per - per / 2)
                  for ta in arr['a'])
        assert off <= 2 * tol, (tb, off, arr)


def test_prophet_brings_front_layers_sooner_than_fifo(tmp_path):
    # ranked by front-layer latency: by iteration time Prophet, FIFO and
    # p3 are within 2-14% of each other on both backends (docs/
    # reproduction.md: the fluid model charges nothing per partition)
    rep, why = check('prophet', ['prophet', 'fair'], 'front_tensor_s',
                     tmp_path)
    pro, fifo = (summary(tmp_path, 'emu', p)['totals']['front_tensor_s']
                 for p in ('prophet', 'fair'))
    # the margin shrinks on a slower machine, where every partition's
    # send costs the agents more: 0.30-0.41x fair's where userspace OVS
    # forwards one flow at 890 Mbit/s, 0.50-0.58x where it forwards 700
    # (docs/testing.md)
    assert pro < 0.7 * fifo, why
