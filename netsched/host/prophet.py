"""Prophet (ICPP 2021): gradient blocks from a profiled iteration, planned
and carried out at the sending host; and the ByteScheduler-like sender
(SOSP 2019) that Prophet's tail is.

Both backends' executors run this code: the simulator's workload driver
(sim.drivers.PlanDriver) and the emulator's agents (host.agent). It
reads no clock -- every time is passed in, in seconds of the caller's
clock -- and needs no numpy, because the agents may run on the system
Python. The policies that ask for it are ``policies.prophet`` and
``policies.p3``'s ``bytescheduler``; a job asks for it itself with
``send_order: prophet`` or ``send_order: bytescheduler``.

The planning half (:func:`groups`, :func:`plan`), from the public code (a
BytePS fork):
  - a gap between two gradients' ready times larger than twice the mean
    gap between consecutive ready instants ends a group. The mean is
    over the distinct instants at which gradients become ready, as
    profiling a backward pass sees them: a gradient's partitions, a
    layer's weight and bias, and the gradients of layers with no
    backward compute (BatchNorm) are ready at one instant, and their
    zero gaps would drag the mean down until every instant looked like
    a group of its own (ResNet-50 in experiments/prophet.yaml: 53 groups
    of its 54 instants, 52 blocks carrying 3.0 MB of their 21.7 MB; over
    the distinct instants no gap is over twice the mean, so its 54
    instants are one group and it has no block at all);
  - in the gap after a group, the budget is gap x bandwidth bytes: the
    ready partitions, highest priority (front layers) first, go out back
    to back while the remaining budget is greater than the next one's
    size (strictly, as the public code tests it); that is one block;
  - once layer 0's gradient is ready, the rest go in strict priority
    order, at most ``credit`` bytes outstanding at a time. Until then a
    partition in no block waits, the link idle or not: the public code
    walks the gradients in priority order and switches from blocks to
    the credit only when layer 0's partitions join its stack, and a
    block ends at the first partition its budget cannot take.
Partitions of one gradient ready at the same instant keep their partition
order everywhere (blocks, tail, the ByteScheduler sender): ties in
priority and ready time are broken by the partition number, not by ids
or by the order the sender first saw them in.

The executing half (:class:`Sender`, one per worker of a job) is
reconstructed: what it profiles, over how many iterations, what
"bandwidth" is and when a block goes are our reading, stated here.
  - Profiling: over the job's first ``profile_iterations`` iterations
    every gradient send goes as soon as it is ready (ready order, FIFO;
    those ready at one instant front layers first),
    and the sender records when each became ready, as an offset from the
    start of that iteration's backward pass (a partition is identified
    across iterations by its ``slot``: its connection and label), its
    bytes and priority, and when each send started and ended. The
    bandwidth is the bytes those sends carried over the time at least one
    of them was sending (the union of their intervals).
  - The plan (:func:`plan`) is made from the mean offset per partition at
    the first ready send of the first iteration after profiling.
  - Then, per iteration, relative to its own backward start ``b``: block
    i opens at ``b + start_i``; an open block's partitions go in the
    block's order, each as soon as it is ready (one not yet ready does
    not hold the others). The sends that become ready at one instant
    are all taken in before any is released (``Sender.update``), so they
    go in the block's order, or the tail's, and not in the order a
    backend happens to hand them over (the task graph lists a layer's
    bias before its weight; the agent's timers give a layer with no
    backward compute after the layer back-propagated before it). Ready
    gradients in no open block wait. When every gradient of the front
    priority (layer 0: the lowest priority value) is ready, the tail
    opens: whatever waits, and whatever becomes ready later in the
    iteration, goes in strict priority order while the bytes released
    and not yet done (block sends included) stay within the credit; one
    send always goes when none is outstanding.
  - An iteration that begins before anything of the profile was measured
    (no profiled send finished) stays in ready order.
  - A send is "done" when the backend says: the simulator when its last
    byte arrived, the emulator's agent when its sender thread wrote its
    last byte (a few tens of KiB before arrival: the socket keeps at most
    32 KiB unsent, TCP_NOTSENT_LOWAT).
Released sends join their connection's queue in release order; sends on
one connection still go one at a time.

The ByteScheduler-like sender (``mode='bytescheduler'``) is that tail
from the first iteration, without profiling or blocks: every ready
partition waits in one per-worker queue and goes highest priority first
(earlier iterations before later ones) while the bytes released and not
yet done stay within the credit (one always goes when none is
outstanding). ByteScheduler tunes its partition size and credit at run
time; here both are fixed knobs (the partition size is the job's
``slice_mb``).
"""
from dataclasses import dataclass, field

