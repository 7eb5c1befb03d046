"""What the commands share: the table's entry, the experiment a command
names, the log lines it prints, and how a command's failure ends it."""
import dataclasses
import os
import signal
import sys
import time
from typing import Callable, Optional, Sequence

from ..errors import NetschedError


@dataclasses.dataclass(frozen=True)
class Command:
    """One `netsched` subcommand: its name and one-line help, a function
    that adds its arguments to its parser and the function that runs it
    (returning the exit status); the description, epilog and examples
    its --help shows."""
    name: str
    help: str
    args: Optional[Callable]
    run: Callable
    description: Optional[str] = None
    epilog: Optional[str] = None
    examples: Sequence[str] = ()


TRACE_HELP = ("the coflow trace file, in place of the experiment's "
              "trace.path (default: that name, looked for beside the "
              "experiment, in $NETSCHED_TRACE, then in data/; "
              "experiments/README.md, \"Traces\")")


def logger():
    t0 = time.monotonic()

    def log(msg):
        print('[%6.1fs] %s' % (time.monotonic() - t0, msg), flush=True)
    return log


def load_experiment(a):
    from ..pipeline import experiment, overrides
    return experiment.load(a.experiment, backend=getattr(a, 'backend', None),
                           policy=getattr(a, 'policy', None),
                           trace=getattr(a, 'trace', None),
                           circuits=getattr(a, 'circuits', None),
                           seed=getattr(a, 'seed', None),
                           sets=overrides.single(getattr(a, 'set', None)))


def experiment_args(p):
    """What run and check both take: the file and its overrides."""
    p.add_argument('experiment', help='experiment YAML file')
    p.add_argument('--backend', choices=('emu', 'sim', 'ns3'),
                   help="override the file's backend")
    p.add_argument('--policy', help="override the file's policy: NAME "
                   "or NAME:key=value:... (e.g. geryon:classes=1)")
    p.add_argument('--trace', help=TRACE_HELP)
    p.add_argument('--circuits', help="a hybrid fabric's circuit "
                   "scheduler, overriding the file's: NAME or "
                   "NAME:key=value:... (e.g. matching:period_s=0.1)")
    p.add_argument('--seed', type=int, help="override the file's seed")
    p.add_argument('--set', action='append', metavar='KEY=VALUE',
                   help='set any experiment key by its dotted path '
                   '(link_gbps=40, jobs.0.workers=8, policy_params.'
                   'classes=2; repeatable)')
    p.add_argument('--long', action='store_true',
                   help='accept an ns-3 run estimated at over an hour '
                   'of wall time')


def experiment_and_policies(p, default, labels=False):
    p.add_argument('experiment', help='experiment YAML file')
    p.add_argument('--policies', default=default,
                   help='comma-separated, each NAME or NAME:key=value:...%s '
                   '(default %%(default)s)' % (
                       ', or LABEL=that, shown as LABEL (base=fair,mine='
                       'aalo:first_mb=40)' if labels else ''))


def call(fn, a):
    """Run a command: its exit status, or 2 with its error said, 130 on
    Ctrl-C, 141 when the reader of its output has gone."""
    try:
        return fn(a) or 0
    except NetschedError as e:
        print('netsched: error: %s' % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('netsched: interrupted; torn down', file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _stdout_closed():
            raise                 # a socket's, say: not to be hidden
        # the reader left (`| head`): stop quietly, as Unix tools do on
        # SIGPIPE; stdout goes to /dev/null so that the interpreter's
        # last flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


def _stdout_closed():
    """Whether stdout is a pipe whose reader has gone (poll says POLLERR
    on such a pipe's writing end)."""
    import select
    try:
        p = select.poll()
        p.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in p.poll(0))
    except (OSError, ValueError, AttributeError):
        return False
