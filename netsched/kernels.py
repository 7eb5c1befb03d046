"""The loader the compiled kernels share (netsched.fluid.kernels,
netsched.sim.kernels): each imports its CFFI module (built at install by
netsched/build_kernels.py) through a :class:`Loaded`, and falls back to
its own numpy code where the module is not built or is switched off.

``NETSCHED_KERNELS=off`` in the environment netsched starts in switches
every kernel off; each kernels module keeps its own ``OFF`` (read from
here) so that a test can switch one off alone.
"""
import importlib
import os

import numpy as np

# NETSCHED_KERNELS=off, read once: every call would pay for the lookup
OFF = os.environ.get('NETSCHED_KERNELS', '').lower() in ('off', '0', 'no')

# dtype instances, not types: ``dtype in`` them is found by identity,
# where a type is converted to a dtype at each test
F64, I64 = (np.dtype(np.float64),), (np.dtype(np.int64),)


class Loaded:
    """A built kernel module, imported on first use: ``get()`` gives its
    (lib, ffi), or None; ``lib(off)`` its lib, or None. Either way, where
    there is none ``why_not`` says why."""

    def __init__(self, name):
        self.name = name
        self.pair = None
        self.tried = False
        self.error = None           # why the import failed, if it did
        self.why_not = None

    def get(self):
        if not self.tried:
            self.tried = True
            try:
                mod = importlib.import_module(self.name)
                self.pair = mod.lib, mod.ffi
            except ImportError as e:
                self.error = ('%s is not built (%s): install netsched where '
                                'a C compiler is (tools/bootstrap.sh)'
                                % (self.name, e))
                self.why_not = self.error
        return self.pair

    def lib(self, off):
        """The module's CFFI lib, or None where ``off`` or not built."""
        if off:
            self.why_not = 'NETSCHED_KERNELS=off'
            return None
        got = self.get()
        self.why_not = self.error
        return None if got is None else got[0]


def plain(dtypes, *arrays):
    """Whether the kernels can take these arrays as they are: contiguous,
    of one of ``dtypes`` (anything else goes the numpy way)."""
    for a in arrays:
        if not (isinstance(a, np.ndarray) and a.dtype in dtypes
                and a.flags.c_contiguous):
            return False
    return True
