"""The simulator's compiled kernels (kernels.c): the flow table's send
and finish steps, the per-coflow sums, and the text of the flow and link
events, with the numpy and Python code they replace as the fallback.

Each function here gives None (or False) where the kernels are not
built or cannot take its arguments, and the caller then runs its own
code: the same bits, the same text, slower. kernels.c is built when
netsched is installed (netsched/build_kernels.py: a CFFI extension,
netsched.sim._kernels, declared by kernels.h); nothing is compiled at
run time. ``NETSCHED_KERNELS=off`` forces the fallback, as for
:mod:`netsched.fluid.kernels` (tests set ``kernels.OFF``).
"""
import numpy as np

from ..fluid import kernels as fluid_kernels
from ..kernels import F64, I64, OFF, Loaded, plain

_MOD = Loaded('netsched.sim._kernels')
# the pointer types the kernels take, resolved once (from_buffer's)
_D = _I = _C = None


def lib():
    """The built kernels' CFFI lib, or None (then the callers' own code
    runs; :func:`why_not` says why)."""
    global _D, _I, _C
    k = _MOD.lib(OFF)
    if k is not None and _D is None:
        ffi = _MOD.pair[1]
        _D, _I, _C = (ffi.typeof(t) for t in ('double[]', 'int64_t[]',
                                               'char[]'))
    return k


def why_not():
    """Why the fallback runs, when it does."""
    return _MOD.why_not


def name():
    """What ran the simulator's kernels, for run.json's backend_info: 'c'
    where these and the allocation's (netsched.fluid.kernels) are built
    and on, else 'numpy'."""
    return 'c' if lib() is not None and fluid_kernels.lib() is not None \
        else 'numpy'


def _fb():
    return _MOD.pair[1].from_buffer


def send(rate, rem, cof, dt, ncoflows):
    """FlowTable.send's step, compiled: ``rem`` reduced in place by
    rate * dt / 8; returns the (ncoflows,) bytes sent per coflow (as
    numpy's bincount sums them). None without the kernels."""
    k = lib()
    if k is None or not (plain(F64, rate, rem) and plain(I64, cof)):
        return None
    fb = _fb()
    acc = np.zeros(ncoflows)
    k.ns_send(len(rem), fb(_D, rate), fb(_D, rem), fb(_I, cof), float(dt),
              fb(_D, acc))
    return acc


def send_done(rate, rem, cof, dt, ncoflows, start, now, rel_tol,
              resolution, rate_sums=False):
    """:func:`send`, then :func:`done` at ``now``, in one pass: (bytes
    per coflow, positions done); None without the kernels. With
    ``rate_sums`` a third: per coflow the sum of the rates of the flows
    not done, as :func:`coflow_sum` gives it over them once the done ones
    have left."""
    k = lib()
    if k is None or not (plain(F64, rate, rem, start) and plain(I64, cof)):
        return None
    fb = _fb()
    acc = np.zeros(ncoflows)
    out = np.empty(len(rem), np.int64)
    rs = np.zeros(ncoflows) if rate_sums else None
    nd = k.ns_send_done(len(rem), fb(_D, rate), fb(_D, rem), fb(_I, cof),
                        float(dt), fb(_D, acc), fb(_D, start), float(now),
                        float(rel_tol), float(resolution), fb(_I, out),
                        _MOD.pair[1].NULL if rs is None else fb(_D, rs))
    return (acc, out[:nd]) if rs is None else (acc, out[:nd], rs)


def add_bytes(load, dt, bins):
    """``bins += load * dt / 8`` in one pass (LinkMeter), in place;
    False without the kernels (nothing done)."""
    k = lib()
    if k is None or not plain(F64, load, bins) or len(load) != len(bins):
        return False
    fb = _fb()
    k.ns_add_bytes(len(load), fb(_D, load), float(dt), fb(_D, bins))
    return True


def first_finish(rate, rem):
    """FlowTable.first_finish_s, compiled: (found, seconds); None
    without the kernels."""
    k = lib()
    if k is None or not plain(F64, rate, rem):
        return None
    fb = _fb()
    out = _MOD.pair[1].new('double *')
    found = k.ns_first_finish(len(rem), fb(_D, rate), fb(_D, rem), out)
    return bool(found), out[0]


