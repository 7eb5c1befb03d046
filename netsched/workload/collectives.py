"""Collective algorithms as schedules of point-to-point transfers.

A schedule is data: ranks 0..p-1 and transfers ``(src, dst, bytes,
step, after, lane)``, where ``after`` lists the transfers that must have
arrived at ``src`` before it sends (the data it forwards or reduces),
besides ``src``'s own input. ``done[r]`` lists the transfers whose
arrival completes rank r's result (empty: its input is its result, as
a broadcast's root). :func:`emit` turns a schedule into a plan's sends:
one connection per (src, dst, lane) and one coflow per step, so every
coflow policy schedules a collective step by step.

``size`` is what nccl-tests calls the size: the buffer each rank
reduces (all-reduce, reduce-scatter's input), the gathered output
(all-gather), the root's buffer (broadcast), or each rank's send buffer
(all-to-all: size/p to each rank). Bytes per rank sent, and steps:

==================  ==============================  ======================
all-reduce ring     2(p-1)/p S                       2(p-1)
halving-doubling    2(p'-1)/p' S (+S at 2r ranks)    2 log2 p' (+2 if r>0)
double binary tree  at most 2S (S/2 per tree)        see :func:`tree`
hierarchical        2(g-1)/g S + 2(n-1)/(n g) S      2(g-1) + 2(n-1)
reduce-scatter      (p-1)/p S                        p-1
all-gather          (p-1)/p S                        p-1
broadcast (chain)   S (the last rank: 0)             p-1 + chunks-1
all-to-all          (p-1)/p S                        1
==================  ==============================  ======================

(p' the largest power of two <= p, r = p - p'; g ranks per group, n
groups.) Chunk sizes round up to whole bytes, as the ring job's do.
"""
import math
from dataclasses import dataclass

from ..errors import ConfigError


@dataclass(frozen=True)
class Transfer:
    src: int
    dst: int
    bytes: int
    step: int
    after: tuple = ()
    lane: int = 0


@dataclass(frozen=True)
class Schedule:
    name: str
    ranks: int
    size: int
    transfers: tuple
    done: tuple                 # per rank: transfer indices

    @property
    def steps(self):
        return 1 + max((t.step for t in self.transfers), default=-1)

    def sent_bytes(self):
        """Bytes each rank sends."""
        out = [0] * self.ranks
        for t in self.transfers:
            out[t.src] += t.bytes
        return out


class _Builder:
    """Collects transfers; ``got[r]`` is what r received last."""

    def __init__(self, p):
        self.p, self.transfers = p, []
        self.got = [[] for _ in range(p)]

    def add(self, src, dst, nbytes, step, after=(), lane=0):
        self.transfers.append(Transfer(src, dst, int(nbytes), step,
                                       tuple(after), lane))
        return len(self.transfers) - 1

    def ring(self, ranks, chunk, nsteps, step0):
        """``nsteps`` steps around ``ranks`` (rank i sends to i+1), a
        chunk each; step s of rank i waits for step s-1 from rank i-1.
        The first step waits for what each rank last received."""
        n = len(ranks)
        prev = None
        for s in range(nsteps):
            cur = []
            for i, r in enumerate(ranks):
                after = self.got[r] if prev is None else [prev[(i - 1) % n]]
                cur.append(self.add(r, ranks[(i + 1) % n], chunk, step0 + s,
                                    after))
            prev = cur
        if prev is not None:
            for i, r in enumerate(ranks):
                self.got[r] = [prev[(i - 1) % n]]
        return step0 + nsteps

    def schedule(self, name, size, done=None):
        return Schedule(name, self.p, int(size), tuple(self.transfers),
                        tuple(tuple(d) for d in (done or self.got)))


def _chunk(nbytes, parts):
    return math.ceil(nbytes / parts)


