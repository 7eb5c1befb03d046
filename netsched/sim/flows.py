"""The simulator's flows: the record of every flow ever started, and the
arrays of the active ones (starting them, counting the bytes they send,
finishing them).

Paths are the controller's: ``routing.path`` on the 5-tuple, so a flow
takes exactly the ECMP path the emulated fabric would give it; when the
routes change (a hybrid fabric's circuits) :meth:`FlowTable.reroute`
moves the active flows to their new paths. With
``big_switch`` only a flow's first and last links (its hosts' ports) are
kept: the non-blocking fabric of the coflow literature.

Completions are coalesced: at each event, a flow that would finish
within ``rel_tol`` of its age (default 0.1%), or within ``resolution_s``,
finishes now, its last bytes counted as sent. A flow's completion time
is thereby early by at most that fraction of its duration; on the
Facebook trace this cuts the number of events about 3x and changes the
average CCT by under 0.1%. ``rel_tol=0`` gives exact completion times.
"""
import numpy as np

from .columns import Columns
from . import kernels
from ..errors import NetschedError

# the active set, one entry per active flow: ids, path ids, coflow
# indices, bytes left, rates (bit/s), start times (s), priority keys and
# explicit rates (bit/s or NaN) of the last decision
ACTIVE = ('a_id', 'a_path', 'a_cof', 'a_rem', 'a_rate', 'a_start', 'a_key',
          'a_explicit')


# (name, the key it is stored under in a FlowTable's __dict__)
_STORED = tuple((n, '_' + n) for n in ACTIVE)

# a started flow's row until it joins (FlowTable._new)
ROW = ('path', 'coflow', 'src', 'dst', 'size', 'start', 'sport', 'dport')


def _active(name):
    """An active array as an attribute of FlowTable: flows started since
    it was last read join it first (FlowTable._flush)."""
    key = '_' + name

    def get(self):
        if self._pending:
            self._flush()
        return self.__dict__[key]

    def put(self, value):
        if self._pending:
            self._flush()
        self.__dict__[key] = value
    return property(get, put)


