"""Sweeps: one experiment over the cross product of policies, seeds,
``--set`` values and backends, each run an ordinary run folder.

A sweep folder holds ``sweep.json`` (what was asked), one run folder per
run (``<backend>-<policy>[-<key>=<value>...]-s<seed>``), ``logs/`` (each
run's output) and ``runs.csv``: a row per run, rewritten whole as each
run ends, so an interrupted sweep keeps every finished row. Running the
same sweep again skips the runs whose row says ``ok`` and whose summary
is there.

Every run is ``netsched run`` in a child process: the same code path as
a run by hand, its own interpreter (simulations in parallel use every
core; an emulation owns its signals and teardown), and nothing shared
that a crash could corrupt. Simulations run ``jobs`` at a time, then the
emulations one at a time and alone (OVS and interface names are shared,
and their timing is what they measure). ``--cluster`` hands the same
runs to Dask workers (pipeline.cluster).
"""
import contextlib
import csv
import hashlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

from . import metrics
from ..workload import bounds
from ..errors import ConfigError
from . import overrides
from .paths import safe_name
# the sweep's names for what it runs over (callers use them from here)
from .arms import baseline_of, labelled, labels, parse_seeds  # noqa: F401

# the headline totals of a run, in runs.csv and the report (lower is
# better for every one)
HEADLINE = tuple(metrics.TOTALS)
# missing: runs.csv says ok, but the run's summary.json is gone
STATUSES = ('ok', 'failed', 'interrupted', 'missing')


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep."""
    key: str             # its folder's name under the sweep folder
    experiment: str      # absolute path of the experiment file
    backend: str
    policy: str          # NAME or NAME:key=value...
    seed: int
    sets: tuple          # ((dotted key, value), ...): one value per axis
    trace: str = None    # --trace, absolute
    figures: bool = True  # False: the run's report without figures
    label: str = None    # --policies label=spec: the name shown for it

    @property
    def name(self):
        """The policy as the tables, figures and folder name it."""
        return self.label or self.policy

    def argv(self, out_dir):
        """``netsched run`` arguments for this run into ``out_dir``."""
        a = ['run', self.experiment, '--backend', self.backend,
             '--policy', self.policy, '--seed', str(self.seed),
             '--out', out_dir]
        for k, v in self.sets:
            a += ['--set', '%s=%s' % (k, overrides.argv_text(v))]
        if self.trace:
            a += ['--trace', self.trace]
        if not self.figures:
            a.append('--no-figures')
        return a

    def axes(self):
        """Column -> value for runs.csv."""
        out = {'backend': self.backend, 'policy': self.name,
               'seed': self.seed}
        out.update((k, overrides.value_text(v)) for k, v in self.sets)
        return out


# keys the sweep's own flags set: an axis of them would be overridden
OWN_FLAGS = {'seed': '--seeds', 'policy': '--policies',
             'backend': '--backend'}


def plan(experiment, policies, seeds, axes, backends, trace=None):
    """The runs of a sweep, every one checked as ``netsched check``
    checks it, before any starts. ``axes``: [(dotted key, [values])].
    Two values of an axis that give the same experiment (the value is
    overridden elsewhere) are an error: the sweep would label identical
    runs apart."""
    from . import experiment as expmod, run
    if not policies:
        raise ConfigError('--policies: name at least one policy')
    named = labels(policies)
    keys = [k for k, _ in axes]
    if len(set(keys)) != len(keys):
        raise ConfigError('--set names key %r twice'
                          % next(k for k in keys if keys.count(k) > 1))
    for k, vs in axes:
        _once(k, vs)
    for k in keys:
        if k in OWN_FLAGS:
            raise ConfigError('--set %s: sweep %ss with %s' % (
                k, k, OWN_FLAGS[k]))
    path = os.path.abspath(experiment)
    specs, seen, traces = [], set(), {}
    total = len(backends) * len(policies) * len(seeds)
    for _, vs in axes:
        total *= len(vs)
    if total > bounds.MAX_RUNS:
        raise ConfigError('the sweep is %d runs (backends x policies x seeds'
                          ' x --set values); at most %d' % (total,
                                                           bounds.MAX_RUNS))
    combos = list(itertools.product(*[vs for _, vs in axes])) if axes \
        else [()]
    for b in backends:
        for name, p in named:
            for s in seeds:
                made = []
                for combo in combos:
                    sets = tuple(zip(keys, combo))
                    exp = expmod.load(path, backend=b, policy=p, seed=s,
                                      trace=trace,
                                      sets=[(overrides.split_key(k), v)
                                            for k, v in sets])
                    # the size first: a run too big to plan is refused
                    # before it is planned
                    bounds.admit(exp, traces.get(exp.trace))
                    run.check(exp, traces)
                    _distinct(exp, sets, made, name)
                    key = run_key(b, name, sets, s)
                    if key in seen:
                        raise ConfigError('--set: two values name the same '
                                          'run folder %s' % key)
                    seen.add(key)
                    specs.append(RunSpec(key, path, b, p, s, sets,
                                         trace and os.path.abspath(trace),
                                         label=name if name != p else None))
    order = {k: i for i, k in enumerate(
        run_key(b, p, tuple(zip(keys, c)), s) for b in backends
        for p, _ in named for c in combos for s in seeds)}
    return sorted(specs, key=lambda sp: order[sp.key])


def _once(key, values):
    """An axis names each value once (``link_gbps=10,10`` would run the
    same experiment twice under one folder name)."""
    seen = []
    for v in values:
        # True == 1 in Python, but a flag's true is not the number 1
        same = [w for w in seen if w == v and
                isinstance(w, bool) == isinstance(v, bool)]
        if same:
            raise ConfigError('--set %s: the value %s is given twice%s'
                              % (key, overrides.value_text(v),
                                 '' if overrides.value_text(same[0]) ==
                                 overrides.value_text(v) else ' (as %s)'
                                 % overrides.value_text(same[0])))
        seen.append(v)


def _distinct(exp, sets, made, policy):
    for other, other_sets in made:
        if other == exp:
            diff = ', '.join('%s=%s' % (k, overrides.value_text(v))
                             for (k, v), (_, w) in zip(sets, other_sets)
                             if v != w)
            was = ', '.join('%s=%s' % (k, overrides.value_text(w))
                            for (k, v), (_, w) in zip(sets, other_sets)
                            if v != w)
            raise ConfigError(
                '--set %s gives the same experiment as %s under policy %s: '
                'the value is overridden (by the policy\'s own parameters '
                'in --policies, or the file)' % (diff, was, policy))
    made.append((exp, sets))


def run_key(backend, policy, sets, seed):
    """A run's folder name: backend, policy, each axis value, seed, each
    made safe (paths.safe_name); a value whose name is not safe in a
    path gets a short hash of its exact text, so no two values share a
    folder. The whole is one name of at most KEY_MAX characters (a
    longer one is cut and ends in a hash of the whole)."""
    parts = [backend, safe_name(policy)]
    for k, v in sets:
        text = '%s=%s' % (k, overrides.value_text(v))
        slug = safe_name(text)
        if slug != text and '~' not in slug:
            slug += '~' + hashlib.sha1(text.encode()).hexdigest()[:6]
        parts.append(slug)
    return safe_name('-'.join(parts + ['s%d' % seed]), KEY_MAX)


# the longest run folder name (runs.csv and the logs/ file add to it)
KEY_MAX = 200


def check_out(root, experiment):
    """A sweep folder is new, empty, or a sweep of the same experiment
    (which the sweep then resumes or extends)."""
    if not os.path.exists(root):
        parent = os.path.dirname(os.path.abspath(root))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise ConfigError('--out %s: cannot be made: %s is a file, not '
                              'a folder' % (root, parent))
        if not os.access(parent, os.W_OK | os.X_OK):
            raise ConfigError('--out %s: cannot be made (%s is not '
                              'writable)' % (root, parent))
        return
    if not os.path.isdir(root):
        raise ConfigError('--out %s: exists and is not a folder' % root)
    if not os.access(root, os.W_OK | os.X_OK):
        raise ConfigError('--out %s: not writable' % root)
    meta = os.path.join(root, 'sweep.json')
    if not os.path.isfile(meta):
        # a lock alone: a sweep holds it while it plans (lock says so)
        if set(os.listdir(root)) - {LOCK}:
            raise ConfigError('--out %s: exists, is not empty and holds no '
                              'sweep (no sweep.json); choose another folder'
                              % root)
        return
    before = read_json(meta, {'experiment': 'str?'},
                       'a sweep definition').get('experiment')
    if before != os.path.abspath(experiment):
        raise ConfigError('--out %s: holds a sweep of %s, not of %s; choose '
                          'another folder' % (root, before,
                                              os.path.abspath(experiment)))


def read_json(path, shape, what):
    """A JSON file of a results folder, checked against ``shape``
    (pipeline.shapes); a ConfigError that names the file and what is
    wrong with it."""
    from . import shapes
    try:
        with open(path) as f:
            d = json.load(f)
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    except RecursionError:
        raise ConfigError('%s: not JSON (nested too deeply)' % path) \
            from None
    except ValueError:                 # UnicodeDecodeError among them
        raise ConfigError('%s: %s is not JSON' % (
            path, os.path.basename(path))) from None
    return shapes.check(d, shape, path, what)


def read_definition(root):
    """A sweep folder's sweep.json (what the sweep was asked), checked."""
    from . import shapes
    return read_json(os.path.join(root, 'sweep.json'), shapes.SWEEP,
                     'a sweep definition')


