"""The Python API: ``netsched.run``, ``netsched.sweep`` and
``netsched.load`` (docs/analysis.md).

``run`` and ``sweep`` are the ``netsched run`` and ``netsched sweep``
commands with Python values: the same checks, the same folders and
files, the same errors (netsched.errors.ConfigError, raised, not
printed). ``load`` reads a run's or a sweep's tidy tables
(pipeline.tables) into a pandas DataFrame; pandas is the extra
``netsched[analysis]``, imported only there.
"""
import os

from ..errors import ConfigError, NetschedError


def _experiment_path(exp):
    """A file, else the name of a bundled experiment (``demo``,
    ``fidelity/d2-ring``)."""
    from .. import ROOT
    exp = os.fspath(exp)
    if os.path.isfile(exp):
        return exp
    bundled = os.path.join(ROOT, 'experiments', exp + '.yaml')
    if not exp.endswith(('.yaml', '.yml')) and os.path.isfile(bundled):
        return bundled
    raise ConfigError('%s: no such experiment file (nor a bundled '
                      'experiment of that name in %s)' % (
                          exp, os.path.join(ROOT, 'experiments')))


def _sets(overrides):
    """{dotted key: value} -> [(key path, value)], as --set gives them."""
    from . import overrides as ov
    return [(ov.split_key(str(k), 'override %s' % k), v)
            for k, v in overrides.items()]


def run(exp, backend='sim', out=None, *, policy=None, seed=None,
        trace=None, circuits=None, force=False, report=True, quiet=False,
        **overrides):
    """Run one experiment, as ``netsched run``; returns its run folder.

    ``exp``: an experiment file, or a bundled one's name (``'demo'``).
    ``overrides``: experiment keys by their dotted path, as ``--set``
    names them: ``link_gbps=40``, ``**{'jobs.0.workers': 4}``.
    ``out``: the run folder (default ``results/<name>-<backend>-<policy>-
    <time>``; new or empty unless ``force``). ``report=False`` skips the
    figures and report.html (the CSVs and summary.json are written);
    ``quiet`` keeps the progress lines off stdout."""
    from . import experiment, run as runmod
    e = experiment.load(_experiment_path(exp), backend=backend,
                        policy=policy, trace=trace, circuits=circuits,
                        seed=seed, sets=_sets(overrides))
    out = os.fspath(out) if out is not None else runmod.default_out(e)
    runmod.check_out(out, force, own='run')
    say = (lambda msg: None) if quiet else print
    result = runmod.execute(e, out, say=say)
    if report:                   # matplotlib only for runs that draw
        from . import report as page
        page.write_run(result)
    return result[0]


def sweep(exp, policies=('fair',), seeds=(1,), out=None, *, backend='sim',
          sets=None, jobs=None, baseline=None, trace=None, cluster=None,
          force=False, report=True, figures=True):
    """Run a sweep, as ``netsched sweep``; returns the sweep folder.

    ``policies``: names or specs (``'aalo:first_mb=40'``), a list or a
    comma-separated string, each ``label=spec`` to show it as label, or a
    dict {label: spec}; ``seeds``: a list or ``'1-5'``; ``sets``:
    {dotted key: [values]}, one axis each (``{'link_gbps': [10, 40]}``);
    ``backend``: sim, emu or both; ``jobs``: simulations at once. The
    runs, runs.csv, the tidy tables, ratios.csv and (unless ``report``
    is False) report.html (without figures where ``figures`` is False,
    for the runs' pages too) are written into ``out``, which a sweep of the
    same experiment resumes. A run that fails is recorded in runs.csv
    and raises a NetschedError at the end."""
    # the sweep is the command itself, run with Python's values: the
    # same checks, folders and report, and no second copy of them
    from .. import cli
    from . import overrides as ov
    if out is None:
        raise ConfigError('sweep: out= names the sweep folder')
    if isinstance(policies, str):
        policies = policies.split(',')
    elif isinstance(policies, dict):
        policies = ['%s=%s' % kv for kv in policies.items()]
    argv = ['sweep', _experiment_path(exp), '--policies',
            ','.join(policies), '--seeds',
            seeds if isinstance(seeds, str) else
            ','.join(str(int(s)) for s in seeds),
            '--backend', backend, '--out', os.fspath(out)]
    for k, vs in (sets or {}).items():
        if isinstance(vs, (str, bytes)) or not hasattr(vs, '__iter__'):
            vs = [vs]
        argv += ['--set', '%s=%s' % (k, ','.join(ov.argv_text(v)
                                                 for v in vs))]
    for flag, v in (('-j', jobs), ('--baseline', baseline),
                    ('--trace', trace), ('--cluster', cluster)):
        if v is not None:
            argv += [flag, str(v)]
    argv += ['--force'] * bool(force) + ['--no-report'] * (not report) + \
        ['--no-figures'] * (not figures)
    a = cli.build_parser().parse_args(argv)
    a.command_line = ['netsched'] + argv
    if a.fn(a):
        raise NetschedError('sweep %s: some runs failed (runs.csv says '
                            'which and why)' % out)
    return os.fspath(out)


