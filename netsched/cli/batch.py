"""The commands that run many experiments: a sweep over policies, seeds,
values and backends, and the reproduction of the seed policies' papers."""
import dataclasses
import os
import signal
import sys

from ..errors import NetschedError
from . import common


def sweep_args(p):
    common.experiment_and_policies(p, 'fair', labels=True)
    p.add_argument('--seeds', default='1', help='N, N-M or a list of them '
                   '(default %(default)s)')
    p.add_argument('--set', action='append', metavar='KEY=V1,V2,...',
                   help='an axis: an experiment key by its dotted path and '
                   'its values (repeatable; the cross product runs)')
    p.add_argument('--backend', choices=('sim', 'emu', 'ns3', 'both',
                                         'all'),
                   default='sim', help='(default %(default)s; both: sim '
                   'and emu, all: the three)')
    p.add_argument('-j', '--jobs', type=int, help='simulations (and ns-3 '
                   'runs) at once (default: the cores); emulations run one '
                   'at a time')
    p.add_argument('--cluster', metavar='tcp://HOST:PORT',
                   help='run on a Dask distributed cluster instead')
    p.add_argument('--trace', help=common.TRACE_HELP)
    p.add_argument('--baseline', help="the policy the report's ratios are "
                   'against (default: fair if swept, else the first)')
    p.add_argument('--force', action='store_true',
                   help='re-run the runs already done')
    p.add_argument('--no-report', action='store_true',
                   help='do not write report.html at the end')
    p.add_argument('--no-figures', action='store_true',
                   help="the runs' and the sweep's reports without figures "
                   '(tables only; no drawing)')
    p.add_argument('--dry-run', action='store_true',
                   help='check every run and print each with its folder; '
                   'run nothing, write nothing')
    p.add_argument('--out', required=True, help='the sweep folder: new, '
                   'empty, or a sweep of the same experiment (resumed)')


def cmd_sweep(a):
    """The cross product of policies, seeds, --set values and backends."""
    from ..pipeline import overrides, sweep
    axes = []
    for text in a.set or ():
        path, values = overrides.parse(text)
        axes.append((overrides.key_name(path), values))
    seeds = sweep.parse_seeds(a.seeds)
    backends = {'both': ['sim', 'emu'], 'all': ['sim', 'emu', 'ns3']
                }.get(a.backend, [a.backend])
    if 'emu' in backends and not a.cluster and not a.dry_run:
        if os.geteuid() != 0:
            raise NetschedError('sweep --backend %s: the emulator needs root'
                                % a.backend)
        from ..emulator import ovs
        ovs.require_running()           # not one failed run per arm
    _require_ns3(backends, a)
    if a.jobs is not None and a.jobs < 1:
        raise NetschedError('-j must be at least 1, got %d' % a.jobs)
    pols = [p for p in a.policies.split(',') if p]
    sweep.check_out(a.out, a.experiment)
    if a.dry_run:
        return _sweep(a, pols, seeds, axes, backends, None)
    # the folder held before the runs are planned and checked (a minute
    # for a large sweep): a second sweep into it is told at once
    with sweep.holding(a.out) as held:
        return _sweep(a, pols, seeds, axes, backends, held)


