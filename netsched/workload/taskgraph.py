"""DL training workloads as a task graph both backends execute.

A plan is a list of tasks with dependencies:

- ``compute``: a phase of one worker's GPU (a layer's forward or
  backward pass), a wait of ``dur`` seconds on its host;
- ``send``: ``bytes`` from ``host`` to ``dst`` over the persistent
  connection ``conn`` (sends on one connection go in order, one at a
  time, like one TCP byte stream); done when the last byte arrived;
- ``mark``: a worker has finished iteration ``iter`` (its backward pass
  and every parameter it needs back) - zero time, logged;
- ``barrier``: a hyper-parameter-tuning stage ends when every surviving
  configuration reached it.

A task of host h depends only on things h observes itself: its own
compute, data it received, or a barrier the coordinator announces. The
emulator's agents can therefore run their host's slice independently.

Jobs: wait-free back-propagation (a gradient goes as soon as its layer's
backward pass is done) and layer-wise forward (a layer's next forward
pass waits for that layer's parameters only).

- parameter server: tensor t lives on shard t mod S; every worker pushes
  its gradient to the shard, the shard returns the update to every worker
  once all N pushes of t arrived (aggregation takes no time);
- ring all-reduce: gradients are fused into buckets of ``bucket_mb`` in
  backward order; each bucket takes 2(N-1) steps around the ring
  (reduce-scatter, then all-gather), a chunk of size/N per step; step s
  of worker i goes when step s-1 from worker i-1 arrived.

Coflow = one job's gradient exchange in one iteration ("job/k").
"""
import math

import numpy as np

from . import models, placement, trace
from .. import topology as topo
from ..errors import ConfigError
# the plan's types live in plan.py, which parallelism and chakra build on
# without importing this module; taken here under their old names
from .plan import (AGENT_PORT, FIRST_SPORT, MAX_SLICES,  # noqa: F401
                   SENDERS, Conn, JobPlan, Plan, StagePlan, Task,
                   compute_factors, urgencies_from)

def default_loss(rng):
    """A synthetic loss curve l(k) = 1/(b0 k + b1) + b2, the form JPAS
    fits (docs/policies.md)."""
    return (float(rng.uniform(0.01, 0.1)), float(rng.uniform(0.3, 0.6)),
            float(rng.uniform(0.05, 0.5)))


def analytical_comm_s(model, pattern, workers, link_bps, shards=1,
                      bucket_mb=25.0):
    """Ideal communication time of one iteration with every gradient ready
    at once and every transfer at the full bottleneck rate B.

    ring: 2(N-1)/N * S / B (per bucket, buckets back to back).
    ps, push then pull, pipelined per tensor: shard s receives N copies of
    its share S_s (push, N S_s / B on its link) and sends N copies back
    (pull, the other direction of the same link). A tensor's pulls start
    once its N pushes are in, so the pull stream ends at
    max over tensors i of (push done through i) + (pulls from i on)
    = N (S_s + b_i) / B: the largest tensor b_max of the busiest shard
    sets the lag, N (S_s + b_max) / B. At least S / B, a worker's link.
    """
    S = model.bytes
    if pattern == 'ring':
        return 2.0 * (workers - 1) / workers * S * 8 / link_bps
    share = [0] * shards
    big = [0] * shards
    for i, (_, t) in enumerate(model.tensors()):
        share[i % shards] += t.bytes
        big[i % shards] = max(big[i % shards], t.bytes)
    busiest = max(workers * (share[s] + big[s]) for s in range(shards))
    return max(busiest, S) * 8 / link_bps


