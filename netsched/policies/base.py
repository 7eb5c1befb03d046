"""What every policy shares: the Snapshot it sees, the Decision it
returns, the Policy base class, and the mapping of ranks to classes.

See the package docstring for the contract.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError

# how a policy's workload() asks ps tensors to be cut into slices of at
# most slice_mb (workload.taskgraph.slice_sizes): into equal parts, or as
# BytePS (and so Prophet's and ByteScheduler's code) cuts them: whole
# slices, the remainder last
PARTITIONS = ('equal', 'byteps')


def checked_partitions(policy, value):
    """A policy's ``partitions`` parameter, checked (one of
    :data:`PARTITIONS`; a ConfigError naming it otherwise)."""
    if value not in PARTITIONS:
        raise ConfigError('%s: partitions must be one of %s, got %r'
                          % (policy, ', '.join(PARTITIONS), value))
    return value


@dataclass(frozen=True)
class JobView:
    """One DL job as a policy sees it (``Snapshot.jobs``). A job is in
    the snapshot from its first coflow's arrival until its last planned
    coflow ends (a tuning configuration stopped early: the last of the
    iterations it was given).

    ``done``: iterations completed (every worker's mark of iteration k
    seen counts k + 1; the latest mark of any worker, as reported).
    ``losses``: (iterations done, training loss then, report time) per
    iteration completed, oldest first: what the job's own log says.
    ``iteration_load``: (L,) bytes one iteration puts on each link (its
    coflow's sends on their paths), or None if not known.
    ``stage_ends``: for a hyper-parameter-tuning configuration, the
    iteration counts at which its stages end (cumulative, ascending);
    empty for a plain job. ``group`` names its tuning group.
    ``compute_s``: one iteration's compute (forward and backward passes)
    and ``first_send_s``: when, after an iteration starts, its first
    gradient is ready to go (the job's profile, from its model; None
    where not known): with ``iteration_load`` they give the job's
    communication pattern over an iteration (CASSINI's circle).
    ``pattern``: how it exchanges gradients (``ps``, ``ring``, ...; None
    where not known), for a policy of one architecture (Geryon)."""
    id: str
    arrival: float
    iterations: int
    done: int = 0
    losses: tuple = ()
    bytes_per_iteration: float = 0.0
    iteration_load: np.ndarray = None
    group: str = None
    stage_ends: tuple = ()
    compute_s: float = None
    first_send_s: float = None
    pattern: str = None

    @property
    def stage(self):
        """Index of the tuning stage the job is in now (None if plain)."""
        for i, end in enumerate(self.stage_ends):
            if self.done < end:
                return i
        return len(self.stage_ends) - 1 if self.stage_ends else None

    @property
    def stage_left(self):
        """Iterations left to the end of its stage (or of the job)."""
        s = self.stage
        end = self.iterations if s is None else min(self.stage_ends[s],
                                                    self.iterations)
        return max(end - self.done, 0)


def urgency_class(urgency, k):
    """Which of ``k`` urgency classes of roughly equal bytes data at
    ``urgency`` (its position in the next forward pass, 0 = consumed
    first, 1 = the model's end) falls in: min(floor(u k), k - 1).
    Shared by the workload (a job's connections per class) and the
    policies that class by urgency, so both cut the model alike."""
    u = np.clip(np.nan_to_num(np.asarray(urgency, float), nan=1.0), 0, 1)
    return np.minimum((u * k).astype(np.int64), k - 1)


@dataclass(frozen=True)
class Snapshot:
    """What a policy sees. Arrays are indexed by active flow (F) or by
    coflow (C, the coflows with active flows); links by index (L)."""
    t: float
    queues: object                     # int Q, or None for exact order
    link_capacity: np.ndarray          # (L,) bit/s
    path_links: np.ndarray             # (P, H) link indices, -1 padded
    flow_path: np.ndarray              # (F,) row of path_links per flow
    flow_coflow: np.ndarray            # (F,) index into the coflow arrays
    flow_remaining: np.ndarray         # (F,) bytes
    flow_sent: np.ndarray              # (F,) bytes
    flow_rate: np.ndarray              # (F,) bit/s, the current allocation
    coflow_id: tuple                   # (C,) names
    coflow_arrival: np.ndarray         # (C,) s
    coflow_sent: np.ndarray            # (C,) bytes sent so far, all flows
    coflow_job: tuple = ()             # (C,) job id or None
    jobs: dict = field(default_factory=dict)
    # sends of these coflows that have not started yet (a DL iteration's
    # later tensors): known demand, not flows; clairvoyant policies count
    # them in a coflow's remaining bytes
    pending_path: np.ndarray = field(
        default_factory=lambda: np.zeros(0, np.int64))
    pending_coflow: np.ndarray = field(
        default_factory=lambda: np.zeros(0, np.int64))
    pending_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # per flow and per pending send: where its data sits in its job's
    # next forward pass (0 = consumed first, up to 1), NaN for data that
    # is not a model's (trace flows); empty if the backend knows none
    flow_urgency: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pending_urgency: np.ndarray = field(
        default_factory=lambda: np.zeros(0))
    # per flow and pending send: its tensor's place in the next forward
    # pass's consumption order (tensor index over the model's tensors:
    # a large tensor consumed late is late, whatever its bytes), NaN for
    # data of no model
    flow_position: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pending_position: np.ndarray = field(
        default_factory=lambda: np.zeros(0))

    def urgency(self, pending=False):
        """flow_urgency (or pending_urgency), NaN where not known."""
        return self._per_send('urgency', pending)

    def position(self, pending=False):
        """flow_position (or pending_position), NaN where not known."""
        return self._per_send('position', pending)

    def _per_send(self, what, pending):
        n = len(self.pending_bytes if pending else self.flow_coflow)
        u = getattr(self, ('pending_' if pending else 'flow_') + what)
        return np.asarray(u, float) if len(u) == n else np.full(n, np.nan)

    def flow_job(self):
        """(F,) job id per flow (None for flows of no job)."""
        cj = self.coflow_job
        if len(cj) != len(self.coflow_id):
            return (None,) * len(self.flow_coflow)
        return tuple(cj[c] for c in self.flow_coflow.tolist())

    @property
    def flow_links(self):
        """(F, H) link indices of each flow's path, -1 padded."""
        return self.path_links[self.flow_path]

    @property
    def n_links(self):
        return len(self.link_capacity)

    def coflow_port_bytes(self, per_flow=None):
        """(C, L) matrix: per coflow, the bytes it still has to push
        through each link: its active flows' remaining bytes plus its
        pending sends. With ``per_flow`` (F,), those values of the active
        flows alone."""
        C, L = len(self.coflow_id), self.n_links
        if per_flow is not None:
            path, cof, v = self.flow_path, self.flow_coflow, per_flow
        elif len(self.pending_path):
            path = np.r_[self.flow_path, self.pending_path]
            cof = np.r_[self.flow_coflow, self.pending_coflow]
            v = np.r_[self.flow_remaining, self.pending_bytes]
        else:
            path, cof, v = self.flow_path, self.flow_coflow, \
                self.flow_remaining
        return self._port_sums(np.asarray(path, np.int64),
                               np.asarray(cof, np.int64),
                               np.asarray(v, float), C, L)

    def _port_sums(self, path, cof, v, C, L):
        """coflow_port_bytes' (C, L) sums of ``v`` per coflow ``cof`` over
        the links of each path, added in (flow, hop) order (a backend may
        give the same bits faster)."""
        fl = self.path_links[path]
        ok = fl >= 0
        if ok.all():
            # every path as long as the table (a big switch's two
            # ports): no masking, the same (flow, hop) order
            bins = (cof * L)[:, None] + fl
            w = np.repeat(v, fl.shape[1])
            return np.bincount(bins.ravel(), weights=w,
                               minlength=C * L).reshape(C, L)
        rows = np.broadcast_to(cof[:, None], fl.shape)[ok]
        w = np.broadcast_to(v[:, None], fl.shape)[ok]
        return np.bincount(rows * L + fl[ok], weights=w,
                           minlength=C * L).reshape(C, L)

    def one_capacity(self):
        """The capacity (bit/s) every link has, where all have one and
        every path crosses a link (a big switch), else None (a backend
        may keep it from one snapshot to the next)."""
        return one_capacity(self.path_links, self.link_capacity)

    def per_flow(self, per_coflow):
        """(F,) each flow's coflow's entry of ``per_coflow`` (C,) (a
        backend may take them faster)."""
        return np.take(per_coflow, self.flow_coflow)

    def coflow_flows(self):
        """(C,) int: per coflow, its active flows (a backend may count
        them faster)."""
        return np.bincount(self.flow_coflow, minlength=len(self.coflow_id))

    def coflow_rate(self):
        """(C,) bit/s: per coflow, its flows' rates summed in flow order
        (a backend may give the same bits faster)."""
        return np.bincount(self.flow_coflow, weights=self.flow_rate,
                           minlength=len(self.coflow_id))


@dataclass(frozen=True)
class Decision:
    coflow_rank: np.ndarray = None     # (C,) ints, 0 first
    coflow_order: np.ndarray = None    # (C,) tie-break inside a rank
    flow_rate: np.ndarray = None       # (F,) bit/s or NaN
    recheck_at: float = None           # absolute time to decide again
    # per-send classes (0..Q-1), for policies that class data rather
    # than coflows (a tensor's urgency): the active flows' and the
    # pending sends' (so that hosts tag those before they start); they
    # override the coflow's class for those flows; -1 = the coflow's
    flow_class: np.ndarray = None      # (F,)
    pending_class: np.ndarray = None   # (P,)
    # per job, when its iterations may start (CASSINI's time shifts):
    # {job: (shift_s, period_s, tolerance_s, max_wait_s)}: an iteration
    # starts on the grid shift_s + n period_s (s since the run's start),
    # up to tolerance_s after a grid point, or at once where the next
    # grid point is more than max_wait_s away (host.shifts.gate); a
    # job absent is not held
    job_shift: dict = None


# the classes a per-send class may name where the experiment gives the
# full order (queues: exact): the emulator's switches' at most
MAX_CLASSES = 8


def check_decision(d, snap, policy):
    """``d`` as a policy returned it for ``snap``, checked field by field
    (shapes, types, ranges); a ConfigError of one line naming the policy,
    the field and what is wrong, where the backend would otherwise fail
    deep inside with a traceback or act on nonsense. Returns ``d``."""
    if not isinstance(d, Decision):
        raise ConfigError('policy %s: decide() returned %s, not a '
                          'netsched.policies.Decision' % (
                              policy, _what(d)))
    C, F = len(snap.coflow_id), len(snap.flow_coflow)
    P = len(snap.pending_bytes)
    Q = snap.queues if snap.queues is not None else MAX_CLASSES
    for field_, n, per, kind, lo, hi in (
            ('coflow_rank', C, 'coflow', 'int', 0, None),
            ('coflow_order', C, 'coflow', 'number', None, None),
            ('flow_rate', F, 'active flow', 'rate', 0, None),
            ('flow_class', F, 'active flow', 'int', -1, Q - 1),
            ('pending_class', P, 'pending send', 'int', -1, Q - 1)):
        v = getattr(d, field_)
        if v is not None:
            _check_array(policy, field_, v, n, per, kind, lo, hi)
    r = d.recheck_at
    if r is not None and (isinstance(r, bool) or not isinstance(
            r, (int, float, np.integer, np.floating)) or not np.isfinite(r)):
        raise ConfigError('policy %s: Decision.recheck_at: want None or a '
                          'time in s, got %s' % (policy, _what(r)))
    if d.job_shift is not None:
        _check_shifts(policy, d.job_shift)
    return d


def _what(v):
    """A value as an error shows it: its type, and itself if short."""
    text = repr(v)
    return '%s %s' % (type(v).__name__, text) if len(text) <= 40 \
        else type(v).__name__


def _check_array(policy, field_, v, n, per, kind, lo, hi):
    head = 'policy %s: Decision.%s' % (policy, field_)
    try:
        a = np.asarray(v)
    except (ValueError, TypeError):
        a = None
    if a is None or a.dtype.kind not in 'biuf':
        raise ConfigError('%s: want an array of numbers, got %s'
                          % (head, _what(v)))
    if a.shape != (n,):
        raise ConfigError('%s: want shape (%d,), one per %s, got %s'
                          % (head, n, per, a.shape))
    if not n:
        return
    f = a.astype(float)
    if kind == 'rate':            # NaN: no explicit rate for that flow
        bad = np.isinf(f) | (f < lo)
        want = 'bit/s >= 0 or NaN'
    else:
        bad = ~np.isfinite(f)
        want = 'finite numbers'
        if kind == 'int':
            bad |= f != np.round(f)
            want = 'whole numbers'
        if lo is not None:
            bad |= f < lo
            want += ' >= %d' % lo
        if hi is not None:
            bad |= f > hi
            want += ' <= %d' % hi
    if bad.any():
        i = int(np.argmax(bad))
        raise ConfigError('%s: want %s, got %r at index %d (%d bad of %d)'
                          % (head, want, a[i].item(), i, int(bad.sum()), n))


def _check_shifts(policy, shifts):
    head = 'policy %s: Decision.job_shift' % policy
    if not isinstance(shifts, dict):
        raise ConfigError('%s: want {job: (shift_s, period_s, tolerance_s, '
                          'max_wait_s) or None}, got %s'
                          % (head, _what(shifts)))
    for job, v in shifts.items():
        if v is None:
            continue
        ok = isinstance(v, (tuple, list)) and len(v) == 4 and all(
            isinstance(x, (int, float, np.integer, np.floating))
            and not isinstance(x, bool) and np.isfinite(x) and x >= 0
            for x in v)
        if not ok or not v[1] > 0:
            raise ConfigError('%s[%r]: want (shift_s, period_s, '
                              'tolerance_s, max_wait_s), finite, >= 0, '
                              'period_s > 0, or None; got %s'
                              % (head, job, _what(v)))


def flow_priority(snap, decision):
    """Per active flow, a dense priority key (0 = served first). With Q
    queues it is the coflow's class (:func:`coflow_class` with no current
    classes; the backends pass theirs to coflow_class themselves)."""
    F = len(snap.flow_path)
    if decision.coflow_rank is None:
        key = np.zeros(F, dtype=np.int64)
    elif snap.queues is not None:
        key = coflow_class(snap, decision)[snap.flow_coflow]
    else:
        key = snap.per_flow(full_rank(decision))
    return with_flow_classes(key, decision)


def with_flow_classes(key, decision):
    """Per-flow keys with the decision's per-send classes (where >= 0)
    in place of the coflows'."""
    if decision.flow_class is None:
        return key
    fc = np.asarray(decision.flow_class, dtype=np.int64)
    return np.where(fc >= 0, fc, key)


def _copies_summed(groups, x, n, count=None, size=None):
    """``np.bincount(groups, weights=np.full(len(groups), x),
    minlength=n)``: x added once per member of each group. Where every
    partial sum k x (k up to len(groups)) is a float exactly (x's
    significant bits and k's fit in 53; a power of two always does), that
    is the count times x, the same bits without the (F,) weights.
    ``count``: a function giving np.bincount(groups, minlength=n);
    ``size``: len(groups), given so that ``groups`` may be a function
    giving them, called only if they are summed."""
    F = len(groups) if size is None else size
    exact = False
    if F and x > 0 and np.isfinite(x):
        m = int(math.frexp(x)[0] * 2 ** 53)     # x's significand, exact
        bits = m.bit_length() - ((m & -m).bit_length() - 1)
        exact = bits + F.bit_length() <= 53
    if exact and count is not None:
        return count() * x
    if callable(groups):
        groups = groups()
    if exact:
        return np.bincount(groups, minlength=n) * x
    return np.bincount(groups, weights=np.full(F, x), minlength=n)


def one_capacity(path_links, link_capacity):
    """Snapshot.one_capacity of these arrays."""
    cap = np.asarray(link_capacity, float)
    pl = path_links
    if len(cap) and len(pl) and pl.shape[1] and np.isfinite(cap[0]) and \
            (cap == cap[0]).all() and (pl[:, 0] >= 0).all():
        return float(cap[0])
    return None


def rate_estimate(snap):
    """Per coflow, the rate (bytes/s) at which it is sending now, or, for
    a coflow sending nothing yet (just arrived, or held back by the last
    decision), an upper bound: the sum over its flows of their paths'
    smallest capacity. Used to tell when it may next cross a threshold:
    the bound makes that guess early, never late, and asking early only
    costs a decision."""
    C = len(snap.coflow_id)
    now = snap.coflow_rate() / 8.0
    # hop by hop: gathering (F, H) rows and reducing over the short axis
    # cost 20x as much (Aalo on the Facebook trace decides at every
    # event); the minimum is the same
    # per path where there are fewer paths than flows, else per flow
    pl, fp = snap.path_links, snap.flow_path
    per_path = len(pl) < len(fp)
    one = snap.one_capacity()
    if one is not None:
        # links of one capacity, every path crossing one (a big switch):
        # that capacity is every flow's slowest, the same weights as below
        # (the flows' coflows made only if summed: a backend may defer
        # them, and the count times the capacity rarely needs them)
        top = _copies_summed(lambda: snap.flow_coflow, one, C,
                             snap.coflow_flows, size=len(snap.flow_path)) / 8.0
        return np.where(now > 0, now, top)
    link_cap = np.asarray(snap.link_capacity, float)
    slowest = np.full(len(pl) if per_path else len(fp), np.inf)
    for h in range(pl.shape[1]):
        hop = pl[:, h] if per_path else pl[:, h][fp]
        cap = link_cap[np.maximum(hop, 0)]
        cap[hop < 0] = np.inf
        np.minimum(slowest, cap, out=slowest)
    slowest[~np.isfinite(slowest)] = 0.0       # a flow crossing no link
    if per_path:
        slowest = slowest[fp]
    top = np.bincount(snap.flow_coflow, weights=slowest, minlength=C) / 8.0
    return np.where(now > 0, now, top)


def next_crossing(snap, gap, rate):
    """The absolute time at which the first of the coflows (or jobs)
    still ``gap`` bytes short of a threshold at ``rate`` bytes/s crosses
    it, or None if none is moving toward one."""
    gap, rate = np.asarray(gap, float), np.asarray(rate, float)
    ok = (rate > 0) & np.isfinite(gap) & (gap > 0)
    if not ok.any():
        return None
    return snap.t + max(float((gap[ok] / rate[ok]).min()), 1e-9)


def full_rank(decision):
    """Per coflow, the dense rank of (coflow_rank, coflow_order): the
    policy's whole order, its tie-break inside a rank included (Aalo's
    FIFO inside a queue); coflows equal in both share a rank."""
    rank = np.asarray(decision.coflow_rank, dtype=np.int64)
    order = (np.zeros(len(rank)) if decision.coflow_order is None
             else np.asarray(decision.coflow_order, dtype=float))
    if len(rank) <= SMALL_RANK:
        r, o = rank.tolist(), order.tolist()
        if not any(x != x for x in o):       # no NaN: Python sorts alike
            # a few coflows (Aalo asks at every event): sorted in Python,
            # stable as lexsort, without a dozen numpy calls
            idx = sorted(range(len(r)), key=lambda c: (r[c], o[c]))
            key, k, prev = [0] * len(r), -1, None
            for c in idx:
                if prev is None or r[c] != r[prev] or o[c] != o[prev]:
                    k += 1
                key[c] = k
                prev = c
            return np.array(key, dtype=np.int64)
    return _full_rank_arrays(rank, order)


SMALL_RANK = 64      # up to this many coflows, full_rank sorts in Python


def _full_rank_arrays(rank, order):
    """full_rank with numpy (lexsort's order, NaN last)."""
    idx = np.lexsort((order, rank))
    key = np.empty(len(rank), dtype=np.int64)
    same = np.r_[False, (rank[idx][1:] == rank[idx][:-1])
                 & (order[idx][1:] == order[idx][:-1])]
    key[idx] = np.cumsum(~same) - 1
    return key


# mappings of ranks onto classes (the experiment's ``class_map``); both
# backends pass the experiment's to coflow_class
CLASS_MAPS = ('stable', 'share')
DEFAULT_CLASS_MAP = 'stable'


def coflow_class(snap, decision, current=None, release_floor=False,
                 class_map=None):
    """Per coflow, the priority class (what the emulator marks): the
    rank order mapped onto Q classes by :func:`stable_classes`, given the
    classes the coflows have now (``current``, -1 = none yet).
    ``class_map`` (one of CLASS_MAPS, None: DEFAULT_CLASS_MAP): ``share``
    lets a coflow share the class of the one ranked before it where
    stable_classes would push running coflows into the last class
    (stable_classes' ``share``)."""
    class_map = DEFAULT_CLASS_MAP if class_map is None else class_map
    if class_map not in CLASS_MAPS:
        raise ValueError('class_map must be one of %s, got %r'
                         % (', '.join(CLASS_MAPS), class_map))
    C = len(snap.coflow_id)
    if decision.coflow_rank is None:
        return np.zeros(C, dtype=np.int64)
    q = 8 if snap.queues is None else snap.queues
    rank = full_rank(decision)
    if current is None:
        current = np.full(C, -1, dtype=np.int64)
    group = None
    if len(snap.coflow_job) == C:          # a coflow without a job is
        job = {}                           # a group of its own
        group = np.array([job.setdefault(j, len(job)) if j is not None
                          else C + i for i, j in enumerate(snap.coflow_job)],
                         dtype=np.int64)
    return stable_classes(rank, np.asarray(current, dtype=np.int64), q,
                          group, release_floor, share=class_map == 'share')


def stable_classes(rank, current, q, group=None, release_floor=False,
                   share=False):
    """Classes for coflows in rank order (lower rank first; equal ranks
    may share a class) that move as few running coflows as possible.

    Re-marking a running connection into a higher class reorders its
    packets on the emulator; a demotion does not. So a coflow that has a
    class keeps it where that agrees with the order so far (pushing at
    most one running coflow behind it down); any other goes just above
    the coflow before it, pushing running coflows behind it down. A
    coflow of the same ``group`` (job) as the one before it ties with it
    rather than push. Past Q classes the rest share class Q-1. With no
    current classes this is the dense mapping min(dense rank, Q - 1).

    ``share`` (the experiment's ``class_map: share``): where the push
    would only end in a tie at Q-1, the coflow shares the class of the
    one before it instead. ``release_floor`` (the measuring knob
    ``scheduler.floor_release``): of the coflows ranked apart at the last
    class, the first is placed anew (a promotion).

    Why, and what was tried and measured: docs/policies.md#class-maps."""
    C = len(rank)
    out = np.empty(C, dtype=np.int64)
    idx = np.argsort(rank, kind='stable')
    cur = np.asarray(current, dtype=np.int64)[idx].copy()
    if release_floor:
        floor = np.flatnonzero(cur >= q - 1)
        r = np.asarray(rank)[idx]
        if len(floor) > 1 and r[floor[-1]] > r[floor[0]]:
            cur[floor[0]] = -1
    grp = None if group is None else np.asarray(group)[idx]
    nxt = np.full(C + 1, q, dtype=np.int64)     # next running coflow's class
    later = np.zeros((C + 1, q + 1), np.int64)  # running after, by class
    for pos in range(C - 1, -1, -1):
        k = cur[pos]
        nxt[pos] = k if k >= 0 else nxt[pos + 1]
        later[pos] = later[pos + 1]
        if k >= 0:
            later[pos, min(k, q)] += 1
    # share's test: per position, the distinct ranks of running coflows
    # ranked after it
    r = np.asarray(rank)[idx]
    held = np.unique(r[cur >= 0])
    behind = len(held) - np.searchsorted(held, r, side='right')
    prev_cls, prev_rank, prev_kept = -1, None, False
    for pos, c in enumerate(idx.tolist()):
        strict = prev_rank is not None and rank[c] > prev_rank
        want = prev_cls + 1 if strict else max(prev_cls, 0)
        k = int(cur[pos])
        same = grp is not None and pos > 0 and grp[pos] == grp[pos - 1]
        # more running coflows ranked after it than classes after want:
        # making room would push one of them into a tie at Q - 1
        full = behind[pos] > q - 1 - want
        tie = same or (share and full)
        keep = k >= max(want, 0) or (k == prev_cls and prev_kept and tie)
        keep = keep and k >= 0 and later[pos + 1, :k].sum() <= 1
        if keep:
            cls = k
        elif strict and want >= nxt[pos + 1] and tie:
            cls = max(prev_cls, 0)        # with the coflow before it
        else:
            cls = want
        out[c] = cls = min(cls, q - 1)
        prev_cls, prev_rank, prev_kept = cls, rank[c], keep
    return out


def asks_per_flow(policy):
    """Whether a policy must be asked again when a flow ends inside a
    coflow that goes on (``decides_on`` is not ``'coflows'``)."""
    return getattr(policy, 'decides_on', 'flows') != 'coflows'


class Policy:
    """Base: a policy has a name, checked parameters and decide().

    ``decides_on`` tells the backends when a decision can change:
    ``'flows'`` (ask at every flow arrival and completion) or
    ``'coflows'`` (ask when flows arrive or a coflow finishes; a flow
    finishing inside a coflow leaves the decision as it was, and the
    backend only recomputes rates). Either way ``recheck_at`` is honoured.

    ``clairvoyant`` policies read coflows' pending sends (the snapshot's
    ``pending_*`` arrays); for the others the backends leave them empty.

    ``static`` policies decide nothing, ever (per-flow fair sharing): a
    backend need not build snapshots to ask them.

    Jobs (``snap.jobs``, :class:`JobView`) are filled for every policy;
    ``flow_urgency`` too. A policy that gives per-send classes
    (``Decision.flow_class``) and wants hosts to tag sends before they
    start is ``clairvoyant`` (it sees the pending sends to class them).

    ``classes`` is False for a policy whose decisions class no traffic
    (CASSINI: time shifts only): senders then need not wait for a class.

    ``progress`` policies read the bytes flows have sent so far
    (``flow_sent``, ``coflow_sent`` and ``flow_rate`` while flows run):
    on the emulator the agents then report each transfer's acknowledged
    bytes every 10 ms, which the others do not pay for.
    """
    name = None
    params = {}                        # parameter -> default
    decides_on = 'flows'
    clairvoyant = False
    static = False
    classes = True
    progress = False

    # the parameter, in MB, that sets finest_bytes(): an experiment
    # meant for the emulator raises it to its threshold floor, so both
    # backends decide on amounts the emulated TCP can resolve
    finest_param = None

    def finest_bytes(self):
        """The smallest amount of data one of its decisions turns on
        (Aalo: its first queue threshold), or None. The emulator cannot
        resolve amounts below TCP's initial window (10 packets); see
        :func:`floor_params`."""
        if self.finest_param is None:
            return None
        return float(getattr(self, self.finest_param)) * 2 ** 20

    @classmethod
    def floor_params(cls, params, floor_bytes):
        """``params`` with the finest threshold raised to ``floor_bytes``
        where it is below it: (params, (param, old MB, new MB) or None)."""
        if cls.finest_param is None or not floor_bytes:
            return params, None
        old = float(params.get(cls.finest_param,
                               cls.params[cls.finest_param]))
        new = floor_bytes / 2 ** 20
        if old >= new:
            return params, None
        return dict(params, **{cls.finest_param: new}), \
            (cls.finest_param, old, new)

    def workload(self):
        """What the policy asks of the workload plan (both backends run
        the same plan): ``ps_lanes: K`` gives every parameter-server
        worker/shard pair K connections each way, one per urgency class
        (:func:`urgency_class`), as Geryon needs; ``slice_mb: S`` sends
        ps tensors in slices of at most S MB (where the job gives none);
        ``partitions`` cuts them (:data:`PARTITIONS`: ``equal`` parts,
        the default, or ``byteps``: whole slices, the remainder last);
        ``send_order: 'priority'`` sends a connection's waiting sends
        front layers first (host-side ordering). Default: nothing."""
        return {}

    def place(self, jobs, candidates, capacity_bps):
        """Which of a job's candidate placements to take: ``jobs`` are
        the jobs placed before it ({id: JobView}), ``candidates`` the job
        as it would be on each (JobView: its profile, its iteration's
        bytes per link there), ``capacity_bps`` the links'. Returns an
        index. A policy that does not place takes the first."""
        return 0

    def warnings(self, jobs):
        """What `netsched check` should say about running this policy on
        these jobs (a list of {'id', 'pattern', 'group'}), as sentences;
        nothing is wrong with the experiment, but the policy will not do
        what its name promises."""
        return []

    def __init__(self, **params):
        for k, v in dict(self.params, **params).items():
            setattr(self, k, v)

    def decide(self, snap):
        raise NotImplementedError


def arrival_order(snap):
    """Dense FIFO position per coflow: arrival time, then name."""
    arrival = np.asarray(snap.coflow_arrival).tolist()
    ids = snap.coflow_id
    idx = sorted(range(len(ids)), key=lambda c: (arrival[c], ids[c]))
    pos = np.empty(len(idx), dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    return pos
