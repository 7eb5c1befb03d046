"""Running an experiment: output directory, backend, metrics, report.

The output directory holds ``experiment.yaml`` (the file as read, with
CLI overrides applied), ``run.json`` (seed, backend, versions, wall
time, command), ``events.jsonl`` (written as the run goes), the CSVs,
``summary.json`` and the plots.
"""
import json
import os
import platform
import sys
import time

import yaml

from . import __version__, metrics
from .errors import ConfigError


def versions():
    out = {'netsched': __version__, 'python': platform.python_version()}
    for mod in ('numpy', 'networkx', 'matplotlib', 'yaml'):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            pass
    return out


def default_out(exp):
    stamp = time.strftime('%Y%m%d-%H%M%S')
    return os.path.join('results', '%s-%s-%s-%s' % (
        exp.name, exp.backend, exp.policy_label or exp.policy, stamp))


def meta(exp, wall_s=None):
    return {'experiment': exp.name, 'backend': exp.backend,
            'policy': exp.policy, 'policy_params': dict(exp.policy_params),
            'seed': exp.seed, 'scale': exp.scale,
            'topology': exp.topology, 'link_bps': exp.link_bps,
            'emulated_link_bps': exp.link_bps / exp.scale,
            'queues': 'exact' if exp.queues is None else exp.queues,
            'units': {'time': 's (data-center = emulated)',
                      'bytes': 'B, data-center (emulated = bytes / scale)',
                      'rate': 'bit/s, data-center (emulated = / scale)'}}


def prepare(exp, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    raw = dict(exp.raw or {})
    raw.update(backend=exp.backend, policy=dict(exp.policy_params,
                                                name=exp.policy))
    if exp.trace:
        raw['trace'] = {'path': exp.trace.path, 'limit': exp.trace.limit,
                        'time_scale': exp.trace.time_scale}
    with open(os.path.join(out_dir, 'experiment.yaml'), 'w') as f:
        yaml.safe_dump(raw, f, sort_keys=False)


def execute(exp, out_dir=None, say=print, plots=True, attach=None):
    """Run one experiment; returns (out_dir, summary). ``attach``: the
    socket of a running controller whose fabric to run on (emulator);
    it is checked before anything is written."""
    if attach:
        if exp.backend != 'emu':
            raise ConfigError('%s: --attach runs on the emulator, not on '
                              'backend %s' % (exp.path or exp.name,
                                              exp.backend))
        from .emulator.attach import AttachedFabric
        attach = AttachedFabric(exp, attach)
    out_dir = out_dir or default_out(exp)
    prepare(exp, out_dir)
    log_path = os.path.join(out_dir, 'events.jsonl')
    t0 = time.monotonic()
    say('%s: backend %s, policy %s, seed %d -> %s'
        % (exp.name, exp.backend, exp.policy_label or exp.policy, exp.seed,
           out_dir))
    if exp.backend == 'sim':
        from .sim import runner
        info = runner.run(exp, log_path, say)
    else:
        from .emulator import runner
        info = runner.run(exp, log_path, say, attach)
    wall = time.monotonic() - t0
    with open(os.path.join(out_dir, 'run.json'), 'w') as f:
        json.dump({'seed': exp.seed, 'backend': exp.backend,
                   'policy': exp.policy, 'wall_s': wall,
                   'versions': versions(), 'command': sys.argv,
                   'backend_info': info}, f, indent=1)
    m = metrics.from_log(log_path)
    summary = metrics.summarize(m, meta(exp))
    metrics.write(out_dir, m, summary)
    summary['plots'] = metrics.plot(out_dir, m, summary) if plots else []
    summary['wall_s'] = wall
    return out_dir, summary


def table(summary):
    """The summary as a few printed lines."""
    lines = []
    tot = summary['totals']
    if summary['jobs']:
        lines.append('%-16s %10s %6s %12s %12s %12s'
                     % ('job', 'JCT s', 'iters', 'iter mean ms',
                        'iter p50 ms', 'iter p99 ms'))
        for j, r in summary['jobs'].items():
            it = r['iteration_time_s']
            lines.append('%-16s %10s %6d %12s %12s %12s' % (
                j, _f(r['jct_s'], 3), r['iterations'], _f(it['mean'], 1, 1e3),
                _f(it['p50'], 1, 1e3), _f(it['p99'], 1, 1e3)))
    if summary['coflows']:
        lines.append('coflows: %d done of %d, average CCT %s s, p95 %s s'
                     % (tot['coflows_done'], len(summary['coflows']),
                        _f(tot['avg_cct_s'], 4), _f(tot['p95_cct_s'], 4)))
    if summary['stages']:
        lines.append('stages: ' + ', '.join(
            '%s %s s' % (s, _f(r['sct_s'], 3))
            for s, r in summary['stages'].items()))
    if summary['links']:
        busiest = max(summary['links'].items(),
                      key=lambda kv: kv[1]['mean_util'])
        lines.append('links: %d used, busiest %s (mean %.0f%%, peak %.0f%%)'
                     % (len(summary['links']), busiest[0],
                        100 * busiest[1]['mean_util'],
                        100 * busiest[1]['peak_util']))
    return '\n'.join(lines)


def _f(x, digits, mult=1.0):
    return '-' if x is None else '%.*f' % (digits, x * mult)
