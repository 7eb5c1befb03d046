"""A run folder as a reader finds it: a run that did not finish (what
stopped it, from its log and its run record run.json; whether its
process, named by pid and /proc start time, still runs), its summary
made from what it logged, summary.json read and checked, a damaged
folder named, and what the backend recorded of itself (run.json's
backend_info, the emulator's TCP diagnostics).
"""
import contextlib
import json
import os

from ...errors import ConfigError, NetschedError, yaml_loader
from .. import shapes
from .logread import check_log, from_log
from .summaries import SUMMARY_FORMAT, summarize


def stop_state(m, record=None, cut_line=None):
    """None for a run that finished (its log has ``run_end`` and no
    ``run_incomplete``). Otherwise what stopped it: from the log's own
    ``run_incomplete`` event (a run writes it as it stops on Ctrl-C,
    SIGTERM or an error, the emulator on its timeout_s), else from its
    run record ``record`` (run.json; a run recorded as running whose
    process is gone was killed: SIGKILL, a crash or the machine going
    down leave no word). A dict: ``cause`` (killed, interrupted,
    terminated, failed, timeout or running), ``reason`` (a sentence),
    ``last_event`` (the log's last event kind) and ``cut_line`` (the
    number of a last line cut mid-write and left out, else None)."""
    log = m.get('log') or {}
    record = record or {}
    if log.get('ended') and not log.get('stops'):
        return None
    where = 'pid %s on %s' % (record.get('pid'), record.get('host'))
    if log.get('stops'):
        e = log['stops'][0]                # the first: what stopped it
        why = e.get('why') or 'stopped'
        cause = e.get('cause') or ('timeout' if 'timeout' in why
                                   else 'stopped')
    elif record.get('stopped'):           # the log could not say it
        cause = record['stopped'].get('cause', 'stopped')
        why = record['stopped'].get('reason', cause)
    elif record.get('status') == 'running':
        alive = process_alive(record)
        if alive:
            cause, why = 'running', 'still running (%s)' % where
        elif alive is False:
            cause, why = 'killed', ('killed: its process (%s) is gone and '
                                    'left no end in its log (SIGKILL, a '
                                    'crash or the machine stopping)' % where)
        else:
            cause, why = 'killed', ('its log stops without an end and its '
                                    'process (%s) is not on this machine: '
                                    'killed, or still running there' % where)
    else:
        cause, why = 'killed', ('killed: its log stops without an end and '
                                'it left no run record (run.json)')
    return {'cause': cause, 'reason': why, 'last_event': log.get(
        'last_event'), 'cut_line': cut_line}


