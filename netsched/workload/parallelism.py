"""Jobs whose traffic is collectives: data, tensor, pipeline and expert
parallelism and ZeRO-3 over a layer-wise profile.

A job with ``collective:`` or ``parallelism:`` (docs/experiment-format.md)
is built here instead of as a ring or parameter-server job. Its workers
are ranks ``w = t + tp (d + dp s)``: tensor-parallel rank t (fastest, so
that a tp group is consecutive hosts), data-parallel replica d, pipeline
stage s. Every collective is expanded by workload.collectives into
sends with one coflow per step; pipeline sends are a coflow per
micro-batch and stage boundary.

Per iteration and rank, in order (the GPU does one thing at a time):

- pipeline parallelism: the layers split into ``pp`` stages of about
  equal forward compute, ``micro_batches`` micro-batches in 1F1B order
  (stage s: min(pp-s-1, m) forwards, then one forward and one backward
  alternately, then the remaining backwards; Narayanan et al. 2021); a
  forward sends its last layer's activation (activation_bytes / m) to
  the next stage, a backward the same bytes of gradient to the one
  before; each tensor-parallel rank sends to its peer;
- tensor parallelism: a layer's compute split over tp ranks, and after
  each of its ``tp_allreduces`` parts an all-reduce of its output
  (activation_bytes / m) among the tp group, in forward and backward;
- expert parallelism: around an expert layer's compute, a dispatch and a
  combine all-to-all of activation_bytes / m x top_k among ``ep``
  consecutive data-parallel replicas, in forward and backward;
- data parallelism: after the last micro-batch's backward, gradients in
  buckets of ``bucket_mb`` (back layers first, an expert layer never in
  a bucket with a dense one) all-reduced among the dp replicas of the
  same stage and tp rank, the profile's bytes / tp (expert layers'
  also / ep, among the replicas holding the same experts); a layer's
  next forward waits for its bucket;
- ZeRO-3 (``zero: 3``, no pipeline): no all-reduce; before a layer's
  forward and again before its backward, an all-gather of its bytes /
  tp among the dp group, one layer ahead of the compute; after its
  backward a reduce-scatter of the same.

A worker's iteration mark waits for its last compute and every bucket
it receives. Compute is the profile's, divided by tp and by the
micro-batches.
"""
from dataclasses import dataclass

from . import collectives
from .plan import JobPlan, compute_factors, urgencies_from
from ..errors import ConfigError

# a job's keys this module reads (pipeline.experiment)
KEYS = ('collective', 'parallelism', 'chunks', 'group_size')
PAR_KEYS = ('dp', 'tp', 'pp', 'ep', 'zero', 'micro_batches', 'tp_within')
TP_WITHIN = ('leaf', 'pod', 'any')


@dataclass(frozen=True)
class Parallel:
    dp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    zero: int = 0
    micro_batches: int = 1
    collective: str = 'ring'          # data parallelism's
    tp_collective: str = 'ring'
    chunks: int = 1                   # tree and broadcast pipelining
    group_size: int = None            # hierarchical's (None: a leaf's)
    tp_within: str = 'leaf'           # where a tp group's hosts must be


# ---------------------------------------------------------------- checking

def _int(where, key, v, minimum=1):
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ConfigError('%s: %s: must be an integer >= %d, got %r'
                          % (where, key, minimum, v))
    return v