PROFILE_ITERATIONS = 2
CREDIT_MB = 4.0
MB = 2 ** 20                  # as slice_mb: MiB
# what a Sender does: Prophet's profile, blocks and tail, or the tail alone
MODES = ('prophet', 'bytescheduler')


@dataclass(frozen=True)
class Block:
    start: float                  # s after the backward pass began
    parts: tuple                  # partition indices, in sending order
    budget: float                 # bytes the gap allows (inf: the tail)


@dataclass(frozen=True)
class Plan:
    blocks: tuple = ()            # in the gaps, in time order
    tail: tuple = ()              # after layer 0: strict priority order
    credit: float = 0.0           # bytes outstanding at most in the tail
    groups: tuple = field(default=())   # partition indices per group


def groups(ready):
    """Partition indices grouped by ready time: a gap between
    consecutive ready times larger than twice the mean gap between
    consecutive distinct ready instants ends a group."""
    ready = [float(r) for r in ready]
    order = sorted(range(len(ready)), key=lambda i: ready[i])   # stable
    if len(order) < 2:
        return (tuple(order),) if order else ()
    t = sorted(set(ready))
    gaps = [b - a for a, b in zip(t, t[1:])]
    mean = sum(gaps) / len(gaps) if gaps else 0.0
    r = [ready[i] for i in order]
    out, cur = [], [order[0]]
    for k in range(1, len(r)):
        if r[k] - r[k - 1] > 2.0 * mean:
            out.append(tuple(cur))
            cur = []
        cur.append(order[k])
    out.append(tuple(cur))
    return tuple(out)


def plan(ready, size, priority, bandwidth_Bps, credit_bytes, part=None):
    """Prophet's plan for one iteration: ``ready`` (s after the backward
    pass began), ``size`` (bytes) and ``priority`` (lower first: front
    layers) per gradient partition; the bandwidth measured (bytes/s);
    the tail's credit (bytes); per partition its number within its
    gradient (ties in priority and ready time go by it; None: all 0).
    Layer 0's partitions are those of the lowest priority value: the
    tail starts when the last of them is ready (the end of
    back-propagation)."""
    ready = [float(x) for x in ready]
    size = [float(x) for x in size]
    prio = [float(x) for x in priority]
    n = len(ready)
    part = [0] * n if part is None else list(part)
    gs = groups(ready)

    def key(i):
        return (prio[i], ready[i], part[i], i)
    front = min(prio) if n else 0.0
    tail_at = max(ready[i] for i in range(n) if prio[i] == front) \
        if n else 0.0
    sent = [False] * n
    blocks = []
    for k, g in enumerate(gs[:-1]):
        t = max(ready[i] for i in g)             # the group is ready
        if t >= tail_at:
            break
        gap = min(ready[i] for i in gs[k + 1]) - t
        budget = gap * bandwidth_Bps
        pool = [i for i in range(n) if not sent[i] and ready[i] <= t]
        pool.sort(key=key)
        used, parts = 0.0, []
        for i in pool:
            if not budget - used > size[i]:     # strict, as the public code
                break
            used += size[i]
            parts.append(i)
            sent[i] = True
        if parts:
            blocks.append(Block(t, tuple(parts), float(budget)))
    rest = sorted((i for i in range(n) if not sent[i]), key=key)
    return Plan(tuple(blocks), tuple(rest), float(credit_bytes), gs)


def busy_time(intervals):
    """Length of the union of (start, end) intervals."""
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


