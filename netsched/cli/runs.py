"""The commands on one experiment and its results: run it (or the demo),
compare two runs, crosscheck backends, and write a run's report or
timeline."""
import os
import time

from ..errors import NetschedError
from ..pipeline.metrics import TOTALS
from . import common


def demo_args(p):
    p.add_argument('--backend', choices=('emu', 'sim', 'ns3'),
                   help="override the file's backend")
    p.add_argument('--policy', help="override the file's policy")
    p.add_argument('--out', help='output directory (new or empty)')
    p.add_argument('--force', action='store_true',
                   help='write into a --out folder that is not empty')


def cmd_demo(a):
    """The default job: experiments/demo.yaml (what `make demo` runs)."""
    from .. import ROOT
    a.experiment = os.path.join(ROOT, 'experiments', 'demo.yaml')
    a.trace = None
    return cmd_run(a)


def run_args(p):
    common.experiment_args(p)
    p.add_argument('--out', help='output directory, new or empty '
                   '(default results/<name>-<backend>-<policy>-<time>)')
    p.add_argument('--force', action='store_true',
                   help='write into a --out folder that is not '
                   'empty (its files of the same names are replaced)')
    p.add_argument('--no-figures', action='store_true',
                   help='write report.html without its figures '
                   '(no drawing: faster)')
    p.add_argument('--attach', metavar='CONTROLLER_SOCKET',
                   help='run on a fabric that is already up (plain '
                   'Mininet with `netsched controller`, or `netsched'
                   ' up`) with agents started by hand: prints the '
                   'command for each host and waits for them')


def cmd_run(a):
    """Run an experiment on the chosen backend and report."""
    from ..pipeline import run
    from ..workload import bounds
    exp = common.load_experiment(a)
    out = a.out or run.default_out(exp)
    run.check_out(out, getattr(a, 'force', False), own='run')
    exp, warnings = bounds.bounded(exp, force=getattr(a, 'long', False),
                                   out_dir=out)
    log = common.logger()
    for w in warnings:
        log('warning: %s' % w)
    result = run.execute(exp, out, say=log,
                         attach=getattr(a, 'attach', None),
                         command=getattr(a, 'command_line', None))
    out, summary = result
    from ..pipeline import report
    report.write_run(result, figures=not getattr(a, 'no_figures', False))
    print()
    print(run.table(summary))
    print('results: %s' % out)
    for p in summary['plots']:
        print('plot: %s' % p)
    print('report: %s' % summary['report'])
    return 0


def compare_args(p):
    p.add_argument('a', help='results directory (reference)')
    p.add_argument('b', help='results directory')
    p.add_argument('--all', action='store_true', help='print every row')
    p.add_argument('--out', help='also write a compare folder here '
                   '(compare.json and report.html): new or empty, or with '
                   '--force a compare folder')
    p.add_argument('--force', action='store_true',
                   help='write into a --out folder that is not empty (never'
                   ' one that holds a run, a sweep or a crosscheck)')


def cmd_compare(a):
    """Per-job and per-coflow differences between two runs' results."""
    from ..pipeline import metrics, run
    # --out as a run's: checked before anything is read or printed, and
    # never a run's (or a sweep's) folder, whose report.html it would
    # replace
    run.check_out(a.out, a.force, own='compare')
    for path in (a.a, a.b):
        _compare_input(path)
    sa, sb = metrics.load_summary(a.a), metrics.load_summary(a.b)
    rows = metrics.compare(sa, sb)
    print('A: %s (%s)   B: %s (%s)' % (a.a, _run_label(sa), a.b,
                                       _run_label(sb)))
    # a run that did not finish: its figures are shown, flagged partial
    partial = {side: metrics.incomplete_text(s, '') for side, s in
               (('A', sa), ('B', sb)) if metrics.incomplete_text(s)}
    for side, text in partial.items():
        print('INCOMPLETE %s: %s' % (side, text))
    flag = '  [partial: %s incomplete]' % ' and '.join(partial) \
        if partial else ''
    # the same scheduling on another backend is measured against A (its
    # error); two schedulers are merely different
    word = 'error' if all(sa.get(k) == sb.get(k) for k in (
        'policy', 'policy_params', 'circuit_scheduler')) else 'difference'
    if a.all:
        gone = {side: 'unfinished' if side in partial else '-'
                for side in 'AB'}
        for kind, key, x, y, err in rows:
            print('  %-16s %-20s %12s %12s %8s' % (
                kind, key, gone['A'] if x is None else '%.4f' % x,
                gone['B'] if y is None else '%.4f' % y,
                '-' if err is None else '%+.1f%%' % (100 * err)))
    for kind, st in metrics.error_stats(rows).items():
        if st['n']:
            print('%-16s n=%-5d mean |%s| %5.1f%%  max |%s| %5.1f%%  '
                  'mean %s %+5.1f%%%s' % (
                      kind, st['n'], word, 100 * st['mean_abs'], word,
                      100 * st['max_abs'], word, 100 * st['mean'],
                      '  (%d only in one run)' % st['missing']
                      if st['missing'] else '') + flag)
    if partial:
        print('INCOMPLETE: these %ss compare %s partial figures: only the '
              'jobs and coflows that finished in both runs, not two '
              'finished runs' % (word, ' and '.join(
                  '%s\'s' % x for x in partial)))
    if a.out:
        from ..pipeline import report
        report.write_compare(a.out, a.a, a.b, sa, sb, rows)
        print('report: %s' % report.write(a.out))
    return 0