def build(exp, with_trace=True):
    """The task graph of an experiment's jobs and tuning groups, and of
    its coflow trace unless ``with_trace`` is false (the simulator runs a
    trace with a driver of its own, sim.drivers.TraceDriver). A fault
    set under which some of it would have no route is a ConfigError
    (faults.check_traffic)."""
    from .. import policies
    g = exp.graph()
    hosts = topo.hosts(g)
    rng = np.random.default_rng(exp.seed)
    policy = policies.make(exp.policy, exp.policy_params)
    shape = policy.workload()
    # how ps tensors are sliced: the policy's (prophet and bytescheduler
    # cut as BytePS does), else equal slices
    partitions = shape.get('partitions', 'equal')
    net = None
    placer = placement.placer(policy, exp)
    free = set(hosts)
    plan = Plan()
    t_arr = 0.0
    specs = []
    for j in exp.jobs:
        specs.append((j, None))
    for base, configs, stages in exp.tuning:
        specs.append((base, (configs, stages)))
    for spec, tuning in specs:
        if spec.arrival_s is not None:
            arrival = spec.arrival_s
        elif exp.poisson_rate:
            t_arr += rng.exponential(1.0 / exp.poisson_rate)
            arrival = t_arr
        else:
            arrival = 0.0
        if tuning is None and spec.chakra is not None:    # an ET trace
            from . import chakra
            chakra.job(plan, spec, spec.id, arrival,
                       placement.place(spec, spec.workers, hosts, free, rng),
                       spec.loss or default_loss(rng), spec.iterations,
                       seed=exp.seed)
            continue
        model = models.get(spec.model, exp.base_dir)
        if tuning is None:
            if spec.candidates:
                if net is None:
                    from .. import fluid
                    net = fluid.Network(g)
                placed = _choose(plan, placer, _shaped(spec, shape), model,
                                 arrival, free, net,
                                 lanes=shape.get('ps_lanes', 1),
                                 partitions=partitions)
            elif spec.collective is not None:     # tp groups kept close
                placed = placement.place_collective(
                    spec, g, hosts, free, rng, plan, exp.path or exp.name)
            else:
                placed = placement.place(spec, placement.hosts_needed(spec),
                                         hosts, free, rng)
            _job(plan, _shaped(spec, shape), spec.id, model, arrival,
                 placed, spec.loss or default_loss(rng), spec.iterations,
                 lanes=shape.get('ps_lanes', 1), seed=exp.seed,
                 partitions=partitions)
        else:
            _tuning(plan, _shaped(spec, shape), model, arrival, tuning,
                    hosts, free, rng, lanes=shape.get('ps_lanes', 1),
                    seed=exp.seed, partitions=partitions)
    if exp.trace and with_trace:
        _trace(plan, exp, hosts)
    if exp.faults:         # every backend's plan: refused before it runs
        from . import faults
        faults.check_traffic(exp.faults, g, faults.plan_senders(exp, plan),
                             exp.path or exp.name)
    return plan


def _trace(plan, exp, hosts):
    """A coflow trace's network flows (workload.trace.network_flows),
    each a send on a connection of its own, released at its coflow's
    arrival (``not_before``; no job, no iteration; the coflow's id is the
    trace's): the simulator runs every trace flow as an independent flow,
    and sends on one connection would go one after the other. The k-th
    flow's source port is the simulator's (TRACE_SPORT + k). A coflow
    none of whose flows crosses the network (every mapper on its
    reducer's host) has no sends; it is in ``plan.instant_coflows``,
    ended as it arrives, as the simulator ends it."""
    where = '%s: trace' % (exp.path or exp.name)
    ports, cofs = trace.load(exp.trace)
    racks = trace.rack_hosts(ports, hosts, exp.trace.racks, where)
    k = 0
    for c in cofs:
        if c.id in plan.coflow_bytes:
            raise ConfigError('%s: coflow id %s is also a job\'s coflow'
                              % (where, c.id))
        src, dst, size = trace.network_flows(c, racks, exp.big_switch)
        plan.coflow_bytes[c.id] = float(size.sum())
        if not len(size):
            plan.instant_coflows[c.id] = c.arrival_s
        for s, d, b in zip(src.tolist(), dst.tolist(), size.tolist()):
            if k >= trace.TRACE_PORTS:
                raise ConfigError('%s: %d flows or more; the emulator runs '
                                  'at most %d (limit the slice)'
                                  % (where, k + 1, trace.TRACE_PORTS))
            cid = plan.conn(s, d, None, sport=trace.TRACE_SPORT + k)
            plan.add('send', s, None, None, dst=d, bytes=b,
                     coflow=c.id, conn=cid, not_before=c.arrival_s)
            k += 1
    if not any(t.kind == 'send' for t in plan.tasks):
        raise ConfigError('%s: no flow of the trace crosses the network '
                          '(every mapper is on its reducer\'s host): '
                          'nothing to run' % where)


def _choose(plan, policy, spec, model, arrival, free, net, lanes=1,
            partitions='equal'):
    """The candidate placement the policy picks (placement.choose), each
    candidate seen as a one-iteration plan of the job on its hosts."""
    def trial(hosts):
        scratch = Plan(conns=list(plan.conns))
        _job(scratch, spec, spec.id, model, arrival, hosts,
             (0.1, 0.5, 0.1), 1, lanes=lanes, partitions=partitions)
        return scratch
    return placement.choose(plan, policy, spec, free, net, trial)


