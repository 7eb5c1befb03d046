"""Chakra execution traces in and out (docs/chakra.md).

A job with ``workload: {chakra: DIR}`` runs the per-rank Chakra ET
files ``DIR/<name>.<rank>.et`` (or ``DIR.<rank>.et``, a prefix as
ASTRA-sim names a workload), read with mlc-chakra's schema and its
message decoder. Rank r runs on the job's r-th host. Per node:

- ``COMP_NODE``: compute of ``duration_micros`` (times the job's
  compute_scale). A rank's GPU computes one node at a time, and its CPU
  nodes (``is_cpu_op``) another at a time, as ASTRA-sim's hardware
  resource does: its compute nodes are chained in the order a list
  schedule of the trace (network time taken as zero) starts them;
- ``COMM_COLL_NODE``: a collective (``comm_type`` all-reduce,
  all-gather, reduce-scatter, all-to-all or broadcast, ``comm_size``
  as nccl-tests counts it) expanded by workload.collectives into
  transfers, a coflow per step. The k-th collective of a process group
  (``pg_name``; none: one group) on each of its ranks is one
  collective; the group's ranks are those whose files have it;
- ``COMM_SEND_NODE`` / ``COMM_RECV_NODE``: a transfer of ``comm_size``
  bytes, a send matched with the receive of the same source,
  destination and ``comm_tag``, in file order. A send is eager: what
  depends on it on its own rank waits for what the send waited for,
  what depends on the receive waits for the data;
- ``METADATA_NODE``: no time, its dependencies kept.

``data_deps`` and ``ctrl_deps`` are both dependencies. Every iteration
of the job runs the whole trace; a rank's next iteration starts once it
finished the last (its ``mark``). Anything else (memory nodes, a
reduce, gather, scatter or barrier collective, a dependency on a node
the file lacks, a send without its receive, a cycle) is a ConfigError
naming the rank file and the node id.

:func:`export` writes a plan the other way, for ASTRA-sim: a rank per
host, every transfer a send and its receive (a collective as the
transfers netsched's algorithm makes), compute as ``COMP_NODE`` with
its duration in whole microseconds.
"""
import glob
import gzip
import heapq
import io
import os
import re
from dataclasses import dataclass

from . import collectives
from .plan import JobPlan, Plan, compute_factors
from ..errors import ConfigError, PrerequisiteError

# the all-reduce algorithms a trace's ALL_REDUCE nodes may run as
ALL_REDUCE = ('ring', 'tree', 'halving-doubling')
WORKLOAD_KEYS = ('chakra', 'all_reduce')
# what an exported file's GlobalMetadata says (mlc-chakra's generator's)
VERSION = '1.0.0'
_RANK_FILE = re.compile(r'^(.*)\.(\d+)\.et$')


def schema():
    """mlc-chakra's (et_def_pb2, protolib), or a PrerequisiteError."""
    try:
        from chakra.schema.protobuf import et_def_pb2
        from chakra.src.third_party.utils import protolib
    except ImportError as e:
        raise PrerequisiteError(
            'Chakra traces need mlc-chakra (%s): make setup installs it, '
            'or pip install "netsched[chakra]"' % e) from None
    return et_def_pb2, protolib


@dataclass(frozen=True)
class Source:
    """A job's trace: its rank files (rank r the r-th) and how its
    all-reduces run."""
    path: str                 # the folder or prefix, absolute
    name: str                 # the files' name before .<rank>.et
    files: tuple
    all_reduce: str = 'ring'

    @property
    def ranks(self):
        return len(self.files)


@dataclass
class Node:
    rank: int
    id: int
    name: str
    kind: str                 # compute, send, recv, collective, metadata
    deps: tuple
    pos: int                  # place in its file
    dur_s: float = 0.0
    bytes: int = 0
    peer: int = None          # send: the destination, recv: the source
    tag: int = 0
    collective: str = None    # workload.collectives' name
    group: str = ''
    cpu: bool = False