def ring_allreduce(p, size, **_):
    """Reduce-scatter then all-gather around the ring: 2(p-1) steps of
    size/p (Patarasuk & Yuan 2009; NCCL's ring)."""
    b = _Builder(p)
    if p > 1:
        b.ring(range(p), _chunk(size, p), 2 * (p - 1), 0)
    return b.schedule('ring', size)


def reduce_scatter(p, size, **_):
    """The ring's first half: p-1 steps of size/p; rank r ends with one
    reduced block."""
    b = _Builder(p)
    if p > 1:
        b.ring(range(p), _chunk(size, p), p - 1, 0)
    return b.schedule('reduce-scatter', size)


def all_gather(p, size, **_):
    """The ring's second half: each rank's block of size/p goes p-1
    steps around."""
    b = _Builder(p)
    if p > 1:
        b.ring(range(p), _chunk(size, p), p - 1, 0)
    return b.schedule('all-gather', size)


def halving_doubling(p, size, **_):
    """Rabenseifner's all-reduce: reduce-scatter by recursive halving
    (step k: exchange with the rank 2^(log p' - k - 1) away, half of
    what is left), then all-gather by recursive doubling, the same
    exchanges in reverse: 2 log2 p steps, 2(p-1)/p S per rank.

    Not a power of two (the rule of MPICH's and Thakur et al. 2005):
    with p' = the largest power of two below p and r = p - p', ranks
    2i (i < r) first send their whole buffer to 2i+1, the p' ranks left
    run the algorithm, and 2i+1 sends the result back to 2i: two more
    steps of S each. A send waits for data only (an eager send), so a
    rank outside the pairs sends its first part at once, into a pair
    still exchanging: on one switch p = 6 takes 5 S/B, not the 3.5 S/B
    of steps taken one at a time."""
    b = _Builder(p)
    if p == 1:
        return b.schedule('halving-doubling', size)
    p2 = 1 << (p.bit_length() - 1)
    r = p - p2
    step = 0
    if r:
        for i in range(r):
            b.got[2 * i + 1] = [b.add(2 * i, 2 * i + 1, size, 0)]
        step = 1
    core = [2 * i + 1 for i in range(r)] + list(range(2 * r, p))
    block = _chunk(size, p2)
    logp = p2.bit_length() - 1
    dists = [p2 >> (k + 1) for k in range(logp)]       # p'/2 .. 1
    for d in dists + dists[::-1]:
        # the part exchanged: half of the blocks still held while
        # halving, the blocks gathered so far while doubling
        nbytes = d * block
        got = {}
        for c, rank in enumerate(core):
            got[core[c ^ d]] = b.add(rank, core[c ^ d], nbytes, step,
                                     b.got[rank])
        # what a rank sends next holds all it received so far (the
        # partner's last part depends on the partner's receipts only)
        for rank, t in got.items():
            b.got[rank] = b.got[rank] + [t]
        step += 1
    done = [list(b.got[r][-1:]) for r in range(p)]
    if r:
        for i in range(r):
            done[2 * i] = [b.add(2 * i + 1, 2 * i, size, step,
                                 b.got[2 * i + 1])]
    return b.schedule('halving-doubling', size, done)


def btree(p):
    """NCCL's binary tree over p ranks (its ncclGetBtree): rank 0 is
    the root with one child; a rank's parent and children come from its
    lowest set bit, so that even ranks are inner nodes and odd ranks
    leaves. Returns (parent, children) lists."""
    parent, children = [-1] * p, [[] for _ in range(p)]
    for rank in range(1, p):
        bit = rank & -rank
        up = (rank ^ bit) | (bit << 1)
        if up >= p:
            up = rank ^ bit
        parent[rank] = up
    for rank in range(1, p):
        children[parent[rank]].append(rank)
    return parent, [sorted(c) for c in children]


