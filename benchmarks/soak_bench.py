"""Soak benchmark (issue 27; needs root and OVS: `make bench-soak`): an
experiment (default experiments/demo.yaml) run N times in a row on the
emulator, each as its own `netsched run --backend emu` child process (so
a run's descriptors and threads cannot hide in this process), one at a
time; after each run and at the end, what the machine holds against a
baseline taken before the first run:

  - bridges        `ovs-vsctl list-br`
  - interfaces     `ip -o link show` (the root namespace's), by name
  - netns          `ip netns list`, and the distinct network namespaces
                   of live processes (/proc/*/ns/net: Mininet's hosts are
                   unnamed namespaces), each named with a process in it
  - qdiscs         `tc qdisc show` (the root namespace's interfaces), by
                   interface, kind, handle and parent
  - processes      those whose command line mentions mnexec, a Mininet
                   host shell (mininet:), ryu-manager, osken-manager,
                   controllers/launch.py or netsched.host.agent, by pid
                   and start time
  - children       this benchmark's own descendants: it makes itself the
                   child subreaper, so a run's orphaned processes are
                   reparented here rather than to init and show up
  - ovs fds        how many descriptors ovs-vswitchd and ovsdb-server
                   hold (/proc/PID/fd): more than at the baseline is a
                   leak; a changed pid (a restart) is reported as such
  - run records    entries of /run/netsched/runs ($NETSCHED_RUNS_DIR)

Anything there that was not at the baseline is a leftover, reported by
name. Teardown is synchronous but the kernel frees a namespace's
interfaces a little later, so a check that finds something looks again
every second for up to --settle-s before it reports; what the first
look saw and how long it took to clear are kept. The benchmark never
kills or deletes anything (`netsched clean` is the user's tool); a
child it became the parent of and that has exited is reaped after it is
reported. Ctrl-C reaches the running child too, which tears down; the
benchmark waits for it, then checks and writes what it has.

Per run: wall time, the summary's average JCT, and each job's JCT and
mean iteration time (DIR/run-K/summary.json). At the end: mean, sd
(n - 1), min-max of each, the runs outside mean +/- 3 sd (with the sd of
all the runs, a run can be that far out only when there are more than 10
runs: (n-1)/sqrt(n) > 3), and the runs whose set of finished jobs is not
the most common one; then the leftover table: all zero is the pass.

    sudo .venv/bin/python benchmarks/soak_bench.py [--runs 20]
        [--experiment experiments/demo.yaml] [--out results/bench-soak.json]
        [--run-dir DIR] [--settle-s 10]

Results go to --out as each run ends (an interrupted soak keeps what it
measured); the runs' own folders and logs to --run-dir (default
results/bench-soak/<time>). Exit status 1 if anything was left (after a
run or at the end), a check could not be read at the end, or a run
failed (non-zero exit, no summary, a job unfinished, or a job set unlike
the others); runs outside their spread are flagged but do not change it
(timing on a shared machine is the reader's to judge).
"""
import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETSCHED = [sys.executable, '-m', 'netsched']
RUNS_DIR = os.environ.get('NETSCHED_RUNS_DIR', '/run/netsched/runs')
OVS_PIDFILES = '/var/run/openvswitch'
OVS_DAEMONS = ('ovs-vswitchd', 'ovsdb-server')
# what the emulator starts: Mininet's launcher and (after mnexec execs
# it) a host's shell, the controller under either framework, the agents
PATTERNS = ('mnexec', 'mininet:', 'ryu-manager', 'osken-manager',
            'controllers/launch.py', 'netsched.host.agent')
CHECKS = ('bridges', 'interfaces', 'netns', 'qdiscs', 'processes',
          'children', 'ovs_fds', 'run_records')
PR_SET_CHILD_SUBREAPER = 36


# -- reading the machine's state (the parsers take command output) --

def parse_bridges(text):
    """`ovs-vsctl list-br`: one bridge a line."""
    return {b: 'bridge %s' % b for b in text.split()}


def parse_links(text):
    """`ip -o link show`: 'IDX: NAME[@PEER]: <FLAGS> ...' a line."""
    out = {}
    for line in text.splitlines():
        parts = line.split(':', 2)
        if len(parts) >= 3:
            name = parts[1].strip().split('@')[0]
            if name:
                out[name] = 'interface %s' % name
    return out


def parse_netns(text):
    """`ip netns list`: 'NAME' or 'NAME (id: N)' a line."""
    return {'netns ' + line.split()[0]: 'named netns %s' % line.split()[0]
            for line in text.splitlines() if line.strip()}