def _shaped(spec, shape):
    """A job as the policy's workload() asks: its sends in priority order
    (``send_order``), its ps tensors in slices (``slice_mb``, unless the
    job gives its own). A host sender's knobs (send_order prophet or
    bytescheduler): the job's own where it asked for that order itself,
    else the policy's (``shape[order]``)."""
    import dataclasses
    kw = {}
    order = shape.get('send_order') or spec.send_order
    if order != spec.send_order:
        kw['send_order'] = order
        if spec.prophet is not None:
            kw['prophet'] = None        # the job's knobs are for its order
    if spec.prophet is None or order != spec.send_order:
        policy = shape.get(order) if order in SENDERS else None
        if policy:
            kw['prophet'] = tuple(policy.items())
    if shape.get('slice_mb') and spec.pattern == 'ps' and not spec.slice_mb:
        kw['slice_mb'] = float(shape['slice_mb'])
    if shape.get('lanes_by', 'urgency') != spec.lanes_by:
        kw['lanes_by'] = shape['lanes_by']
    return dataclasses.replace(spec, **kw) if kw else spec


def slices(nbytes, slice_bytes, partitions='equal'):
    """How many slices a tensor of ``nbytes`` is cut into (whole if
    ``slice_bytes`` is None; ``partitions``: see :func:`slice_sizes`)."""
    if not slice_bytes:
        return 1
    if partitions == 'byteps':
        slice_bytes = max(1, int(slice_bytes))   # whole bytes, as BytePS
    return max(1, math.ceil(nbytes / slice_bytes))


def slice_sizes(nbytes, slice_bytes, partitions='equal'):
    """A tensor's slices of at most ``slice_bytes``, in order
    (``partitions``: one of policies.PARTITIONS): ``equal`` parts
    (10,000,000 B at 4,096,000: 3 x 3,333,334, the last 3,333,332) or,
    ``byteps``, whole slices with the remainder last (2 x 4,096,000 and
    1,808,000), as BytePS' PartitionTensor cuts them."""
    n = slices(nbytes, slice_bytes, partitions)
    if n == 1:
        return [nbytes]
    if partitions == 'byteps':
        size = max(1, int(slice_bytes))
        return [size] * (n - 1) + [nbytes - size * (n - 1)]
    size = math.ceil(nbytes / n)
    return [min(size, nbytes - k * size) for k in range(n)]


def ps_pieces(tensors, total, slice_bytes, partitions='equal'):
    """A parameter-server job's sends of one iteration, in the order
    back-propagation makes them ready (the back layers first): per tensor
    (index ti, layer li), its slices of at most ``slice_bytes`` (whole
    if None; cut as ``partitions`` says, :func:`slice_sizes`), each (ti,
    li, name, bytes, urgency of its first byte). Its consumption
    position is ti / len(tensors)."""
    out = []
    start = urgencies_from(tensors, total)
    for ti in range(len(tensors) - 1, -1, -1):
        li, t = tensors[ti]
        sizes = slice_sizes(t.bytes, slice_bytes, partitions)
        n, before = len(sizes), 0
        for k, b in enumerate(sizes):
            name = t.name if n == 1 else '%s[%d/%d]' % (t.name, k, n)
            out.append((ti, li, name, b, float(start[ti] + before / total)))
            before += b
    return out