class _Short(io.BytesIO):
    """A file whose reads note whether one came back short (a message
    cut off: protolib's decoder would parse what there is)."""
    short = False

    def read(self, n=-1):
        b = super().read(n)
        # one byte at a time is the length's varint: none is the end
        if n is not None and n > 1 and len(b) < n:
            self.short = True
        return b


def source(where, v, base):
    """The ``workload`` mapping of a job (``{chakra: DIR, all_reduce:
    ALG}``), its files found relative to ``base`` and the trace read
    and checked (:func:`read`)."""
    if not isinstance(v, dict) or 'chakra' not in v:
        raise ConfigError('%s: workload: must be a mapping {chakra: DIR}, '
                          'got %r' % (where, v))
    extra = sorted(set(v) - set(WORKLOAD_KEYS), key=str)
    if extra:
        raise ConfigError('%s: workload: unknown key %r (known: %s)'
                          % (where, extra[0], ', '.join(WORKLOAD_KEYS)))
    path = v['chakra']
    if not isinstance(path, str) or not path:
        raise ConfigError('%s: workload: chakra: must be a folder or a '
                          'file prefix, got %r' % (where, path))
    alg = v.get('all_reduce', 'ring')
    if alg not in ALL_REDUCE:
        raise ConfigError('%s: workload: all_reduce: must be one of %s, '
                          'got %r' % (where, ', '.join(ALL_REDUCE), alg))
    path = os.path.join(base, path)
    if os.path.isdir(path):
        found = glob.glob(os.path.join(glob.escape(path), '*.et'))
    else:
        found = glob.glob(glob.escape(path) + '.*.et')
    names = {}
    for f in found:
        m = _RANK_FILE.match(os.path.basename(f))
        if m:
            names.setdefault(m.group(1), {})[int(m.group(2))] = f
    if not names:
        raise ConfigError('%s: workload: chakra: no rank files '
                          '(<name>.<rank>.et) at %s' % (where, path))
    if len(names) > 1:
        raise ConfigError('%s: workload: chakra: %s holds the ranks of '
                          'several traces (%s): give the prefix'
                          % (where, path, ', '.join(sorted(names))))
    name, ranks = next(iter(names.items()))
    missing = sorted(set(range(max(ranks) + 1)) - set(ranks))
    if missing:
        raise ConfigError('%s: workload: chakra: %s has no file of rank %d '
                          '(ranks go 0..%d)' % (where, path, missing[0],
                                                max(ranks)))
    src = Source(os.path.abspath(path), name,
                 tuple(os.path.abspath(ranks[r]) for r in sorted(ranks)),
                 alg)
    read(src)
    return src


_CACHE = {}


def read(src):
    """The checked trace of ``src`` (a _Trace), read once per version of
    its files."""
    try:
        key = (src.files, tuple((os.stat(f).st_mtime_ns, os.stat(f).st_size)
                                for f in src.files))
    except OSError as e:
        raise ConfigError('%s: %s' % (e.filename, e.strerror)) from None
    if key not in _CACHE:
        _CACHE.clear()            # one trace kept: a sweep reads the same
        _CACHE[key] = _Trace([_read_file(f, r)
                              for r, f in enumerate(src.files)], src.files)
    return _CACHE[key]


def _attrs(node):
    out = {}
    for a in node.attr:
        which = a.WhichOneof('value')
        out[a.name] = None if which is None else getattr(a, which)
    return out


