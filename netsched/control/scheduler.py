"""The controller's scheduling core: what the agents report in, the
policy's decision and the OpenFlow rules and agent messages that apply
it out. Pure (FAUCET's shape): no sockets, no Ryu, no clock; time comes
in as ``now`` (seconds of the hosts' shared CLOCK_MONOTONIC).

What it learns, from the agents over the control channel (taken in by
netsched.control.intake, kept in netsched.control.demand):
  register  a host's connections (5-tuples) and its planned sends
            (transfer id, coflow, job, bytes in data-center units,
            connection): the demand the jobs will put on the network
  start     a transfer began (with the time it became ready)
  recv      a transfer's last byte arrived (reported by the receiver)
  mark      a worker finished an iteration (job progress)
  progress  bytes acknowledged so far per transfer in flight, every
            10 ms, for policies that read them (``progress``: Aalo)

What it decides, with the same policy code the simulator calls: a class
per coflow (ranks mapped by policies.stable_classes) and, where the
policy gives them, per-transfer rates (the fluid allocation with the
policy's rates reserved and the rest back-filled by class, as the
simulator computes it). It decides when flows start, when a coflow ends
(and at every transfer end for policies that decide per flow or give
rates), at the policy's recheck time, and at most once per
``decide_gap_s`` (2 ms), which grows to twice the measured cost of a
decision (the app reports it: ``note_cost``), so that the controller
spends at most about half its time deciding and the rest applying
(netsched.control.pacing).

How it applies a decision:
  - a rule per connection in the classification table of the
    connection's ingress switch that sets the DSCP of its class, owned
    by the cookie of the coflow it carries now (netsched.control.rules:
    only changes, deletes before adds; a finished coflow's rules go
    with one cookie delete);
  - the same classes to the agents that send in those coflows, so their
    own interface queues agree; rates to the agents that send the
    transfers (they keep to them with a token bucket).
"""
from .intake import Intake
from .outcome import Decided, Outcome
from .pacing import DECIDE_GAP_S, HOLD, DecisionClock, RatePacer  # noqa: F401
from .rules import Rule, RuleTable
from .. import fluid
from ..policies import asks_per_flow, coflow_class


