"""Which hosts each job runs on.

A ring or parameter-server job takes the hosts its placement lists, or
the first free ones, or a random draw of them; a collective job keeps
each tensor-parallel group under one leaf (or pod); a job with candidate
placements gets the one the flow policy (or a hybrid fabric's circuit
scheduler) picks, each candidate seen as one iteration of the job
there. A tuning group's configurations are placed one by one as jobs.

The task graph (workload.taskgraph) builds on this, not the other way
round: placement reads a plan's jobs, tasks and connections and records
its choices there (``placements``, ``leaf_of``) but builds no tasks; the
one-iteration plans ``choose`` compares are built by its caller.
"""
from .. import topology as topo
from ..errors import ConfigError


def hosts_needed(spec):
    """A ring or parameter-server job's hosts: its workers and, for ps,
    its shards."""
    return spec.workers + (spec.ps_shards if spec.pattern == 'ps' else 0)


def place(job, need, hosts, free, rng):
    """A job's ``need`` hosts: as its placement lists them, else the
    first free ones in order or, with ``placement: random``, a random
    draw of them (from ``rng``); taken from ``free``."""
    if isinstance(job.placement, tuple):
        taken = [h for h in job.placement if h not in free]
        if taken:
            raise ConfigError('job %s: placement host %s is already used by '
                              'another job' % (job.id, taken[0]))
        chosen = list(job.placement)
    else:
        pool = [h for h in hosts if h in free]
        if len(pool) < need:
            raise ConfigError('job %s: needs %d free hosts, %d are left'
                              % (job.id, need, len(pool)))
        if job.placement == 'random':
            chosen = [pool[i] for i in rng.choice(len(pool), need,
                                                  replace=False)]
        else:
            chosen = pool[:need]
    for h in chosen:
        free.discard(h)
    return chosen


