"""netsched: network flow and coflow scheduling emulator for DL clusters.

The Python API (docs/analysis.md): ``netsched.run(exp, backend='sim',
**overrides)`` runs an experiment, ``netsched.sweep(exp, policies,
seeds, out=...)`` a sweep, and ``netsched.load(DIR, table='coflows')``
reads a run's or a sweep's results into a pandas DataFrame.
"""
import os

__version__ = "0.1.0"


def _root():
    """The folder holding controllers/, workloads/ and experiments/: the
    checkout beside the package, or, in an installed wheel (no checkout),
    the package's own _data/, whose links to those folders the wheel
    ships as files (setup.cfg, package_data)."""
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(here)
    # a checkout (editable install included) keeps reading its own files,
    # so an edited profile takes effect without reinstalling
    if all(os.path.isdir(os.path.join(checkout, d))
           for d in ('workloads', 'experiments')):
        return checkout
    return os.path.join(here, '_data')


ROOT = _root()


API = ('run', 'sweep', 'load')


def __getattr__(name):
    # loaded by name when first asked for: the controller, the host
    # agents and every run import this package and need none of it, and
    # the package's top imports nothing of the pipeline (test_layout.py)
    if name in API:
        import importlib
        return getattr(importlib.import_module('netsched.pipeline.api'),
                       name)
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


def __dir__():
    return sorted(list(globals()) + list(API))
