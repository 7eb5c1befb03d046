"""Running an experiment: output directory, backend, metrics (its
report: pipeline.report, which the command line writes).

The output directory holds ``experiment.yaml`` (the file as read, with
CLI overrides applied), ``run.json`` (seed, backend, versions, wall
time, command), ``events.jsonl`` (written as the run goes), the CSVs,
``summary.json``, the figures and ``report.html``. While the run goes,
run.json records its process (``status: running``); a run stopped by
Ctrl-C, SIGTERM or an error rewrites it with ``complete: false`` and
the cause and ends its log with ``run_incomplete``; one killed outright
leaves it saying running (metrics.stop_state tells the two apart).
summary.json is written by a run that finished only.
"""
import dataclasses
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time

import yaml

from .. import ROOT, __version__
from . import forecast
from . import metrics
from . import paths
from . import verdict
from .paths import safe_name
from ..errors import ConfigError


def commit():
    """The netsched checkout's commit (``-dirty`` with local changes to
    tracked files), or the installed version where it is not a git
    checkout."""
    try:
        # safe.directory: root reading a checkout another user owns
        git = ['git', '-c', 'safe.directory=' + ROOT, '-C', ROOT]
        sha = subprocess.run(git + ['rev-parse', 'HEAD'],
                             capture_output=True, text=True, timeout=5)
        if sha.returncode != 0:
            return __version__
        dirty = subprocess.run(git + ['status', '--porcelain',
                                      '--untracked-files=no'],
                               capture_output=True, text=True, timeout=5)
        return sha.stdout.strip() + ('-dirty' if dirty.stdout.strip()
                                     else '')
    except (OSError, subprocess.SubprocessError):
        return __version__


def check(exp, traces=None):
    """Everything about ``exp`` that can fail before it runs, beyond
    the file's own checks (``netsched check``, and every run of a sweep
    before any starts): the topology, the trace and its racks, the
    plan (placements, tuning stages), the routes the faults leave its
    traffic, the policy of a reference model
    (sim.reference.check). Returns (graph, (ports, coflows,
    racks) or None, plan or None). ``traces``: a dict that keeps loaded
    traces for the next call."""
    from .. import topology
    from ..workload import taskgraph, trace
    g = exp.graph()
    traced = None
    if exp.trace:
        if traces is None or exp.trace not in traces:
            loaded = trace.load(exp.trace)
            if traces is not None:
                traces[exp.trace] = loaded
        ports, cofs = traces[exp.trace] if traces is not None else loaded
        traced = ports, cofs, trace.rack_hosts(
            ports, topology.hosts(g), exp.trace.racks,
            '%s: trace' % (exp.path or exp.name))
    plan = taskgraph.build(exp) \
        if exp.jobs or exp.tuning or exp.backend == 'emu' else None
    if traced and plan is None and exp.faults:
        # the simulator's trace alone has no plan: its flows are checked
        # against the faults here, as a plan's are as it is built
        from ..workload import faults
        faults.check_traffic(exp.faults, g, faults.trace_senders(
            exp, traced[1], traced[2]), exp.path or exp.name)
    if exp.model != 'maxmin':          # the policies the model implements
        from ..sim import reference
        reference.check(exp)
    return g, traced, plan


# distributions whose versions a run records, where installed (Ryu or
# its fork os-ken runs the emulator's controller)
PACKAGES = ('numpy', 'networkx', 'matplotlib', 'PyYAML', 'ryu', 'os-ken',
            'eventlet', 'mininet', 'ns3')


def versions(backend=None):
    """netsched's, Python's and the main packages' versions (those
    installed); with ``backend`` emu also Open vSwitch's, asked of
    ovs-vswitchd (the simulator never runs an OVS command)."""
    from importlib import metadata
    out = {'netsched': __version__, 'python': platform.python_version()}
    for dist in PACKAGES:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    if backend == 'emu':
        try:
            r = subprocess.run(['ovs-vswitchd', '--version'],
                               capture_output=True, text=True, timeout=5)
            line = r.stdout.splitlines()[0] if r.stdout else ''
            if r.returncode == 0 and line:
                out['openvswitch'] = line.split()[-1]
        except (OSError, subprocess.SubprocessError):
            pass
    return out


