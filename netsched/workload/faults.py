"""Faults as part of an experiment: links and switches that go down at a
time of the run and, optionally, come back, and host agents killed.

    faults:
      - link: [a0_0, c0]       # a link between two switches
        at: 0.5                # s after the run's start
        until: 1.5             # back up then (omitted: down to the end)
      - switch: a1_0           # every link of the switch at once
        at: 0.8
        until: 1.2
      - agent: h2_0_1          # the host's agent process is killed
        at: 1.0
      - controller: restart    # the controller process is killed at
        at: 2.0                # `at` and started again at `until`
        until: 2.5

Both backends take the same timeline: the simulator removes the links'
capacity and routes around them at once (fluid.Network.set_down); the
emulator takes the interfaces down, its controller sees the ports go
down and reroutes (ECMP next-hop sets skip the dead links) and restores
the routes when they come back. A fault must leave every host reachable
from every other (a job cut off from its peers could never finish), so a
host's own link and an edge switch cannot fail; the check says which
hosts a fault would cut off. Once the jobs are placed (taskgraph.build)
and the trace is read, every pair of hosts that traffic sends between
must also keep a route by the router's own rule, valley-free
(check_traffic): a fault set that leaves one without is refused, naming
the fault, the job or coflow and the two hosts; pairs no traffic uses
may lose theirs. An agent killed (a host's workload process
dying) fails every job with a task on that host, or a transfer to it,
with that reason; the other jobs run on. It does not come back. The
controller killed: the switches go on forwarding on the rules they hold
(fail mode secure) and nothing is decided until it is started again; the
restarted controller adopts the switches' rules and the agents register
again (control.core, host.agent.ControllerLink), and scheduling resumes.
The simulator holds the policy's last decision over the outage, new flows
in the top class as the emulator's agents send a coflow not yet
classified.
"""
import os
from dataclasses import dataclass

import networkx as nx

from .. import topology as topo
from ..errors import ConfigError

KINDS = ('link', 'switch', 'agent', 'controller')
# the latest time the simulator's clock holds (workload.bounds)
MAX_TIME_S = 1e8


@dataclass(frozen=True)
class Fault:
    kind: str                   # 'link', 'switch', 'agent', 'controller'
    target: str                 # link_id 'a-b', the switch's or host's
                                # name; 'controller'
    at_s: float
    until_s: float = None       # None: down to the end of the run
    links: frozenset = frozenset()   # link_ids that go down

    def to_dict(self):
        return {'kind': self.kind, 'target': self.target, 'at_s': self.at_s,
                'until_s': self.until_s, 'links': sorted(self.links)}