def dry_run(specs, root, force=False):
    """What ``sweep --dry-run`` prints: each run with its folder and
    whether it would run or be skipped (done already, as the sweep would
    find it); nothing is run and nothing written."""
    path = os.path.join(root, 'runs.csv')
    done = Table(path) if os.path.isfile(path) and not force else None
    lines = []
    for s in specs:
        skip = done is not None and done.done(s, root)
        lines.append('  %-4s %s' % ('skip' if skip else 'run',
                                    os.path.join(root, s.key)))
    n = sum(1 for ln in lines if ln.startswith('  run'))
    head = ('dry run: %d runs, %d to run, %d done already (skipped); '
            'nothing run, nothing written' % (len(specs), n, len(specs) - n))
    return '\n'.join([head] + lines) + '\n'


# --- running one -----------------------------------------------------------

def command(spec, out_dir):
    """The child process's argv for one run."""
    return [sys.executable, '-m', 'netsched'] + spec.argv(out_dir)


def execute(spec, out_dir, log_path, on_start=None, stop=None):
    """Run one spec as a child ``netsched run`` into ``out_dir``, its
    output into ``log_path``. ``on_start(proc)`` hears of the child;
    ``stop`` (a threading.Event) set means: interrupt it (SIGINT, which
    every run turns into its teardown) and wait. Returns (status, error
    line, wall seconds)."""
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)            # what an earlier attempt left
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    t0 = time.monotonic()
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    with open(log_path, 'w') as log:
        # its own session: a Ctrl-C at the terminal reaches the sweep
        # only, which passes exactly one SIGINT on (a second one would cut
        # an emulation's teardown short)
        proc = subprocess.Popen(command(spec, out_dir), stdout=log,
                                stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env,
                                cwd=os.getcwd(), start_new_session=True,
                                preexec_fn=_die_with(os.getpid()))
        if on_start:
            on_start(proc)
        interrupted = False
        try:
            while True:
                try:
                    rc = proc.wait(0.2)
                    break
                except subprocess.TimeoutExpired:
                    if stop is not None and stop.is_set():
                        interrupted = True
                        rc = _interrupt(proc)
                        break
        finally:
            if proc.poll() is None:       # we are leaving on an exception
                _interrupt(proc)
    wall = time.monotonic() - t0
    if interrupted:
        return 'interrupted', 'interrupted by the sweep', wall
    if rc == 0 and os.path.isfile(os.path.join(out_dir, 'summary.json')):
        return 'ok', '', wall
    return 'failed', error_line(log_path, rc), wall


