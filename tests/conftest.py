"""Settings every test shares.

The Facebook coflow trace is not in the repository (experiments/README.md,
"Traces"); the tests take it from ``shared/data`` beside the checkout,
where CI puts it, through the loader's own setting NETSCHED_TRACE. A
NETSCHED_TRACE already in the environment wins. Set here, at import,
so that the ``netsched`` processes the tests start inherit it too.

A suite started in the background of a non-interactive shell inherits
SIGINT ignored, and every process it starts would ignore it too: the
tests of Ctrl-C then see runs that never stop. The default is put back
here, before any test starts one."""
import os
import signal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FB_NAME = 'FB2010-1Hr-150-0.txt'
os.environ.setdefault('NETSCHED_TRACE', os.path.normpath(
    os.path.join(ROOT, '..', 'shared', 'data', FB_NAME)))
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
