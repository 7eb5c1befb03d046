"""Tidy tables of a sweep: long format, one row per (run, job), (run,
iteration), (run, coflow), (run, stage) and (run, link), each row
carrying its run's axes (backend, policy, seed and every ``--set`` key)
as columns; one row per run (the headline metrics, without runs.csv's
per-job columns); and the numbers the sweep page shows, the paired
ratios to the baseline (``ratios.csv``) and each policy's means
(``means.csv``).

A sweep folder gets ``tables/<name>.csv`` (and ``tables/<name>.parquet``
where pyarrow is installed), ``ratios.csv`` and ``means.csv``; they are
written with its report (and by a sweep run with ``--no-report``). The
rows come from what each run already wrote (its jobs.csv, iterations.csv,
coflows.csv, stages.csv, links.csv, made by pipeline.metrics) and from
runs.csv; nothing is measured again. A run folder's own CSVs are
already one row per job, iteration, coflow and link: :func:`read`
gives them with the run's columns added, as a sweep's tables have them.
"""
import csv
import os

from ..errors import ConfigError
from . import stats, sweep
from .shapes import brief

# a run's own CSV per table, and each column's type (a sweep's table
# holds these after its run columns)
RUN_TABLES = {
    'jobs': ('jobs.csv', (('job', str), ('arrival_s', float),
                          ('jct_s', float), ('iterations', int),
                          ('iter_mean_s', float), ('iter_p50_s', float),
                          ('iter_p99_s', float))),
    'iterations': ('iterations.csv', (('job', str), ('iter', int),
                                      ('end_s', float),
                                      ('iteration_time_s', float),
                                      ('loss', float))),
    'coflows': ('coflows.csv', (('coflow', str), ('arrival_s', float),
                                ('cct_s', float), ('bytes', float),
                                ('emulated_bytes', float))),
    'stages': ('stages.csv', (('stage', str), ('start_s', float),
                              ('end_s', float), ('sct_s', float))),
    'links': ('links.csv', (('link', str), ('mean_util', float),
                            ('peak_util', float))),
    # a run's flows: a run folder only (a sweep's would be millions of
    # rows; read them per run)
    'flows': ('flows.csv', (('id', int), ('coflow', str), ('src', str),
                            ('dst', str), ('bytes', float),
                            ('emulated_bytes', float), ('start_s', float),
                            ('end_s', float), ('fct_s', float))),
}
SWEEP_TABLES = ('runs', 'jobs', 'iterations', 'coflows', 'stages', 'links')
# the tables of the sweep folder itself, beside runs.csv
TOP = ('ratios', 'means')
TABLES = SWEEP_TABLES + TOP + ('flows',)
RUN_COLUMNS = ('run', 'backend', 'policy', 'seed')
RUN_NUMBERS = ('status', 'error', 'wall_s', 'jobs_done', 'coflows_done') + \
    sweep.HEADLINE + ('commit',)
RATIO_COLUMNS = (('policy', str), ('baseline', str), ('metric', str),
                 ('ratio', float), ('low', float), ('high', float),
                 ('n', int), ('unpaired', int), ('verdict', str),
                 ('mean', float), ('base_mean', float))
MEAN_COLUMNS = (('policy', str), ('metric', str), ('mean', float),
                ('low', float), ('high', float), ('n', int))


def _value(text, kind):
    """A CSV cell as ``kind``; '' is None."""
    if text is None or text == '':
        return None
    if kind is str:
        return text
    try:
        return int(float(text)) if kind is int else float(text)
    except ValueError:
        raise ValueError(text) from None


def _run_csv(path, columns):
    """A run's CSV as dicts of the typed columns (columns it lacks are
    None); [] without the file. A cell that is not of its column's type
    is a ConfigError naming the file, line and column."""
    out = []
    try:
        with open(path, newline='') as f:
            reader = csv.DictReader(f)
            for r in reader:
                row = {}
                for c, kind in columns:
                    try:
                        row[c] = _value(r.get(c), kind)
                    except ValueError:
                        raise ConfigError('%s:%d: %s: not a number: %s' % (
                            path, reader.line_num, c,
                            brief(r.get(c)))) from None
                out.append(row)
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise ConfigError('%s: not CSV text: %s' % (path, e)) from None
    return out


