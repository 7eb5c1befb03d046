"""Controller decision benchmark (needs root and OVS; `make bench-controller`).

The real controller (Ryu, netsched's app, the scheduling core) on a real
emulated k=4 fat-tree, with synthetic agents: this script registers J
ring all-reduce jobs of 4 workers each (random hosts) over the control
channel, one channel per host as real agents do, then drives iterations:
every job's 4 ring sends start (jobs staggered) and later end, then its
workers mark the iteration (with a loss), reported as the agents report
them; each send carries an urgency (its place in the model) and each job
its description with its profile (compute, first gradient ready), so
every policy can decide (`--policies` any of them, cassini included: it
solves again whenever the set of jobs changes, as jobs arrive (their
first send starts) and leave, and otherwise reuses its memoised
decision). No data is
sent: what is measured is the
controller, for 10 and 100 concurrent jobs:

  - decision time: from the first report a decision answers to the last
    barrier reply of the FlowMods it sent (the app's decision log);
  - time inside the scheduling core per decision;
  - FlowMods per decision.

Prints, and writes to results/bench-controller.json as figures arrive.
"""
import argparse
import json
import os
import random
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched import topology as topo  # noqa: E402
from netsched.control.spec import ControllerSpec  # noqa: E402
from netsched.emulator.fabric import Fabric  # noqa: E402

WORKERS = 4
MB = 1e6


def plan(g, jobs, rng):
    """Per host: its connections and sends; per iteration the sends."""
    hosts = topo.hosts(g)
    per_host = {h: {'conns': [], 'sends': [], 'jobs': {}} for h in hosts}
    sends = []                  # (host, task id, receiver, job)
    tid = 0
    for j in range(jobs):
        ring = rng.sample(hosts, WORKERS)
        size = rng.choice([25, 100, 500]) * MB       # gradient bytes
        # its profile (CASSINI's circle), from a generator of its own (the
        # same hosts and order as before): compute 0.1-0.6 s, its first
        # gradient ready at 60-100% of it
        prof = random.Random(j)
        compute = prof.uniform(0.1, 0.6)
        meta = {'iterations': 2, 'bytes_per_iteration': size,
                'compute_s': compute,
                'first_send_s': compute * prof.uniform(0.6, 1.0)}
        for w, h in enumerate(ring):
            per_host[h]['jobs']['j%d' % j] = meta
            dst = ring[(w + 1) % WORKERS]
            cid = len(per_host[h]['conns']) + 1
            per_host[h]['conns'].append(
                {'id': cid, 'sport': 20000 + j * WORKERS + w,
                 'dport': 5000 + j, 'dst_ip': g.nodes[dst]['ip']})
            tid += 1
            # one tensor-sized send per worker, somewhere in the model
            # (urgency: its place in the next forward pass)
            per_host[h]['sends'].append(
                {'id': tid, 'coflow': 'j%d/0' % j, 'job': 'j%d' % j,
                 'bytes': size / WORKERS, 'conn': cid, 'dst': dst,
                 'iter': 0, 'urgency': rng.random()})
            sends.append((h, tid, dst, j))
    return per_host, sends


def drive(fab, jobs, seed, gap_s):
    rng = random.Random(seed)
    per_host, sends = plan(fab.g, jobs, rng)
    clients = {}
    for h, reg in per_host.items():
        if not reg['conns']:
            continue
        c = fab.client()
        c.request('register', host=h, run='bench-%d-%d' % (jobs, seed),
                  conns=reg['conns'], sends=reg['sends'], jobs=reg['jobs'])
        clients[h] = c
        # as an agent does: read what the controller pushes (classes,
        # rates), or its writes would block on a full socket
        threading.Thread(target=drain, args=(c,), daemon=True).start()
    order = sorted(sends, key=lambda s: (s[3], rng.random()))
    for h, tid, _, _ in order:                       # starts, staggered
        now = time.monotonic()
        clients[h].tell('report', events=[{'ev': 'start', 'task': tid,
                                           'ready': now, 't': now}])
        time.sleep(gap_s)
    rng.shuffle(order)
    for h, tid, dst, _ in order:                     # ends, any order
        now = time.monotonic()
        c = clients.get(dst) or clients[h]
        c.tell('report', events=[{'ev': 'recv', 'task': tid, 't': now}])
        time.sleep(gap_s)
    for h, tid, _, j in order:                       # iteration marks
        now = time.monotonic()
        clients[h].tell('report', events=[{'ev': 'mark', 'job': 'j%d' % j,
                                           'iter': 0, 't': now,
                                           'loss': 1.0 + rng.random()}])
    time.sleep(0.3)                     # the last decisions and barriers
    for c in clients.values():
        c.close()


def drain(client):
    try:
        while client._sock.recv(1 << 16):
            pass
    except OSError:
        pass


def read_log(path, offset):
    recs = []
    with open(path) as f:
        f.seek(offset)
        for line in f:
            r = json.loads(line)
            if r['kind'] == 'decision' and r['decided']:
                recs.append(r)
    return recs


STAGES = ('report', 'wait', 'core', 'send', 'barrier')


def stages(recs):
    """p50 and p95 of each stage of the decisions' time (the app's
    decision log: report, wait, core, send, barrier)."""
    out = {}
    for k in STAGES:
        xs = [(r.get('stages') or {}).get(k) for r in recs]
        xs = [x for x in xs if x is not None]
        out[k] = {'p50': pct(xs, 0.5), 'p95': pct(xs, 0.95)}
    return out


