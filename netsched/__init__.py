"""netsched: network flow and coflow scheduling emulator for DL clusters."""
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
