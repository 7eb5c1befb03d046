"""Settings every test shares.

The Facebook coflow trace is not in the repository (experiments/README.md,
"Traces"); the tests take it from ``shared/data`` beside the checkout,
where CI puts it, through the loader's own setting NETSCHED_TRACE. A
NETSCHED_TRACE already in the environment wins. Set here, at import,
so that the ``netsched`` processes the tests start inherit it too."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FB_NAME = 'FB2010-1Hr-150-0.txt'
os.environ.setdefault('NETSCHED_TRACE', os.path.normpath(
    os.path.join(ROOT, '..', 'shared', 'data', FB_NAME)))