def _job(plan, spec, jid, model, arrival, placed, loss, iterations,
         group=None, gates=None, lanes=1, stage_ends=(), seed=0,
         partitions='equal'):
    """Add one job's tasks. gates: iteration -> barrier task id that the
    iteration's forward pass must wait for (tuning stages). lanes: a
    parameter-server job's connections per worker/shard pair and
    direction, one per urgency class (policies.urgency_class; Geryon).
    seed: the experiment's (its compute jitter). partitions: how its ps
    tensors are sliced (:func:`slice_sizes`)."""
    if spec.collective is not None:     # collectives, model parallelism
        from . import parallelism
        return parallelism.job(plan, spec, jid, model, arrival, placed, loss,
                               iterations, group=group, gates=gates,
                               stage_ends=stage_ends, seed=seed)
    N = spec.workers
    workers = tuple(placed[:N])
    servers = tuple(placed[N:])
    layers = model.layers
    L = len(layers)
    jp = JobPlan(jid, model.name, spec.pattern, workers, servers,
                 iterations, arrival, loss, 0, model.bytes, group,
                 stage_ends=tuple(stage_ends))
    plan.jobs[jid] = jp
    gates = gates or {}
    if spec.pattern == 'ps':
        ps = _ps_setup(plan, spec, jid, jp, model, lanes, partitions)
        first_layer = ps['pieces'][0][1]
    else:
        ring = _ring_setup(plan, spec, jid, jp, model)
        first_layer = ring['buckets'][0][0]
    fwd_ms = [layer.forward_ms / 1e3 for layer in layers]
    bwd_ms = [layer.backward_ms / 1e3 for layer in layers]
    jp.compute_s = (sum(fwd_ms) + sum(bwd_ms)) * spec.compute_scale
    jp.first_send_s = (sum(fwd_ms) + sum(bwd_ms[first_layer:])) \
        * spec.compute_scale
    params_ready = [[[] for _ in range(L)] for _ in range(N)]  # prev iter
    prev_last = [None] * N
    prophet = _prophet_knobs(spec)
    factor = compute_factors(spec, jid, iterations, seed)
    fwd_label = ['F%d' % li for li in range(L)]
    bwd_label = ['B%d' % li for li in range(L)]
    for k in range(iterations):
        cf = '%s/%d' % (jid, k)
        plan.coflow_bytes[cf] = jp.bytes_per_iteration
        bwd = [[None] * L for _ in range(N)]
        for w in range(N):
            h = workers[w]
            last = prev_last[w]
            for li in range(L):
                deps = ([last] if last is not None else []) \
                    + params_ready[w][li]
                if li == 0 and k in gates:
                    deps.append(gates[k])
                last = plan.add('compute', h, jid, k, deps=deps,
                                dur=fwd_ms[li] * spec.compute_scale
                                * factor[k, w],
                                label=fwd_label[li], worker=w,
                                not_before=arrival if k == 0 else 0.0)
            for li in range(L - 1, -1, -1):
                last = plan.add('compute', h, jid, k, deps=[last],
                                dur=bwd_ms[li] * spec.compute_scale
                                * factor[k, w],
                                label=bwd_label[li], worker=w)
                bwd[w][li] = last
            prev_last[w] = last
        received = [[] for _ in range(N)]       # per worker, this iteration
        ready = [[[] for _ in range(L)] for _ in range(N)]
        if spec.pattern == 'ps':
            _ps_sends(plan, spec, jid, k, cf, workers, servers, bwd, prophet,
                      ps, received, ready)
        else:
            _ring_sends(plan, spec, jid, k, cf, workers, bwd, prophet, ring,
                        received, ready)
        for w in range(N):
            plan.add('mark', workers[w], jid, k,
                     deps=[bwd[w][0]] + received[w], label='iteration',
                     worker=w, loss=round(jp.loss_at(k + 1), 6))
        params_ready = ready
    return jp


def _ps_setup(plan, spec, jid, jp, model, lanes, partitions):
    """A parameter-server job's connections (``lanes`` per worker/shard
    pair and direction) and the pieces its tensors are sent in, each
    with its lane (urgency class) and labels, made once for every
    iteration."""
    from ..policies import urgency_class
    workers, servers = jp.workers, jp.servers
    N, S = len(workers), len(servers)
    tensors = model.tensors()                  # (layer, Tensor)
    K = jp.lanes = max(1, int(lanes))
    push_conn = {(w, s, c): plan.conn(workers[w], servers[s], jid)
                 for w in range(N) for s in range(S) for c in range(K)}
    pull_conn = {(s, w, c): plan.conn(servers[s], workers[w], jid)
                 for s in range(S) for w in range(N) for c in range(K)}
    jp.bytes_per_iteration = 2 * N * model.bytes
    slice_b = spec.slice_mb * 2 ** 20 if spec.slice_mb else None
    if slice_b:                    # counted before any is made
        n = sum(slices(t.bytes, slice_b, partitions) for _, t in tensors)
        if n > MAX_SLICES:
            raise ConfigError(
                'job %s: slice_mb %g cuts %s into %d sends an '
                'iteration; at most %d (a larger slice_mb)'
                % (jid, spec.slice_mb, spec.model, n, MAX_SLICES))
    pieces = ps_pieces(tensors, model.bytes, slice_b, partitions)
    piece_class = urgency_class(
        [ti / len(tensors) if spec.lanes_by == 'position' else u
         for ti, _, _, _, u in pieces], K).tolist() if pieces else []
    piece_label = [('push ' + name, 'pull ' + name)
                   for _, _, name, _, _ in pieces]
    return {'push_conn': push_conn, 'pull_conn': pull_conn,
            'pieces': pieces, 'piece_class': piece_class,
            'piece_label': piece_label, 'tensors': len(tensors)}