def parse_qdiscs(text):
    """`tc qdisc show`: 'qdisc KIND HANDLE dev DEV root|parent P ...' a
    line, keyed by interface, kind, handle and parent (counters and
    options left out, so only a qdisc that is new counts)."""
    out = {}
    for line in text.splitlines():
        w = line.split()
        if len(w) < 5 or w[0] != 'qdisc' or 'dev' not in w[:-1]:
            continue
        dev = w[w.index('dev') + 1]
        where = 'root'
        if 'parent' in w and w.index('parent') + 1 < len(w):
            where = 'parent ' + w[w.index('parent') + 1]
        key = '%s %s %s %s' % (dev, w[1], w[2], where)
        out[key] = 'qdisc %s %s on %s (%s)' % (w[1], w[2], dev, where)
    return out


def read_procs(proc='/proc'):
    """pid -> {ppid, start, state, comm, cmdline, netns} of every process
    that can be read (a process that ends while it is read is left out;
    netns is None where it cannot be read, e.g. without root)."""
    procs = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        d = os.path.join(proc, name)
        try:
            with open(os.path.join(d, 'stat')) as f:
                stat = f.read()
            with open(os.path.join(d, 'cmdline'), 'rb') as f:
                cmd = f.read()
        except OSError:
            continue
        close = stat.rindex(')')
        rest = stat[close + 2:].split()
        try:
            ns = os.readlink(os.path.join(d, 'ns', 'net'))
        except OSError:
            ns = None
        procs[int(name)] = {
            'comm': stat[stat.index('(') + 1:close], 'state': rest[0],
            'ppid': int(rest[1]), 'start': int(rest[19]),
            'cmdline': ' '.join(a.decode(errors='replace')
                                for a in cmd.split(b'\0') if a),
            'netns': ns}
    return procs


def _who(pid, p):
    what = ' '.join((p['cmdline'] or '[%s]' % p['comm']).split())
    return 'pid %d (%s)' % (pid, what[:100])


def process_netns(procs):
    """The distinct network namespaces of the processes, each with the
    lowest pid in it."""
    out = {}
    for pid in sorted(procs, reverse=True):
        ns = procs[pid]['netns']
        if ns:
            out[ns] = '%s held by %s' % (ns, _who(pid, procs[pid]))
    return out


def matching(procs, me, patterns=PATTERNS):
    """The processes (but this one) whose command line mentions one of
    the patterns, keyed by pid and start time (a recycled pid is
    another process)."""
    return {'%d:%d' % (pid, p['start']): _who(pid, p)
            for pid, p in sorted(procs.items())
            if pid != me and any(x in p['cmdline'] for x in patterns)}


def descendants(procs, me):
    """Every live or exited-but-unreaped process below ``me``."""
    kids = {}
    for pid, p in procs.items():
        kids.setdefault(p['ppid'], []).append(pid)
    out, todo = {}, list(kids.get(me, []))
    while todo:
        pid = todo.pop()
        p = procs[pid]
        what = _who(pid, p)
        if p['state'] == 'Z':
            what += ' exited, not yet reaped'
        out['%d:%d' % (pid, p['start'])] = what
        todo += kids.get(pid, [])
    return out


def ovs_pid(name, procs, pidfiles=OVS_PIDFILES):
    """The daemon's pid from its pidfile, else the lowest-numbered
    process of that name (None if it is not running)."""
    try:
        with open(os.path.join(pidfiles, name + '.pid')) as f:
            pid = int(f.read().strip())
        if pid in procs:
            return pid
    except (OSError, ValueError):
        pass
    pids = sorted(p for p, r in procs.items() if r['comm'] == name)
    return pids[0] if pids else None


def fd_count(pid, proc='/proc'):
    try:
        return len(os.listdir(os.path.join(proc, str(pid), 'fd')))
    except OSError:
        return None


def run_records(runs_dir):
    """Entries of the runs folder, each with its owner pid if it has a
    readable state.json."""
    if not os.path.isdir(runs_dir):
        return {}
    out = {}
    for name in sorted(os.listdir(runs_dir)):
        what = 'run record %s' % os.path.join(runs_dir, name)
        try:
            with open(os.path.join(runs_dir, name, 'state.json')) as f:
                what += ' (owner pid %s)' % json.load(f).get('owner_pid')
        except (OSError, ValueError, AttributeError):
            pass
        out[name] = what
    return out


def _command(args):
    """stdout of a command; raises OSError when it fails."""
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise OSError('`%s` exited %d: %s' % (' '.join(args), r.returncode,
                                              r.stderr.strip()[:200]))
    return r.stdout