def _sweep(a, pols, seeds, axes, backends, held):
    """cmd_sweep once its arguments are read and the folder ``held``
    (sweep.holding; None for a dry run)."""
    from ..pipeline import run
    from ..pipeline import overrides, progress, sweep
    specs = sweep.plan(a.experiment, pols, seeds, axes, backends, a.trace)
    named = sweep.labels(pols)          # label=spec: display names
    baseline = sweep.baseline_of(named, a.baseline)
    if a.no_figures:
        specs = [dataclasses.replace(s, figures=False) for s in specs]
    if a.dry_run:
        print(sweep.dry_run(specs, a.out, a.force), end='')
        return 0
    if a.cluster:
        from ..pipeline import cluster
        executor = cluster.ClusterExecutor(a.cluster)
    else:
        executor = sweep.LocalExecutor(a.jobs)
    definition = {'experiment': os.path.abspath(a.experiment),
                  'policies': [n for n, _ in named], 'seeds': seeds,
                  'labels': {n: sp for n, sp in named if n != sp},
                  'sets': [[k, [overrides.value_text(v) for v in vs]]
                           for k, vs in axes],
                  'backends': backends, 'baseline': baseline,
                  'trace': a.trace and os.path.abspath(a.trace),
                  'cluster': a.cluster, 'command': sys.argv,
                  'commit': run.commit()}
    # a closed terminal or a kill stops the sweep as Ctrl-C does: its
    # runs are in sessions of their own and would go on unwatched
    old = {sig: signal.signal(sig, _interrupt)
           for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        table = sweep.run_sweep(specs, a.out, definition, executor,
                                a.force, progress.SweepProgress(), held)
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
        _sweep_report(a, baseline)
    rows = [table.rows[s.key] for s in specs if s.key in table.rows]
    failed = [r for r in rows if r['status'] != 'ok']
    print('runs: %s (%d ok, %d failed)' % (
        os.path.join(a.out, 'runs.csv'), len(rows) - len(failed),
        len(failed)))
    return 1 if failed else 0


def _sweep_report(a, baseline):
    """At a sweep's end, done or stopped: its report (or, without one,
    its tables) over the runs done so far."""
    if not a.no_report and os.path.isfile(os.path.join(a.out,
                                                       'sweep.json')):
        from ..pipeline import report
        print('report: %s' % report.write(a.out, baseline=baseline,
                                          figures=not a.no_figures))
    elif os.path.isfile(os.path.join(a.out, 'sweep.json')):
        from ..pipeline import tables   # the report writes them too
        tables.write_sweep(a.out, baseline)
    if os.path.isdir(os.path.join(a.out, 'tables')):
        print('tables: %s, ratios.csv' % os.path.join(a.out, 'tables'))


def reproduce_args(p):
    p.add_argument('study', help='the study file')
    p.add_argument('--backend', choices=('sim', 'emu', 'ns3', 'both',
                                         'all'),
                   default='sim', help='(default %(default)s; both: sim '
                   'and emu, all: the three); the emulator and ns-3 run '
                   "the study's reduced seeds and axis")
    p.add_argument('--only', metavar='ID,...', help='these studies only')
    p.add_argument('--seeds', help="override the study's seeds (N, N-M or "
                   'a list)')
    p.add_argument('-j', '--jobs', type=int, help='simulations at once '
                   '(default: the cores)')
    p.add_argument('--force', action='store_true',
                   help='re-run the runs already done')
    p.add_argument('--out', required=True, help='the study folder: new, '
                   'empty, or a study folder (resumed)')


def cmd_reproduce(a):
    """Each seed policy against its paper's baselines (a study file)."""
    from ..pipeline import progress, report, reproduce, sweep
    study = reproduce.load(a.study)
    backends = {'both': ['sim', 'emu'], 'all': list(reproduce.BACKENDS)
                }.get(a.backend, [a.backend])
    if 'emu' in backends:
        if os.geteuid() != 0:
            raise NetschedError('reproduce --backend %s: the emulator needs '
                                'root (--backend sim runs without)'
                                % a.backend)
        from ..emulator import ovs
        ovs.require_running()           # not one failed run per arm
    _require_ns3(backends, a)
    if a.jobs is not None and a.jobs < 1:
        raise NetschedError('-j must be at least 1, got %d' % a.jobs)
    only = [x for x in (a.only or '').split(',') if x]
    seeds = sweep.parse_seeds(a.seeds) if a.seeds else None
    planned = reproduce.plan(study, backends, only, seeds)
    _check_study_out(a.out, [reproduce.folder(a.out, s, b)
                             for s, b, _ in planned])
    for s, b, _ in planned:
        sweep.check_out(reproduce.folder(a.out, s, b), s.experiment)
    print('reproduce: %d sweeps, %d runs into %s' % (
        len(planned), sum(len(x) for _, _, x in planned), a.out))
    old = {sig: signal.signal(sig, _interrupt)
           for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        reproduce.run(study, planned, a.out, a.jobs, a.force,
                      lambda label, metric: progress.SweepProgress(
                          label=label, metric=metric),
                      lambda root, baseline: report.write(
                          root, baseline=baseline))
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    out = report.write(a.out)
    with open(os.path.join(a.out, 'reproduction.md')) as f:
        sys.stdout.write(f.read())
    print('report: %s' % out)
    return 0


def _check_study_out(out, folders):
    """reproduce's --out: new, empty, or a study folder it resumes (its
    reproduce.json, or one of the planned sweeps' sweep.json, is there);
    not a folder that holds something else."""
    if not os.path.isdir(out) or not os.listdir(out):
        return
    own = [os.path.join(out, 'reproduce.json')] + [
        os.path.join(f, 'sweep.json') for f in folders]
    if not any(os.path.isfile(f) for f in own):
        raise NetschedError('--out %s: exists, is not empty and holds no '
                            'reproduction (no reproduce.json nor any of its '
                            'sweeps); choose another folder' % out)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _require_ns3(backends, a):
    """ns-3's package, before the first run, where a backend is ns3."""
    if 'ns3' in backends:
        from ..ns3 import loader
        if not loader.available():
            raise NetschedError('%s --backend %s: %s' % (
                a.command, a.backend, loader.INSTALL_HINT))