def _ps_sends(plan, spec, jid, k, cf, workers, servers, bwd, prophet, ps,
              received, ready):
    """Iteration k of a parameter-server job: each piece pushed by every
    worker once its layer's backward pass is done, and pulled back by
    every worker once all pushes of it arrived."""
    N, S = len(workers), len(servers)
    n_tensors = ps['tensors']
    prio_order = spec.send_order == 'priority'
    nth = {}                          # tensor -> slices so far
    for (ti, li, name, size, u), c, (push_label, pull_label) in \
            zip(ps['pieces'], ps['piece_class'], ps['piece_label']):
        s = ti % S
        part = nth[ti] = nth.get(ti, -1) + 1
        pushes = [plan.add('send', workers[w], jid, k,
                           deps=[bwd[w][li]], dst=servers[s],
                           bytes=size, coflow=cf,
                           conn=ps['push_conn'][(w, s, c)],
                           label=push_label, prio=li,
                           worker=w, urgency=u,
                           position=ti / n_tensors,
                           order=u if prio_order else None,
                           prophet=_gradient(plan, bwd[w], prophet,
                                             ti, part))
                  for w in range(N)]
        for w in range(N):
            pull = plan.add('send', servers[s], jid, k, deps=pushes,
                            dst=workers[w], bytes=size, coflow=cf,
                            conn=ps['pull_conn'][(s, w, c)],
                            label=pull_label, prio=li,
                            worker=w, urgency=u,
                            position=ti / n_tensors,
                            order=u if prio_order else None)
            ready[w][li].append(pull)
            received[w].append(pull)


def _ring_setup(plan, spec, jid, jp, model):
    """A ring all-reduce job's connections (each worker to the next) and
    its gradient buckets in backward order, each with the urgency and
    position of the front-most layer it carries."""
    workers = jp.workers
    N = len(workers)
    layers = model.layers
    tensors = model.tensors()                  # (layer, Tensor)
    start = urgencies_from(tensors, model.bytes)
    ring_conn = [plan.conn(workers[w], workers[(w + 1) % N], jid)
                 for w in range(N)]
    buckets, cur, size = [], [], 0
    cap = spec.bucket_mb * 2 ** 20
    for li in range(len(layers) - 1, -1, -1):
        for t in layers[li].tensors:
            cur.append(li)
            size += t.bytes
        if cur and size >= cap:
            buckets.append((min(cur), sorted(set(cur)), size))
            cur, size = [], 0
    if cur:
        buckets.append((min(cur), sorted(set(cur)), size))
    jp.buckets = tuple(b[2] for b in buckets)
    layer_start, layer_pos = {}, {}
    for ti, (li, _) in enumerate(tensors):
        layer_start.setdefault(li, float(start[ti]))
        layer_pos.setdefault(li, ti / len(tensors))
    steps = 2 * (N - 1)
    jp.bytes_per_iteration = sum(steps * N * math.ceil(b / N)
                                 for b in jp.buckets)
    return {'conn': ring_conn, 'buckets': buckets,
            'layer_start': layer_start, 'layer_pos': layer_pos}


def _ring_sends(plan, spec, jid, k, cf, workers, bwd, prophet, ring,
                received, ready):
    """Iteration k of a ring all-reduce job: each bucket's 2(N-1) steps
    around the ring, step s of a worker after step s-1 of the one before
    it arrived."""
    N = len(workers)
    steps = 2 * (N - 1)
    prio_order = spec.send_order == 'priority'
    layer_start, layer_pos = ring['layer_start'], ring['layer_pos']
    for bi, (first, blayers, size) in enumerate(ring['buckets']):
        chunk = math.ceil(size / N)
        prev = [None] * N
        for st in range(steps):
            cur = []
            label = 'bucket%d step%d' % (bi, st)
            for w in range(N):
                dep = bwd[w][first] if st == 0 else prev[(w - 1) % N]
                cur.append(plan.add(
                    'send', workers[w], jid, k, deps=[dep],
                    dst=workers[(w + 1) % N], bytes=chunk, coflow=cf,
                    conn=ring['conn'][w], label=label,
                    prio=first, worker=(w + 1) % N,
                    urgency=layer_start[first],
                    position=layer_pos[first],
                    order=layer_start[first] if prio_order else None,
                    prophet=_gradient(plan, bwd[w], prophet, bi)
                    if st == 0 else None))
            prev = cur
        for w in range(N):
            got = prev[(w - 1) % N]     # last all-gather step at w
            received[w].append(got)
            for li in blayers:
                ready[w][li].append(got)