# prctl(2): a signal to the child when the thread that started it ends
# (here: with the sweep, which waits for each child on that thread)
PR_SET_PDEATHSIG = 1


def _die_with(parent):
    """A preexec function: the child gets SIGTERM (a run's own way to
    stop and say so) when the sweep dies, even by SIGKILL, which its own
    session would otherwise outlive. None where prctl is missing."""
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec():
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:       # died before prctl took
            os.kill(os.getpid(), signal.SIGTERM)
    return preexec


def lock(root):
    """Hold the sweep folder ``root`` for this sweep: a lock file
    (``sweep.lock``, this process's pid) under an exclusive flock, which
    ends with the process however it ends. A ConfigError naming the
    other sweep's pid where one holds it. Returns the open file: the
    lock lasts until it is closed (:func:`unlock`)."""
    path = os.path.join(root, LOCK)
    while True:
        try:
            f = open(path, 'a+')
        except OSError as e:
            raise ConfigError('--out %s: %s' % (root, e.strerror)) from None
        _flock(f, root)
        # a sweep ending unlinks the file it held: one that opened it
        # just before would hold a lock no later sweep sees
        try:
            same = os.stat(path).st_ino == os.fstat(f.fileno()).st_ino
        except OSError:
            same = False
        if same:
            break
        f.close()
    f.seek(0)
    f.truncate()
    f.write('%d\n' % os.getpid())
    f.flush()
    return f