def _compare_input(path):
    """compare reads two run folders: a sweep (or another results folder)
    given instead is told what compares it, not "summary.json: No such
    file"."""
    from ..pipeline import paths
    k = paths.folder_kind(path) if os.path.isdir(path) else None
    if k in (None, 'run'):
        return
    if k in ('sweep', 'reproduce'):
        runs = sorted(d for d in os.listdir(path) if os.path.isfile(
            os.path.join(path, d, 'summary.json')))
        pair = ' '.join(os.path.join(path, d) for d in (
            runs[:2] if len(runs) > 1 else ('RUN_A', 'RUN_B')))
        raise NetschedError(
            'compare %s: a %s folder; compare takes two run folders. Its '
            'policies against each other, paired by seed with 95%% '
            'intervals: netsched report %s (report.html, ratios.csv); two '
            'of its runs: netsched compare %s' % (
                path, 'sweep' if k == 'sweep' else 'reproduction', path,
                pair))
    raise NetschedError('compare %s: a %s folder, not a run; its '
                        'report.html holds its comparison (netsched report '
                        '%s), and compare takes two run folders'
                        % (path, k, path))


def _run_label(summary):
    """A run's backend, policy and, on a hybrid fabric, circuit
    scheduler, for compare's header."""
    circ = summary.get('circuit_scheduler')
    return '%s, %s%s' % (summary.get('backend'), summary.get('policy'),
                         ', circuits %s' % circ if circ else '')


def report_args(p):
    p.add_argument('folder', help='a run, sweep, crosscheck or compare '
                   'folder')
    p.add_argument('--baseline', help="a sweep's ratios are against this "
                   "policy (default: the sweep's --baseline)")
    p.add_argument('--format', choices=('png', 'svg', 'pdf'),
                   help='also write each figure to FOLDER/figures/ in this '
                   'format')
    p.add_argument('--style', choices=('default', 'paper'),
                   help="paper: figures a paper's column wide (3.3 in), in "
                   'serif fonts that embed in PDF')


def cmd_report(a):
    """report.html for a run, sweep, crosscheck or compare folder."""
    from ..pipeline import report
    notes = []          # runs that did not finish, said before the path
    path = report.write(a.folder, baseline=a.baseline, fmt=a.format,
                        notes=notes, style=a.style)
    for line in notes:
        print(line)
    print('report: %s' % path)
    return 0


def export_args(p):
    p.add_argument('run', help='a run folder')
    p.add_argument('--format', choices=('perfetto', 'chakra'),
                   default='perfetto')
    p.add_argument('--out', help='the file, or for chakra the folder '
                   '(default RUN/trace.perfetto.json, RUN/chakra)')


def cmd_export(a):
    """A run as a Perfetto (Chrome trace-event) JSON timeline, or its
    plan as Chakra execution traces."""
    from ..pipeline import export
    print('trace: %s' % export.write(a.run, a.format, a.out))
    return 0


def crosscheck_args(p):
    common.experiment_and_policies(p, 'fair,sebf')
    p.add_argument('--backends', default='sim,emu',
                   help='two or three of sim, ns3, emu, comma-separated; '
                   'every pair is compared (default %(default)s)')
    p.add_argument('--metric', default='avg_cct_s',
                   help='summary total to rank by, lower is better: %s '
                        '(default %%(default)s)' % ', '.join(TOTALS))
    p.add_argument('--tie', type=float, default=0.05,
                   help='relative difference below which two policies tie '
                        '(default %(default)s)')
    p.add_argument('--sim-packets', choices=('none', 'dc', 'emulated'),
                   help="the simulator's packets (default: the file's "
                   "sim_packets, else none): 'emulated' adds the emulated "
                   "packets' store-and-forward time on busy hops")
    p.add_argument('--trace', help=common.TRACE_HELP)
    p.add_argument('--out', help='output directory, new or empty (default '
                   'results/<experiment>-crosscheck-<time>)')
    p.add_argument('--force', action='store_true',
                   help='write into a --out folder that is not empty')


def cmd_crosscheck(a):
    """Two or three backends, several policies: same ranking? how far
    apart?"""
    from ..pipeline import crosscheck, run
    backends = crosscheck.parse_backends(a.backends)
    pols = [p for p in a.policies.split(',') if p]
    crosscheck.check_args(pols, a.metric, a.tie)
    run.check_out(a.out, a.force)
    out = a.out or os.path.join('results', '%s-crosscheck-%s' % (
        os.path.splitext(os.path.basename(a.experiment))[0],
        time.strftime('%Y%m%d-%H%M%S')))

    def ready():
        """Once the experiment has loaded for every run, before the
        first: what the chosen backends need (the emulator: root and a
        running Open vSwitch; ns-3: its package)."""
        if 'emu' in backends:
            if os.geteuid() != 0:
                raise NetschedError('crosscheck --backends %s: the emulator '
                                    'needs root (--backends sim,ns3 runs '
                                    'without)' % ','.join(backends))
            from ..emulator import ovs
            ovs.require_running()
        if 'ns3' in backends:
            from ..ns3 import loader
            if not loader.available():
                raise NetschedError('crosscheck --backends %s: %s' % (
                    ','.join(backends), loader.INSTALL_HINT))
    report = crosscheck.crosscheck(a.experiment, pols, out, a.metric, a.tie,
                                   say=common.logger(),
                                   sim_packets=a.sim_packets, trace=a.trace,
                                   backends=backends, ready=ready)
    print()
    print(crosscheck.table(report))
    print('results: %s' % out)
    from ..pipeline import report as page
    print('report: %s' % page.write(out))
    return 0 if report['agree'] else 1