def done(rem, rate, start, now, rel_tol, resolution):
    """FlowTable.finish's test, compiled: the positions of the flows done
    at ``now``, ascending; None without the kernels."""
    k = lib()
    if k is None or not plain(F64, rem, rate, start):
        return None
    fb = _fb()
    out = np.empty(len(rem), np.int64)
    nd = k.ns_done(len(rem), fb(_D, rem), fb(_D, rate), fb(_D, start),
                   float(now), float(rel_tol), float(resolution),
                   fb(_I, out))
    return out[:nd]


def compact(cols, pos):
    """The columns ``cols`` (equal lengths, contiguous, 8-byte items)
    without the rows ``pos`` (ascending), compacted in place: returns
    views of them, or None without the kernels (nothing changed). Rows
    before the first one dropped are not touched."""
    k = lib()
    if k is None or not (plain(F64 + I64, *cols) and plain(I64, pos)):
        return None
    F = len(cols[0])
    # (a float64 column moves as 8-byte items too)
    fb, ffi = _fb(), _MOD.pair[1]
    bufs = [fb(_I, c) for c in cols]
    # columns that share memory would be compacted twice (the buffers'
    # addresses: ndarray.ctypes costs more than the compaction)
    at = sorted([int(ffi.cast('intptr_t', b)) for b in bufs])
    if any(b - a < 8 * F for a, b in zip(at, at[1:])):
        return None
    if len(pos):
        k.ns_compact(F, len(pos), fb(_I, pos), len(cols),
                     ffi.new('int64_t *[]', bufs))
    return [c[:F - len(pos)] for c in cols]


def coflow_sum(cof, v, ncoflows, count=False):
    """(ncoflows,) per coflow the sum of ``v`` over its flows, as
    ``np.bincount(cof, weights=v, minlength=ncoflows)`` gives it (the
    same additions in the same order), compiled; None without the
    kernels or where cof is outside 0..ncoflows-1. With ``count``:
    (sums, :func:`coflow_count`), made in the same pass."""
    k = lib()
    if k is None or not (plain(I64, cof) and plain(F64, v)) or \
            len(cof) != len(v):
        return None
    fb = _fb()
    out = np.zeros(ncoflows)
    n = np.zeros(ncoflows, np.int64) if count else None
    if k.ns_coflow_sum(len(cof), ncoflows, fb(_I, cof), fb(_D, v),
                       fb(_D, out),
                       _MOD.pair[1].NULL if n is None else fb(_I, n)):
        return None
    return out if n is None else (out, n)


def coflow_count(cof, ncoflows):
    """(ncoflows,) int64: per coflow, how many of ``cof`` are it, as
    ``np.bincount(cof, minlength=ncoflows)`` gives it, compiled; None
    without the kernels or where cof is outside 0..ncoflows-1."""
    k = lib()
    if k is None or not plain(I64, cof):
        return None
    fb = _fb()
    out = np.zeros(ncoflows, np.int64)
    if k.ns_coflow_count(len(cof), ncoflows, fb(_I, cof), fb(_I, out)):
        return None
    return out


def port_bytes(path_links, path, cof, v, ncoflows, nlinks):
    """(ncoflows, nlinks): per coflow and link, the sum of ``v`` over
    the flows (path ids ``path`` into ``path_links``, coflows ``cof``)
    whose path crosses the link, added in (flow, hop) order as
    Snapshot.coflow_port_bytes' bincount adds them; compiled. None
    without the kernels or where an index is out of range."""
    k = lib()
    if k is None or not (plain(I64, path_links, path, cof)
                         and plain(F64, v)) or path_links.ndim != 2 or \
            not len(path) == len(cof) == len(v):
        return None
    fb = _fb()
    out = np.zeros(ncoflows * nlinks)
    P, H = path_links.shape
    if k.ns_port_bytes(len(path), H, P, ncoflows, nlinks,
                       fb(_I, path_links), fb(_I, path), fb(_I, cof),
                       fb(_D, v), fb(_D, out)):
        return None
    return out.reshape(ncoflows, nlinks)