def _flock(f, root):
    """Take ``f``'s exclusive flock, or close it and raise the
    ConfigError that names the sweep holding it."""
    import fcntl
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        other = f.read().strip() or 'unknown'
        f.close()
        raise ConfigError('--out %s: another sweep (pid %s) is running in '
                          'this folder; wait for it to end, or stop it '
                          '(kill %s), then run this again'
                          % (root, other, other)) from None


def unlock(f):
    """Release the sweep folder (:func:`lock`)."""
    try:
        os.unlink(f.name)
    except OSError:
        pass
    f.close()


LOCK = 'sweep.lock'


def _interrupt(proc):
    """One SIGINT (the run tears down), SIGTERM if it is still there two
    minutes later; its exit status."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.terminate()
        return proc.wait()


def error_line(log_path, rc):
    """The line that says why a run failed: netsched's error line, else
    the last line of a traceback, else the exit status."""
    try:
        with open(log_path, errors='replace') as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        lines = []
    for ln in reversed(lines):
        if ln.startswith('netsched: '):
            return ln
    if lines and ('Error' in lines[-1] or 'Exception' in lines[-1]):
        return lines[-1]
    return 'exit status %s' % rc


# --- the table -------------------------------------------------------------

def row(spec, out_dir, status, error, wall):
    """runs.csv's row for a finished run, from its summary."""
    r = dict(run=spec.key, **spec.axes())
    r.update(status=status, error=error, wall_s=round(wall, 3))
    summary = None
    if status == 'ok':
        try:
            with open(os.path.join(out_dir, 'summary.json')) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            r.update(status='failed', error='summary.json: %s' % e)
    if summary is not None:
        r.update(headline(summary))
        if summary.get('complete') is False:   # its timeout_s: partial
            r.update(status='failed', error=metrics.incomplete_text(summary))
    try:
        with open(os.path.join(out_dir, 'run.json')) as f:
            r['commit'] = json.load(f).get('commit', '')
    except (OSError, ValueError):
        r['commit'] = ''
    return r


def unfinished(path, rows, labels=None):
    """runs.csv's rows with each run that did not finish marked: where
    its folder holds its event log, ``incomplete`` says what stopped it
    and what finished (appended to its error); a run folder runs.csv has
    no row for (the sweep itself was killed while it ran) is added as
    interrupted. Their figures stay out of every ratio and mean, which
    take the finished (ok) runs only. ``labels``: sweep.json's {label:
    spec}, so that a run found without a row is shown by its label."""
    by_spec = {sp: n for n, sp in (labels or {}).items()}
    out, seen = [], set()
    for r in rows:
        seen.add(r['run'])
        if r.get('status') != 'ok':
            r = _mark(r, os.path.join(path, r['run']))
        out.append(r)
    for name in sorted(os.listdir(path)):
        d = os.path.join(path, name)
        if name in seen or not os.path.isfile(os.path.join(d,
                                                           'events.jsonl')):
            continue
        r = _mark({'run': name, 'status': 'interrupted',
                   'error': 'not in runs.csv: the sweep stopped while this '
                   'run went on'}, d, True)
        if r.get('policy') in by_spec:
            r['policy'] = by_spec[r['policy']]
        out.append(r)
    return out


def _mark(r, d, new=False):
    """Row ``r`` with what the run in folder ``d`` measured, where it did
    not finish (``new``: a row of its own, its backend, policy and seed
    from the run)."""
    try:
        s = metrics.load_summary(d)
    except (ConfigError, OSError, ValueError):
        return r                         # no log: nothing was measured
    if new:
        r = dict(r, backend=s.get('backend'), policy=s.get('policy'),
                 seed=s.get('seed'))
    text = metrics.incomplete_text(s, '')
    if text is None:
        return r
    return dict(r, incomplete=text, error='%sINCOMPLETE: %s' % (
        r['error'] + '; ' if r.get('error') else '', text))


