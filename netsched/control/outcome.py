"""What one event produces in the controller's core (Outcome: FlowMods
per switch, messages per agent, decision-log records and a reply), and
what the scheduler's decisions in force gave (Decided: classes and time
shifts), so that each decision sends the agents only what changed."""
from dataclasses import dataclass

import numpy as np


@dataclass
class Outcome:
    """What one event produces: FlowMods per switch, messages per agent
    host, records for the decision log, and the reply to a request."""
    mods: dict
    pushes: dict
    log: list
    decided: bool = False
    reply: dict = None        # for a request on the channel
    since: float = None       # the first report the decision answers
    reported: float = None    # when its first event happened (agent clock)
    core_ms: float = 0.0      # time the core took (measured by the app)
    token: int = None         # a circuit step: confirm it (on_confirmed)
                              # once every switch answered its barrier

    @property
    def n_mods(self):
        """FlowMods to all switches together, for the decision log."""
        return sum(len(v) for v in self.mods.values())

    def push_each(self, per_host, op, key, **fields):
        """A message ``op`` to each host, carrying its share under
        ``key`` (hosts in order)."""
        for h, m in sorted(per_host.items()):
            self.pushes.setdefault(h, []).append(dict(fields, op=op,
                                                      **{key: m}))


class Decided:
    """The classes in force per coflow and per send (and per connection
    the classes of its sends), and the jobs' time shifts. ``demand``: the
    scheduler's (Demand); ``touched``: the connections whose rule may
    change, which a changed class adds to."""

    def __init__(self):
        self.classes = {}             # coflow -> class (ranked policies)
        self.send_classes = {}        # send -> class (per-send policies)
        self.conn_classes = {}        # connection -> its sends' classes
        self.shifts = {}              # job -> (shift, period, tol, max wait)

    def set_shifts(self, now, shifts, out, demand):
        """Changed time shifts (CASSINI): to the agents of the jobs'
        hosts, which start those jobs' iterations on the shifted grid
        (host.shifts.gate); a job no longer shifted is released
        (None)."""
        want = {j: tuple(float(x) for x in v) for j, v in shifts.items()}
        changed = {j: v for j, v in want.items() if self.shifts.get(j) != v}
        changed.update({j: None for j in self.shifts if j not in want})
        if not changed:
            return
        self.shifts = want
        out.log.append({'kind': 'shifts', 't': now, 'shifts': {
            j: None if v is None else list(v)
            for j, v in sorted(changed.items())}})
        per_host = {}
        for j, v in changed.items():
            for h in demand.job_hosts.get(j, ()):
                per_host.setdefault(h, {})[j] = None if v is None \
                    else list(v)
        out.push_each(per_host, 'shifts', 'shifts')

    def set_classes(self, now, names, cls, out, demand, touched):
        """Changed classes: to the agents that send in those coflows."""
        changed = {c: int(k) for c, k in zip(names, cls)
                   if self.classes.get(c) != int(k)}
        if not changed:
            return
        self.classes.update(changed)
        for c in changed:
            touched |= demand.carrying.get(c, set())
        out.log.append({'kind': 'classes', 't': now, 'classes': changed})
        per_host = {}
        for c, k in changed.items():
            for h in demand.senders.get(c, ()):
                per_host.setdefault(h, {})[c] = k
        out.push_each(per_host, 'classes', 'classes')

    def set_send_classes(self, now, tasks, fcls, pend, pcls, out, demand,
                         touched):
        """Per-send classes (a tensor's urgency): to the agents that send
        them, which tag every packet of the send with its DSCP; and, for
        a connection whose sends all have one class (Geryon's connection
        per urgency class), a rule at its ingress switch as for coflow
        classes. A connection that carries sends of several classes
        (TensorExpress' tags on a job's one connection) gets no rule: the
        switches queue its packets by the hosts' tags."""
        got = {}
        for ts, ks in ((tasks, fcls), (pend, pcls)):
            if ks is None:
                continue
            for t, k in zip(ts, np.asarray(ks, np.int64).tolist()):
                if k >= 0:
                    got[t.id] = k
        changed = {i: k for i, k in got.items()
                   if self.send_classes.get(i) != k}
        if not changed:
            return
        self.send_classes.update(changed)
        sends = demand.sends
        for i, k in changed.items():
            c = sends[i].conn
            ks = self.conn_classes.setdefault(c, set())
            ks.add(k)
            touched.add(c)
            if len(ks) > 1:                 # mixed: the hosts' tags rule
                demand.idle.add(c)
        out.log.append({'kind': 'send_classes', 't': now,
                        'classes': {str(i): k for i, k in changed.items()}})
        per_host = {}
        for i, k in sorted(changed.items()):
            per_host.setdefault(sends[i].host, {})[str(i)] = k
        out.push_each(per_host, 'classes', 'sends', classes={})