def check_out(out_dir, force=False, own=None):
    """A run's or a crosscheck's --out: a new folder that can be made, an
    empty one, or with ``force`` any folder (its files of the same names
    are replaced); ``own`` 'run': with --force, not a folder that holds
    a sweep's, a crosscheck's, a compare's or a study's results
    (paths.check_out); otherwise a ConfigError that names it. Nothing is
    written."""
    paths.check_out(out_dir, force, own)


def default_out(exp):
    """results/<name>-<backend>-<policy>-<time>: the experiment's name
    and the policy as named made safe (paths.safe_name), so that the
    folder is one name inside results/ whatever they hold."""
    stamp = time.strftime('%Y%m%d-%H%M%S')
    return os.path.join('results', '%s-%s-%s-%s' % (
        safe_name(exp.name), exp.backend,
        safe_name(exp.policy_label or exp.policy), stamp))


def meta(exp, wall_s=None):
    return {'experiment': exp.name, 'backend': exp.backend,
            'policy': exp.policy, 'policy_params': dict(exp.policy_params),
            'circuit_scheduler': exp.circuits[0] if exp.circuits else None,
            'seed': exp.seed, 'scale': exp.scale,
            'scale_choice': exp.scale_choice,
            'topology': exp.topology, 'link_bps': exp.link_bps,
            'emulated_link_bps': exp.link_bps / exp.scale,
            'queues': 'exact' if exp.queues is None else exp.queues,
            'class_map': exp.class_map,
            'model': exp.model if exp.backend == 'sim' else None,
            'knobs': exp.knobs.record(),
            'threshold_floor': {
                'windows': exp.threshold_floor[0],
                'bytes': exp.threshold_floor[1],
                'raised': list(exp.threshold_floor[2] or ()) or None},
            'units': {'time': 's (data-center = emulated)',
                      'bytes': 'B, data-center (emulated = bytes / scale)',
                      'rate': 'bit/s, data-center (emulated = / scale)'}}


# what a run writes into its folder, summary.json first (its presence
# says the run finished), then the rest; the figures are also at
# figures/NAME.FORMAT where `netsched report --format` put them
RUN_FILES = ('summary.json', 'report.html', 'report.html.tmp', 'run.json',
             'run.json.tmp', 'events.jsonl', 'experiment.yaml', 'jobs.csv',
             'iterations.csv', 'coflows.csv', 'stages.csv', 'flows.csv',
             'links.csv', 'decisions.jsonl',
             # netsched export's timeline of the run: stale once it reruns
             'trace.perfetto.json')
FIGURES = ('iteration_cdf', 'jct', 'sct', 'link_utilization', 'cct_cdf',
           'topology', 'circles', 'circuits')
FIGURE_FORMATS = ('png', 'svg', 'pdf')


def leftovers(out_dir):
    """The files an earlier run left in ``out_dir`` (those of the names
    a run writes, RUN_FILES first; the emulator's agent logs; the
    figures), in the order :func:`clear` removes them."""
    import glob
    names = list(RUN_FILES) + ['%s%s.%s' % (d, f, x) for d in ('', 'figures/')
                               for f in FIGURES for x in FIGURE_FORMATS]
    found = [os.path.join(out_dir, n) for n in names
             if os.path.isfile(os.path.join(out_dir, n))]
    return found + sorted(glob.glob(os.path.join(glob.escape(out_dir),
                                                 'agent-*.log')))


def clear(out_dir):
    """Before a run into a folder that holds an earlier one (--force):
    remove what that run wrote (:func:`leftovers`; summary.json first,
    so that a rerun that fails or is stopped can never pass for the
    finished one in ``report`` or ``compare``); other files stay.
    Returns the paths removed; one that cannot be removed is a
    ConfigError naming it."""
    gone = []
    for p in leftovers(out_dir):
        try:
            os.unlink(p)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise ConfigError('--force: %s (of the run before) cannot be '
                              'removed: %s' % (p, e.strerror)) from None
        gone.append(p)
    figs = os.path.join(out_dir, 'figures')
    if gone and os.path.isdir(figs) and not os.listdir(figs):
        os.rmdir(figs)
    return gone