def _f(x):
    return '-' if x is None else '%.1f' % x


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--jobs', default='10,100')
    ap.add_argument('--policies', default='sebf,varys')
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--gap-ms', type=float, default=0.5,
                    help='time between two reports (default 0.5)')
    ap.add_argument('--against', metavar='REV',
                    help='first run this benchmark of an older commit (a '
                    'git worktree of REV, removed after), then this one, '
                    'and print the ratios of their p95s')
    a = ap.parse_args()
    old = against(a.against, a) if a.against else None
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    out_path = os.path.join(ROOT, 'results', 'bench-controller.json')
    results = {'started': time.strftime('%Y-%m-%d %H:%M:%S'), 'runs': []}
    print('%-8s %5s %4s %9s %11s %11s %11s %9s %9s %9s' % (
        'policy', 'jobs', 'rep', 'decisions', 'applied p50', 'applied p95',
        'applied max', 'core p50', 'core p95', 'mods/dec'))
    for pol in a.policies.split(','):
        log = os.path.join(ROOT, 'results', 'bench-controller-%s.jsonl' % pol)
        if os.path.exists(log):
            os.unlink(log)
        with Fabric(ControllerSpec.for_link(topo.fat_tree(4), 20, policy=pol,
                                            decision_log=log)) as fab:
            for jobs in (int(x) for x in a.jobs.split(',')):
                for rep in range(a.reps):
                    offset = os.path.getsize(log) if os.path.exists(log) \
                        else 0
                    drive(fab, jobs, rep, a.gap_ms / 1e3)
                    recs = read_log(log, offset)
                    applied = [r['applied_ms'] for r in recs
                               if r['applied_ms'] is not None]
                    core = [r['core_ms'] for r in recs]
                    mods = [r['flow_mods'] for r in recs]
                    row = {'policy': pol, 'jobs': jobs, 'rep': rep,
                           'decisions': len(recs),
                           'applied_ms_p50': pct(applied, 0.5),
                           'applied_ms_p95': pct(applied, 0.95),
                           'applied_ms_max': max(applied, default=None),
                           'core_ms_p50': pct(core, 0.5),
                           'core_ms_p95': pct(core, 0.95),
                           'flow_mods_mean': sum(mods) / max(1, len(mods)),
                           'flow_mods_max': max(mods, default=0),
                           'rules_max': max((r.get('rules') or 0
                                             for r in recs), default=0),
                           'stages_ms': stages(recs)}
                    results['runs'].append(row)
                    with open(out_path, 'w') as f:
                        json.dump(results, f, indent=1)
                    print('%-8s %5d %4d %9d %8.1f ms %8.1f ms %8.1f ms '
                          '%6.1f ms %6.1f ms %9.1f' % (
                              pol, jobs, rep, len(recs),
                              row['applied_ms_p50'] or 0,
                              row['applied_ms_p95'] or 0,
                              row['applied_ms_max'] or 0,
                              row['core_ms_p50'] or 0,
                              row['core_ms_p95'] or 0,
                              row['flow_mods_mean']), flush=True)
                    print('         stages p50/p95 ms: %s' % ', '.join(
                        '%s %s/%s' % (k, _f(v['p50']), _f(v['p95']))
                        for k, v in row['stages_ms'].items()), flush=True)
    print('figures: %s' % out_path)
    if old is not None:
        ratios(old, results['runs'], a.against)


def against(rev, a):
    """The runs of this benchmark at commit ``rev`` (its own script, in
    a temporary worktree, with the same jobs, policies and reps)."""
    import subprocess
    import tempfile
    tmp = tempfile.mkdtemp(prefix='netsched-bench-')
    wt = os.path.join(tmp, 'tree')
    subprocess.run(['git', '-C', ROOT, 'worktree', 'add', '--detach', wt,
                    rev], check=True, capture_output=True)
    try:
        print('== commit %s ==' % rev, flush=True)
        subprocess.run([sys.executable, os.path.join(
            wt, 'benchmarks', 'controller_bench.py'), '--jobs', a.jobs,
            '--policies', a.policies, '--reps', str(a.reps)], cwd=wt,
            env=dict(os.environ, PYTHONPATH=wt), check=True)
        with open(os.path.join(wt, 'results', 'bench-controller.json')) as f:
            runs = json.load(f)['runs']
    finally:
        subprocess.run(['git', '-C', ROOT, 'worktree', 'remove', '--force',
                        wt], capture_output=True)
    print('== this tree ==', flush=True)
    return runs


def ratios(old, new, rev):
    """This tree's p95 of 'applied' over the older commit's, per policy
    and job count (the mean over reps of each)."""
    def mean(runs, pol, jobs):
        xs = [r['applied_ms_p95'] for r in runs if r['policy'] == pol
              and r['jobs'] == jobs and r['applied_ms_p95'] is not None]
        return sum(xs) / len(xs) if xs else None
    print('p95 of applied, this tree against %s:' % rev)
    for pol, jobs in sorted({(r['policy'], r['jobs']) for r in new}):
        a, b = mean(old, pol, jobs), mean(new, pol, jobs)
        print('  %-8s %4d jobs: %s -> %s ms (x%s)' % (
            pol, jobs, _f(a), _f(b),
            '-' if not a or b is None else '%.2f' % (b / a)))


if __name__ == '__main__':
    main()