class FlowTable:
    """Every flow ever started (``record``, ``tags``) and the active ones
    (the ``a_*`` arrays, in step); bytes sent are counted per coflow in
    ``coflows``."""

    def __init__(self, net, coflows, rel_tol=1e-3, resolution_s=1e-6):
        self.net, self.coflows = net, coflows
        self.rel_tol, self.resolution_s = rel_tol, resolution_s
        self._pending = 0                  # flows started, not yet joined
        # their rows, (path, coflow, src, dst, size, start, sport, dport):
        # a tuple per flow rather than a list per column, as a plan
        # starts its sends one by one
        self._new = []
        self._record = Columns(path=np.int64, coflow=np.int64, src=np.int64,
                               dst=np.int64, size=np.float64,
                               start=np.float64, sport=np.int64,
                               dport=np.int64)
        self.tags = []                     # driver's object per flow
        self.host_index = {h: i for i, h in enumerate(net.hosts)}
        self.a_id = np.zeros(0, np.int64)
        self.a_path = np.zeros(0, np.int64)
        self.a_cof = np.zeros(0, np.int64)
        self.a_rem = np.zeros(0)
        self.a_rate = np.zeros(0)
        self.a_start = np.zeros(0)
        self.a_key = np.zeros(0, np.int64)
        self.a_explicit = np.zeros(0)
        self._done_at = None            # send()'s finish test, for finish()
        # counts changes to the active set or its paths (flows joined,
        # done, cancelled, rerouted): equal counts, the same flows
        self.changes = 0
        self.joins = 0                  # of them, flows joined
        # per coflow, the sum of the active flows' rates, made by send()
        # (the flows not done at its time) once a snapshot has asked for
        # it (rate_sums): (the a_rate it is of, the sums)
        self.want_rate_sums = False
        self._rate_sums = None
        # the active arrays that hold one value throughout, the one flows
        # join with (no decision keyed them or gave explicit rates; the
        # RateSetter says): finish() truncates them rather than compacting
        self.uniform = {'a_key', 'a_explicit'}

    def start(self, src, dst, size_bytes, coflow, now_s, tags=None,
              sport=None, dport=None):
        """Start flows at ``now_s``. src/dst: host names; coflow: one
        coflow index or one per flow. Returns their ids."""
        n = len(src)
        if n == 0:
            return np.zeros(0, np.int64)
        if n == 1 and not self.net.big_switch:
            return self._start_one(src[0], dst[0], size_bytes, coflow,
                                   now_s, tags, sport, dport)
        sport = sport if sport is not None else [0] * n
        dport = dport if dport is not None else [0] * n
        hi = self.host_index
        si, di = [hi[s] for s in src], [hi[d] for d in dst]
        paths = self.net.path_ids(si, di, sport, dport)
        size = np.asarray(size_bytes, float).tolist()
        if any(s <= 0 for s in size):
            raise NetschedError('a flow must carry at least one byte')
        if isinstance(coflow, (int, np.integer)):
            cof = [int(coflow)] * n
        else:
            cof = [int(c) for c in coflow]
        first = self._record.n + self._pending
        self._pending += n
        self.tags.extend(tags if tags is not None else [None] * n)
        at, idx = np.unique(cof, return_inverse=True)
        self.coflows.active_flows[at] += np.bincount(idx)
        # joined to the record and the active arrays when they are next
        # read (_flush): a workload that starts its flows one by one
        # (a plan's sends) would otherwise copy every array per flow
        self._new.extend(zip(paths.tolist(), cof, si, di, size,
                             [now_s] * n, sport, dport))
        return np.arange(first, first + n)

    def _start_one(self, src, dst, size_bytes, coflow, now_s, tags, sport,
                   dport):
        """start() of one flow, without arrays (a plan starts its sends
        one by one: a million of them at k=32); the same entries."""
        c = int(coflow if isinstance(coflow, (int, np.integer))
                else coflow[0])
        first = self._record.n + self._pending
        self.start_send(src, dst, size_bytes[0], c, now_s,
                        tags[0] if tags is not None else None,
                        0 if sport is None else sport[0],
                        0 if dport is None else dport[0])
        return np.arange(first, first + 1)

    def start_send(self, src, dst, size_bytes, coflow, now_s, tag, sport,
                   dport):
        """One flow (a plan's send: host names, bytes, an engine coflow
        index, its tag and ports), its id not returned: the entries
        :meth:`start` makes, without its lists and arrays (a plan starts
        its sends one by one)."""
        size = float(size_bytes)
        if size <= 0:
            raise NetschedError('a flow must carry at least one byte')
        pid = self.net.path_id(src, dst, sport, dport)
        self._pending += 1
        self.tags.append(tag)
        self.coflows.active_flows[coflow] += 1
        hi = self.host_index
        self._new.append((pid, coflow, hi[src], hi[dst], size, now_s, sport,
                          dport))

    def _flush(self):
        """The pending starts into the record and the active arrays, in
        the order they were made (np.r_ per start gave the same)."""
        if not self._pending:
            return
        n, rows = self._pending, self._new
        self._pending, self._new = 0, []
        self.changes += 1
        self.joins += 1
        new = {k: np.array(v, np.float64 if k in ('size', 'start')
                           else np.int64)
               for k, v in zip(ROW, zip(*rows))}
        ids = np.arange(self._record.n, self._record.n + n)
        self._record.append(**new)
        col = self.__dict__
        keep = self._rate_sums is not None and \
            self._rate_sums[0] is col['_a_rate']
        for name, add in (('a_id', ids), ('a_path', new['path']),
                          ('a_cof', new['coflow']), ('a_rem', new['size']),
                          ('a_rate', np.zeros(n)), ('a_start', new['start']),
                          ('a_key', np.zeros(n, np.int64)),
                          ('a_explicit', np.full(n, np.nan))):
            col['_' + name] = np.concatenate([col['_' + name], add])
        if keep:                        # the flows joined have no rate
            self._rate_sums = (col['_a_rate'], self._rate_sums[1])

    @property
    def record(self):
        """Columns of every flow started (path, coflow, hosts, size,
        start, ports)."""
        if self._pending:
            self._flush()
        return self._record

    def reroute(self):
        """Give every active flow the path the network routes its
        5-tuple on now (``record['path']``: its latest). Returns how many
        moved."""
        if not len(self.a_id):
            return 0
        r, hosts, ids = self.record, self.net.hosts, self.a_id
        new = np.array([self.net.path_id(hosts[s], hosts[d], sp, dp)
                        for s, d, sp, dp in zip(
                            r['src'][ids].tolist(), r['dst'][ids].tolist(),
                            r['sport'][ids].tolist(),
                            r['dport'][ids].tolist())], np.int64)
        moved = int((new != self.a_path).sum())
        self.a_path = new
        self.changes += 1
        r['path'][ids] = new
        return moved

    def send(self, dt_s, now_s=None):
        """The active flows ran ``dt_s`` at their rates. With ``now_s``
        (the time they reached), :meth:`finish`'s test at that time is
        made in the same pass (compiled) and kept for it."""
        self._done_at = None
        self._rate_sums = None
        col = self._arrays()
        rate, rem, cof = col['_a_rate'], col['_a_rem'], col['_a_cof']
        if len(rem):
            total = self.coflows.sent_bytes
            start = col['_a_start']
            # sums over these flows' coflows (idx into at), not over the
            # run's every coflow at every event (tens of thousands in a
            # plan); the rate sums are read by engine index
            at, idx = (slice(None), cof) if self.want_rate_sums else \
                np.unique(cof, return_inverse=True)
            n = len(total) if self.want_rate_sums else len(at)
            out = None if now_s is None else kernels.send_done(
                rate, rem, idx, dt_s, n, start, now_s, self.rel_tol,
                self.resolution_s, self.want_rate_sums)
            if out is not None:                 # compiled, same bits
                total[at] += out[0]
                self._done_at = (now_s, rem, rate, start, out[1])
                if len(out) > 2:
                    self._rate_sums = (rate, out[2])
                return
            acc = kernels.send(rate, rem, idx, dt_s, n)
            if acc is not None:                 # compiled, same bits
                total[at] += acc
                return
            sent = rate * dt_s / 8.0
            self.a_rem -= sent
            self._count_sent(cof, sent)

    def _arrays(self):
        """The active arrays by stored name ('_a_id', ...), flows started
        joined first (a read each without a property call)."""
        if self._pending:
            self._flush()
        return self.__dict__

    def rate_sums(self):
        """Per engine coflow index, the sum of its active flows' rates in
        flow order (the additions numpy's bincount makes), where send()
        made it for the rates and flows there are now; else None (and
        send() makes it from now on)."""
        r = self._rate_sums
        if r is not None and r[0] is self.a_rate:
            return r[1]
        self.want_rate_sums = True
        return None

    def _count_sent(self, cof, sent_bytes, unique=None):
        # per coflow of cof, its flows' bytes in flow order (the others
        # gain nothing); unique: np.unique's (values, inverse) of cof
        at, idx = unique or np.unique(cof, return_inverse=True)
        self.coflows.sent_bytes[at] += np.bincount(idx, weights=sent_bytes)

    def first_finish_s(self):
        """Time until the first moving flow finishes at its rate, or None
        when none moves."""
        found = kernels.first_finish(self.a_rate, self.a_rem)
        if found is not None:                   # compiled, same bits
            return np.float64(found[1]) if found[0] else None
        moving = self.a_rate > 0
        if not moving.any():
            return None
        return (self.a_rem[moving] * 8.0 / self.a_rate[moving]).min()

    def finish(self, now_s):
        """Remove the flows done at ``now_s`` (coalesced) from the active
        set. Returns (their ids, whether one of their coflows has no
        active flow left); ids empty when none is done."""
        c, self._done_at = self._done_at, None
        col = self._arrays()
        rem, rate, start = col['_a_rem'], col['_a_rate'], col['_a_start']
        if c is not None and c[0] == now_s and c[1] is rem and \
                c[2] is rate and c[3] is start:
            done = c[4]                         # send() made the test
        else:
            self._rate_sums = None              # of other flows
            done = kernels.done(rem, rate, start, now_s, self.rel_tol,
                                self.resolution_s)
        if done is None:                        # numpy: the same bits
            window = np.maximum(self.rel_tol * (now_s - start),
                                self.resolution_s)
            done = np.flatnonzero(
                rem <= np.maximum(rate * window / 8.0, 1e-6))
        if not len(done):
            return np.zeros(0, np.int64), False
        self.changes += 1
        ids = col['_a_id'][done]
        touched = col['_a_cof'][done]
        left = np.maximum(rem[done], 0.0)
        at, idx = np.unique(touched, return_inverse=True)
        if np.count_nonzero(left):          # (ndarray.any costs more)
            # the coalesced flows' last bytes count for their coflows; the
            # link counters keep only what the allocated rates carried, so
            # no link is ever seen above its capacity
            self._count_sent(touched, left, (at, idx))
        active = self.coflows.active_flows
        active[at] -= np.bincount(idx)
        uniform = self.uniform
        keys = [k for n, k in _STORED if n not in uniform]
        cols = [col[k] for k in keys]
        # the active arrays are the table's own (a snapshot is read and
        # dropped within a decision), so they are compacted in place
        kept = kernels.compact(cols, done)
        if kept is None:
            keep = np.ones(len(col['_a_id']), bool)
            keep[done] = False
            kept = [c[keep] for c in cols]
        n = len(kept[0])
        sums = self._rate_sums
        for k, c in zip(keys, kept):
            col[k] = c
        for name in uniform:
            k = '_' + name
            col[k] = col[k][:n]
        if sums is not None:                    # of the flows kept
            self._rate_sums = (col['_a_rate'], sums[1])
        return ids, bool(np.count_nonzero(active[touched]) < len(touched))

    def cancel(self, which):
        """Remove the active flows ``which`` (a boolean mask over them)
        without their finishing (a failed job's: its agent was killed).
        Returns their ids."""
        which = np.asarray(which, bool)
        if not which.any():
            return np.zeros(0, np.int64)
        ids = self.a_id[which]
        self.changes += 1
        active = self.coflows.active_flows
        self.coflows.active_flows -= np.bincount(self.a_cof[which],
                                                 minlength=len(active))
        keep = ~which
        for name in ACTIVE:
            setattr(self, name, getattr(self, name)[keep])
        return ids


for _name in ACTIVE:
    setattr(FlowTable, _name, _active(_name))