def read(where, d, workers, model):  # noqa: C901 (one check per key)
    """A job's collective and parallelism keys, checked against its
    worker count and its model's profile; ConfigErrors name the file,
    the key and the value."""
    coll = d.get('collective', 'ring')
    tp_coll = 'ring'
    if isinstance(coll, dict):
        extra = sorted(set(coll) - {'dp', 'tp'}, key=str)
        if extra:
            raise ConfigError('%s: collective: unknown key %r (known: dp, '
                              'tp)' % (where, extra[0]))
        tp_coll = coll.get('tp', 'ring')
        coll = coll.get('dp', 'ring')
    for key, v in (('collective', coll), ('collective: tp', tp_coll)):
        if not isinstance(v, str) or v not in collectives.ALGORITHMS:
            raise ConfigError('%s: %s: unknown collective %r (one of %s)'
                              % (where, key, v,
                                 ', '.join(collectives.ALGORITHMS)))
    if tp_coll not in collectives.ALL_REDUCE:
        raise ConfigError('%s: collective: tp: %r is not an all-reduce '
                          '(one of %s)' % (where, tp_coll,
                                           ', '.join(collectives.ALL_REDUCE)))
    chunks = _int(where, 'chunks', d.get('chunks', 1))
    group = d.get('group_size')
    if group is not None:
        group = _int(where, 'group_size', group)
    raw = d.get('parallelism', {})
    if not isinstance(raw, dict):
        raise ConfigError('%s: parallelism: must be a mapping of %s, got %r'
                          % (where, ', '.join(PAR_KEYS), raw))
    extra = sorted(set(raw) - set(PAR_KEYS), key=str)
    if extra:
        raise ConfigError('%s: parallelism: unknown key %r (known: %s)'
                          % (where, extra[0], ', '.join(PAR_KEYS)))
    pw = '%s: parallelism' % where
    tp = _int(pw, 'tp', raw.get('tp', 1))
    pp = _int(pw, 'pp', raw.get('pp', 1))
    if workers % (tp * pp):
        raise ConfigError('%s: tp x pp = %d x %d = %d does not divide the '
                          'job\'s %d workers' % (pw, tp, pp, tp * pp,
                                                 workers))
    dp = _int(pw, 'dp', raw.get('dp', workers // (tp * pp)))
    if dp * tp * pp != workers:
        raise ConfigError('%s: dp x tp x pp = %d x %d x %d = %d, but the job '
                          'has %d workers' % (pw, dp, tp, pp, dp * tp * pp,
                                              workers))
    ep = _int(pw, 'ep', raw.get('ep', 1))
    zero = raw.get('zero', 0)
    m = _int(pw, 'micro_batches', raw.get('micro_batches', 1))
    within = raw.get('tp_within', 'leaf')
    if within not in TP_WITHIN:
        raise ConfigError('%s: tp_within: must be one of %s, got %r'
                          % (pw, ', '.join(TP_WITHIN), within))
    if zero not in (0, 3) or isinstance(zero, bool):
        raise ConfigError('%s: zero: must be 0 or 3, got %r (ZeRO-1 and 2 '
                          'send what data parallelism\'s all-reduce sends: '
                          'use 0)' % (pw, zero))
    if zero and pp > 1:
        raise ConfigError('%s: zero: 3 does not go with pipeline '
                          'parallelism (pp %d), as in DeepSpeed' % (pw, pp))
    if (tp > 1 or pp > 1 or ep > 1 or zero) and \
            coll not in collectives.ALL_REDUCE:
        raise ConfigError('%s: collective: %r is not an all-reduce, which '
                          'data parallelism under model parallelism needs '
                          '(one of %s)' % (where, coll,
                                           ', '.join(collectives.ALL_REDUCE)))
    if zero and coll != 'ring':
        raise ConfigError('%s: collective: ZeRO-3 gathers and scatters by '
                          'ring; %r is for an all-reduce' % (where, coll))
    if dp % ep:
        raise ConfigError('%s: ep: %d does not divide dp %d' % (pw, ep, dp))
    layers = model.layers
    if pp > len(layers):
        raise ConfigError('%s: pp: %d stages, but %s has %d layers'
                          % (pw, pp, model.name, len(layers)))
    if pp > 1:
        cuts = stages(model, pp)
        for a, _ in cuts[1:]:
            if not layers[a - 1].activation_bytes:
                raise ConfigError(
                    '%s: pp: %s has no activation_bytes on layer %s, which '
                    'a stage boundary sends' % (pw, model.name,
                                                layers[a - 1].name))
    if tp > 1 and not any(x.tp_allreduces for x in layers):
        raise ConfigError('%s: tp: %s has no layer with tp_allreduces (a '
                          'profile of tensor-parallel layers)'
                          % (pw, model.name))
    if ep > 1:
        moe = [x for x in layers if x.experts]
        if not moe:
            raise ConfigError('%s: ep: %s has no expert layer (experts:)'
                              % (pw, model.name))
        if any(x.experts % ep for x in moe):
            raise ConfigError('%s: ep: %d does not divide the %d experts of '
                              '%s' % (pw, ep, moe[0].experts, model.name))
    if group is not None:
        sizes = ([dp, dp // ep] if coll == 'hierarchical' else []) + \
            ([tp] if tp_coll == 'hierarchical' else [])
        if not sizes:
            raise ConfigError('%s: group_size: only the hierarchical '
                              'collective has groups (this job\'s is %s)'
                              % (where, coll))
        for n in sizes:
            if n % group:
                raise ConfigError('%s: group_size: %d does not divide the '
                                  '%d ranks of the job\'s %s collective'
                                  % (where, group, n, 'hierarchical'))
    return Parallel(dp, tp, pp, ep, zero, m, coll, tp_coll, chunks, group,
                    within)


def stages(model, pp):
    """The layers' split into pp stages: (first, end) index pairs of
    about equal forward compute, each at least one layer."""
    L = len(model.layers)
    fwd = [x.forward_ms for x in model.layers]
    total = sum(fwd) or 1.0
    cuts, acc, s = [0], 0.0, 1
    for i, f in enumerate(fwd):
        acc += f
        left = L - (i + 1)
        # cut after layer i once this stage has its share, keeping a
        # layer for every stage still to come
        if s < pp and (acc >= s * total / pp or left == pp - s) \
                and i + 1 > cuts[-1]:
            cuts.append(i + 1)
            s += 1
    cuts.append(L)
    return list(zip(cuts[:-1], cuts[1:]))


# ---------------------------------------------------------------- building

class _Job:
    """Builds one job's tasks, iteration by iteration."""

    def __init__(self, plan, spec, jid, model, workers, factor):
        self.plan, self.spec, self.jid, self.model = plan, spec, jid, model
        self.par, self.workers, self.factor = spec.collective, workers, factor
        self.conns = {}
        self.scheds = {}
        self.k = 0

    def rank(self, t, d, s):
        return t + self.par.tp * (d + self.par.dp * s)

    def collective(self, name, ranks, size, start, tag, **send):
        """Collective ``name`` of ``size`` bytes over workers ``ranks``
        (each waiting for ``start[i]``); returns what each waits for."""
        if len(ranks) == 1:
            return [list(start[0])]
        hosts = [self.workers[r] for r in ranks]
        order = list(range(len(ranks)))
        group = self.par.group_size
        if name == 'hierarchical' and group is None:
            order, group = self._by_leaf(hosts)
        key = (name, len(ranks), int(size), self.par.chunks, group)
        if key not in self.scheds:
            self.scheds[key] = collectives.make(name, len(ranks), size,
                                                self.par.chunks, group)
        done = collectives.emit(
            self.plan, self.scheds[key], [hosts[i] for i in order],
            [start[i] for i in order], self.jid, self.k,
            '%s/%d/%s' % (self.jid, self.k, tag), self.conns, **send)
        out = [None] * len(ranks)
        for j, i in enumerate(order):
            out[i] = done[j]
        return out

    def _by_leaf(self, hosts):
        """Ranks ordered by leaf, and the hosts a leaf holds: a
        hierarchical collective's groups, which must be equal."""
        leaf = self.plan.leaf_of
        if any(h not in leaf for h in hosts):
            raise ConfigError('job %s: collective: hierarchical needs '
                              'group_size here (its hosts\' leaves are not '
                              'known)' % self.jid)
        firsts = {}
        for h in hosts:
            firsts.setdefault(leaf[h], len(firsts))
        order = sorted(range(len(hosts)), key=lambda i: firsts[leaf[hosts[i]]])
        counts = {}
        for h in hosts:
            counts[leaf[h]] = counts.get(leaf[h], 0) + 1
        if len(set(counts.values())) > 1:
            raise ConfigError(
                'job %s: collective: hierarchical needs as many of its '
                'hosts under every leaf; they hold %s (set group_size)'
                % (self.jid, ', '.join('%s: %d' % kv
                                       for kv in sorted(counts.items()))))
        return order, next(iter(counts.values()))

    def compute(self, w, dur, deps, label, not_before=0.0):
        return self.plan.add('compute', self.workers[w], self.jid, self.k,
                             deps=deps, dur=dur * self.factor[self.k, w],
                             label=label, worker=w, not_before=not_before)


def one_f_one_b(s, pp, m):
    """Stage s's micro-batch ops in 1F1B order: ('F', mb) and ('B', mb)."""
    warm = min(pp - s - 1, m)
    ops = [('F', i) for i in range(warm)]
    for i in range(m - warm):
        ops += [('F', warm + i), ('B', i)]
    return ops + [('B', i) for i in range(m - warm, m)]


def buckets(model, first, end, cap_bytes):
    """A stage's gradient buckets, back layers first: (front layer,
    layers, bytes, expert), closed at ``cap_bytes`` and where expert
    layers meet dense ones."""
    out, cur, size, kind = [], [], 0, None
    for li in range(end - 1, first - 1, -1):
        layer = model.layers[li]
        if not layer.bytes:
            continue
        expert = bool(layer.experts)
        if cur and (expert != kind):
            out.append((min(cur), sorted(cur), size, kind))
            cur, size = [], 0
        cur.append(li)
        size += layer.bytes
        kind = expert
        if size >= cap_bytes:
            out.append((min(cur), sorted(cur), size, kind))
            cur, size = [], 0
    if cur:
        out.append((min(cur), sorted(cur), size, kind))
    return out


def job(plan, spec, jid, model, arrival, placed, loss, iterations,
        group=None, gates=None, stage_ends=(), seed=0):
    """Add a collective job's tasks (see the module's docstring);
    returns its JobPlan."""
    par = spec.collective
    N = spec.workers
    workers = tuple(placed[:N])
    jp = JobPlan(jid, model.name, 'collective', workers, (),
                           iterations, arrival, loss, 0, model.bytes, group,
                           stage_ends=tuple(stage_ends))
    plan.jobs[jid] = jp
    gates = gates or {}
    b = _Job(plan, spec, jid, model, workers,
             compute_factors(spec, jid, iterations, seed))
    tp, pp, m = par.tp, par.pp, par.micro_batches
    layers = model.layers
    cuts = stages(model, pp)
    cs = spec.compute_scale
    fwd = [x.forward_ms / 1e3 / m / tp * cs for x in layers]
    bwd = [x.backward_ms / 1e3 / m / tp * cs for x in layers]
    cap = spec.bucket_mb * 2 ** 20
    stage_buckets = [buckets(model, a, e, cap) for a, e in cuts]
    jp.buckets = tuple(bk[2] for sb in stage_buckets for bk in sb)
    start_u = urgencies_from(model.tensors(), model.bytes)
    layer_u = {}
    for ti, (li, _) in enumerate(model.tensors()):
        layer_u.setdefault(li, float(start_u[ti]))
    jp.compute_s = max(sum(fwd[a:e]) + sum(bwd[a:e]) for a, e in cuts) * m
    # a rank's first gradient goes near the end of its backward pass
    # (CASSINI's circle reads it): the whole iteration's compute
    jp.first_send_s = jp.compute_s
    params_ready = [[[] for _ in layers] for _ in range(N)]
    prev_last = [[] for _ in range(N)]
    for k in range(iterations):
        b.k = k
        first_task = len(plan.tasks)
        params_ready, prev_last = _iteration(
            b, k, cuts, stage_buckets, fwd, bwd, params_ready, prev_last,
            gates.get(k), arrival if k == 0 else 0.0, layer_u)
        if k == 0:
            jp.bytes_per_iteration = sum(
                t.bytes for t in plan.tasks[first_task:]
                if t.kind == 'send')
    return jp


# The 1F1B phases in order
def _iteration(b, k, cuts, stage_buckets, fwd, bwd, params_ready,  # noqa: C901
               prev_last, gate, not_before, layer_u):
    """One iteration of every rank; returns (the tasks each rank's
    layers' next forward waits for, what each rank's next compute
    waits for)."""
    par, plan, layers = b.par, b.plan, b.model.layers
    tp, dp, pp, m, ep = par.tp, par.dp, par.pp, par.micro_batches, par.ep
    N = len(b.workers)
    # last[w]: what rank w's next compute waits for (the GPU does one
    # thing at a time, and a layer's output all-reduce comes before the
    # next layer)
    last = [list(x) for x in prev_last]
    fresh = [True] * N
    # pipeline sends by (op, receiving stage, d, t, mb), and the wait
    # task that begins that op on the receiver: joined once every stage
    # is built (a stage's forwards wait for the one before, its
    # backwards for the one after)
    sent, feeds = {}, {}
    grad_ready = {}                   # (rank, layer) -> last backward
    received = [[] for _ in range(N)]
    ready = [[[] for _ in layers] for _ in range(N)]

    def step(w, dur, label, deps=()):
        d = last[w] + list(deps)
        nb = 0.0
        if fresh[w]:
            fresh[w] = False
            if gate is not None:
                d.append(gate)
            nb = not_before
        tid = b.compute(w, dur, d, label, nb)
        last[w] = [tid]
        return tid

    ranks_of = [[b.rank(t, dd, s) for dd in range(dp) for t in range(tp)]
                for s in range(pp)]
    prefetch = [list(x) for x in last]     # ZeRO-3's gathers wait for it

    def begin(ranks, label):
        """A rank's iteration starts with a compute (its arrival, its
        stage's gate), even where a collective comes first."""
        for w in ranks:
            if fresh[w]:
                step(w, 0.0, label)
                prefetch[w] = list(last[w])

    def grad_ready_now(ranks):
        return {w: last[w] for w in ranks}
    for s, (a, e) in enumerate(cuts):
        for op, mb in one_f_one_b(s, pp, m):
            suffix = '.m%d' % mb if mb else ''
            if (op == 'F' and s > 0) or (op == 'B' and s < pp - 1):
                for w in ranks_of[s]:
                    t, dd = w % tp, (w // tp) % dp
                    feeds[(op, s, dd, t, mb)] = step(
                        w, 0.0, 'recv%s%s' % (op, suffix))
            order = range(a, e) if op == 'F' else range(e - 1, a - 1, -1)
            for li in order:
                layer = layers[li]
                dur = (fwd if op == 'F' else bwd)[li]
                parts = max(1, layer.tp_allreduces) if tp > 1 else 1
                act = layer.activation_bytes / m
                label = '%s%d%s' % (op, li, suffix)
                gather = par.zero and layer.bytes and dp > 1
                if op == 'F' and mb == 0 and not gather:
                    for w in ranks_of[s]:     # this layer's parameters
                        last[w] = last[w] + params_ready[w][li]
                moe = ep > 1 and layer.experts
                if moe or gather:
                    begin(ranks_of[s], label)
                if moe:
                    _all_to_all(b, s, last, 'ep.s%d.%s.dispatch' % (s, label),
                                act * layer.top_k)
                gathered = {}
                if gather:
                    # ZeRO-3: the layer's parameters gathered, asked for
                    # as the layer before began (one layer ahead)
                    for t in range(tp):
                        ranks = [b.rank(t, dd, s) for dd in range(dp)]
                        start = [prefetch[r] + (params_ready[r][li]
                                                if op == 'F' and mb == 0
                                                else []) for r in ranks]
                        done = b.collective(
                            'all-gather', ranks, layer.bytes / tp, start,
                            'zero.ag.t%d.%s' % (t, label))
                        gathered.update(zip(ranks, done))
                for part in range(parts):
                    for w in ranks_of[s]:
                        if part == 0:
                            prefetch[w] = list(last[w])
                        tid = step(w, dur / parts, label,
                                   gathered.pop(w, []))
                        if op == 'B' and mb == m - 1:
                            grad_ready[(w, li)] = tid
                    if gather and op == 'B' and part == parts - 1:
                        _reduce_scatter(b, s, li, label, grad_ready_now(
                            ranks_of[s]), received, ready)
                    if moe and part == parts - 1:
                        _all_to_all(b, s, last,
                                    'ep.s%d.%s.combine' % (s, label),
                                    act * layer.top_k)
                    if tp > 1 and layer.tp_allreduces:
                        for dd in range(dp):
                            ranks = [b.rank(t, dd, s) for t in range(tp)]
                            done = b.collective(
                                par.tp_collective, ranks, act,
                                [last[r] for r in ranks],
                                'tp.d%d.s%d.%s.p%d' % (dd, s, label, part))
                            for r, x in zip(ranks, done):
                                last[r] = last[r] + x
            # the op's output to the next stage, or its input's gradient
            # to the one before
            to = s + 1 if op == 'F' else s - 1
            if 0 <= to < pp:
                nbytes = int(layers[(e if op == 'F' else a) - 1]
                             .activation_bytes / m)
                cf = '%s/%d/pp.s%d-%d.m%d.%s' % (b.jid, k, s, to, mb, op)
                for w in ranks_of[s]:
                    t, dd = w % tp, (w // tp) % dp
                    sent[(op, to, dd, t, mb)] = _send(
                        b, w, b.rank(t, dd, to), nbytes, cf, last[w])
        if par.zero:
            continue
        # the stage's gradients, all-reduced among its replicas
        for bi, (front, blayers, size, expert) in enumerate(
                stage_buckets[s]):
            nbytes = size / tp / (ep if expert else 1)
            for t in range(tp):
                for grp in _dp_groups(dp, ep if expert else 1):
                    ranks = [b.rank(t, dd, s) for dd in grp]
                    done = b.collective(
                        par.collective, ranks, nbytes,
                        [[grad_ready[(r, front)]] for r in ranks],
                        'dp.t%d.s%d.b%d' % (t, s, bi), prio=front,
                        urgency=layer_u.get(front, 0.0),
                        position=front / len(layers))
                    for r, x in zip(ranks, done):
                        received[r] += x
                        for li in blayers:
                            ready[r][li] += x
    for key, tid in feeds.items():
        plan.tasks[tid].deps.append(sent[key])
    for w in range(N):
        plan.add('mark', b.workers[w], b.jid, k,
                 deps=last[w] + received[w], label='iteration', worker=w,
                 loss=round(plan.jobs[b.jid].loss_at(k + 1), 6))
    return ready, last


def _reduce_scatter(b, s, li, label, start, received, ready):
    """ZeRO-3: layer li's gradients reduce-scattered among the dp
    replicas after its backward; its next gather waits for them."""
    par = b.par
    layer = b.model.layers[li]
    for t in range(par.tp):
        ranks = [b.rank(t, dd, s) for dd in range(par.dp)]
        done = b.collective('reduce-scatter', ranks, layer.bytes / par.tp,
                            [start[r] for r in ranks],
                            'zero.rs.t%d.%s' % (t, label), prio=li)
        for r, x in zip(ranks, done):
            received[r] += x
            ready[r][li] += x


def _dp_groups(dp, shards):
    """The data-parallel replicas that hold the same parameters: all of
    them, or for an expert layer sharded over ``shards`` replicas those
    with the same place in their expert-parallel group."""
    return [[j + shards * q for q in range(dp // shards)]
            for j in range(shards)]


def _all_to_all(b, s, last, tag, size):
    """An expert layer's all-to-all among each group of ep consecutive
    replicas of stage s, per tensor-parallel rank; every rank's next
    compute waits for what it receives."""
    par = b.par
    for t in range(par.tp):
        for g in range(par.dp // par.ep):
            ranks = [b.rank(t, g * par.ep + j, s) for j in range(par.ep)]
            done = b.collective('all-to-all', ranks, size,
                                [last[r] for r in ranks],
                                '%s.t%d.g%d' % (tag, t, g))
            for r, x in zip(ranks, done):
                last[r] = last[r] + x


def _send(b, src, dst, nbytes, coflow, deps):
    """A pipeline send between two workers (a connection of its own per
    pair, apart from the collectives')."""
    plan = b.plan
    hs, hd = b.workers[src], b.workers[dst]
    key = (hs, hd, 'pp')
    if key not in b.conns:
        b.conns[key] = plan.conn(hs, hd, b.jid)
    plan.coflow_bytes[coflow] = plan.coflow_bytes.get(coflow, 0) + nbytes
    return plan.add('send', hs, b.jid, b.k, deps=list(deps), dst=hd,
                    bytes=nbytes, coflow=coflow, conn=b.conns[key])