def axis_kinds(rows, axes):
    """Each swept key's type for the tables: int where every value is a
    whole number as written, float where every value is a number, else
    str (runs.csv holds them as text)."""
    return {a: _kind([r.get(a) for r in rows if r.get(a) not in (None, '')])
            for a in axes}


def _kind(values):
    for k in (int, float):
        try:
            if values:
                [k(str(v)) for v in values]
                return k
        except (TypeError, ValueError):
            continue
    return str


class Sweep:
    """What a sweep folder's tables are made of: its definition, rows
    (runs.csv, each unfinished run marked missing), the finished ones,
    axes, policies, metrics; :meth:`ratios` and :meth:`means` the
    numbers its page shows."""

    def __init__(self, path, baseline=None, rows=None):
        self.path = path
        self.definition = sweep.read_definition(path)
        if rows is None:
            csv_path = os.path.join(path, 'runs.csv')
            rows = sweep.read_rows(csv_path, path) \
                if os.path.isfile(csv_path) else []
        self.rows = rows
        self.ok = [r for r in rows if r.get('status') == 'ok']
        self.axes = [k for k, _ in self.definition.get('sets', [])]
        self.kinds = axis_kinds(self.rows, self.axes)
        self.baseline = baseline or self.definition.get('baseline') \
            or 'fair'
        self.metrics = [m for m in sweep.HEADLINE
                        if any(r.get(m) is not None for r in self.ok)]
        self.policies = list(dict.fromkeys(
            [p for p in self.definition.get('policies', [])
             if any(r['policy'] == p for r in self.ok)]
            + [r['policy'] for r in self.ok]))

    def run_columns(self):
        return [(c, int if c == 'seed' else str) for c in RUN_COLUMNS] + \
            [(a, self.kinds[a]) for a in self.axes if a not in RUN_COLUMNS]

    def _keys(self, r):
        """A run row's run columns, its axis values typed."""
        out = {}
        for c, kind in self.run_columns():
            v = r.get(c)
            out[c] = v if kind is str or v is None else _value(str(v), kind)
        return out

    def table(self, name):
        """(columns [(name, type)], rows [dict]) of one table."""
        if name == 'runs':
            cols = self.run_columns() + [
                (c, str if c in ('status', 'error', 'commit') else
                 int if c in ('jobs_done', 'coflows_done') else float)
                for c in RUN_NUMBERS]
            return cols, [dict(self._keys(r), **{
                c: None if r.get(c) is None else
                (int(r[c]) if k is int else r[c])
                for c, k in cols[len(self.run_columns()):]})
                for r in self.rows]
        if name == 'ratios':
            return self._group_columns() + list(RATIO_COLUMNS), \
                self.ratio_rows()
        if name == 'means':
            return self._group_columns() + list(MEAN_COLUMNS), \
                self.mean_rows()
        if name not in RUN_TABLES:
            raise ConfigError('table %r: a sweep has the tables %s' % (
                name, ', '.join(TABLES)))
        fname, own = RUN_TABLES[name]
        rows = []
        for r in self.ok:
            keys = self._keys(r)
            rows += [dict(keys, **x) for x in _run_csv(
                os.path.join(self.path, r['run'], fname), own)]
        return self.run_columns() + list(own), rows

    def _group_columns(self):
        return [('backend', str)] + [(a, self.kinds[a]) for a in self.axes]

    def ratios(self):
        """stats.against_baseline of the finished runs: the page's
        table of ratios."""
        if not hasattr(self, '_ratios'):
            self._ratios = stats.against_baseline(
                self.ok, self.baseline, self.metrics, self.axes)
        return self._ratios

    def ratio_rows(self):
        out = []
        for r in self.ratios():
            g = {c: r['group'].get(c) for c, _ in self._group_columns()}
            for c, kind in self._group_columns():
                if kind is not str and g[c] is not None:
                    g[c] = _value(str(g[c]), kind)
            out.append(dict(g, baseline=self.baseline, **{
                c: r.get(c) for c, _ in RATIO_COLUMNS
                if c not in ('baseline',)}))
        return out

    def means(self):
        """:func:`means` of the finished runs: the page's table."""
        return means(self.ok, self.policies, self.metrics, self.axes)

    def mean_rows(self):
        out = []
        for g, table in self.means():
            keys = {c: g.get(c) if kind is str or g.get(c) is None
                    else _value(str(g.get(c)), kind)
                    for c, kind in self._group_columns()}
            for p, by_m in table:
                for m, (mean, lo, hi, n) in by_m.items():
                    out.append(dict(keys, policy=p, metric=m, mean=mean,
                                    low=lo, high=hi, n=n))
        return out


