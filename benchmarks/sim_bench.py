"""Simulator benchmark: the Facebook coflow trace under every baseline
(average and p95 CCT, wall time, and the speed-up over CoflowSim's run
of the same scheduler), and a k=16 fat-tree (1024 hosts) with a
synthetic DL workload of more than 10,000 flows (wall time).

    .venv/bin/python benchmarks/sim_bench.py [--trace PATH] [--limit N]
        [--policies fair,varys,...] [--skip-fattree] [--reps N]
        [--coflowsim DIR]

Figures go to results/bench-sim.json as they arrive; each run's event
log's sha256 is recorded (one model, one log: the digests agree across
repetitions and across changes that keep the model).

The speed-up: with ``--coflowsim DIR`` (a CoflowSim checkout, its bare
git repository, or the folder under /tmp a run before built it in),
CoflowSim runs side by side, alternated with netsched (see
:func:`side_by_side`): the figure the simulator's speed target is
judged by. Without it, against the wall times benchmarks/
reference_bench.py recorded, which only holds while the machine runs as
fast as it did then.

The scale section instead (only it runs):

    .venv/bin/python benchmarks/sim_bench.py --scale 8,16,24,32

runs a k-ary fat-tree for each k, every host busy with DL jobs of 16
hosts (scale_jobs: parameter-server and ring all-reduce jobs, random
placement, Poisson arrivals over 2 s, one iteration, per-flow fair
sharing), each in a process of its own so that its peak memory
(resource.getrusage maxrss) is its own. Wall time (building the
experiment and its plan, simulating, the metrics), flows, events and
memory go to results/bench-sim-scale.json as each k ends, and a figure
of wall time and memory against hosts and flows to
results/bench-sim-scale.png.
"""
import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import experiment, run  # noqa: E402
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
from reference_bench import COFLOWSIM  # noqa: E402

# each baseline's CoflowSim scheduler (a key of COFLOWSIM)
COFLOWSIM_AS = {'fair': 'fair', 'fifo': 'fifo', 'sebf': 'varys',
                'varys': 'varys', 'aalo': 'aalo'}

FB = os.path.join(ROOT, '..', 'shared', 'data', 'FB2010-1Hr-150-0.txt')


def machine():
    """What the machine is, as far as a guest can tell: the processor,
    its caches, the kernel and the JVM. Rounds on different hosts are
    not comparable (a memory-bound numpy loop and CoflowSim's JVM gain
    or lose differently from a host's cache and clock), so each result
    names its host."""
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return None
    facts = {'kernel': os.uname().release, 'cpus': os.cpu_count()}
    cpuinfo = read('/proc/cpuinfo') or ''
    for line in cpuinfo.splitlines():
        key, _, val = line.partition(':')
        key = key.strip()
        if key in ('model name', 'model', 'stepping', 'cpu MHz'):
            facts.setdefault(key.replace(' ', '_'), val.strip())
    base = '/sys/devices/system/cpu/cpu0/cache'
    for idx in sorted(os.listdir(base)) if os.path.isdir(base) else ():
        level = read(os.path.join(base, idx, 'level'))
        kind = read(os.path.join(base, idx, 'type'))
        if level and kind in ('Data', 'Unified'):
            facts['L%s' % level] = read(os.path.join(base, idx, 'size'))
    try:
        java = subprocess.run(['java', '-version'], capture_output=True,
                              text=True).stderr.splitlines()
        facts['java'] = java[0] if java else None
    except OSError:
        facts['java'] = None
    return facts


def machine_line(m):
    return 'machine: %s (model %s), %s MHz, L2 %s, L3 %s; %s' % (
        m.get('model_name'), m.get('model'), m.get('cpu_MHz'), m.get('L2'),
        m.get('L3'), m.get('java'))


def _sha256(path):
    """The event log's digest: runs of one model write the same log."""
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


# the scale section's jobs, in turn: (model, pattern, bucket_mb). A
# parameter server's workers push a tensor together and finish together
# (15 sends an event); a ring's steps wait on each other, so its sends
# finish one by one: it fuses its gradients into 100 MB buckets
SCALE_CYCLE = (('resnet50', 'ps', None), ('vgg16', 'ps', None),
               ('resnet50', 'ps', None), ('resnet50', 'ring', 100),
               ('vgg16', 'ps', None), ('vgg16', 'ps', None))
SCALE_JOB_HOSTS = 16