@dataclass(frozen=True)
class Send:
    """A gradient send as the sender sees it. ``slot`` names the same
    gradient partition in every iteration; ``priority``: lower goes
    first (where its data sits in the next forward pass); ``ready``:
    when it became ready, ``backward``: when its iteration's backward
    pass began (both on the caller's clock); ``task``: the caller's own
    object, handed back on release; ``gradient``: the gradient it is a
    partition of (None: its slot), ``part``: its number in it."""
    id: int
    iteration: int
    slot: object
    bytes: float
    priority: float
    ready: float
    backward: float
    task: object = field(default=None, compare=False, repr=False)
    gradient: object = None
    part: int = 0

    @classmethod
    def of(cls, get, ready, backward, task=None):
        """A task graph send as the sender sees it; ``get(name)`` reads
        one of its fields (the simulator's Task, the agent's dict).
        Slot: its connection and label; priority: its urgency (where its
        data sits in the next forward pass); gradient and part: from its
        ``prophet`` field (the tensor or bucket, the slice number)."""
        u = get('urgency')
        f = get('prophet') or {}
        g = f.get('gradient')
        return cls(get('id'), get('iter'), (get('conn'), get('label')),
                   float(get('bytes')),
                   float(get('prio') if u is None else u), float(ready),
                   float(backward), task, g, int(f.get('part') or 0))

    @property
    def key(self):
        """Its place among a worker's waiting sends: priority, then ready
        time, then partition number (a gradient's partitions keep their
        order), then id."""
        return (self.priority, self.ready, self.part, self.id)


def knobs(task_prophet):
    """(profile iterations, credit bytes) from a send's ``prophet``
    field (the task graph's: {'profile_iterations', 'credit_mb'})."""
    return (int(task_prophet['profile_iterations']),
            float(task_prophet['credit_mb']) * MB)


def sender_for(task_prophet):
    """The Sender a send's ``prophet`` field asks for: Prophet's
    (``knobs``), or with ``mode: bytescheduler`` the ByteScheduler-like
    one ({'mode', 'credit_mb'})."""
    if task_prophet.get('mode', 'prophet') == 'bytescheduler':
        return Sender(0, float(task_prophet['credit_mb']) * MB,
                      mode='bytescheduler')
    return Sender(*knobs(task_prophet))


class _Iteration:
    __slots__ = ('backward', 'waiting', 'next_block', 'open', 'front_left',
                 'tail')

    def __init__(self, backward, front):
        self.backward = backward
        self.waiting = {}             # slot -> Send, ready, not released
        self.next_block = 0           # blocks before it have opened
        self.open = []                # indices of open blocks
        self.front_left = set(front)  # front slots not yet ready
        self.tail = False