def double_tree(p):
    """NCCL's double binary tree: the btree, and its mirror image
    (rank r as p-1-r) for even p or its shift by one for odd p, so that
    a rank is an inner node in at most one of the two."""
    parent, children = btree(p)
    if p % 2 == 0:
        m = [p - 1 - r for r in range(p)]
    else:
        m = [(r + 1) % p for r in range(p)]
    parent2, children2 = [-1] * p, [[] for _ in range(p)]
    for r in range(p):
        if parent[r] >= 0:
            parent2[m[r]] = m[parent[r]]
        children2[m[r]] = sorted(m[c] for c in children[r])
    return [(parent, children), (parent2, children2)]


def tree(p, size, chunks=1, **_):  # noqa: C901 (the two trees' edge cases)
    """NCCL's double binary tree all-reduce: each of two complementary
    binary trees (:func:`double_tree`) carries half the buffer, reduced
    up to its root and broadcast back down, pipelined in ``chunks``
    chunks. A rank sends a chunk up once it has that chunk from all its
    children; it sends a chunk down once it has it from its parent (the
    root: once reduced).

    Steps (a step is a tick of the pipeline, both trees together):
    chunk c leaves a rank of height h (leaves 1) going up at step
    c + h - 1, and a rank of depth d (the root 0) going down at step
    R + c + d, where R = chunks + H - 1 are the reduce steps and H the
    largest height below the root. Every rank sends its half up in the
    tree where it is not the root and twice its half down where it is
    an inner node with two children: at most 2S."""
    b = _Builder(p)
    if p == 1:
        return b.schedule('tree', size)
    half = _chunk(size, 2)
    piece = _chunk(half, chunks)
    trees = double_tree(p)
    height = []
    for parent, children in trees:
        h = [0] * p

        def up(r, children=children, h=h):
            h[r] = 1 + max((up(c) for c in children[r]), default=0)
            return h[r]
        up(parent.index(-1))
        height.append(h)
    H = max(h[r] for (parent, _), h in zip(trees, height)
            for r in range(p) if parent[r] >= 0)
    R = chunks + H - 1
    upward = {}                                 # (tree, chunk, src) -> id
    for c in range(chunks):
        for level in range(1, H + 1):
            for ti, (parent, children) in enumerate(trees):
                for r in range(p):
                    if parent[r] >= 0 and height[ti][r] == level:
                        upward[ti, c, r] = b.add(
                            r, parent[r], piece, c + level - 1,
                            [upward[ti, c, x] for x in children[r]],
                            lane=ti)
    downward = {}                               # (tree, chunk, dst) -> id
    done = [[] for _ in range(p)]
    for ti, (parent, children) in enumerate(trees):
        root = parent.index(-1)
        depth = {root: 0}
        order = [root]
        for r in order:
            for x in children[r]:
                depth[x] = depth[r] + 1
                order.append(x)
        for c in range(chunks):
            for r in order:
                if r == root:
                    after = [upward[ti, c, x] for x in children[r]]
                    done[r] += after
                else:
                    after = [downward[ti, c, r]]
                    done[r].append(downward[ti, c, r])
                for x in children[r]:
                    downward[ti, c, x] = b.add(r, x, piece,
                                               R + c + depth[r], after,
                                               lane=ti)
    return b.schedule('tree', size, done)


def hierarchical(p, size, group=None, **_):
    """Two-level all-reduce (Horovod's and NCCL's across nodes): inside
    each group of ``group`` consecutive ranks a ring reduce-scatter, then
    a ring all-reduce of each S/g block among the ranks with the same
    place in their groups, then a ring all-gather inside each group. The
    caller orders ranks so that a group is a leaf's hosts."""
    g = group or p
    if p % g:
        raise ConfigError('hierarchical: group of %d does not divide %d '
                          'ranks' % (g, p))
    n = p // g
    b = _Builder(p)
    groups = [list(range(i * g, (i + 1) * g)) for i in range(n)]
    step = 0
    if g > 1:
        for ranks in groups:
            b.ring(ranks, _chunk(size, g), g - 1, 0)
        step = g - 1
    if n > 1:
        for local in range(g):
            b.ring([i * g + local for i in range(n)],
                   _chunk(_chunk(size, g), n), 2 * (n - 1), step)
        step += 2 * (n - 1)
    if g > 1:
        for ranks in groups:
            b.ring(ranks, _chunk(size, g), g - 1, step)
    return b.schedule('hierarchical', size)


