"""Reference-model benchmark: netsched's reference modes (experiment key
``model``) against the numbers of the tools they follow, one section per
tool.

    .venv/bin/python benchmarks/reference_bench.py [--only coflowsim]
        [--trace PATH] [--limit N] [--policies fair,varys,aalo,fifo]
        [--coflowsim DIR] [--sincronia-policies sincronia,sebf,varys]
        [--sincronia DIR]

``coflowsim``: the whole Facebook trace (experiments/reference/
coflowsim-fb.yaml, model: coflowsim) under FAIR (``fair``), SEBF
(``varys``), DARK (``aalo``) and FIFO (``fifo``): netsched's average CCT
against CoflowSim's recorded one, the difference in %, netsched's wall
time (the whole run, and the model's part). ``--coflowsim DIR`` (a
CoflowSim checkout or its bare git repository) also builds CoflowSim
under /tmp (javac; nothing in the checkout changes), runs it on the same
trace side by side (one run at a time) and prints its averages and wall
times, and how many coflows' CCTs netsched reproduces to the ms.

``sincronia``: Sincronia's offline simulator on its offline set; see
:func:`sincronia`.

Results go to results/bench-reference.json as they arrive.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from netsched.pipeline import experiment, run  # noqa: E402

FB = os.path.join(ROOT, '..', 'shared', 'data', 'FB2010-1Hr-150-0.txt')
OUT = os.path.join(ROOT, 'results', 'bench-reference.json')

# CoflowSim (github.com/coflow/coflowsim, its last commit) on the whole
# Facebook trace, run on this kind of machine (FAIR and SEBF as issue 28
# gives them, DARK and FIFO by --coflowsim): netsched policy ->
# (CoflowSim scheduler, average CCT s, wall time s)
COFLOWSIM = {
    'fair': ('FAIR', 70.59, 609.6),
    'varys': ('SEBF', 28.53, 414.4),
    'aalo': ('DARK', 46.10, 610.8),
    'fifo': ('FIFO', 82.65, 778.6),
}


def _netsched(base, pol, trace, limit):
    """One run of the experiment ``base`` under ``pol``: (average CCT
    s, {coflow: CCT s}, wall s, the model's s)."""
    exp = experiment.load(base, policy=pol, trace=trace)
    if limit:                              # the trace's other keys kept
        exp = experiment.from_dict(
            dict(exp.raw, trace=dict(exp.raw['trace'], path=exp.trace.path,
                                     limit=limit)),
            base, policy=pol)
    out_dir = os.path.join(ROOT, 'results', 'bench-reference-%s-%s'
                           % (exp.model, pol))
    t0 = time.monotonic()
    out, s = run.execute(exp, out_dir, say=lambda m: None)
    wall = time.monotonic() - t0
    with open(os.path.join(out, 'run.json')) as f:
        model_s = json.load(f)['backend_info'].get('model_s')
    ccts = {c: v['cct_s'] for c, v in s['coflows'].items()}
    return s['totals']['avg_cct_s'], ccts, wall, model_s


def _pct(a, b):
    return None if a is None or b is None else 100.0 * (a - b) / b


def _side_by_side(row, tool, ccts, run, same):
    """``row`` with the tool's own run ``run`` (average CCT s, {coflow:
    CCT s}, wall s) under ``tool``_avg_cct_s and ``tool``_wall_s, and
    how many of netsched's ``ccts`` are ``same(netsched's, the tool's)``."""
    avg, tccts, wall = run
    row.update({tool + '_avg_cct_s': avg, tool + '_wall_s': wall,
                'diff_vs_run_pct': _pct(row['netsched_avg_cct_s'], avg),
                'same_ccts': sum(1 for c, v in tccts.items()
                                 if c in ccts and same(ccts[c], v)),
                'coflows': len(tccts),
                'speedup': wall / row['netsched_wall_s']})


def _print_row(head, digits, pol, name, row, tool):
    """One line of a section's table (``head``: its first two columns'
    formats; CCTs with ``digits`` decimals; the tool's run if it ran,
    else its recorded wall time)."""
    ran = tool + '_wall_s' in row
    rec, rec_wall = row['recorded_avg_cct_s'], row['recorded_wall_s']
    print((head + ' %11.*f %11s %8s %9.1f %9.1f %11s %10s %9s') % (
        pol, name, digits, row['netsched_avg_cct_s'],
        '%.*f' % (digits, rec) if rec else '-',
        '%+.2f' % row['diff_pct'] if rec else '-', row['netsched_wall_s'],
        row['model_s'] or 0,
        '%.*f' % (digits, row[tool + '_avg_cct_s']) if ran else '-',
        '%.1f' % row[tool + '_wall_s'] if ran else
        ('%.1f' % rec_wall if rec_wall else '-'),
        '%d/%d' % (row['same_ccts'], row['coflows']) if ran else '-'),
        flush=True)


# --- CoflowSim, built and run under /tmp ----------------------------------

def build_coflowsim(src):
    """CoflowSim's classes compiled under a new folder in /tmp from
    ``src`` (a checkout, or a bare git repository: its HEAD); returns
    that folder. A folder this made before (it holds the compiled
    classes) is taken as it is."""
    if os.path.isfile(os.path.join(src, 'classes', 'coflowsim',
                                   'CoflowSim.class')):
        return src
    work = tempfile.mkdtemp(prefix='netsched-coflowsim-', dir='/tmp')
    if os.path.isdir(os.path.join(src, 'src', 'main', 'java')):
        shutil.copytree(os.path.join(src, 'src'), os.path.join(work, 'src'))
    else:                                  # a bare repository
        tar = subprocess.run(['git', '--git-dir', src, 'archive', 'HEAD',
                              'src'], check=True, capture_output=True).stdout
        subprocess.run(['tar', 'x', '-C', work], input=tar, check=True)
    java = [os.path.join(d, f) for d, _, fs in os.walk(
        os.path.join(work, 'src')) for f in fs if f.endswith('.java')]
    subprocess.run(['javac', '-nowarn', '-d', os.path.join(work, 'classes')]
                   + java, check=True, capture_output=True)
    return work


def _trimmed(trace, limit, work):
    """The first ``limit`` coflows of ``trace`` as a file of their own
    (CoflowSim reads as many as the header says)."""
    if not limit:
        return trace
    with open(trace) as f:
        lines = f.read().splitlines()
    ports = lines[0].split()[0]
    path = os.path.join(work, 'trace-%d.txt' % limit)
    with open(path, 'w') as f:
        f.write('%s %d\n%s\n' % (ports, limit, '\n'.join(lines[1:1 + limit])))
    return path


def run_coflowsim(work, scheduler, trace, usage=None):
    """CoflowSim's ``scheduler`` on ``trace``: (average CCT s, {coflow:
    CCT s}, wall s). It prints a line per coflow (JOB-<id>, start,
    finish, ..., CCT in its ms at the 8th field) and then their sum.
    ``usage`` (a dict) gets the CPU seconds the JVM used (all its
    threads)."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(['java', '-cp', os.path.join(work, 'classes'),
                        'coflowsim.CoflowSim', scheduler, 'COFLOW-BENCHMARK',
                        trace], capture_output=True, text=True, check=True)
    wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if usage is not None:
        usage['cpu_s'] = (ru1.ru_utime + ru1.ru_stime
                          - ru0.ru_utime - ru0.ru_stime)
    ccts = {}
    for line in r.stdout.splitlines():
        x = line.split()
        if len(x) >= 8 and x[0].startswith('JOB-'):
            ccts[x[0][4:]] = float(x[7]) / 1000.0
    return sum(ccts.values()) / len(ccts), ccts, wall


def coflowsim(a, res, save):
    """The coflowsim section (module docstring)."""
    base = os.path.join(ROOT, 'experiments', 'reference',
                        'coflowsim-fb.yaml')
    pols = a.policies.split(',')
    sec = res.setdefault('coflowsim', {'trace': a.trace, 'limit': a.limit,
                                       'policies': {}})
    work = None
    if a.coflowsim:
        print('building CoflowSim from %s ...' % a.coflowsim, flush=True)
        work = build_coflowsim(a.coflowsim)
        sec['coflowsim_build'] = work
    print('CoflowSim reference mode, Facebook trace%s, 150 x 2^30 bit/s '
          'ports' % (', first %d coflows' % a.limit if a.limit else ''))
    print('%-6s %-5s %11s %11s %8s %9s %9s %11s %10s %9s' % (
        'policy', 'tool', 'netsched s', 'recorded s', 'diff %', 'wall s',
        'model s', 'CoflowSim s', 'its wall s', 'same CCT'))
    for pol in pols:
        sched, rec, rec_wall = COFLOWSIM[pol]
        if a.limit:
            rec = rec_wall = None          # recorded on the whole trace
        avg, ccts, wall, model_s = _netsched(base, pol, a.trace, a.limit)
        row = {'scheduler': sched, 'netsched_avg_cct_s': avg,
               'recorded_avg_cct_s': rec, 'diff_pct': _pct(avg, rec),
               'netsched_wall_s': wall, 'model_s': model_s,
               'recorded_wall_s': rec_wall}
        sec['policies'][pol] = row
        save()
        if work:
            # to the ms, as it prints them
            _side_by_side(row, 'coflowsim', ccts, run_coflowsim(
                work, sched, _trimmed(a.trace, a.limit, work)),
                lambda x, v: abs(x - v) < 5e-4)
            save()
        _print_row('%-6s %-5s', 3, pol, sched, row, 'coflowsim')


# --- Sincronia's offline simulator, built and run under /tmp -------------

# Its offlinesim (github.com/sincronia-coflow/simulator, its last commit,
# built by its Makefile) on the offline set (experiments/reference/
# sincronia-offline.yaml: the first 200 coflows at once, made by
# offline_trace), run on this kind of machine (2 cores, shared: load ~8)
# with the average it prints in its units, at 1/128 s (1 MB at 2^30
# bit/s): netsched policy -> (its ordering and rate arguments, average
# CCT s, wall s)
SINCRONIA = {
    'sincronia': ('PD GREEDY', 1744.98 / 128, 927.5),
    'sebf': ('SEBF GREEDY', 1765.76 / 128, 3714.4),
    'varys': ('SEBF MADD', 2007.59 / 128, 75.3),
}


def build_sincronia(src):
    """offlinesim built (make, g++) under a new folder in /tmp from
    ``src`` (a checkout, or a bare git repository: its HEAD); returns
    that folder. A folder this made before (it holds the compiled
    classes) is taken as it is."""
    if os.path.isfile(os.path.join(src, 'classes', 'coflowsim',
                                   'CoflowSim.class')):
        return src
    work = tempfile.mkdtemp(prefix='netsched-sincronia-', dir='/tmp')
    if os.path.isdir(os.path.join(src, 'offlinesim')):
        shutil.copytree(os.path.join(src, 'offlinesim'),
                        os.path.join(work, 'offlinesim'))
    else:                                  # a bare repository
        tar = subprocess.run(['git', '--git-dir', src, 'archive', 'HEAD',
                              'offlinesim'], check=True,
                             capture_output=True).stdout
        subprocess.run(['tar', 'x', '-C', work], input=tar, check=True)
    subprocess.run(['make', 'all'], cwd=os.path.join(work, 'offlinesim'),
                   check=True, capture_output=True)
    return work


def offline_trace(trace, limit, work):
    """The first ``limit`` coflows of ``trace`` in offlinesim's input
    format, made by generate_trace.sh's rules (workload-generator's
    trace_producer.py, FB-UP) but with the trace's own coflows and racks:
    a reducer's MB truncated to whole MB and split over the mappers by
    integer division, one flow per mapper, reducer by reducer; every
    coflow at 0 (offlinesim drops arrivals)."""
    with open(trace) as f:
        lines = [x for x in f.read().splitlines() if x.strip()]
    ports, out = lines[0].split()[0], []
    for line in lines[1:1 + limit if limit else None]:
        t = line.split()
        nm = int(t[2])
        red = t[4 + nm:]
        fl = []
        for x in red:
            rack, mb = x.split(':')
            fl += ['%s %s %d' % (m, rack, int(float(mb)) // nm)
                   for m in t[3:3 + nm]]
        out.append('%s 0 %d %d %d %s' % (t[0], len(fl), nm, len(red),
                                          ' '.join(fl)))
    path = os.path.join(work, 'offline-%s.txt' % (limit or 'all'))
    with open(path, 'w') as f:
        f.write('%s %d\n%s\n' % (ports, len(out), '\n'.join(out)))
    return path


def run_sincronia(work, args, trace, unit_s):
    """offlinesim with ``args`` (ordering, rates) on ``trace``: (average
    CCT s, {coflow: CCT s}, wall s). Its output file has a line per
    coflow (id, oracle time, place in the order, start, completion in its
    units) and then the average."""
    out = os.path.join(work, 'out-%s.txt' % '-'.join(args.split()))
    t0 = time.monotonic()
    subprocess.run([os.path.join(work, 'offlinesim', 'offlinesim'), trace,
                    out] + args.split(), check=True, capture_output=True)
    wall = time.monotonic() - t0
    ccts = {}
    with open(out) as f:
        for line in f:
            x = line.split()
            if len(x) == 5:
                ccts[x[0]] = float(x[4]) * unit_s
    return sum(ccts.values()) / len(ccts), ccts, wall


def sincronia(a, res, save):
    """The sincronia section: the offline set (experiments/reference/
    sincronia-offline.yaml, model: sincronia) under BSSI with greedy
    rates (``sincronia``), SEBF with greedy rates (``sebf``) and SEBF
    with MADD (``varys``): netsched's average CCT against offlinesim's
    recorded one. ``--sincronia DIR`` (a checkout of Sincronia's
    simulator or its bare git repository) also builds offlinesim under
    /tmp, runs it on the same set (one run at a time; minutes each) and
    prints its averages, wall times, and how many coflows' CCTs netsched
    reproduces to the 6 digits it prints."""
    base = os.path.join(ROOT, 'experiments', 'reference',
                        'sincronia-offline.yaml')
    exp = experiment.load(base, trace=a.trace)
    limit = a.limit or exp.trace.limit
    unit_s = 2 ** 20 * 8.0 / exp.link_bps
    pols = a.sincronia_policies.split(',')
    sec = res.setdefault('sincronia', {'trace': a.trace, 'limit': limit,
                                       'policies': {}})
    work = None
    if a.sincronia:
        print('building offlinesim from %s ...' % a.sincronia, flush=True)
        work = build_sincronia(a.sincronia)
        sec['sincronia_build'] = work
        given = offline_trace(a.trace, limit, work)
    print('Sincronia reference mode, Facebook trace, first %d coflows at '
          'once, 150 x 2^30 bit/s ports' % limit)
    print('%-9s %-11s %11s %11s %8s %9s %9s %11s %10s %9s' % (
        'policy', 'tool', 'netsched s', 'recorded s', 'diff %', 'wall s',
        'model s', 'offline s', 'its wall s', 'same CCT'))
    for pol in pols:
        args, rec, rec_wall = SINCRONIA[pol]
        if limit != 200:
            rec = rec_wall = None          # recorded on the offline set
        avg, ccts, wall, model_s = _netsched(base, pol, a.trace, a.limit)
        row = {'tool': args, 'netsched_avg_cct_s': avg,
               'recorded_avg_cct_s': rec, 'diff_pct': _pct(avg, rec),
               'netsched_wall_s': wall, 'model_s': model_s,
               'recorded_wall_s': rec_wall}
        sec['policies'][pol] = row
        save()
        if work:
            # it prints 6 significant digits
            _side_by_side(row, 'offline', ccts, run_sincronia(
                work, args, given, unit_s),
                lambda x, v: abs(x - v) <= 1e-5 * v + 1e-9)
            save()
        _print_row('%-9s %-11s', 4, pol, args, row, 'offline')


SECTIONS = {'coflowsim': coflowsim, 'sincronia': sincronia}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--only', default=','.join(SECTIONS),
                    help='sections, comma-separated (%s)'
                    % ', '.join(SECTIONS))
    ap.add_argument('--trace', default=FB)
    ap.add_argument('--limit', type=int, help='first N coflows only')
    ap.add_argument('--policies', default='fair,varys,aalo,fifo',
                    help='coflowsim section: netsched policies')
    ap.add_argument('--coflowsim', metavar='DIR',
                    help='a CoflowSim checkout or bare repository: build '
                    'and run it under /tmp side by side')
    ap.add_argument('--sincronia-policies', default='sincronia,sebf,varys',
                    help='sincronia section: netsched policies')
    ap.add_argument('--sincronia', metavar='DIR',
                    help="a checkout or bare repository of Sincronia's "
                    'simulator: build offlinesim and run it under /tmp '
                    'side by side')
    a = ap.parse_args()
    a.trace = os.path.abspath(a.trace)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    res = {}

    def save():
        with open(OUT, 'w') as f:
            json.dump(res, f, indent=1)

    for name in a.only.split(','):
        if name not in SECTIONS:
            ap.error('--only: no section %r (%s)'
                     % (name, ', '.join(SECTIONS)))
        SECTIONS[name](a, res, save)


if __name__ == '__main__':
    main()