class Sender:
    """One worker's Prophet sender, or with ``mode='bytescheduler'`` its
    ByteScheduler-like one (see the module docstring; that mode ignores
    ``profile_iterations``). Each call returns the sends to release now,
    in order; ``next_wake()`` is when to call :meth:`wake` next (a block
    opens then), or None."""

    def __init__(self, profile_iterations=PROFILE_ITERATIONS,
                 credit_bytes=CREDIT_MB * MB, mode='prophet'):
        if mode not in MODES:
            raise ValueError('mode must be one of %s, got %r'
                             % (', '.join(MODES), mode))
        self.mode = mode
        self.profile_iterations = int(profile_iterations) \
            if mode == 'prophet' else 0
        self.credit = float(credit_bytes)
        self.offsets = {}             # slot -> [offset per profiled iter]
        self.size, self.prio = {}, {}
        self.part = {}                # slot -> its partition number
        self.profiling = {}           # send id -> bytes (profiled, not done)
        self.busy = []                # (start, end) of profiled sends done
        self.busy_bytes = 0.0
        self.bandwidth = None         # bytes/s, once planned
        self.plan = None
        self.slots = ()               # plan's partition index -> slot
        self.front = frozenset()
        self.iters = {}               # iteration -> _Iteration (planned)
        self.tailed = set()           # iterations in the tail, none waiting
        self.fifo = set()             # iterations past profiling in FIFO
        self.out = {}                 # send id -> bytes released, not done
        self.outstanding = 0.0

    # --- events -----------------------------------------------------------
    def update(self, now, ready=(), done=()):
        """What happened at one instant (``now``), taken in whole before
        anything is released: the sends done (``done``: (send id, start,
        end) each, as :meth:`done`), then the sends that became ready
        (``ready``: Sends, each with its ``ready`` time). Returns the
        sends to release now, in order."""
        for send_id, start, end in done:
            self._done(send_id, start, end)
        out = []
        # ready order, ties by the sort key: both backends hand a batch
        # over in an order of their own (the task graph's, a timer heap's)
        for s in sorted(ready, key=lambda s: (s.ready,) + s.key):
            if self._ready(s):
                out += self._release([s])
        return out + self._pump(now)

    def ready(self, s, now):
        """Send ``s`` became ready (``s.ready``), alone at its instant;
        the time is ``now``. Sends ready at one instant go to
        :meth:`update` together."""
        return self.update(now, ready=(s,))

    def done(self, send_id, start, end):
        """A released send finished; it was sending from ``start`` to
        ``end`` (``end`` is now)."""
        return self.update(end, done=((send_id, start, end),))

    def wake(self, now):
        """Time passed (a block may open)."""
        return self.update(now)

    def next_wake(self):
        """When the next block of a planned iteration opens, or None."""
        best = None
        for it in self.iters.values():
            if not it.tail and it.next_block < len(self.plan.blocks):
                at = it.backward + self.plan.blocks[it.next_block].start
                best = at if best is None else min(best, at)
        return best

    # --- inside -------------------------------------------------------------
    def _ready(self, s):
        """Take in a ready send: True if it goes at once (profiled, or in
        an iteration left in ready order), else it waits for a pump."""
        k = s.iteration
        if k < self.profile_iterations:
            self.offsets.setdefault(s.slot, []).append(s.ready - s.backward)
            self.size[s.slot] = float(s.bytes)
            self.prio[s.slot] = float(s.priority)
            self.part[s.slot] = s.part
            self.profiling[s.id] = float(s.bytes)
            return True
        it = self.iters.get(k)
        if it is None and (self.mode == 'bytescheduler' or
                           k in self.tailed):
            # ByteScheduler: every iteration is Prophet's tail throughout
            it = self.iters[k] = _Iteration(s.backward, ())
            it.tail = True
        if it is None:
            if k not in self.fifo and self.plan is None:
                self._make_plan()
            if k in self.fifo or self.plan is None:
                self.fifo.add(k)
                return True
            it = self.iters[k] = _Iteration(s.backward, self.front)
        it.waiting[s.slot] = s
        it.front_left.discard(s.slot)
        return False

    def _done(self, send_id, start, end):
        b = self.out.pop(send_id, None)
        if b is None:
            return
        self.outstanding = self.outstanding - b if self.out else 0.0
        p = self.profiling.pop(send_id, None)
        if p is not None:
            self.busy.append((float(start), float(end)))
            self.busy_bytes += p

    def _make_plan(self):
        if not self.busy or not self.offsets:
            return
        span = busy_time(self.busy)
        if span <= 0:
            return
        self.bandwidth = self.busy_bytes / span
        # partitions by mean offset, then first seen: a fixed order
        first = {s: i for i, s in enumerate(self.offsets)}
        mean = {s: sum(v) / len(v) for s, v in self.offsets.items()}
        self.slots = tuple(sorted(self.offsets,
                                  key=lambda s: (mean[s], first[s])))
        self.plan = plan([mean[s] for s in self.slots],
                         [self.size[s] for s in self.slots],
                         [self.prio[s] for s in self.slots],
                         self.bandwidth, self.credit,
                         [self.part[s] for s in self.slots])
        lowest = min(self.prio.values())
        self.front = frozenset(s for s in self.slots
                               if self.prio[s] == lowest)

    def _release(self, sends):
        for s in sends:
            self.out[s.id] = float(s.bytes)
            self.outstanding += float(s.bytes)
        return list(sends)

    def _pump(self, now):
        out, tail = [], []
        for k in sorted(self.iters):
            it = self.iters[k]
            if not it.tail:
                blocks = self.plan.blocks
                while it.next_block < len(blocks) and \
                        it.backward + blocks[it.next_block].start <= now:
                    it.open.append(it.next_block)
                    it.next_block += 1
                for bi in it.open:
                    for i in blocks[bi].parts:
                        s = it.waiting.pop(self.slots[i], None)
                        if s is not None:
                            out += self._release([s])
                if not it.front_left:
                    it.tail = True
            if it.tail and it.waiting:
                tail += [(k, s) for s in sorted(it.waiting.values(),
                                                key=lambda s: s.key)]
        # strict priority across iterations too: the first that does not
        # fit the credit holds every later one
        for k, s in tail:
            if self.out and self.outstanding + s.bytes > self.credit:
                break
            del self.iters[k].waiting[s.slot]
            out += self._release([s])
        # an iteration in the tail with nothing waiting is dropped (its
        # later sends come back as the tail): _pump stays O(iterations
        # in progress) over a long run
        for k in [k for k, it in self.iters.items()
                  if it.tail and not it.waiting]:
            del self.iters[k]
            self.tailed.add(k)
        return out