def headline(summary):
    """The headline metrics of one run's summary, with per-job columns
    ``jct_s[JOB]`` and ``iter_mean_s[JOB]``."""
    tot = summary.get('totals', {})
    out = {m: tot.get(m) for m in HEADLINE}
    out['jobs_done'] = tot.get('jobs_done')
    out['coflows_done'] = tot.get('coflows_done')
    # an emulated run's own verdict (pipeline.verdict): a degraded one is
    # named on the sweep's page
    out['fidelity'] = (summary.get('fidelity') or {}).get('verdict')
    for j, rec in sorted(summary.get('jobs', {}).items()):
        out['jct_s[%s]' % j] = rec.get('jct_s')
        out['iter_mean_s[%s]' % j] = rec.get('iteration_time_s', {}) \
            .get('mean')
    return out


class Table:
    """runs.csv: rows by run key, rewritten whole (atomically) at each
    change, columns in first-seen order."""

    FIRST = ('run', 'backend', 'policy', 'seed')
    LAST = ('status', 'error', 'wall_s', 'jobs_done', 'coflows_done',
            'fidelity') + \
        HEADLINE + ('commit', 'out')

    def __init__(self, path, axes=()):
        self.path = path
        self.axes = list(axes)
        self.rows = {}
        if os.path.isfile(path):
            # kept as written: a row of an earlier run is rewritten as is
            for _, r in _csv_rows(path):
                self.rows[r['run']] = r

    def done(self, spec, root):
        r = self.rows.get(spec.key)
        return r is not None and r.get('status') == 'ok' and \
            os.path.isfile(os.path.join(root, spec.key, 'summary.json'))

    def add(self, r):
        """A finished run's row (the caller serialises calls)."""
        self.rows[r['run']] = dict(r, out=r['run'])
        self.write()

    def columns(self):
        cols = list(self.FIRST) + [a for a in self.axes
                                   if a not in self.FIRST]
        for r in self.rows.values():
            for c in r:
                if c not in cols and c not in self.LAST and '[' not in c:
                    cols.append(c)
        cols += list(self.LAST)
        per_job = sorted({c for r in self.rows.values() for c in r
                          if '[' in c})
        return cols + per_job

    def write(self):
        tmp = self.path + '.tmp'
        cols = self.columns()
        with open(tmp, 'w', newline='') as f:
            w = csv.DictWriter(f, cols, restval='', extrasaction='ignore')
            w.writeheader()
            for r in self.rows.values():
                w.writerow({k: '' if v is None else v for k, v in r.items()})
        os.replace(tmp, self.path)


NUMBERS = ('wall_s', 'jobs_done', 'coflows_done') + HEADLINE


def read_rows(path, root=None):
    """runs.csv as dicts, '' as None; the seed an int and the metrics
    floats; everything else (axis values among it) text as written.
    With ``root`` (the sweep folder), a row that says ok whose run
    folder holds no summary.json (deleted since) says ``missing``. A
    row that names no run folder, or a number that is not one: a
    ConfigError naming the line and column."""
    out = []
    for n, r in _csv_rows(path):
        d = {}
        for k, v in r.items():
            if v == '' or v is None:
                d[k] = None
            elif k == 'seed' or k in NUMBERS or '[' in k:
                try:
                    d[k] = int(v) if k == 'seed' else float(v)
                except ValueError:
                    raise ConfigError('%s:%d: %s: not %s: %s' % (
                        path, n, k, 'a seed' if k == 'seed' else 'a number',
                        _brief(v))) from None
            else:
                d[k] = v
        if root is not None and d.get('status') == 'ok' and \
                not os.path.isfile(os.path.join(root, d['run'],
                                                'summary.json')):
            d.update(status='missing', error='runs.csv says ok, but %s '
                     'is gone' % os.path.join(d['run'], 'summary.json'))
        out.append(d)
    return out


def _csv_rows(path):
    """(line number, row) of runs.csv, each row naming its run by a
    folder name (paths.is_component: not a path that leads out of the
    sweep folder); a ConfigError naming the line where it is not, or
    where the file is not CSV text."""
    from .paths import is_component
    try:
        with open(path, newline='') as f:
            reader = csv.DictReader(f)
            for r in reader:
                n = reader.line_num
                if None in r:
                    raise ConfigError('%s:%d: more fields than the header '
                                      'names' % (path, n))
                if not is_component(r.get('run')):
                    raise ConfigError('%s:%d: run: not a run folder name: '
                                      '%s' % (path, n, _brief(r.get('run'))))
                yield n, r
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise ConfigError('%s: not CSV text: %s' % (path, e)) from None