COMMANDS = {'bridges': (['ovs-vsctl', '--timeout=10', 'list-br'],
                        parse_bridges),
            'interfaces': (['ip', '-o', 'link', 'show'], parse_links),
            'named_netns': (['ip', 'netns', 'list'], parse_netns),
            'qdiscs': (['tc', 'qdisc', 'show'], parse_qdiscs)}


def snapshot(command=_command, proc='/proc', runs_dir=RUNS_DIR,
             pidfiles=OVS_PIDFILES, me=None):
    """What the machine holds now: check -> {key: description}, ovs_fds
    -> {daemon: [pid, count]}, and errors -> {check: why it could not be
    read}. /proc is read before the commands run, so that ovs-vsctl's
    own connection is not counted in ovsdb-server's descriptors."""
    if me is None:
        me = os.getpid()
        # an orphan of a run that has exited is this subreaper's to
        # collect (init would have at once): an exit is not a leftover
        reap_exited()
    procs = read_procs(proc)
    snap = {'errors': {}}
    snap['ovs_fds'] = {}
    for name in OVS_DAEMONS:
        pid = ovs_pid(name, procs, pidfiles)
        snap['ovs_fds'][name] = [pid, fd_count(pid, proc)
                                 if pid is not None else None]
    snap['processes'] = matching(procs, me)
    snap['children'] = descendants(procs, me)
    snap['netns'] = process_netns(procs)
    if not snap['netns']:
        snap['errors']['netns'] = 'no /proc/*/ns/net readable (not root?)'
    snap['run_records'] = run_records(runs_dir)
    for check, (args, parse) in COMMANDS.items():
        try:
            got = parse(command(args))
        except (OSError, subprocess.SubprocessError) as e:
            snap['errors'][check] = str(e)
            got = {}
        if check == 'named_netns':
            snap['netns'].update(got)
        else:
            snap[check] = got
    return snap


def diff(base, now):
    """check -> [what is there now and was not at the baseline], sorted;
    for the OVS daemons, a descriptor count above the baseline's or a
    daemon restarted or gone. Checks with nothing new are left out."""
    left = {}
    for check in CHECKS:
        if check == 'ovs_fds':
            found = []
            for name, (pid0, n0) in sorted(base.get('ovs_fds', {}).items()):
                pid, n = now.get('ovs_fds', {}).get(name, [None, None])
                if pid0 is None:
                    continue
                if pid is None:
                    found.append('%s not running (was pid %d)'
                                 % (name, pid0))
                elif pid != pid0:
                    found.append('%s restarted: pid %d -> %d (descriptors '
                                 'not comparable)' % (name, pid0, pid))
                elif n is not None and n0 is not None and n > n0:
                    found.append('%s pid %d: %d descriptors, %d more than '
                                 'at the baseline' % (name, pid, n, n - n0))
        else:
            was = base.get(check, {})
            found = [d for k, d in sorted(now.get(check, {}).items())
                     if k not in was]
        if found:
            left[check] = found
    return left


# -- a run's figures and their spread --

def figures(summary):
    """From a run's summary.json: the average JCT, each job's JCT and
    mean iteration time, the finished jobs and whether all finished."""
    jobs = summary.get('jobs') or {}
    return {'avg_jct_s': (summary.get('totals') or {}).get('avg_jct_s'),
            'jct_s': {j: r.get('jct_s') for j, r in sorted(jobs.items())},
            'iteration_s': {j: (r.get('iteration_time_s') or {}).get('mean')
                            for j, r in sorted(jobs.items())},
            'jobs': sorted(j for j, r in jobs.items()
                           if r.get('jct_s') is not None),
            'complete': bool(jobs and summary.get('complete', True)
                             and all(r.get('jct_s') is not None
                                     for r in jobs.values()))}


def series(runs):
    """metric -> [(run index, value)] over the runs that have figures:
    wall time, average JCT, each job's mean iteration time."""
    out = {}
    for r in runs:
        f = r.get('figures')
        if not f or r.get('rc') != 0:
            continue
        vals = [('wall_s', r['wall_s']), ('avg_jct_s', f['avg_jct_s'])]
        vals += [('iteration_s[%s]' % j, v)
                 for j, v in sorted(f['iteration_s'].items())]
        for m, v in vals:
            if v is not None:
                out.setdefault(m, []).append((r['run'], v))
    return out