def _read_file(path, rank):  # noqa: C901 (one error per way a file is bad)
    """One rank file's nodes, each checked on its own."""
    pb, protolib = schema()
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    if data[:2] == b'\x1f\x8b':                     # gzipped, as Chakra's
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise ConfigError('%s: not a Chakra trace: %s' % (path, e)) \
                from None
    f = _Short(data)
    from google.protobuf.message import DecodeError

    def message(cls, after):
        m = cls()
        start = f.tell()
        try:
            ok = protolib.decodeMessage(f, m)
        except (DecodeError, IOError, ValueError) as e:
            ok, f.short = False, True
            why = str(e) or type(e).__name__
        else:
            why = 'cut off'
        if f.short:
            raise ConfigError('%s: not a Chakra trace: the message at byte '
                              '%d%s is malformed (%s)' % (path, start, after,
                                                          why))
        if not ok and f.tell() < len(data):
            raise ConfigError('%s: not a Chakra trace: an empty message at '
                              'byte %d%s' % (path, start, after))
        return m if ok else None
    if message(pb.GlobalMetadata, ' (its GlobalMetadata)') is None:
        raise ConfigError('%s: not a Chakra trace: empty' % path)
    nodes, seen = [], set()
    last = ''
    while True:
        m = message(pb.Node, last)
        if m is None:
            break
        last = ' (after node %d)' % m.id
        if m.id in seen:
            raise ConfigError('%s: node %d: its id is used twice'
                              % (path, m.id))
        seen.add(m.id)
        nodes.append(_node(pb, path, rank, m, len(nodes)))
    for n in nodes:
        for d in n.deps:
            if d not in seen:
                raise ConfigError('%s: node %d (%s): depends on node %d, '
                                  'which the file does not have'
                                  % (path, n.id, n.name, d))
            if d == n.id:
                raise ConfigError('%s: node %d (%s): depends on itself'
                                  % (path, n.id, n.name))
    return nodes


def _node(pb, path, rank, m, pos):  # noqa: C901 (one branch per node type)
    """One node as netsched reads it (the module's docstring)."""
    where = '%s: node %d (%s)' % (path, m.id, m.name)
    attrs = _attrs(m)
    deps = tuple(dict.fromkeys(list(m.data_deps) + list(m.ctrl_deps)))
    n = Node(rank, m.id, m.name, None, deps, pos)

    def number(key, required=True, default=0):
        v = attrs.get(key)
        if v is None:
            if required:
                raise ConfigError('%s: has no %s' % (where, key))
            return default
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ConfigError('%s: %s must be an integer >= 0, got %r'
                              % (where, key, v))
        return v
    kind = m.type
    if kind == pb.COMP_NODE:
        n.kind = 'compute'
        n.dur_s = m.duration_micros / 1e6
        if not m.duration_micros and attrs.get('num_ops'):
            raise ConfigError('%s: compute of num_ops %s without '
                              'duration_micros: netsched takes compute '
                              'time from duration_micros' % (
                                  where, attrs['num_ops']))
        n.cpu = bool(attrs.get('is_cpu_op', False))
    elif kind == pb.COMM_COLL_NODE:
        n.kind = 'collective'
        ctype = number('comm_type')
        names = {pb.ALL_REDUCE: 'all-reduce', pb.ALL_GATHER: 'all-gather',
                 pb.REDUCE_SCATTER: 'reduce-scatter',
                 pb.ALL_TO_ALL: 'all-to-all', pb.BROADCAST: 'broadcast'}
        if ctype not in names:
            try:
                what = pb.CollectiveCommType.Name(ctype)
            except ValueError:
                what = 'comm_type %d' % ctype
            raise ConfigError('%s: collective %s is not supported (only %s)'
                              % (where, what, ', '.join(
                                  pb.CollectiveCommType.Name(t)
                                  for t in names)))
        n.collective = names[ctype]
        n.bytes = number('comm_size')
        if not n.bytes:
            raise ConfigError('%s: a collective of 0 bytes (comm_size)'
                              % where)
        group = attrs.get('pg_name', '')
        n.group = '' if group is None else str(group)
    elif kind in (pb.COMM_SEND_NODE, pb.COMM_RECV_NODE):
        send = kind == pb.COMM_SEND_NODE
        n.kind = 'send' if send else 'recv'
        n.bytes = number('comm_size')
        if not n.bytes:
            raise ConfigError('%s: a transfer of 0 bytes (comm_size)'
                              % where)
        n.tag = number('comm_tag', required=False)
        me, other = ('comm_src', 'comm_dst') if send else \
            ('comm_dst', 'comm_src')
        n.peer = number(other)
        if attrs.get(me) is not None and number(me) != rank:
            raise ConfigError('%s: %s is %d, but this is rank %d\'s file'
                              % (where, me, attrs[me], rank))
        if n.peer == rank:
            raise ConfigError('%s: %s is its own rank %d'
                              % (where, other, rank))
    elif kind == pb.METADATA_NODE:
        n.kind = 'metadata'
    else:
        try:
            what = pb.NodeType.Name(kind)
        except ValueError:
            what = 'type %d' % kind
        raise ConfigError('%s: node type %s is not supported (netsched '
                          'reads COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, '
                          'COMM_RECV_NODE and METADATA_NODE)' % (where, what))
    return n