def parse(raw, g, where):
    """The faults of an experiment's ``faults:`` list (None: none),
    checked against the topology ``g``; errors name the entry and key."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise ConfigError('%s: faults: must be a non-empty list of faults '
                          '(link: [a, b] or switch: NAME, with at and '
                          'until), got %r' % (where, raw))
    out = []
    for i, d in enumerate(raw):
        w = '%s: faults[%d]' % (where, i)
        if not isinstance(d, dict):
            raise ConfigError('%s: must be a mapping (link: [a, b] or '
                              'switch: NAME, at, until), got %r' % (w, d))
        kinds = [k for k in KINDS if k in d]
        if len(kinds) != 1:
            raise ConfigError('%s: give exactly one of %s, got %s'
                              % (w, ', '.join(KINDS),
                                 ', '.join(kinds) or 'neither'))
        extra = sorted(set(d) - set(KINDS) - {'at', 'until'}, key=str)
        if extra:
            raise ConfigError('%s: unknown key %r (known: %s, at, until)'
                              % (w, extra[0], ', '.join(KINDS)))
        kind = kinds[0]
        if kind == 'link':
            target, links = _link(g, d['link'], w)
        elif kind == 'switch':
            target, links = _switch(g, d['switch'], w)
        elif kind == 'agent':
            target, links = _agent(g, d['agent'], w)
        else:
            if d['controller'] != 'restart':
                raise ConfigError("%s: controller: the one fault of the "
                                  "controller is 'restart' (killed at `at`, "
                                  "started again at `until`), got %r"
                                  % (w, d['controller']))
            target, links = 'controller', frozenset()
        at = _time(d, 'at', w, required=True)
        until = _time(d, 'until', w)
        if kind == 'controller' and until is None:
            raise ConfigError('%s: until: missing: when the controller is '
                              'started again' % w)
        if kind == 'agent' and until is not None:
            raise ConfigError('%s: until: a killed agent does not come back '
                              '(its jobs fail); drop until' % w)
        if until is not None and not until > at:
            raise ConfigError('%s: until: must be after at (%r), got %r'
                              % (w, at, until))
        out.append(Fault(kind, target, float(at),
                         None if until is None else float(until), links))
    _check_overlaps(out, where)
    _check_reachable(out, g, where)
    return tuple(out)


def _time(d, key, w, required=False):
    v = d.get(key)
    if v is None:
        if required:
            raise ConfigError('%s: missing key %r (s after the run starts)'
                              % (w, key))
        return None
    # no NaN, inf nor an int past float's range (OverflowError in float())
    if isinstance(v, bool) or not isinstance(v, (int, float)) \
            or v != v or abs(v) > 1e300 or v < 0:
        raise ConfigError('%s: %s: must be a number of seconds >= 0, got %r'
                          % (w, key, v))
    if v > MAX_TIME_S:               # past the simulator clock's range
        raise ConfigError('%s: %s: must be at most %g s, got %r'
                          % (w, key, MAX_TIME_S, v))
    return v


def _is_switch(g, n):
    return n in g and g.nodes[n]['role'] not in (topo.HOST, topo.OCS)


def _link(g, v, w):
    if not (isinstance(v, list) and len(v) == 2
            and all(isinstance(x, str) for x in v)):
        raise ConfigError('%s: link: must be a list of two switch names '
                          '[a, b], got %r' % (w, v))
    a, b = v
    for n in (a, b):
        if n not in g:
            raise ConfigError('%s: link: no node %r in the topology'
                              % (w, n))
        if not _is_switch(g, n):
            raise ConfigError('%s: link: %r is a %s; only links between '
                              'packet switches can fail (a host has one '
                              'link)' % (w, n, g.nodes[n]['role']))
    if not g.has_edge(a, b):
        raise ConfigError('%s: link: %s and %s are not linked (%s links '
                          'to %s)' % (w, a, b, a, ', '.join(
                              sorted(g[a], key=topo.natural))))
    lid = topo.link_id(a, b)
    return lid, frozenset([lid])


def _switch(g, v, w):
    if not isinstance(v, str) or v not in g:
        raise ConfigError('%s: switch: no switch %r in the topology '
                          '(switches: %s ...)'
                          % (w, v, ', '.join(topo.switches(g)[:4])))
    if not _is_switch(g, v):
        raise ConfigError('%s: switch: %r is a %s, not a packet switch'
                          % (w, v, g.nodes[v]['role']))
    return v, topo.switch_links(g, v)


def _agent(g, v, w):
    if not isinstance(v, str) or v not in g \
            or g.nodes[v]['role'] != topo.HOST:
        raise ConfigError('%s: agent: no host %r in the topology (hosts: '
                          '%s ...)' % (w, v, ', '.join(topo.hosts(g)[:4])))
    return v, frozenset()


def _check_overlaps(faults, where):
    for i, a in enumerate(faults):
        for j in range(i):
            b = faults[j]
            if a.kind == b.kind == 'controller' and _overlap(a, b):
                raise ConfigError('%s: faults[%d]: the controller is already '
                                  'down then (faults[%d])' % (where, i, j))
            if a.kind == b.kind == 'agent' and a.target == b.target:
                raise ConfigError('%s: faults[%d]: the agent on %s is killed '
                                  'twice (faults[%d])'
                                  % (where, i, a.target, j))
            if a.links & b.links and _overlap(a, b):
                raise ConfigError(
                    '%s: faults[%d]: %s %s is down while faults[%d] (%s %s) '
                    'already holds it down; give one fault per outage'
                    % (where, i, a.kind, a.target, j, b.kind, b.target))


def _overlap(a, b):
    end_a = float('inf') if a.until_s is None else a.until_s
    end_b = float('inf') if b.until_s is None else b.until_s
    return a.at_s < end_b and b.at_s < end_a


def _check_reachable(faults, g, where):
    """Every set of links down at once leaves the hosts connected."""
    hosts = topo.hosts(g)
    for i, f in enumerate(faults):
        if not f.links:
            continue
        down = down_at(faults, f.at_s)
        live = topo.without(g, down)
        comps = sorted((c & set(hosts) for c in
                        nx.connected_components(live)), key=len)
        cut = sorted(set().union(*comps[:-1]), key=topo.natural)
        if cut:
            raise ConfigError(
                '%s: faults[%d]: with %s %s down%s, %s could not reach the '
                'other hosts (a fault must leave every host reachable: fail '
                'links and switches above the edge)'
                % (where, i, f.kind, f.target,
                   ' (and the other faults of that moment)'
                   if len(down) > len(f.links) else '',
                   ', '.join(cut[:4]) + (' ...' if len(cut) > 4 else '')))


def check_traffic(faults, g, senders, where):
    """The hosts stay connected under every fault (checked as the file
    is read), but the router only takes valley-free paths
    (routing.reaches): every pair of hosts some traffic sends between
    must still have one at every moment of the faults, or that traffic
    would have no route while they last. ``senders``: (src, dst, who,
    key), ``who`` naming the job or coflow (the first given for a pair
    is named), ``key`` the key that moves it (None: none). A pair no traffic uses
    is not asked: a fault that strands it stops nothing. A job is
    checked against every moment, whenever it arrives: when its
    traffic ends is known only once it has run."""
    from .. import routing
    moments = [(i, f) for i, f in enumerate(faults) if f.links]
    if not moments:
        return
    pairs = {}
    for src, dst, who, key in senders:
        if src != dst:
            pairs.setdefault((src, dst), (who, key))
    # the links down only shrink from one fault's start to the next, and
    # losing links never adds a route: the starts are the moments to ask
    for i, f in moments:
        down = down_at(faults, f.at_s)
        live = topo.without(g, down)
        for (src, dst), (who, key) in pairs.items():
            if routing.reaches(live, src, dst):
                continue
            raise ConfigError(
                '%s: faults[%d]: with %s %s down%s, %s sends from %s to %s '
                'and the router has no route for it (it takes valley-free '
                'paths only, climbing then descending, and these hosts stay '
                'connected only through a valley); fail fewer links at once '
                '(faults[%d])%s'
                % (where, i, f.kind, f.target,
                   ' (and the other faults of that moment)'
                   if len(down) > len(f.links) else '', who, src, dst, i,
                   ' or place it on other hosts (%s)' % key if key else ''))


def plan_senders(exp, plan):
    """(src, dst, who, key) of every connection of a plan
    (workload.taskgraph.Plan): a job's connection names the job and its
    placement key in the file (``jobs[i]``, or ``tuning[i]`` for a
    configuration of a tuning group), a trace flow's its coflow."""
    keys = {}
    for i, j in enumerate(exp.jobs):
        keys[j.id] = 'jobs[%d].%s' % (
            i, 'candidates' if j.candidates else 'placement')
    for i, (base, _, _) in enumerate(exp.tuning):
        keys[base.id] = 'tuning[%d].placement' % i
    coflow = {t.conn: t.coflow for t in plan.tasks
              if t.kind == 'send' and t.job is None}
    for c in plan.conns:
        if c.job is None:
            yield c.src, c.dst, _coflow_name(exp, coflow.get(c.id)), None
            continue
        jp = plan.jobs.get(c.job)
        group = jp.group if jp is not None else None
        if group is not None:
            who = 'configuration %s of tuning group %s' % (c.job, group)
        else:
            who = 'job %s' % c.job
        yield c.src, c.dst, who, keys.get(group or c.job)


def trace_senders(exp, cofs, racks):
    """(src, dst, who, None) of a coflow trace's flows that cross the
    network (workload.trace.network_flows), in coflow order."""
    from . import trace
    for c in cofs:
        src, dst, _ = trace.network_flows(c, racks, exp.big_switch)
        who = _coflow_name(exp, c.id)
        for s, d in zip(src.tolist(), dst.tolist()):
            yield s, d, who, None


def _coflow_name(exp, cid):
    return 'coflow %s of trace %s' % (
        cid, os.path.basename(exp.trace.path) if exp.trace else '?')


def down_at(faults, t):
    """The link_ids down at time ``t`` (s)."""
    out = set()
    for f in faults:
        if f.at_s <= t and (f.until_s is None or t < f.until_s):
            out |= f.links
    return frozenset(out)


def timeline(faults):
    """[(t, 'down'|'up', fault)] in time order: when the set of links
    down changes (a fault's 'up' before another's 'down' at one time)."""
    ev = [(f.at_s, 1, 'down', i) for i, f in enumerate(faults)]
    ev += [(f.until_s, 0, 'up', i) for i, f in enumerate(faults)
           if f.until_s is not None]
    return [(t, what, faults[i]) for t, _, what, i in sorted(ev)]