def spread(values):
    """mean, sample sd (n - 1; 0 for one value), min, max."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) \
        if n > 1 else 0.0
    return {'n': n, 'mean': mean, 'sd': sd, 'min': min(values),
            'max': max(values)}


def flags(runs, k=3.0):
    """The runs outside mean +/- k sd of a metric, and the runs whose
    set of finished jobs is not the most common set."""
    out = []
    for m, pts in sorted(series(runs).items()):
        s = spread([v for _, v in pts])
        for i, v in pts:
            if s['sd'] > 0 and abs(v - s['mean']) > k * s['sd']:
                out.append({'run': i, 'metric': m, 'value': v,
                            'why': '%.4g is %.1f sd from the mean %.4g'
                            % (v, abs(v - s['mean']) / s['sd'], s['mean'])})
    sets = [(r['run'], tuple(r['figures']['jobs'])) for r in runs
            if r.get('figures')]
    if sets:
        common = Counter(s for _, s in sets).most_common(1)[0][0]
        for i, s in sets:
            if s != common:
                out.append({'run': i, 'metric': 'jobs', 'value': list(s),
                            'why': 'finished %s, most runs %s'
                            % (', '.join(s) or 'none', ', '.join(common))})
    return out


def table(runs, final):
    """The leftover table: per check, the runs after which something new
    was there (a leftover that stays is found after every later run too),
    and what is left at the end (all zero is the pass)."""
    lines = ['%-12s %-24s %s' % ('check', 'found after runs',
                                 'left at the end')]
    for check in CHECKS:
        after = [r['run'] for r in runs if check in (r.get('left') or {})]
        lines.append('%-12s %-24s %d' % (
            check, '%d%s' % (len(after), ' (runs %s)' % ','.join(
                map(str, after)) if after else ''),
            len(final.get(check, []))))
    return '\n'.join(lines)


# -- running --

class Results:
    """The results file, rewritten whole as each figure arrives."""

    def __init__(self, path, data):
        self.path = path
        self.data = data
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.save()

    def save(self):
        tmp = self.path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def become_subreaper():
    """Orphans of the runs are reparented to this process rather than
    to init, so `children` sees them; False where the kernel says no."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_exited():
    """Collect every exited child of this process (between runs: no run
    is going)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def reap(children):
    """Collect the exit status of exited children (keys 'pid:start') so
    they are not reported again; a live one is left alone."""
    for key in children:
        try:
            os.waitpid(int(key.split(':')[0]), os.WNOHANG)
        except ChildProcessError:
            pass


def settled(base, take, settle_s, sleep=time.sleep):
    """Look until nothing is left or settle_s has passed; returns (what
    the first look found, what is left, seconds it took, the last
    snapshot)."""
    t0 = time.monotonic()
    now = take()
    first = left = diff(base, now)
    while left and time.monotonic() - t0 < settle_s:
        sleep(1.0)
        now = take()
        left = diff(base, now)
    return first, left, round(time.monotonic() - t0, 1), now


def launch(cmd, log_path):
    """Run one child to its end; returns (its exit status, whether Ctrl-C
    was pressed). Ctrl-C reaches the child as well, which tears down; it
    is waited for, not killed. A second Ctrl-C stops waiting (the status
    is then None)."""
    with open(log_path, 'w') as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                             cwd=ROOT)
        interrupted = False
        while True:
            try:
                return p.wait(), interrupted
            except KeyboardInterrupt:
                if interrupted:
                    return None, True
                interrupted = True
                print('  interrupted: waiting for the run to tear down '
                      '(Ctrl-C again stops waiting; nothing is killed)',
                      flush=True)


def tail(path, n=5):
    try:
        with open(path) as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


def soak(args, say, take=snapshot, run=launch):
    """The whole benchmark; returns its exit status."""
    res = Results(args.out, {
        'started': time.strftime('%Y-%m-%d %H:%M:%S'),
        'experiment': args.experiment, 'runs_planned': args.runs,
        'run_dir': args.run_dir, 'settle_s': args.settle_s, 'runs': []})
    os.makedirs(args.run_dir, exist_ok=True)
    base = take()
    res.data['baseline'] = base
    res.save()
    say('baseline: %d bridges, %d interfaces, %d namespaces, %d qdiscs, '
        '%d emulator processes, %d run records; ovs fds %s'
        % (len(base['bridges']), len(base['interfaces']), len(base['netns']),
           len(base['qdiscs']), len(base['processes']),
           len(base['run_records']),
           ', '.join('%s %s' % (n, c) for n, (_, c)
                     in sorted(base['ovs_fds'].items()))))
    for check, why in sorted(base['errors'].items()):
        say('  cannot read %s: %s' % (check, why))
    runs = res.data['runs']
    interrupted = False
    for k in range(1, args.runs + 1):
        out = os.path.join(args.run_dir, 'run-%d' % k)
        log = out + '.log'
        cmd = NETSCHED + ['run', args.experiment, '--backend', 'emu',
                          '--out', out]
        t0 = time.monotonic()
        rc, interrupted = run(cmd, log)
        rec = {'run': k, 'rc': rc, 'wall_s': round(time.monotonic() - t0, 2),
               'out': out, 'log': log}
        try:
            with open(os.path.join(out, 'summary.json')) as f:
                rec['figures'] = figures(json.load(f))
        except (OSError, ValueError) as e:
            rec['figures'] = None
            rec['error'] = 'no summary: %s' % e
        first, left, secs, now = settled(base, take, args.settle_s)
        reap(now['children'])
        rec['left'] = left
        rec['ovs_fds'] = now['ovs_fds']
        if first:
            rec['first_look'], rec['settle_s'] = first, secs
        runs.append(rec)
        res.save()
        f = rec['figures'] or {}
        say('run %d/%d: exit %s, %.1f s, average JCT %s, %s' % (
            k, args.runs, rc, rec['wall_s'],
            '%.3f s' % f['avg_jct_s'] if f.get('avg_jct_s') else '-',
            'left: ' + '; '.join(x for v in left.values() for x in v)
            if left else 'nothing left' + (
                ' (after %.1f s)' % secs if first else '')))
        if rc != 0:
            for line in tail(log):
                say('    | ' + line)
        if interrupted:
            rec['interrupted'] = True
            say('interrupted: stopped after run %d' % k)
            break
    first, final, secs, now = settled(base, take, args.settle_s)
    reap(now['children'])
    res.data['final'] = {'left': final, 'ovs_fds': now['ovs_fds'],
                         'errors': now['errors'], 'settle_s': secs}
    sp = {m: spread([v for _, v in pts])
          for m, pts in sorted(series(runs).items())}
    fl = flags(runs)
    failed = [r['run'] for r in runs if r['rc'] != 0 or not r['figures']
              or not r['figures']['complete']]
    failed += sorted({x['run'] for x in fl if x['metric'] == 'jobs'}
                     - set(failed))
    any_left = bool(final) or any(r['left'] for r in runs)
    unread = sorted(now['errors'])
    ok = not (any_left or failed or unread or interrupted)
    res.data.update({'spread': sp, 'flags': fl, 'failed_runs': failed,
                     'interrupted': interrupted, 'pass': ok,
                     'ended': time.strftime('%Y-%m-%d %H:%M:%S')})
    res.save()
    say('\n%d runs of %s' % (len(runs), args.experiment))
    say('%-28s %10s %9s %21s' % ('', 'mean', 'sd', 'min-max'))
    for m, s in sp.items():
        say('%-28s %10.3f %9.3f %10.3f-%-10.3f' % (m, s['mean'], s['sd'],
                                                   s['min'], s['max']))
    for x in fl:
        say('FLAG run %d %s: %s' % (x['run'], x['metric'], x['why']))
    if failed:
        say('failed runs: %s' % ', '.join(map(str, failed)))
    say('\nleftovers (against the baseline; all zero is the pass)')
    say(table(runs, final))
    for check, found in sorted(final.items()):
        for x in found:
            say('  left at the end: %s' % x)
    for check in unread:
        say('  could not read %s: %s' % (check, now['errors'][check]))
    say('%s; results: %s' % ('PASS' if ok else 'FAIL', args.out))
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--runs', type=int, default=20)
    ap.add_argument('--experiment',
                    default=os.path.join('experiments', 'demo.yaml'))
    ap.add_argument('--out', default=os.path.join('results',
                                                  'bench-soak.json'),
                    help='the results file (default %(default)s)')
    ap.add_argument('--run-dir', help="the runs' folders and logs "
                    '(default results/bench-soak/<time>)')
    ap.add_argument('--settle-s', type=float, default=10.0,
                    help='how long a check that finds something keeps '
                    'looking before it reports (default %(default)s)')
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error('--runs takes at least 1')
    a.experiment = os.path.abspath(a.experiment)
    a.out = os.path.abspath(a.out)
    a.run_dir = os.path.abspath(a.run_dir or os.path.join(
        ROOT, 'results', 'bench-soak', time.strftime('%Y%m%d-%H%M%S')))
    t0 = time.monotonic()

    def say(msg):
        print('[%7.1fs] %s' % (time.monotonic() - t0, msg), flush=True)

    if os.geteuid() != 0:
        say('not root: the emulator will not start and other processes\' '
            'namespaces and descriptors cannot be read')
    if not become_subreaper():
        say('could not become the child subreaper: orphans of a run go '
            'to init and only the command-line check sees them')
    return soak(a, say)


if __name__ == '__main__':
    sys.exit(main())