class _Trace:
    """A trace's nodes with their collectives and transfers matched
    across ranks and an order to build them in (``order``: units, each
    a node or a collective, every unit after what it waits for)."""

    def __init__(self, ranks, files):  # noqa: C901 (one check per trace rule)
        self.ranks, self.files = ranks, files
        p = len(ranks)
        self.by_id = [{n.id: n for n in nodes} for nodes in ranks]

        def where(n):
            return '%s: node %d (%s)' % (files[n.rank], n.id, n.name)
        for nodes in ranks:
            for n in nodes:
                if n.kind in ('send', 'recv') and n.peer >= p:
                    raise ConfigError('%s: %s rank %d, but the trace has %d '
                                      'ranks' % (where(n), 'to' if n.kind
                                                 == 'send' else 'from',
                                                 n.peer, p))
        # collectives: the k-th of a group on each of its ranks
        groups = {}
        for nodes in ranks:
            for n in nodes:
                if n.kind == 'collective':
                    groups.setdefault(n.group, {}).setdefault(
                        n.rank, []).append(n)
        self.collectives = []             # [member nodes, by rank]
        self.unit_of = {}                 # (rank, id) -> unit
        for g in sorted(groups):
            per = groups[g]
            counts = {r: len(v) for r, v in per.items()}
            most = max(counts.values())
            for r in sorted(per):
                if counts[r] < most:
                    other = next(x for x in sorted(per) if counts[x] == most)
                    n = per[other][counts[r]]
                    raise ConfigError(
                        '%s: collective #%d of group %r has no peer on rank '
                        '%d (%s issues %d)' % (where(n), counts[r] + 1, g, r,
                                               files[r], counts[r]))
            for k in range(most):
                members = [per[r][k] for r in sorted(per)]
                first = members[0]
                for n in members[1:]:
                    if (n.collective, n.bytes) != (first.collective,
                                                   first.bytes):
                        raise ConfigError(
                            '%s: collective #%d of group %r is %s of %d '
                            'bytes, but on rank %d (node %d) %s of %d'
                            % (where(n), k + 1, g, n.collective, n.bytes,
                               first.rank, first.id, first.collective,
                               first.bytes))
                u = ('c', len(self.collectives))
                self.collectives.append(members)
                for n in members:
                    self.unit_of[(n.rank, n.id)] = u
        # transfers: a send and the receive of the same (src, dst, tag)
        sends = {}
        for nodes in ranks:
            for n in nodes:
                if n.kind == 'send':
                    sends.setdefault((n.rank, n.peer, n.tag), []).append(n)
        self.send_of = {}                 # recv (rank, id) -> send
        for nodes in ranks:
            for n in nodes:
                if n.kind != 'recv':
                    continue
                q = sends.get((n.peer, n.rank, n.tag))
                if not q:
                    raise ConfigError('%s: receives from rank %d (tag %d), '
                                      'which sends it nothing more'
                                      % (where(n), n.peer, n.tag))
                s = q.pop(0)
                if s.bytes != n.bytes:
                    raise ConfigError('%s: receives %d bytes; rank %d\'s '
                                      'send (node %d) has %d'
                                      % (where(n), n.bytes, s.rank, s.id,
                                         s.bytes))
                self.send_of[(n.rank, n.id)] = s
        for q in sends.values():
            if q:
                raise ConfigError('%s: sends to rank %d (tag %d), which '
                                  'receives nothing more' % (
                                      where(q[0]), q[0].peer, q[0].tag))
        for nodes in ranks:
            for n in nodes:
                self.unit_of.setdefault((n.rank, n.id), ('n', n.rank, n.id))
        self.order, self.first_comm_s = self._order(where)

    def members(self, u):
        if u[0] == 'c':
            return self.collectives[u[1]]
        return [self.by_id[u[1]][u[2]]]

    def _order(self, where):
        """Kahn's order of the units, the ready one that a list schedule
        starts first (compute one at a time per rank and stream, the
        network taking no time) first; a ConfigError naming a node of a
        cycle."""
        waits, after = {}, {}
        units = list(dict.fromkeys(self.unit_of.values()))
        for u in units:
            before = set()
            for n in self.members(u):
                before.update(self.unit_of[(n.rank, d)] for d in n.deps)
                if n.kind == 'recv':
                    s = self.send_of[(n.rank, n.id)]
                    before.add(self.unit_of[(s.rank, s.id)])
            before.discard(u)
            waits[u] = len(before)
            for b in before:
                after.setdefault(b, []).append(u)
        ready_at = {u: 0.0 for u in units}
        free = {}
        heap = [(0.0, self._key(u), u) for u in units if not waits[u]]
        heapq.heapify(heap)
        order, first_comm = [], None
        while heap:
            t, _, u = heapq.heappop(heap)
            order.append(u)
            n = self.members(u)[0]
            end = t
            if n.kind == 'compute':
                stream = (n.rank, n.cpu)
                end = max(t, free.get(stream, 0.0)) + n.dur_s
                free[stream] = end
            elif n.kind != 'metadata' and first_comm is None:
                first_comm = t
            for v in after.get(u, ()):
                ready_at[v] = max(ready_at[v], end)
                waits[v] -= 1
                if not waits[v]:
                    heapq.heappush(heap, (ready_at[v], self._key(v), v))
        if len(order) < len(units):
            left = [u for u in units if waits[u]]
            n = min((self.members(u)[0] for u in left),
                    key=lambda n: (n.rank, n.pos))
            raise ConfigError('%s: waits on a cycle of dependencies (the '
                              'trace deadlocks)' % where(n))
        return order, first_comm or 0.0

    def _key(self, u):
        n = self.members(u)[0]
        return (n.rank, n.pos)