class Scheduler:
    """Decides and applies: the agents' reports come in through its
    intake, its clock says when to ask the policy again, its pacer keeps
    the senders' rates, and its rule table the switches' rules.
    ``hold_starved`` and ``release_floor``: the experiment's measuring
    knobs ``scheduler.hold_starved`` and ``scheduler.floor_release`` (the
    fabric description's ``scheduler``; RatePacer.pace,
    policies.coflow_class)."""

    def __init__(self, g, queues, policy, scale=1.0,
                 decide_gap_s=DECIDE_GAP_S, net=None, class_map=None,
                 hold_starved=False, release_floor=False):
        self.g, self.queues, self.policy = g, queues, policy
        self.class_map = class_map       # policies.CLASS_MAPS, None: default
        # measuring knob: hold what strict priority starves at the
        # senders under policies that only order coflows too (pace)
        self.hold_starved = bool(hold_starved)
        self.release_floor = bool(release_floor)
        self.scale = float(scale)
        self.clock = DecisionClock(decide_gap_s)
        self.net = net if net is not None else fluid.Network(g)
        self.rules = RuleTable(queues)
        self.intake = Intake(g, self.net)
        # transfer reports wanted whatever the policy (a circuit scheduler
        # that reads the demand or the jobs)
        self.track_transfers = False
        self._reset()

    def _reset(self):
        self.clock.restart()
        self.pacer = RatePacer(self.scale)
        self.decided = Decided()
        self.lagging = set()          # connections kept above their class
        self.rules_due = False        # ... one of them may drop now
        self.decisions = 0

    @property
    def demand(self):
        """What the agents registered and reported (Demand)."""
        return self.intake.demand

    # --- what the agents tell -------------------------------------------
    def register(self, req, now=None):
        """A host's connections and planned sends. A registration for
        another run first forgets the previous run (and its rules). A
        re-registration carries the agent's progress (``started``,
        ``done``, ``marks``: core.py's request list), taken as the
        reports it stands for (Intake.catch_up); a host this scheduler
        still knows in this run (its channel broke, the controller did
        not restart) keeps what was known of it and takes only those."""
        progress, fresh = self.intake.admit(req)
        out = Outcome({}, {}, [])
        if fresh is not None:
            out.mods = self.rules.apply({}, set(self.intake.serial.values()))
            self.intake.run = str(req.get('run', ''))
            self._reset()
            self.intake.reset(fresh)
        else:
            self.intake.add_host(req, progress)
        self.intake.catch_up(req['host'], progress, now, self._finished)
        return out

    def send_classes_of(self, host):
        """The per-send classes decided for a host's sends so far."""
        sends = self.demand.sends
        return {str(i): k for i, k in self.decided.send_classes.items()
                if sends[i].host == host}

    def reports_wanted(self):
        """The events agents should report: a policy that decides nothing
        (static) needs no per-transfer reports, only job progress; they
        cost the emulated hosts CPU (5% of the parameter-server pattern's
        iteration time, measured)."""
        if getattr(self.policy, 'static', False) and \
                not self.track_transfers:
            return ['mark']
        if getattr(self.policy, 'progress', False):
            return ['start', 'recv', 'mark', 'progress']
        return ['start', 'recv', 'mark']

    def waits_for_class(self):
        """Whether a sender holds the first transfer of a coflow until the
        controller has classified it (policies that decide classes, not
        CASSINI's time shifts: with no class ever coming, every coflow
        waited the whole 100 ms): started in
        the top class and demoted a few milliseconds later, it would
        leave packets stranded in a starved queue for as long as the
        coflow waits, and their delay inflates the connection's
        retransmission timeout for long after (measured with ss: 13
        packets stranded for 0.8 s, the RTO at 1.7-2.4 s afterwards, and
        a later tail loss waited for it). On three ring jobs under FIFO,
        waiting took the emulator's per-coflow error against the
        simulator from 40% to 17-20% and TCP retransmissions per run
        from ~50 to 6-9 under SEBF, Varys and Sincronia."""
        return not self.policy.static and self.policy.classes

    def report(self, host, events, now=None):
        """Agent reports (start / recv / mark / progress); what they
        change is applied at the next step (Intake.report)."""
        self.intake.report(host, events, now, self._finished)

    def _finished(self, t, what):
        """A transfer was received (``what`` ended with it: Demand.finish):
        True if the policy must be asked again."""
        dirty = False
        if what is not None:
            self.pacer.rates.pop(t.id, None)
            self.decided.send_classes.pop(t.id, None)
            if what == 'coflow':
                self.intake.ended.add(t.coflow)
                dirty = True
            elif self.pacer.limited or asks_per_flow(self.policy):
                # a transfer ended inside a coflow that goes on: only
                # policies that decide per flow, or whose rates limit the
                # transfers (what it freed is back-filled), are asked again
                dirty = True
        if t.conn in self.lagging:
            self.intake.touched.add(t.conn)
            self.rules_due = True
        return dirty

    def number_held(self, now=None):
        """The coflow serials' floor is known (Intake.number_held)."""
        self.intake.number_held(now)

    def note_cost(self, seconds):
        """What the last decision cost (DecisionClock.note_cost)."""
        self.clock.note_cost(seconds)

    # --- deciding ---------------------------------------------------------
    def step(self, now):
        """Decide if something changed (or the policy's recheck time came)
        and the last decision is at least the clock's gap old; apply
        ended coflows. Returns an Outcome (possibly empty)."""
        ins = self.intake
        ended, ins.ended = sorted(ins.ended), set()
        for c in ended:
            self.decided.classes.pop(c, None)
            ins.demand.end_coflow(c)
            if c in ins.unnumbered:
                ins.unnumbered.remove(c)
        released = [ins.serial[c] for c in ended if c in ins.serial]
        due = self.clock.due(now, ins.dirty)
        out = Outcome({}, {}, [])
        if due:
            self._decide(now, out)
        if due or released or self.rules_due:   # rules change with these
            idle, ins.demand.idle = ins.demand.idle, set()
            out.mods = self.rules.apply(self._wanted(), released, idle)
            ins.touched = set()
            self.rules_due = False
        return out

    def _decide(self, now, out):
        ins = self.intake
        out.since = ins.dirty_since if ins.dirty else now
        out.reported = ins.dirty_reported if ins.dirty else None
        ins.dirty = False
        self.clock.decided(now)
        if not ins.demand.in_flight or getattr(self.policy, 'static', False):
            return
        snap, pend, tasks = ins.demand.snapshot(
            now, self.queues, getattr(self.policy, 'clairvoyant', False))
        d = self.policy.decide(snap)
        self.decisions += 1
        out.decided = True
        self.clock.recheck_at = d.recheck_at
        names = snap.coflow_id
        held, touched = self.decided, ins.touched
        cls = coflow_class(snap, d, [held.classes.get(c, -1) for c in names],
                           self.release_floor, self.class_map)
        if d.coflow_rank is not None:
            held.set_classes(now, names, cls, out, ins.demand, touched)
        if d.flow_class is not None or d.pending_class is not None:
            held.set_send_classes(now, tasks, d.flow_class, pend,
                                  d.pending_class, out, ins.demand, touched)
        if d.flow_rate is not None:
            self.pacer.pace(snap, tasks, cls, d.flow_rate, out, ins.demand)
        elif self.hold_starved and d.coflow_rank is not None:
            self.pacer.pace(snap, tasks, cls, None, out, ins.demand,
                            hold_only=True)
        if d.job_shift is not None:
            held.set_shifts(now, d.job_shift, out, ins.demand)

    def _wanted(self):
        """The rule each connection touched since the last step should
        have now (the others' rules stand): the one class of its sends
        where the policy classes sends, else the class of the coflow it
        carries -- or of an earlier coflow whose bytes it still has in
        flight, where that one's is higher.

        A connection's next coflow starts as soon as its sender has
        written the last one's last byte, while that coflow's tail is
        still in the sender's socket and in the network. Its rule then
        re-marks the tail, and a lower class strands it: under FIFO on
        three ring jobs, a job that starts its next iteration (last
        class) while its other worker's last step is in flight had that
        step wait behind two later coflows, 0.5 s (its coflow 1.47 s
        against the simulator's 0.88 s in both runs). The connection
        keeps the earlier class until the tail is received
        (``lagging``); a demotion then reorders nothing."""
        conns, d, held = self.demand.conns, self.demand, self.decided
        out = {}
        for key in self.intake.touched:
            c = conns[key]
            if c.coflow is None or c.coflow not in self.intake.serial:
                continue
            ks = held.conn_classes.get(key, ())
            if len(ks) > 1:
                continue
            k = next(iter(ks)) if ks else held.classes.get(c.coflow)
            if k is None:
                continue
            if not ks:
                tail = min((held.classes[f] for f in d.flying_coflows(key)
                            if f != c.coflow and f in held.classes),
                           default=k)
                if tail < k:
                    k = tail
                    self.lagging.add(key)
                else:
                    self.lagging.discard(key)
            out[key] = Rule(c.dpid, c.match, k, self.intake.serial[c.coflow])
        return out

    # --- what `netsched status` shows ---------------------------------------
    def status(self):
        """The scheduler's state for the `decision` request (what
        `netsched status` prints): classes and rates per coflow and
        connection, the rules per switch."""
        d, held, rates = self.demand, self.decided, self.pacer.rates
        flying = [d.sends[i] for i in sorted(d.in_flight)]
        cof = {}
        for t in flying:
            r = cof.setdefault(t.coflow, {
                'class': held.classes.get(t.coflow), 'in_flight': 0,
                'pending': len(d.unstarted.get(t.coflow, ())),
                'owner': self.intake.serial.get(t.coflow)})
            r['in_flight'] += 1
        conns = []
        for key, c in sorted(d.conns.items()):
            if c.coflow is None:
                continue
            live = [t for t in flying if t.conn == key]
            ks = held.conn_classes.get(key, ())
            conns.append({'host': key[0], 'id': key[1],
                          'match': dict(c.match), 'coflow': c.coflow,
                          'class': next(iter(ks)) if len(ks) == 1
                          else held.classes.get(c.coflow),
                          'send_classes': {str(t.id): held.send_classes[t.id]
                                           for t in live
                                           if t.id in held.send_classes},
                          'rates_Bps': {str(t.id): rates[t.id]
                                        for t in live if t.id in rates}})
        return {'policy': getattr(self.policy, 'name', None),
                'run': self.intake.run, 'hosts': sorted(d.hosts),
                'decisions': self.decisions,
                'jobs': {j: dict(v) for j, v in sorted(d.jobs.items())},
                'coflows': cof, 'connections': conns,
                'rules': {'%016x' % d: r
                          for d, r in self.rules.per_switch().items()}}

