"""The `netsched` command: a table of subcommands, each a name, its help,
a function that adds its arguments and the function that runs it (the
runners live by theme: fabric, runs, check, batch, info)."""
import argparse
import sys

from .. import __version__
from . import batch, check, common, fabric, info, runs
from .common import Command

# in the order `netsched --help` lists them; `netsched COMMAND --help`
# ends with its examples (a command that brings its own epilog keeps it)
COMMANDS = (
    Command('demo', 'the default job: run experiments/demo.yaml (three DL '
            'jobs on an emulated k=4 fat-tree) and report',
            runs.demo_args, runs.cmd_demo,
            examples=['netsched demo --backend sim --out results/demo']),
    Command('selftest', 'fabric check: bring up a fabric, check '
            'reachability, measure throughput, tear down',
            fabric.selftest_args, fabric.cmd_selftest,
            examples=['sudo netsched selftest --topology fattree,4 '
                      '--seconds 5']),
    Command('up', 'bring a fabric up until Ctrl-C',
            fabric.up_args, fabric.cmd_up,
            examples=['sudo netsched up --topology leafspine,2,2,2 '
                      '--policy sebf',
                      'netsched status            # from another terminal']),
    Command('controller', "run netsched's Ryu controller in the foreground "
            '(for `mn --custom topologies/...`)',
            fabric.controller_args, fabric.cmd_controller,
            examples=['netsched controller --topology dumbbell,2 --policy '
                      'sebf --scale 500',
                      'sudo mn --custom topologies/dumbbell.py --topo '
                      'dumbbell,2 --switch ovs,datapath=user,protocols='
                      'OpenFlow13 --controller remote,ip=127.0.0.1,'
                      'port=6653']),
    Command('status', "the running controller's decision: classes and "
            'rates per job, coflow and connection, rules per switch '
            '(read-only)', fabric.status_args, fabric.cmd_status,
            examples=['netsched status                     # the newest '
                      'live run',
                      'netsched status --run RUN_ID --json']),
    Command('run', 'run an experiment file', runs.run_args, runs.cmd_run,
            examples=['netsched run experiments/demo.yaml --backend sim '
                      '--policy sebf --out results/demo-sebf',
                      'netsched run experiments/fb-trace.yaml --trace '
                      'data/FB2010-1Hr-150-0.txt']),
    Command('check', 'validate an experiment file (no root)',
            common.experiment_args, check.cmd_check,
            examples=['netsched check experiments/demo.yaml',
                      'netsched check experiments/fb-trace.yaml --set '
                      'trace.limit=50']),
    Command('compare', "compare two runs' results (e.g. the emulator "
            'against the simulator)', runs.compare_args, runs.cmd_compare,
            examples=['netsched compare results/demo-emu results/demo-sim '
                      '--out results/demo-compare']),
    Command('crosscheck', 'run an experiment under several policies on two '
            'or three backends and compare the rankings (exit status 1 if '
            'two disagree)', runs.crosscheck_args, runs.cmd_crosscheck,
            examples=['netsched crosscheck experiments/crosscheck.yaml '
                      '--policies fair,sebf --out results/crosscheck',
                      'netsched crosscheck experiments/crosscheck.yaml '
                      '--backends sim,ns3 --policies fair,sebf']),
    Command('sweep', 'run an experiment over policies x seeds x --set '
            'values x backends; runs.csv and report.html in --out',
            batch.sweep_args, batch.cmd_sweep,
            description='Run the cross product; each run is an ordinary '
            'run folder under --out. Interrupted or re-run, it skips the '
            'runs already done.',
            examples=['netsched sweep experiments/demo.yaml --backend sim '
                      '--policies fair,fifo,sebf --seeds 1-5 --set '
                      'link_gbps=10,40 --out results/demo-sweep']),
    Command('reproduce', "each seed policy against its paper's baselines: "
            'the reproduction table and report',
            batch.reproduce_args, batch.cmd_reproduce,
            description='Runs a study file: per policy, a sweep of its '
            "experiment over its paper's baselines, seeds and one axis, on "
            'each backend; writes reproduction.md/.csv and report.html in '
            '--out. Resumes where it stopped.',
            examples=['netsched reproduce experiments/reproduce/study.yaml '
                      '--backend sim --only geryon --out results/reproduce']),
    Command('report', 'write report.html for a run, sweep, crosscheck or '
            'compare folder', runs.report_args, runs.cmd_report,
            description='A self-contained HTML page (figures inline, '
            'nothing fetched).',
            examples=['netsched report results/demo-sweep --baseline fifo '
                      '--format pdf']),
    Command('policies', 'list every policy and circuit scheduler: '
            'parameters, what it does, how each backend enforces it',
            info.policies_args, info.cmd_policies,
            description='Built-ins and those installed packages add (entry '
            'point groups netsched.policies and netsched.circuits). A '
            'policy outside the package can also be named by module path, '
            '--policy package.module:ClassName[:key=value...] '
            '(docs/writing-a-policy.md).',
            epilog='Example: netsched policies --json > policies.json; '
            'then, with a policy of your own in mypolicies/srcf.py: '
            'netsched run experiments/demo.yaml --backend sim --policy '
            'mypolicies.srcf:SmallestRemaining:starve_s=2'),
    Command('export', "a run's timeline for ui.perfetto.dev: hosts, jobs, "
            'links, decisions', runs.export_args, runs.cmd_export,
            examples=['netsched export results/demo --format perfetto  '
                      '# then open trace.perfetto.json at ui.perfetto.dev']),
    Command('clean', 'remove what killed runs left behind (by recorded '
            'names and pids)', None, fabric.cmd_clean,
            examples=['sudo netsched clean']),
    Command('topo', 'describe a topology', info.topo_args, info.cmd_topo,
            examples=['netsched topo fattree,8',
                      'netsched topo hybrid,4,1 --json']),
)

EXAMPLES = {c.name: c.examples for c in COMMANDS if c.examples}


def build_parser():
    ap = argparse.ArgumentParser(
        prog='netsched', description='Network flow and coflow scheduling '
        'emulator for distributed deep-learning clusters.')
    ap.add_argument('--version', action='version', version=__version__)
    sub = ap.add_subparsers(dest='command', required=True)
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help, description=c.description,
                           epilog=c.epilog)
        if c.args is not None:
            c.args(p)
        p.set_defaults(fn=c.run)
        _examples(p, c)
    return ap


def _examples(p, c):
    """A command's --help ends with its examples, as written (the
    description wrapped here, since the raw formatter keeps lines)."""
    import shutil
    import textwrap
    if p.epilog or not c.examples:
        return
    width = min(79, shutil.get_terminal_size().columns - 2)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    if p.description:
        p.description = textwrap.fill(p.description, width)
    p.epilog = 'example%s:\n%s' % ('s' if len(c.examples) > 1 else '',
                                   '\n'.join('  ' + x for x in c.examples))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    a = build_parser().parse_args(argv)
    a.command_line = ['netsched'] + argv         # what run.json records
    return common.call(a.fn, a)