def job(plan, spec, jid, arrival, placed, loss, iterations, seed=0):  # noqa: C901 (one branch per node kind)
    """Add a Chakra job's tasks (the module's docstring); returns its
    JobPlan."""
    tr = read(spec.chakra)
    p = len(tr.ranks)
    hosts = tuple(placed[:p])
    jp = JobPlan(jid, spec.model, 'chakra', hosts, (), iterations,
                           arrival, loss, 0, 0)
    plan.jobs[jid] = jp
    scale = spec.compute_scale
    factor = compute_factors(spec, jid, iterations, seed)
    jp.compute_s = max(sum(n.dur_s for n in nodes if n.kind == 'compute')
                       for nodes in tr.ranks) * scale
    jp.first_send_s = tr.first_comm_s * scale
    jp.gradient_bytes = sum(n.bytes for n in tr.ranks[0]
                            if n.collective == 'all-reduce')
    # the rank's nodes that none of its others waits for: its mark's
    sinks = []
    for nodes in tr.ranks:
        used = {d for n in nodes for d in n.deps}
        sinks.append([n.id for n in nodes if n.id not in used])
    conns, scheds = {}, {}
    prev = [None] * p
    for k in range(iterations):
        first_task = len(plan.tasks)
        begin = [plan.add('compute', hosts[r], jid, k,
                          deps=[] if prev[r] is None else [prev[r]],
                          dur=0.0, label='F0', worker=r,
                          not_before=arrival if k == 0 else 0.0)
                 for r in range(p)]
        done = {}                       # (rank, id) -> what its end is
        chain = {}                      # (rank, cpu) -> last compute

        def deps_of(n):
            out = []
            for d in n.deps:
                out += done[(n.rank, d)]
            return list(dict.fromkeys(out)) or [begin[n.rank]]
        for u in tr.order:
            members = tr.members(u)
            n = members[0]
            h = hosts[n.rank]
            if n.kind == 'compute':
                deps = deps_of(n)
                last = chain.get((n.rank, n.cpu))
                if last is not None and last not in deps:
                    deps.append(last)
                # F0 begins an iteration (the begin task above): a time
                # shift's gate and the emulator's job start read it
                label = n.name[:40] if n.name and n.name != 'F0' \
                    else 'node %d' % n.id
                tid = plan.add('compute', h, jid, k, deps=deps,
                               dur=n.dur_s * scale * float(factor[k, n.rank]),
                               label=label, worker=n.rank)
                chain[(n.rank, n.cpu)] = tid
                done[(n.rank, n.id)] = [tid]
            elif n.kind == 'metadata':
                done[(n.rank, n.id)] = deps_of(n)
            elif n.kind == 'send':
                dst = hosts[n.peer]
                key = (h, dst, 'p2p')
                if key not in conns:
                    conns[key] = plan.conn(h, dst, jid)
                cf = '%s/%d/p2p.%d-%d.n%d' % (jid, k, n.rank, n.peer, n.id)
                plan.coflow_bytes[cf] = plan.coflow_bytes.get(cf, 0) + n.bytes
                deps = deps_of(n)
                tid = plan.add('send', h, jid, k, deps=deps, dst=dst,
                               bytes=n.bytes, coflow=cf, conn=conns[key],
                               label=n.name[:40], worker=n.peer)
                done[('sent', n.rank, n.id)] = [tid]
                done[(n.rank, n.id)] = deps       # eager: local at once
            elif n.kind == 'recv':
                s = tr.send_of[(n.rank, n.id)]
                tid = plan.add('compute', h, jid, k,
                               deps=deps_of(n) + done[('sent', s.rank, s.id)],
                               dur=0.0, label='recv %d' % n.id,
                               worker=n.rank)
                done[(n.rank, n.id)] = [tid]
            else:
                ranks = [x.rank for x in members]
                name = tr.collectives[u[1]][0].collective
                alg = spec.chakra.all_reduce if name == 'all-reduce' \
                    else name
                skey = (alg, len(ranks), n.bytes)
                if skey not in scheds:
                    scheds[skey] = collectives.make(alg, len(ranks), n.bytes)
                out = collectives.emit(
                    plan, scheds[skey], [hosts[r] for r in ranks],
                    [deps_of(x) for x in members], jid, k,
                    '%s/%d/%s.c%d' % (jid, k, name, u[1]), conns)
                for x, o in zip(members, out):
                    done[(x.rank, x.id)] = o
        for r in range(p):
            deps = [begin[r]]
            for i in sinks[r]:
                deps += done[(r, i)]
            prev[r] = plan.add('mark', hosts[r], jid, k,
                               deps=list(dict.fromkeys(deps)),
                               label='iteration', worker=r,
                               loss=round(jp.loss_at(k + 1), 6))
        if k == 0:
            jp.bytes_per_iteration = sum(
                t.bytes for t in plan.tasks[first_task:] if t.kind == 'send')
    return jp