class _PlainDumper(yaml.SafeDumper):
    """safe_dump that writes a value met twice out twice (no anchor and
    alias: errors.yaml_loader refuses them)."""

    def ignore_aliases(self, data):
        return True


def prepare(exp, out_dir):
    """The run folder made, experiment.yaml in it (a folder that cannot
    be made or written: a ConfigError naming it)."""
    raw = dict(exp.raw or {})
    raw.update(backend=exp.backend, policy=dict(exp.policy_params,
                                                name=exp.policy))
    if exp.trace:          # the file found, its other keys as read
        t = exp.trace
        raw['trace'] = {'path': t.path, 'limit': t.limit,
                        'time_scale': t.time_scale, 'skip': t.skip,
                        'size_scale': t.size_scale, 'racks': t.racks,
                        'start_s': t.start_s}
    for i, j in enumerate(exp.jobs):
        if j.chakra is not None:     # the trace found, not the file's path
            raw['jobs'] = jobs = list(raw['jobs'])
            jobs[i] = dict(jobs[i], workload=dict(jobs[i]['workload'],
                                                  chakra=j.chakra.path))
    try:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, 'experiment.yaml'), 'w') as f:
            # no anchors: the file is read again as users' YAML is
            yaml.dump(raw, f, Dumper=_PlainDumper, sort_keys=False)
    except (OSError, ValueError) as e:    # ValueError: a NUL in the path
        raise ConfigError('--out %s: cannot be written: %s' % (
            out_dir, getattr(e, 'strerror', None) or e)) from None


class Result(tuple):
    """A run's (out_dir, summary), unpacked as a pair; ``measures``: the
    metrics its summary was made of (metrics.compute), for its report
    (report.write_run) to draw without reading the log again."""

    def __new__(cls, out_dir, summary, measures):
        r = super().__new__(cls, (out_dir, summary))
        r.measures = measures
        return r


def _before(exp, out_dir, say):
    """``exp`` as it will run, checked, before anything of the run is
    made: bounded in time, its faults refused where they strand traffic,
    and, emulated, with its packet forecast said."""
    if exp.timeout_s is None and exp.backend != 'sim':
        # every caller's run is bounded, crosscheck's and reproduce's as
        # `netsched run`'s (the simulator derives its limits itself)
        from ..workload import bounds
        exp, _ = bounds.bounded(exp, out_dir=out_dir)
    if any(f.links for f in exp.faults):
        # links down that strand a job's traffic refuse the run before
        # its folder is touched (the backend plans it again)
        check(exp)
    if exp.backend == 'emu':
        # what the emulator's packets and hosts will cost (the verdict
        # names it), simulated
        fc = forecast.packets(exp, meta(exp))
        say(forecast.line(fc))
        exp = dataclasses.replace(exp, fidelity_forecast=fc)
    return exp