def _prophet_knobs(spec):
    """A job's host sender knobs if its gradient sends go through one
    (host.prophet.sender_for): Prophet's ({'profile_iterations',
    'credit_mb'}) or the ByteScheduler-like one's ({'mode':
    'bytescheduler', 'credit_mb'}), else None."""
    if spec.send_order not in SENDERS:
        return None
    from ..host.prophet import CREDIT_MB, PROFILE_ITERATIONS
    own = dict(spec.prophet or ())
    if spec.send_order == 'bytescheduler':
        return {'mode': 'bytescheduler',
                'credit_mb': own.get('credit_mb', CREDIT_MB)}
    knobs = {'profile_iterations': PROFILE_ITERATIONS,
             'credit_mb': CREDIT_MB}
    knobs.update(own)
    return knobs


def _gradient(plan, bwd, knobs, gradient, part=0):
    """A gradient send's ``prophet`` field: the knobs, its anchor, the
    last forward layer of its worker's iteration (its end is the start
    of the backward pass; ``bwd``: the worker's backward tasks by layer,
    the last layer's first), the gradient it is a partition of (a tensor
    or bucket index) and its partition number."""
    if knobs is None:
        return None
    return dict(knobs, anchor=plan.tasks[bwd[-1]].deps[0],
                gradient=gradient, part=part)


def _tuning(plan, base, model, arrival, tuning, hosts, free, rng, lanes=1,
            seed=0, partitions='equal'):
    configs, stages = tuning
    group = base.id
    losses = {}
    placed = {}
    import dataclasses
    for c in range(configs):
        jid = '%s.c%d' % (group, c)
        spec = base
        if isinstance(base.placement, tuple) and base.placement and \
                isinstance(base.placement[0], tuple):   # per configuration
            spec = dataclasses.replace(base, placement=base.placement[c])
        placed[jid] = placement.place(spec, placement.hosts_needed(base),
                                      hosts, free, rng)
        losses[jid] = default_loss(rng)
    alive = list(placed)
    ends, start = [], 0
    last_of = {}                              # job -> planned iterations
    survivors_of = []
    for si, (iters, keep) in enumerate(stages):
        end = start + iters
        ends.append(end)
        for j in alive:
            last_of[j] = end
        if keep is None:
            survivors = []
        else:
            n = max(1, math.ceil(keep * len(alive)))
            survivors = sorted(alive, key=lambda j: (
                1.0 / (losses[j][0] * end + losses[j][1]) + losses[j][2],
                j))[:n]
        survivors_of.append((tuple(alive), tuple(survivors)))
        alive = survivors
        start = end
    # the barrier of stage s is added after the marks of its last
    # iteration exist, so build jobs first with placeholder gates
    gate_ids = {}
    stage_tasks = []
    for si, end in enumerate(ends):
        b = plan.add('barrier', None, group, end - 1,
                     label='stage %d' % si)
        stage_tasks.append(b)
        if si + 1 < len(ends):
            gate_ids[end] = b
    for jid in placed:
        gates = {k: b for k, b in gate_ids.items() if k < last_of[jid]}
        _job(plan, base, jid, model, arrival, placed[jid], losses[jid],
             last_of[jid], group=group, gates=gates, lanes=lanes,
             stage_ends=ends, seed=seed, partitions=partitions)
    marks = {}
    for t in plan.tasks:
        if t.kind == 'mark' and t.job in placed:
            marks.setdefault((t.job, t.iter), []).append(t.id)
    for si, end in enumerate(ends):
        b = plan.tasks[stage_tasks[si]]
        jobs, survivors = survivors_of[si]
        for j in jobs:
            b.deps += marks[(j, end - 1)]
        plan.stages.append(StagePlan(
            '%s/s%d' % (group, si), group, si, jobs, survivors, b.id,
            stage_tasks[si - 1] if si else None))