def counts(spec):
    """(tasks, sends, bytes sent, the most bytes one rank sends, compute
    of the busiest rank in s) of one iteration, on a plan built on
    stand-in hosts (workload.bounds)."""
    plan = Plan()
    hosts = ['h%d' % i for i in range(spec.workers)]
    job(plan, spec, 'estimate', 0.0, hosts, (1.0, 1.0, 0.0), 1)
    return plan.send_totals() + (plan.jobs['estimate'].compute_s,)


# ------------------------------------------------------------------ export

def export(plan, out_dir, name):
    """Write ``plan`` as Chakra ET files ``out_dir/<name>.<rank>.et``,
    rank r the r-th of the plan's hosts (natural order); returns the
    paths. A tuning group's barriers and a coflow trace's flows (sends of
    no job, released at a time) have no node to be: ConfigError."""
    pb, protolib = schema()
    if plan.stages:
        raise ConfigError('a tuning group\'s stages (barriers across '
                          'hosts) have no Chakra node; export an '
                          'experiment without tuning')
    if any(t.job is None for t in plan.tasks):
        raise ConfigError('a coflow trace\'s flows (released at their '
                          'arrival, of no job) have no Chakra node; export '
                          'an experiment without a trace')
    hosts = plan.hosts()
    rank = {h: i for i, h in enumerate(hosts)}
    nodes = [[] for _ in hosts]
    nid = {}                          # (task, rank) -> its node there

    def new(r, key, node_name, kind):
        n = pb.Node(id=len(nodes[r]), name=node_name, type=kind)
        nodes[r].append(n)
        nid[(key, r)] = n.id
        return n
    delays = {}
    for t in plan.tasks:              # ids first: a dep may come later
        r = rank[t.host]
        if t.not_before > 0:
            delays[t.id] = new(r, ('wait', t.id), 'wait until %g s'
                               % t.not_before, pb.COMP_NODE)
            delays[t.id].duration_micros = round(t.not_before * 1e6)
        if t.kind == 'send':
            new(r, t.id, 'send %s' % (t.label or t.coflow), pb.COMM_SEND_NODE)
            new(rank[t.dst], t.id, 'recv %s' % (t.label or t.coflow),
                pb.COMM_RECV_NODE)
        else:
            new(r, t.id, '%s %s' % (t.kind, t.label), pb.COMP_NODE)
    byid = [{n.id: n for n in ns} for ns in nodes]
    for t in plan.tasks:
        r = rank[t.host]
        n = byid[r][nid[(t.id, r)]]
        try:
            deps = [nid[(d, r)] for d in t.deps]
        except KeyError:
            raise ConfigError('task %d on %s waits for a task it does not '
                              'see (neither its own nor a transfer to it)'
                              % (t.id, t.host)) from None
        if t.id in delays:
            deps.append(delays[t.id].id)
        n.data_deps.extend(deps)
        if t.kind == 'send':
            n.attr.extend(_p2p(pb, r, rank[t.dst], t))
            recv = byid[rank[t.dst]][nid[(t.id, rank[t.dst])]]
            recv.attr.extend(_p2p(pb, r, rank[t.dst], t))
        else:
            n.duration_micros = round(t.dur * 1e6)
            n.attr.append(pb.AttributeProto(name='is_cpu_op',
                                            bool_val=False))
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for r, ns in enumerate(nodes):
        path = os.path.join(out_dir, '%s.%d.et' % (name, r))
        meta = pb.GlobalMetadata(version=VERSION, attr=[
            pb.AttributeProto(name='netsched_host', string_val=hosts[r])])
        with open(path + '.tmp', 'wb') as f:
            protolib.encodeMessage(f, meta)
            for n in ns:
                protolib.encodeMessage(f, n)
        os.replace(path + '.tmp', path)
        paths.append(path)
    return paths


def _p2p(pb, src, dst, t):
    """A transfer's attributes as ASTRA-sim reads them; the tag is the
    plan's send, unique."""
    A = pb.AttributeProto
    return [A(name='is_cpu_op', bool_val=False),
            A(name='comm_src', int32_val=src),
            A(name='comm_dst', int32_val=dst),
            A(name='comm_size', int64_val=int(t.bytes)),
            A(name='comm_tag', int32_val=t.id)]