def means(rows, policies, metrics, axes):
    """Per group, each policy's geometric mean of every metric with its
    95% interval over seeds (stats.positive_ci: never below zero):
    [(group, [(policy, {metric: (mean, low, high, n)})])]."""
    out = []
    for g, rs in stats.groups(rows, axes):
        table = []
        for p in policies:
            mine = [r for r in rs if r['policy'] == p]
            if mine:
                table.append((p, {m: stats.positive_ci(
                    [r.get(m) for r in mine]) + (sum(
                        r.get(m) is not None for r in mine),)
                    for m in metrics}))
        out.append((g, table))
    return out


def write_csv(path, columns, rows):
    """One table as CSV, atomically (a reader never sees half of it)."""
    tmp = path + '.tmp'
    with open(tmp, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow([c for c, _ in columns])
        for r in rows:
            w.writerow(['' if r.get(c) is None else r.get(c)
                        for c, _ in columns])
    os.replace(tmp, path)


def write_parquet(path, columns, rows):
    """One table as Parquet with each column's type; False where pyarrow
    is not installed (the CSV is the table then)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    types = {str: pa.string(), int: pa.int64(), float: pa.float64()}
    table = pa.table({c: pa.array([r.get(c) for r in rows], types[k])
                      for c, k in columns})
    tmp = path + '.tmp'
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return True


def write_sweep(path, baseline=None, data=None):
    """A sweep folder's tables: tables/<name>.csv (and .parquet where
    pyarrow is installed) for every table of SWEEP_TABLES, and
    ratios.csv and means.csv beside runs.csv. Returns the paths
    written. ``data``: the folder's Sweep already in hand (the report's,
    so that the files hold the page's numbers)."""
    data = data or Sweep(path, baseline)
    written = []
    try:
        d = os.path.join(path, 'tables')
        os.makedirs(d, exist_ok=True)
        for name in SWEEP_TABLES + TOP:
            cols, rows = data.table(name)
            where = path if name in TOP else d
            p = os.path.join(where, name + '.csv')
            write_csv(p, cols, rows)
            written.append(p)
            if name not in TOP and write_parquet(
                    os.path.join(d, name + '.parquet'), cols, rows):
                written.append(os.path.join(d, name + '.parquet'))
    except OSError as e:
        raise ConfigError('%s: cannot be written: %s' % (
            e.filename or path, e.strerror)) from None
    return written


def run_table(path, name):
    """(columns, rows) of one table of a run folder: its own CSV with the
    run's columns (from summary.json: backend, policy, seed) first."""
    from . import metrics
    if name not in RUN_TABLES:
        raise ConfigError('table %r: a run has the tables %s' % (
            name, ', '.join(RUN_TABLES)))
    summary = metrics.load_summary(path)
    fname, own = RUN_TABLES[name]
    keys = {'run': os.path.basename(os.path.abspath(path)),
            'backend': summary.get('backend'),
            'policy': summary.get('policy'), 'seed': summary.get('seed')}
    cols = [(c, int if c == 'seed' else str) for c in RUN_COLUMNS]
    return cols + list(own), [dict(keys, **r) for r in _run_csv(
        os.path.join(path, fname), own)]