class UtilText:
    """A links event's util body (LinkMeter): per link of ``idx``, its
    quoted name and colon then repr(round(util, 6)), comma separated,
    compiled; :meth:`text` gives None where the kernels cannot (absent,
    or a util outside the range whose text they know)."""

    def __init__(self, names):
        blob = [n.encode('ascii') for n in names]
        self.names = np.frombuffer(b''.join(blob) or b'\0', np.uint8)
        self.off = np.r_[0, np.cumsum([len(b) for b in blob])].astype(
            np.int64)
        self.widest = max([len(b) for b in blob] + [0]) + 32

    def text(self, idx, util):
        k = lib()
        if k is None or not (plain(I64, idx) and plain(F64, util)) or \
                len(idx) != len(util):
            return None
        fb = _fb()
        out = np.empty(len(idx) * (self.widest + 1) + 1, np.uint8)
        m = k.ns_util_text(len(idx), fb(_I, idx), fb(_D, util),
                           fb(_C, self.names), fb(_I, self.off), fb(_C, out))
        if m < 0:
            return None
        return out[:m].tobytes().decode('ascii')


class FlowText:
    """The simulator's flow event lines (Engine._log_flows), compiled:
    :meth:`lines` gives None where the kernels cannot (absent, or a
    number whose text they do not know: bytes not whole, a start time
    outside 0..2^22 s or rounding below 1e-4). The C writes
    events.FLOW_LINE's layout without its optional fields."""

    def __init__(self, hosts):
        raw = [h.encode('ascii') for h in hosts]
        self.hosts = np.frombuffer(b''.join(raw) or b'\0', np.uint8)
        self.hoff = np.r_[0, np.cumsum([len(b) for b in raw])].astype(
            np.int64)
        self.widest = 2 * max([len(b) for b in raw] + [0])
        # the coflows' quoted names, appended as coflows come (capacity
        # doubled: a run's every new coflow must not copy them all)
        self.qnames = np.zeros(1024, np.uint8)
        self.qoff = np.zeros(64, np.int64)
        self.nq, self.qwidest = 0, 0

    def _names(self, quoted):
        new = [q.encode('ascii') for q in quoted[self.nq:]]
        if not new:
            return
        # the new names at once (a plan opens tens of thousands of
        # coflows, a few per event)
        blob = b''.join(new)
        at = int(self.qoff[self.nq])
        if at + len(blob) > len(self.qnames):
            self.qnames = np.resize(self.qnames, 2 * (at + len(blob)))
        if self.nq + len(new) + 1 > len(self.qoff):
            self.qoff = np.resize(self.qoff, 2 * (self.nq + len(new) + 1))
        self.qnames[at:at + len(blob)] = np.frombuffer(blob, np.uint8)
        lens = [len(b) for b in new]
        self.qoff[self.nq + 1:self.nq + 1 + len(new)] = \
            at + np.cumsum(lens)
        self.nq += len(new)
        self.qwidest = max(self.qwidest, max(lens))

    def lines(self, head, ids, cof, src, dst, size, start, quoted):
        """The lines of flows ``ids`` (coflow indices ``cof`` into
        ``quoted``, their JSON names; host indices; bytes; start times)
        after ``head`` (FLOW_LINE.head's), or None."""
        k = lib()
        if k is None or not (plain(I64, ids, cof, src, dst)
                             and plain(F64, size, start)):
            return None
        self._names(quoted)
        fb = _fb()
        h = head.encode('ascii')
        out = np.empty(len(ids) * (len(h) + self.widest + self.qwidest
                                   + 120) + 1, np.uint8)
        m = k.ns_flow_lines(len(ids), h, len(h), fb(_I, ids), fb(_I, cof),
                            fb(_I, src), fb(_I, dst), fb(_D, size),
                            fb(_D, start), fb(_C, self.qnames),
                            fb(_I, self.qoff), fb(_C, self.hosts),
                            fb(_I, self.hoff), fb(_C, out))
        if m < 0:
            return None
        return out[:m].tobytes().decode('ascii')