def _brief(v):
    from .shapes import brief
    return brief(v)


# --- the executors ---------------------------------------------------------

class LocalExecutor:
    """Runs specs on this machine: the simulations, then the ns-3 runs,
    ``jobs`` at a time, then the emulations one at a time, alone, so
    that nothing competes with their timing (they also share OVS and
    interface names)."""

    def __init__(self, jobs=None):
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.stop = threading.Event()

    def run(self, specs, root, on_done):
        """Run every spec into ``root/<key>``; ``on_done(spec, status,
        error, wall)`` as each ends (from a worker thread)."""
        for backend, n in (('sim', self.jobs), ('ns3', self.jobs),
                           ('emu', 1)):
            todo = [s for s in specs if s.backend == backend]
            if todo and not self.stop.is_set():
                self._pool(todo, n, root, on_done)

    def _pool(self, specs, n, root, on_done):
        pool = ThreadPoolExecutor(n, thread_name_prefix='run')
        try:
            futs = [pool.submit(self._one, s, root, on_done) for s in specs]
            pending = set(futs)
            while pending:
                # short waits: the main thread must stay interruptible
                _, pending = wait(pending, 0.5, FIRST_COMPLETED)
        finally:
            if pending:           # leaving early: stop what runs
                self.stop.set()
            pool.shutdown(wait=True, cancel_futures=True)

    def _one(self, spec, root, on_done):
        if self.stop.is_set():
            return
        out = os.path.join(root, spec.key)
        try:
            status, err, wall = execute(
                spec, out, os.path.join(root, 'logs', spec.key + '.log'),
                stop=self.stop)
        except Exception as e:          # recorded; the sweep goes on
            status, err, wall = 'failed', 'netsched sweep: %s: %s' % (
                type(e).__name__, e), 0.0
        on_done(spec, status, err, wall)

    def interrupt(self):
        """Stop: running children get one SIGINT and are waited for;
        the runs not started are dropped."""
        self.stop.set()


# --- the sweep -------------------------------------------------------------

def run_sweep(specs, root, definition, executor, force=False,
              progress=None, held=None):
    """Run the specs not yet done into ``root``; returns the Table.
    ``definition`` goes to sweep.json; ``progress``: a pipeline.progress
    bar (total, skipped, ok, failed); ``held``: the folder's lock where
    the caller holds it already (:func:`holding`)."""
    if held is not None:
        return _run_sweep(specs, root, definition, executor, force,
                          progress)
    with holding(root):
        return _run_sweep(specs, root, definition, executor, force,
                          progress)


@contextlib.contextmanager
def holding(root):
    """The sweep folder ``root`` made where missing and held
    (:func:`lock`) over the block; the lock file yielded. A folder made
    here and left empty (the sweep refused before any run) goes again."""
    made = not os.path.isdir(root)
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as e:
        raise ConfigError('--out %s: %s' % (root, e.strerror)) from None
    try:
        held = lock(root)
    except ConfigError:
        if made:
            _remove_if_empty(root)
        raise
    try:
        yield held
    finally:
        unlock(held)
        if made:
            _remove_if_empty(root)


def _remove_if_empty(root):
    try:
        os.rmdir(root)
    except OSError:
        pass


def _run_sweep(specs, root, definition, executor, force, progress):
    try:
        with open(os.path.join(root, 'sweep.json'), 'w') as f:
            json.dump(definition, f, indent=1)
    except OSError as e:
        raise ConfigError('--out %s: %s' % (root, e.strerror)) from None
    table = Table(os.path.join(root, 'runs.csv'),
                  [k for k, _ in definition.get('sets', [])])
    todo = [s for s in specs if force or not table.done(s, root)]
    skipped = len(specs) - len(todo)
    if progress:
        progress.start(len(specs), skipped)

    lock = threading.Lock()

    def on_done(spec, status, err, wall):
        r = row(spec, os.path.join(root, spec.key), status, err, wall)
        with lock:                      # runs end on several threads
            table.add(r)
            if progress:
                progress.update(spec.key, r)
    try:
        executor.run(todo, root, on_done)
    except KeyboardInterrupt:
        executor.interrupt()
        raise
    finally:
        if progress:
            progress.close()
    table.write()
    return table