def broadcast(p, size, chunks=1, **_):
    """A pipelined chain from rank 0 (NCCL's ring broadcast): chunk c
    goes from rank i to i+1 at step c + i, once it arrived at i."""
    b = _Builder(p)
    piece = _chunk(size, chunks)
    into = {}
    for c in range(chunks):
        for i in range(p - 1):
            into[c, i + 1] = b.add(i, i + 1, piece, c + i,
                                   [into[c, i]] if i else [])
    done = [[into[c, r] for c in range(chunks)] if r else []
            for r in range(p)]
    return b.schedule('broadcast', size, done)


def all_to_all(p, size, **_):
    """Direct all-to-all: every rank sends size/p to every other rank at
    once, one step."""
    b = _Builder(p)
    piece = _chunk(size, p)
    done = [[] for _ in range(p)]
    for r in range(p):
        for q in range(p):
            if q != r:
                done[q].append(b.add(r, q, piece, 0))
    return b.schedule('all-to-all', size, done)


ALGORITHMS = {
    'ring': ring_allreduce,
    'tree': tree,
    'halving-doubling': halving_doubling,
    'hierarchical': hierarchical,
    'all-gather': all_gather,
    'reduce-scatter': reduce_scatter,
    'broadcast': broadcast,
    'all-to-all': all_to_all,
}
# the algorithms whose result is an all-reduce (a data-parallel job's
# gradient exchange, a tensor-parallel layer's activations)
ALL_REDUCE = ('ring', 'tree', 'halving-doubling', 'hierarchical')


def make(name, p, size, chunks=1, group=None):
    """The schedule of collective ``name`` over p ranks of ``size``
    bytes."""
    if name not in ALGORITHMS:
        raise ConfigError('unknown collective %r: one of %s'
                          % (name, ', '.join(ALGORITHMS)))
    return ALGORITHMS[name](p, int(size), chunks=int(chunks), group=group)


def emit(plan, sched, hosts, start, job, it, coflow, conns, **send):
    """Add ``sched``'s transfers to ``plan`` as sends between ``hosts``
    (rank r on hosts[r]). ``start[r]``: the tasks rank r's input waits
    for; ``coflow``: the prefix of the step coflows (``<coflow>.s<k>``);
    ``conns``: the job's connections by (src, dst, lane), shared by its
    collectives (a connection's sends go one at a time, in order);
    ``send``: the sends' other fields. Returns per rank the tasks its
    result waits for (its start where it receives nothing)."""
    # a plan built only to be counted (workload.bounds) takes the same
    # tasks and connections without their dependencies and coflows
    counting = getattr(plan, 'counting', False)
    ids = []
    for t in sched.transfers:
        src, dst = hosts[t.src], hosts[t.dst]
        key = (src, dst, t.lane)
        if key not in conns:
            conns[key] = plan.conn(src, dst, job)
        if counting:
            ids.append(plan.add('send', src, job, it, bytes=t.bytes))
            continue
        cf = '%s.s%d' % (coflow, t.step)
        plan.coflow_bytes[cf] = plan.coflow_bytes.get(cf, 0) + t.bytes
        ids.append(plan.add('send', src, job, it,
                            deps=list(start[t.src]) +
                            [ids[a] for a in t.after],
                            dst=dst, bytes=t.bytes, coflow=cf,
                            conn=conns[key], **send))
    return [[ids[a] for a in d] or list(start[r])
            for r, d in enumerate(sched.done)]