def scale_jobs(k):
    """The scale section's workload on a k-ary fat-tree: k^3/4 hosts in
    jobs of 16 (a parameter-server job: 15 workers and one server; a
    ring: 16 workers), in SCALE_CYCLE's turn."""
    jobs = []
    for i in range(k ** 3 // 4 // SCALE_JOB_HOSTS):
        model, pattern, bucket = SCALE_CYCLE[i % len(SCALE_CYCLE)]
        j = {'id': 'j%d' % i, 'model': model, 'pattern': pattern,
             'iterations': 1, 'placement': 'random'}
        if pattern == 'ps':
            j.update(workers=SCALE_JOB_HOSTS - 1, ps_shards=1)
        else:
            j.update(workers=SCALE_JOB_HOSTS, bucket_mb=bucket)
        jobs.append(j)
    return jobs


def scale_one(k):
    """One scale run (in its own process): a JSON line on stdout."""
    t0, c0 = time.monotonic(), time.process_time()
    jobs = scale_jobs(k)
    exp = experiment.from_dict(
        {'name': 'scale-k%d' % k, 'backend': 'sim',
         'topology': 'fattree,%d' % k, 'link_gbps': 10, 'policy': 'fair',
         'jobs': jobs, 'arrivals': {'process': 'poisson',
                                    'rate_per_s': len(jobs) / 2.0}},
        'scale-k%d.yaml' % k)
    marks = {}

    def say(m):
        if m.endswith('connections'):          # the plan is built
            marks['plan'] = time.monotonic()
    out, s = run.execute(exp, os.path.join(ROOT, 'results',
                                           'bench-sim-scale-k%d' % k),
                         say=say)
    wall = time.monotonic() - t0
    with open(os.path.join(out, 'run.json')) as f:
        rj = json.load(f)
    print(json.dumps({
        'k': k, 'hosts': k ** 3 // 4, 'links': 3 * k ** 3 // 2,
        'jobs': len(jobs), 'flows': s['flows']['count'],
        'events': rj['backend_info']['events'], 'wall_s': wall,
        'cpu_s': time.process_time() - c0,
        'plan_s': marks.get('plan', t0) - t0,
        'sim_s': rj['wall_s'], 'metrics_s': wall - rj['wall_s'],
        'maxrss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        / 1024.0}))


def scale(ks):
    """The scale section: each k in a child process, results as they
    arrive, then the figure."""
    out_path = os.path.join(ROOT, 'results', 'bench-sim-scale.json')
    rows = []
    mach = machine()
    print(machine_line(mach))
    print('%4s %6s %7s %9s %8s %8s %8s %8s %8s %8s %8s' % (
        'k', 'hosts', 'jobs', 'flows', 'events', 'wall s', 'cpu s',
        'plan s', 'sim s', 'metr. s', 'max MB'))
    for k in ks:
        r = subprocess.run([sys.executable, os.path.abspath(__file__),
                            '--scale-one', str(k)], capture_output=True,
                           text=True)
        if r.returncode:
            sys.exit('k=%d failed:\n%s' % (k, r.stderr[-3000:]))
        row = json.loads(r.stdout.strip().splitlines()[-1])
        rows.append(row)
        with open(out_path, 'w') as f:
            json.dump({'machine': mach,
                       'cycle': [list(c) for c in SCALE_CYCLE],
                       'job_hosts': SCALE_JOB_HOSTS, 'runs': rows}, f,
                      indent=1)
        print('%4d %6d %7d %9d %8d %8.1f %8.1f %8.1f %8.1f %8.1f %8.0f' % (
            k, row['hosts'], row['jobs'], row['flows'], row['events'],
            row['wall_s'], row['cpu_s'], row['plan_s'], row['sim_s'],
            row['metrics_s'], row['maxrss_mb']), flush=True)
    scale_figure(rows, os.path.join(ROOT, 'results', 'bench-sim-scale.png'))


def scale_figure(rows, path):
    """Wall time against hosts and flows, and peak memory, log-log."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.6))
    flows = [r['flows'] for r in rows]
    for key, label in (('wall_s', 'total'), ('sim_s', 'plan + simulation'),
                       ('plan_s', 'plan')):
        ax[0].plot(flows, [r[key] for r in rows], 'o-', label=label)
    for r in rows:
        ax[0].annotate('k=%d\n%d hosts' % (r['k'], r['hosts']),
                       (r['flows'], r['wall_s']), fontsize=7,
                       textcoords='offset points', xytext=(4, -14))
    ax[0].set(xscale='log', yscale='log', xlabel='flows',
              ylabel='wall time (s)', title='Fat-tree, DL jobs: wall time')
    ax[0].legend(fontsize=8)
    ax[1].plot([r['hosts'] for r in rows], [r['maxrss_mb'] for r in rows],
               'o-')
    ax[1].set(xscale='log', yscale='log', xlabel='hosts',
              ylabel='peak memory (MB)', title='peak memory (maxrss)')
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print('figure: %s' % path)


def trace_run(pol, exp, res, save):
    """One netsched run of the trace experiment ``exp``: its figures
    added to res['trace'][pol] (saved, printed); returns its wall s."""
    out_dir = os.path.join(ROOT, 'results', 'bench-sim-fb-' + pol)
    c0, t0 = time.process_time(), time.monotonic()
    out, s = run.execute(exp, out_dir, say=lambda m: None)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    with open(os.path.join(out, 'run.json')) as f:
        sim_wall = json.load(f)['wall_s']
    t = s['totals']
    row = res['trace'].setdefault(pol, {'runs': []})
    row['runs'].append({'wall_s': wall, 'sim_wall_s': sim_wall,
                        'cpu_s': cpu, 'log_sha256': _sha256(
                            os.path.join(out, 'events.jsonl'))})
    row.update(avg_cct_s=t['avg_cct_s'], p95_cct_s=t['p95_cct_s'],
               coflows_done=t['coflows_done'],
               wall_s=min(r['wall_s'] for r in row['runs']))
    save()
    print('%-10s %8.2fs %8.2fs %9d %8.1f %8.1f %8.1f  %s' % (
        pol, t['avg_cct_s'], t['p95_cct_s'], t['coflows_done'], wall,
        sim_wall, cpu, row['runs'][-1]['log_sha256'][:12]), flush=True)
    return wall


def side_by_side(a, exps, res, save):
    """The trace section measured against CoflowSim in the same window:
    per CoflowSim scheduler (COFLOWSIM_AS), the netsched policies it
    stands against run, then CoflowSim, then those policies again, and
    so on (reps CoflowSim runs, reps + 1 rounds of netsched), one
    process at a time. Each CoflowSim run's wall time over the mean of
    the netsched runs just before and just after it is a speed-up; the
    machine's speed, which moves over hours, is then the same on both
    sides of the ratio."""
    from reference_bench import build_coflowsim, run_coflowsim
    print('building CoflowSim from %s ...' % a.coflowsim, flush=True)
    work = build_coflowsim(a.coflowsim)
    trace = os.path.abspath(a.trace)
    if a.limit:
        from reference_bench import _trimmed
        trace = _trimmed(trace, a.limit, work)
    groups = {}
    for pol in exps:
        groups.setdefault(COFLOWSIM[COFLOWSIM_AS.get(pol, 'varys')][0],
                          []).append(pol)
    res['coflowsim'] = {'build': work, 'trace': trace, 'runs': {}}
    for sched, pols in groups.items():
        walls = {pol: [trace_run(pol, exps[pol], res, save)]
                 for pol in pols}
        for _ in range(a.reps):
            usage = {}
            avg, _, cwall = run_coflowsim(work, sched, trace, usage)
            runs = res['coflowsim']['runs'].setdefault(sched, [])
            runs.append({'wall_s': cwall, 'cpu_s': usage['cpu_s'],
                         'avg_cct_s': avg})
            save()
            print('%-10s %8.2fs %9s %9s %8.1f %8s %8.1f  CoflowSim'
                  % (sched, avg, '', '', cwall, '', usage['cpu_s']),
                  flush=True)
            for pol in pols:
                walls[pol].append(trace_run(pol, exps[pol], res, save))
                near = (walls[pol][-2] + walls[pol][-1]) / 2.0
                sp = res['trace'][pol].setdefault(
                    'coflowsim', {'scheduler': sched, 'speedup': []})
                sp['speedup'].append(cwall / near)
                save()
    print('against CoflowSim, side by side (its wall time / the mean of '
          "netsched's runs just before and after it):")
    for pol in exps:
        sp = res['trace'][pol]['coflowsim']
        print('  %-10s CoflowSim %-4s  %s' % (
            pol, sp['scheduler'], '  '.join('%.1fx' % x
                                            for x in sp['speedup'])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--trace', default=FB)
    ap.add_argument('--limit', type=int)
    ap.add_argument('--policies', default='fair,fifo,sebf,varys,aalo,'
                                          'sincronia')
    ap.add_argument('--skip-fattree', action='store_true')
    ap.add_argument('--reps', type=int, default=1,
                    help='runs per policy (wall time: the spread)')
    ap.add_argument('--coflowsim', metavar='DIR',
                    help='a CoflowSim checkout, bare repository or a '
                    'folder this built before: run it side by side, '
                    'alternated with netsched (reps CoflowSim runs per '
                    'scheduler)')
    ap.add_argument('--scale', metavar='K,K,...',
                    help='the scale section alone, fat-trees of these k')
    ap.add_argument('--scale-one', type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    os.makedirs(os.path.join(ROOT, 'results'), exist_ok=True)
    if a.scale_one:
        return scale_one(a.scale_one)
    if a.scale:
        return scale([int(x) for x in a.scale.split(',')])
    out_path = os.path.join(ROOT, 'results', 'bench-sim.json')
    res = {'machine': machine(), 'trace': {}, 'fattree': None}

    def save():
        with open(out_path, 'w') as f:
            json.dump(res, f, indent=1)

    base = os.path.join(ROOT, 'experiments', 'fb-trace.yaml')
    print(machine_line(res['machine']))
    print('Facebook trace, 150 x 1 Gbit/s (2^30) ports, big switch%s'
          % (', first %d coflows' % a.limit if a.limit else ''))
    print('%-10s %9s %9s %9s %8s %8s %8s  %s' % (
        'policy', 'avg CCT', 'p95 CCT', 'done', 'wall s', 'sim s', 'cpu s',
        'log sha256'))
    exps = {}
    for pol in a.policies.split(','):
        exp = experiment.load(base, policy=pol, trace=a.trace)
        if a.limit:
            exp = experiment.from_dict(
                dict(exp.raw, trace={'path': exp.trace.path,
                                     'limit': a.limit}), base, policy=pol)
        exps[pol] = exp
    if a.coflowsim:
        side_by_side(a, exps, res, save)
    else:
        for pol, exp in exps.items():
            for _ in range(a.reps):
                trace_run(pol, exp, res, save)
    if 'fair' in res['trace']:
        for pol, r in res['trace'].items():
            print('  %-10s average CCT %.2fx better than fair'
                  % (pol, res['trace']['fair']['avg_cct_s'] / r['avg_cct_s']))
    if not a.coflowsim and not a.limit and a.trace == FB:
        # against CoflowSim's recorded run of the scheduler (benchmarks/
        # reference_bench.py); Sincronia, which it lacks, against its
        # fastest (SEBF). The machine's speed moves between hours, so
        # this is a rough figure: --coflowsim DIR measures side by side
        print('against CoflowSim\'s recorded runs (another hour; its wall '
              'time / the best of this one\'s):')
        for pol, r in res['trace'].items():
            sched = COFLOWSIM_AS.get(pol, 'varys')
            name, _, cwall = COFLOWSIM[sched]
            r['coflowsim_recorded'] = {'scheduler': name, 'wall_s': cwall,
                                       'speedup': cwall / r['wall_s']}
            print('  %-10s CoflowSim %-4s %6.1f s  netsched %5.1f s  %5.1fx'
                  % (pol, name, cwall, r['wall_s'], cwall / r['wall_s']))
        save()
    if a.skip_fattree:
        return
    jobs = [dict(id='r%d' % i, model='resnet50', pattern='ring', workers=8,
                 iterations=2, placement='random') for i in range(64)]
    exp = experiment.from_dict({'name': 'k16', 'backend': 'sim',
                                'topology': 'fattree,16', 'link_gbps': 10,
                                'policy': 'fair', 'jobs': jobs}, 'k16.yaml')
    t0 = time.monotonic()
    out, s = run.execute(exp, os.path.join(ROOT, 'results',
                                           'bench-sim-k16'),
                         say=lambda m: None)
    wall = time.monotonic() - t0
    res['fattree'] = {'hosts': 1024, 'jobs': len(jobs),
                      'flows': s['flows']['count'], 'wall_s': wall}
    save()
    print('k=16 fat-tree, 1024 hosts, %d ring jobs x 8 workers: %d flows in '
          '%.1f s' % (len(jobs), s['flows']['count'], wall))


if __name__ == '__main__':
    main()