def place_collective(spec, g, hosts, free, rng, plan,
                     where='experiment'):
    """A collective job's hosts: as listed, or packed or random with
    every tensor-parallel group inside one leaf (or pod, as
    ``tp_within`` says); a ConfigError explains a group that does not
    fit. Records each host's leaf switch in ``plan.leaf_of``."""
    where_file = where
    par = spec.collective
    for h in hosts:
        plan.leaf_of.setdefault(h, next(iter(g.neighbors(h))))
    if isinstance(spec.placement, tuple) or par.tp == 1 or \
            par.tp_within == 'any':
        return place(spec, spec.workers, hosts, free, rng)
    key = (lambda h: plan.leaf_of[h]) if par.tp_within == 'leaf' else \
        (lambda h: g.nodes[h].get('pod'))
    where = 'leaf' if par.tp_within == 'leaf' else 'pod'
    domains = {}
    for h in hosts:
        domains.setdefault(key(h), []).append(h)
    taken = set()
    chosen = []
    for gi in range(spec.workers // par.tp):
        room = [dom for dom, hs in domains.items()
                if sum(h in free and h not in taken for h in hs) >= par.tp]
        if not room:
            most = max(sum(h in free and h not in taken for h in hs)
                       for hs in domains.values())
            size = max(len(hs) for hs in domains.values())
            raise ConfigError(
                '%s: job %s: parallelism: tp: tensor-parallel group %d of %d '
                'hosts must be under one %s; the most free hosts any %s has '
                'is %d (a %s has %d hosts): use fewer jobs or a smaller tp, '
                'or parallelism: {tp_within: %s}'
                % (where_file, spec.id, gi, par.tp, where, where, most, where,
                   size, 'pod' if where == 'leaf' else 'any'))
        dom = room[int(rng.integers(len(room)))] \
            if spec.placement == 'random' else room[0]
        group = [h for h in domains[dom] if h in free and h not in taken]
        group = group[:par.tp]
        taken.update(group)
        chosen += group
    for h in chosen:
        free.discard(h)
    return chosen


def placer(policy, exp):
    """Who picks among a job's candidate placements: the flow policy
    if it places (CASSINI), else a hybrid fabric's circuit scheduler if
    it places (OSDL), else the flow policy (which takes the first)."""
    from ..policies import Policy
    if type(policy).place is not Policy.place or exp.circuits is None:
        return policy
    from .. import circuits
    sched = circuits.make(*exp.circuits)
    if type(sched).place is circuits.CircuitScheduler.place:
        return policy
    return CircuitPlacer(sched, exp.graph())


class CircuitPlacer:
    """A circuit scheduler's place() in a flow policy's shape: jobs as
    JobTraffic (bytes one iteration sends between ToRs) on the fabric's
    static snapshot."""

    def __init__(self, sched, g):
        import numpy as np
        from .. import circuits
        self.name, self.sched = sched.name, sched
        f = topo.circuit_fabric(g)
        self.index = f.tor_index
        T = len(f.tors)
        self.snap = circuits.CircuitSnapshot(
            t=0.0, tors=f.tors, planes=len(f.planes),
            demand=np.zeros((T, T)), circuits=frozenset(), since={},
            circuit_bps=f.circuit_bps, packet_bps=np.array(f.packet_bps),
            reconfig_s=f.reconfig_s)

    def traffic(self, view, sends):
        from .. import circuits
        pairs = {}
        for t in sends:
            i, j = self.index[t.host], self.index[t.dst]
            if i != j:
                pairs[(i, j)] = pairs.get((i, j), 0.0) + float(t.bytes)
        return circuits.JobTraffic(view.id, view.arrival, pairs,
                                   view.iterations)

    def place(self, placed, candidates, capacity_bps):
        return self.sched.place(
            {j: self.traffic(v, s) for j, (v, s) in placed.items()},
            [self.traffic(v, s) for v, s in candidates], self.snap)


def choose(plan, policy, spec, free, net, trial):
    """The candidate placement the policy picks (Policy.place, or a
    circuit scheduler's, see placer) for a job, given the jobs placed
    before it in the experiment (all taken as present), among the
    candidates whose hosts are still free. Each candidate is seen as the
    job's profile and per-link load of one iteration there (a
    one-iteration plan of the job on those hosts, with the connections'
    real source ports, so ECMP paths are the run's: ``trial(hosts)``
    builds it). The choice is recorded in ``plan.placements``."""
    open_ = [c for c in spec.candidates if all(h in free for h in c)]
    if not open_:
        raise ConfigError('job %s: every candidate placement uses a host '
                          'another job took' % spec.id)
    circuit = isinstance(policy, CircuitPlacer)
    placed = {j: _seen(plan, j, net, circuit) for j in plan.jobs}
    views = [_seen(trial(list(hosts)), spec.id, net, circuit)
             for hosts in open_]
    i = int(policy.place(placed, views, net.capacity))
    if not 0 <= i < len(open_):
        raise ConfigError('job %s: policy %s chose candidate %r of %d'
                          % (spec.id, policy.name, i, len(open_)))
    plan.placements[spec.id] = {
        'candidates': [list(c) for c in spec.candidates],
        'chosen': spec.candidates.index(open_[i]), 'by': policy.name}
    for h in open_[i]:
        free.discard(h)
    return list(open_[i])


def _seen(plan, jid, net, with_sends):
    v = job_view(plan, jid, net)
    if not with_sends:
        return v
    return v, [t for t in plan.tasks
               if t.kind == 'send' and t.job == jid and t.iter == 0]


def job_view(plan, jid, net):
    """A job of a plan as a policy sees it when it arrives (JobView):
    its profile and the bytes its first iteration puts on each link
    (the paths of its connections in ``net``, a fluid.Network)."""
    from ..policies import JobView
    jp = plan.jobs[jid]
    sends = [t for t in plan.tasks
             if t.kind == 'send' and t.job == jid and t.iter == 0]
    paths = [net.path_id(t.host, t.dst, plan.conns[t.conn].sport,
                         plan.conns[t.conn].dport) for t in sends]
    return JobView(jid, jp.arrival_s, jp.iterations,
                   bytes_per_iteration=float(jp.bytes_per_iteration),
                   iteration_load=net.link_bytes(paths,
                                                 [t.bytes for t in sends]),
                   group=jp.group, stage_ends=tuple(jp.stage_ends),
                   compute_s=jp.compute_s, first_send_s=jp.first_send_s,
                   pattern=jp.pattern)