def process_start(pid):
    """A process's start time in clock ticks since boot (/proc), to tell
    it from a later process given the same pid; None where unknown."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return int(f.read().rpartition(')')[2].split()[19])
    except (OSError, ValueError, IndexError, TypeError):
        return None


def process_alive(record):
    """Whether the process a run record (run.json) names still runs:
    True, False, or None where it cannot be told (another machine)."""
    import platform
    pid = record.get('pid')
    if not isinstance(pid, int) or record.get('host') != platform.node():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:            # alive, someone else's
        pass
    except (OSError, OverflowError):
        return False
    start = record.get('pid_start')
    now = process_start(pid)
    return start is None or now is None or now == start


def _record(path):
    """run.json as a reader of a run that did not finish takes it: {}
    where it is missing or not a JSON object; its ``meta`` and
    ``stopped`` left out where they are not as a run writes them (the
    event log is the run's measure, the record only adds to it)."""
    try:
        with open(os.path.join(path, 'run.json')) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(d, dict):
        return {}
    out = {}
    for k, v in d.items():
        shape = shapes.RUN_RECORD.get(k + '?')
        if shape is None or not shapes.problem(v, shape):
            out[k] = v
    return out


def meta_guess(path, m):
    """A summary's meta for a run whose record does not hold it (a run
    from before run.json recorded it): experiment.yaml's keys as
    written, the backend, policy and seed from the log's ``run_start``."""
    import yaml
    try:
        with open(os.path.join(path, 'experiment.yaml')) as f:
            d = yaml.load(f, Loader=yaml_loader())
    except (OSError, ValueError, yaml.YAMLError, ConfigError):
        d = None
    d = d if isinstance(d, dict) else {}
    start = (m.get('log') or {}).get('start') or {}
    pol = d.get('policy')
    params = {k: v for k, v in pol.items() if k != 'name'} \
        if isinstance(pol, dict) else {}
    meta = {'experiment': d.get('name') or os.path.basename(
                os.path.abspath(path)),
            'backend': start.get('backend', d.get('backend')),
            'policy': start.get('policy', pol.get('name')
                                if isinstance(pol, dict) else pol),
            'policy_params': params, 'circuit_scheduler': None,
            'seed': start.get('seed', d.get('seed')),
            'scale': d.get('scale'), 'topology': d.get('topology'),
            'link_bps': d.get('link_bps'), 'queues': d.get('queues')}
    # a guess: a value of another type than a run records is left out
    meta = {k: None if shapes.problem(v, shapes.META[k + '?']) else v
            for k, v in meta.items()}
    meta['experiment'] = meta['experiment'] or os.path.basename(
        os.path.abspath(path))
    return meta


def partial(path):
    """(metrics, summary) of a run folder that holds no summary.json
    (killed, interrupted, failed or still running), from its event log
    as far as it goes: the summary marked ``complete: false`` with what
    stopped the run (:func:`stop_state`) and the time it stopped
    (``stopped_s``: the log's last time); a last line cut mid-write is
    left out and named. Its meta is the one run.json recorded as the run
    began. A log that did end (the run was stopped while writing its
    results) gives the finished run's summary."""
    cut = []
    with reading(path):
        m = from_log(os.path.join(path, 'events.jsonl'), cut)
        record = _record(path)
        stop = stop_state(m, record, cut[0] if cut else None)
        return m, summarize(m, record.get('meta') or meta_guess(path, m),
                            stop)


def load_summary(path):
    """summary.json of a results directory (or the file itself); for a
    run folder without one but with its event log, the summary of what
    the run measured, marked incomplete (:func:`partial`)."""
    if os.path.isdir(path) and not os.path.isfile(
            os.path.join(path, 'summary.json')) and os.path.isfile(
            os.path.join(path, 'events.jsonl')):
        return partial(path)[1]
    p = os.path.join(path, 'summary.json') if os.path.isdir(path) else path
    try:
        with open(p) as f:
            s = json.load(f)
    except OSError as e:
        raise ConfigError('%s: %s' % (p, e.strerror)) from None
    except RecursionError:
        raise ConfigError('%s: not JSON (nested too deeply)' % p) from None
    except ValueError:                 # UnicodeDecodeError among them
        raise ConfigError('%s: not JSON' % p) from None
    if not isinstance(s, dict) or s.get('format') != SUMMARY_FORMAT:
        raise ConfigError('%s: not a netsched summary (%s)' % (
            p, 'format %s' % shapes.brief(s.get('format'))
            if isinstance(s, dict) else 'it is %s, not an object'
            % shapes.brief(s)))
    return shapes.check(s, shapes.SUMMARY, p)


# what a reader of a damaged folder may raise, where its data is not as
# a run writes it
DAMAGE = (TypeError, KeyError, ValueError, AttributeError, IndexError,
          ZeroDivisionError, OverflowError)


@contextlib.contextmanager
def reading(folder):
    """Around code that reads the run folder ``folder``: an exception of
    DAMAGE (not a NetschedError) raised inside becomes the ConfigError
    that names the file, line and field where its summary.json or
    events.jsonl is damaged, if they are; else it goes on as it was (a
    bug, its traceback kept). The event log is checked only then: the
    readers' own speed is not paid for."""
    try:
        yield
    except NetschedError:
        raise
    except DAMAGE:
        err = damage(folder)
        if err is None:
            raise
        raise err from None


def damage(folder):
    """The ConfigError that says what is damaged in the run folder
    ``folder`` (summary.json's shape, then each event's), or None."""
    try:
        if os.path.isfile(os.path.join(folder, 'summary.json')):
            load_summary(os.path.join(folder, 'summary.json'))
        log = os.path.join(folder, 'events.jsonl')
        return check_log(log) if os.path.isfile(log) else None
    except ConfigError as e:
        return e


def backend_info(out):
    """run.json's backend_info of the run in ``out``; None where the run
    wrote none (it failed early)."""
    try:
        with open(os.path.join(out, 'run.json')) as f:
            return json.load(f).get('backend_info') or {}
    except (OSError, ValueError):
        return None


def diagnostics(out, b=None):
    """TCP retransmissions, timeouts and held time of an emulator run
    (run.json's backend_info, or ``b``, one read already); a field the
    run did not record is None."""
    b = backend_info(out) if b is None else b
    if b is None:
        return {}
    by_conn = b.get('tcp_retransmits_by_connection')
    retrans = b.get('tcp_retransmits')
    if retrans is None and by_conn is not None:
        retrans = sum(v or 0 for v in by_conn.values())
    worst = max(by_conn.items(), key=lambda kv: kv[1] or 0) \
        if by_conn else None
    timeouts = b.get('tcp_timeouts_by_host')
    paused = b.get('paused_s')
    if paused is None and b.get('paused_s_by_connection') is not None:
        paused = sum(v or 0 for v in b['paused_s_by_connection'].values())
    rto = b.get('tcp_rto_recovery_s_by_connection')
    lost = {k: sum((b.get(k) or {}).values()) for k in (
        'queue_drops_by_interface', 'ovs_drops_by_port',
        'socket_drops_by_port') if k in b}
    return {'retransmits': retrans,
            'drops': sum(lost.values()) if lost else None,
            'drops_at': {k.split('_')[0]: n for k, n in lost.items() if n},
            'worst_connection': list(worst) if worst else None,
            'timeouts': None if timeouts is None else
            sum(v or 0 for v in timeouts.values()),
            'rto_s': None if rto is None else
            round(sum(v or 0 for v in rto.values()), 3),
            'paused_s': paused}