def execute(exp, out_dir=None, say=print, attach=None, command=None):
    """Run one experiment; returns its Result, (out_dir, summary): the
    CSVs and summary.json are written, not report.html (report.write_run
    draws it). ``attach``: the socket of a running controller whose
    fabric to run on (emulator); it is checked before anything is
    written. ``command``: the command line run.json records (default:
    this process's). With links that fail, :func:`check` first: a fault
    set that strands some traffic is refused before the folder is
    touched."""
    if attach:
        if exp.backend != 'emu':
            raise ConfigError('%s: --attach runs on the emulator, not on '
                              'backend %s' % (exp.path or exp.name,
                                              exp.backend))
        from ..emulator.attach import AttachedFabric
        attach = AttachedFabric(exp, attach)
    exp = _before(exp, out_dir, say)
    out_dir = out_dir or default_out(exp)
    if os.path.isdir(out_dir):         # --force: the run before goes
        cleared = clear(out_dir)
        if cleared:
            say('--force: removed the %d files of the run before in %s '
                '(summary.json, report.html, ...)' % (len(cleared),
                                                       out_dir))
    prepare(exp, out_dir)
    if exp.scale_choice is not None:
        say('scale: auto -> %g: %s' % (exp.scale, exp.scale_choice['reason']))
    log_path = os.path.join(out_dir, 'events.jsonl')
    t0 = time.monotonic()
    _write_record(out_dir, dict(_record_head(exp, command), status='running',
                                started=time.strftime('%Y-%m-%dT%H:%M:%S')))
    say('%s: backend %s, policy %s, seed %d -> %s'
        % (exp.name, exp.backend, exp.policy_label or exp.policy, exp.seed,
           out_dir))
    for line in exp.knobs.environment_lines():
        say(line)
    bar = _work_bar('%s %s' % (exp.backend, exp.policy_label or exp.policy),
                    'flow' if exp.backend == 'sim' else 'transfer')
    try:
        old = _stop_on_term()
        try:
            if exp.backend == 'sim':
                from ..sim import runner
                info = runner.run(exp, log_path, say, bar)
            elif exp.backend == 'ns3':
                from ..ns3 import runner
                info = runner.run(exp, log_path, say, bar)
            else:
                from ..emulator import runner
                info = runner.run(exp, log_path, say, attach, bar)
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
            if bar is not None:
                bar.close()
    except BaseException as e:
        stopped(exp, out_dir, e, time.monotonic() - t0, command, say)
        raise
    wall = time.monotonic() - t0
    with open(os.path.join(out_dir, 'run.json'), 'w') as f:
        json.dump({'seed': exp.seed, 'backend': exp.backend,
                   'policy': exp.policy,
                   'model': exp.model if exp.backend == 'sim' else None,
                   'scale': exp.scale, 'scale_choice': exp.scale_choice,
                   'wall_s': wall,
                   'commit': commit(), 'versions': versions(exp.backend),
                   'command': list(command or sys.argv), 'knobs': exp.knobs.record(),
                   'backend_info': info}, f, indent=1)
    m = metrics.from_log(log_path)
    # a run the emulator stopped at its timeout_s says so in its summary
    summary = metrics.summarize(m, meta(exp), metrics.stop_state(m))
    metrics.write(out_dir, m, summary)
    said = verdict.line(summary.get('fidelity'))
    if said:
        say(said)
    summary['wall_s'] = wall
    return Result(out_dir, summary, m)


def _record_head(exp, command):
    """What run.json says of a run from its start: the process that runs
    it (pid, its start time and the machine: whether it still runs can
    be told) and the summary's meta (a run that stops early has its
    summary made from the log later, metrics.partial)."""
    pid = os.getpid()
    return {'seed': exp.seed, 'backend': exp.backend, 'policy': exp.policy,
            'command': list(command or sys.argv), 'pid': pid,
            'pid_start': metrics.process_start(pid),
            'host': platform.node(), 'meta': meta(exp)}


def _write_record(out_dir, d):
    tmp = os.path.join(out_dir, 'run.json.tmp')
    with open(tmp, 'w') as f:
        json.dump(d, f, indent=1)
    os.replace(tmp, os.path.join(out_dir, 'run.json'))