def _frame(columns, rows):
    """A DataFrame of typed columns: whole numbers as int64 (Int64 where
    one is missing), numbers as float64, text as str."""
    try:
        import pandas as pd
    except ImportError:
        raise NetschedError("netsched.load needs pandas: pip install "
                            "'netsched[analysis]'") from None
    data = {}
    for c, kind in columns:
        vals = [r.get(c) for r in rows]
        if kind is int:
            dtype = 'Int64' if any(v is None for v in vals) else 'int64'
        elif kind is float:
            dtype = 'float64'
            vals = [float('nan') if v is None else v for v in vals]
        else:
            dtype = object
        data[c] = pd.Series(vals, dtype=dtype)
    return pd.DataFrame(data, columns=[c for c, _ in columns])


def load(path, table='coflows', baseline=None):
    """One table of a run, sweep folder as a pandas DataFrame.

    A sweep's tables: runs, jobs, iterations, coflows, stages, links
    (one row per run and job, iteration, ...; the run's backend, policy,
    seed and every swept key as columns), flows (every run's, read now),
    ratios (the paired ratios to the baseline with their 95% intervals,
    as on the sweep's page; ``baseline`` another policy) and means. A
    run's: jobs, iterations, coflows, stages, links and flows, with its
    run, backend, policy and seed as columns."""
    from . import paths, tables
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise ConfigError('%s: %s' % (path, 'a file, not a folder'
                                      if os.path.exists(path)
                                      else 'no such folder'))
    kind = paths.folder_kind(path)
    names = tables.TABLES if kind == 'sweep' else tuple(tables.RUN_TABLES)
    if table not in names:
        raise ConfigError('table %r: a %s has the tables %s%s' % (
            table, kind or 'run', ', '.join(names), _did_you_mean(
                table, names)))
    if kind == 'sweep':
        parquet = os.path.join(path, 'tables', table + '.parquet')
        if baseline is None and table in tables.SWEEP_TABLES and \
                _fresh(parquet, path):
            try:
                import pandas as pd
                return pd.read_parquet(parquet)
            except ImportError:        # pyarrow gone since: read anew
                pass
        return _frame(*tables.Sweep(path, baseline).table(table))
    if kind not in (None, 'run'):
        raise ConfigError('%s: a %s folder; load reads a run or a sweep'
                          % (path, kind))
    return _frame(*tables.run_table(path, table))


def _fresh(table_path, root):
    """Whether a written table is newer than runs.csv (a sweep resumed
    since has rows the table lacks)."""
    try:
        return os.path.getmtime(table_path) >= os.path.getmtime(
            os.path.join(root, 'runs.csv'))
    except OSError:
        return False


def _did_you_mean(word, names):
    import difflib
    close = difflib.get_close_matches(str(word), names, 1)
    return '; did you mean %r?' % close[0] if close else ''
