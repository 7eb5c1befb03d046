"""The rate allocation's compiled kernels (kernels.c), with the numpy
code they replace as the fallback.

The rate allocation (:func:`fluid.allocate`) is progressive filling: a
loop of rounds, each freezing the links with the smallest fair share.
In numpy every round costs a score of array calls whatever its size, and
the Facebook trace needs a few hundred rounds at each of its 9,000
allocations; a C loop does a round in microseconds. The kernels do the
same floating-point operations in the same order as the numpy code (no
fused multiply-add, no reassociation: ``-ffp-contract=off``, no
``-ffast-math``), so they give the same bits, and the simulator's event
logs stay identical (tests/unit/sim/test_kernels.py checks them against the
numpy path on random inputs; benchmarks/sim_identity.py on whole runs).

kernels.c is built when netsched is installed (setup.py,
netsched/build_kernels.py: a CFFI extension, netsched.fluid._kernels,
declared by kernels.h); nothing is compiled at run time. Where it was
not built (no C compiler at install) the numpy path runs: the same
results, slower. ``NETSCHED_KERNELS=off`` in the environment netsched
starts in forces the numpy path (tests set ``kernels.OFF``).
:mod:`netsched.sim.kernels` holds the simulator's own kernels, loaded
the same way.
"""
import threading

import numpy as np

from ..kernels import F64, I64, OFF, Loaded, plain

_LOCK = threading.Lock()
_MOD = Loaded('netsched.fluid._kernels')


def lib():
    """The built kernels' CFFI lib, or None (then the numpy path runs;
    :func:`why_not` says why)."""
    return _MOD.lib(OFF)


def why_not():
    """Why the numpy path runs, when it does."""
    return _MOD.why_not


def name():
    """What runs the kernels: 'c' where they are built and on, else
    'numpy' (run.json's backend_info records it)."""
    return 'numpy' if lib() is None else 'c'


def maxmin(path_links, flow_path, flow_key, residual, capacity, rel_tol,
           remaining=None, add=None, add_explicit=False):
    """Per-flow max-min rates under strict priority by ``flow_key``
    (lower first): fluid.allocate's filling, compiled. ``residual``:
    (L,) float64 per link (numpy's path adds a dummy last link, which no
    path crosses), reduced in place; ``capacity`` likewise. None if the
    kernels are not available. ``add`` ((F,) float64): added to each
    flow's rate as it is written (the filling's + add); with
    ``add_explicit``, ``add`` is the explicit rates :func:`reserve` found
    to fit, each added where 0 < x < inf. With ``remaining`` ((F,) bytes
    left per flow): (rates, (found, s)), first_finish of those rates,
    made as they are."""
    k = lib()
    if k is None:
        return None
    F = len(flow_path)
    rate = np.empty(F)                  # every flow's is written
    if remaining is not None and not (plain(F64, remaining)
                                      and len(remaining) == F):
        remaining = np.ascontiguousarray(remaining, dtype=np.float64)
    if add is not None and not (plain(F64, add) and len(add) == F):
        raise ValueError('add: %d float64 values wanted' % F)
    if F == 0:
        return rate if remaining is None else (rate, (False, 0.0))
    pt = np.ascontiguousarray(path_links, dtype=np.int64)
    fp = np.ascontiguousarray(flow_path, dtype=np.int64)
    key = np.ascontiguousarray(flow_key, dtype=np.int64)
    assert residual.dtype == np.float64 and residual.flags.c_contiguous
    cap = np.ascontiguousarray(capacity, dtype=np.float64)
    fb, null = _MOD.pair[1].from_buffer, _MOD.pair[1].NULL
    args = [F, pt.shape[1], len(residual), len(pt), fb('int64_t[]', pt),
            fb('int64_t[]', fp), fb('int64_t[]', key)]
    first = None if remaining is None else np.zeros(2)
    rest = [fb('double[]', residual), fb('double[]', cap), float(rel_tol),
            fb('double[]', rate),
            null if remaining is None else fb('double[]', remaining),
            null if first is None else fb('double[]', first),
            null if add is None else fb('double[]', add),
            int(bool(add_explicit))]
    with _LOCK:                         # the kernels' work arrays
        rc = k.ns_maxmin(*args, null, *rest)
        if rc == 1:                     # keys too spread to count
            order = np.argsort(key, kind='stable')
            rc = k.ns_maxmin(*args, fb('int64_t[]', order), *rest)
    if rc == 2:                         # C would have read past the table
        raise IndexError('flow_path: a path id outside the path table')
    if rc:
        raise MemoryError('ns_maxmin: out of memory')
    if first is None:
        return rate
    return rate, (bool(first[0]), float(first[1]))


def reserve(path_links, flow_path, explicit, cap, residual, fits=False):
    """fluid.allocate's explicit reservations, compiled: ``residual``
    ((L + 1,), the last the dummy link) filled, and the (F,) reserved
    rates returned, as the numpy code makes them (the same bits); None
    without the kernels or where an index is out of range (nothing
    usable written). With ``fits``, where no link is over its capacity
    (no reservation scaled) 'fits' is returned instead of the rates: each
    flow's is then its explicit rate where 0 < x < inf, which
    :func:`maxmin` adds itself (``add_explicit``)."""
    k = lib()
    if k is None or not (plain(I64, path_links, flow_path)
                         and plain(F64, explicit, cap, residual)) \
            or path_links.ndim != 2:
        return None
    fb = _MOD.pair[1].from_buffer
    L = len(cap) - 1
    work = np.empty(2 * (L + 1))
    P, H = path_links.shape
    rate = np.empty(len(flow_path))     # written only if one is scaled
    rc = k.ns_reserve(len(flow_path), H, L, P, fb('int64_t[]', path_links),
                      fb('int64_t[]', flow_path), fb('double[]', explicit),
                      fb('double[]', cap), fb('double[]', residual),
                      fb('double[]', rate), fb('double[]', work),
                      fb('double[]', work[L + 1:]))
    if rc == 0:
        return rate
    if rc == 3:
        if fits:
            return 'fits'
        x = explicit
        return np.where((x > 0) & (x < np.inf), 0.0 + x, 0.0)
    return None