def _stop_on_term():
    """SIGTERM and SIGHUP end a run as Ctrl-C does (SystemExit, as the
    emulator's fabric has them while it is up), so that its log is
    closed and says why; where they are not ignored (nohup), and only in
    the main thread. Returns the handlers replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def on_term(signum, frame):
        raise SystemExit(128 + signum)
    return {sig: signal.signal(sig, on_term)
            for sig in (signal.SIGTERM, signal.SIGHUP)
            if signal.getsignal(sig) == signal.SIG_DFL}


def stop_cause(e):
    """(cause, reason) of a run stopped by the exception ``e``."""
    if isinstance(e, KeyboardInterrupt):
        return 'interrupted', 'interrupted (SIGINT)'
    if isinstance(e, SystemExit):
        code = e.code
        if isinstance(code, int) and code > 128:
            try:
                name = signal.Signals(code - 128).name
            except ValueError:
                name = 'signal %d' % (code - 128)
            return 'terminated', 'terminated (%s)' % name
        return 'failed', 'exited (status %s)' % code
    if isinstance(e, ConfigError):
        return 'failed', 'failed: %s' % e
    return 'failed', 'failed: %s: %s' % (type(e).__name__, e)


def stopped(exp, out_dir, e, wall, command=None, say=print):
    """A run stopped by ``e`` before its end keeps what it measured: its
    event log (both backends close it on the way out) gets a
    ``run_incomplete`` event with the cause, and run.json says so;
    summary.json is not written (its presence means the run finished):
    ``netsched report`` and ``compare`` make the summary from the log."""
    cause, reason = stop_cause(e)
    log_path = os.path.join(out_dir, 'events.jsonl')
    try:
        t = _last_time(log_path)
        if t is not None:
            with open(log_path, 'a') as f:
                f.write(json.dumps({'cause': cause, 'why': reason, 't': t,
                                    'ev': 'run_incomplete'},
                                   separators=(',', ':')) + '\n')
        _write_record(out_dir, dict(
            _record_head(exp, command), wall_s=wall, commit=commit(),
            versions=versions(exp.backend), knobs=exp.knobs.record(),
            complete=False, stopped={'cause': cause, 'reason': reason}))
    except OSError:
        return                   # the exception that stopped it says more
    if t is not None:
        say('%s at t=%.4g s: what it measured is in %s (`netsched report '
            '%s`)' % (reason, t, log_path, out_dir))


def _last_time(path, tail=1 << 20):
    """The time of a log's last event, from its last MB; None for a log
    that is missing, holds no event or ends in a cut line (nothing may be
    appended after that)."""
    try:
        with open(path, 'rb') as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - tail))
            data = f.read()
    except OSError:
        return None
    if not data.endswith(b'\n'):
        return None
    for line in reversed(data.splitlines()):
        try:
            return float(json.loads(line)['t'])
        except (ValueError, KeyError, TypeError):
            continue
    return None


def _work_bar(desc, unit):
    """A bar over a run's work on a terminal (None elsewhere: the
    runners' periodic lines say the same in a log)."""
    from . import progress
    if not progress.is_terminal():
        return None
    return progress.RunBar(desc, unit)


def table(summary):
    """The summary as a few printed lines."""
    lines = [x for x in [metrics.incomplete_text(summary)] if x]
    tot = summary['totals']
    if summary['jobs']:
        lines.append('%-16s %10s %6s %12s %12s %12s'
                     % ('job', 'JCT s', 'iters', 'iter mean ms',
                        'iter p50 ms', 'iter p99 ms'))
        for j, r in summary['jobs'].items():
            it = r['iteration_time_s']
            lines.append('%-16s %10s %6d %12s %12s %12s' % (
                j, 'FAILED' if r.get('failed') else 'unfinished'
                if r.get('finished') is False
                else _f(r['jct_s'], 3), r['iterations'],
                _f(it['mean'], 1, 1e3),
                _f(it['p50'], 1, 1e3), _f(it['p99'], 1, 1e3)))
        lines.append('jobs: %d done of %d, average JCT %s s'
                     % (tot['jobs_done'], len(summary['jobs']),
                        _f(tot['avg_jct_s'], 3)))
        for j, r in summary['jobs'].items():
            if r.get('failed'):
                lines.append('FAILED %s: %s' % (j, r['failed']))
    if summary['coflows']:
        lines.append('coflows: %d done of %d, average CCT %s s, p95 %s s'
                     % (tot['coflows_done'], len(summary['coflows']),
                        _f(tot['avg_cct_s'], 4), _f(tot['p95_cct_s'], 4)))
    if summary['stages']:
        lines.append('stages: average SCT %s s (%s)' % (
            _f(tot.get('avg_sct_s'), 3), ', '.join(
                '%s %s s' % (s, _f(r['sct_s'], 3))
                for s, r in summary['stages'].items())))
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
