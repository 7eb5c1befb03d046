"""The controller's scheduling core: what the agents report in, the
policy's decision and the OpenFlow rules and agent messages that apply
it out. Pure (FAUCET's shape): no sockets, no Ryu, no clock; time comes
in as ``now`` (seconds of the hosts' shared CLOCK_MONOTONIC).

What it learns, from the agents over the control channel (kept in
netsched.control.demand):
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
spends at most about half its time deciding and the rest applying.

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
from dataclasses import dataclass

import numpy as np

from .demand import Demand
from .rules import Rule, RuleTable
from .. import fluid
from ..errors import NetschedError
from ..policies import asks_per_flow, coflow_class

DECIDE_GAP_S = 0.002          # at most one decision per 2 ms
HOLD = -1                     # a transfer's "rate" while its sender holds it
COST_FACTOR = 2.0             # ... or per twice what a decision costs
COST_SMOOTHING = 0.2          # weight of the newest cost in the average


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


class Scheduler:
    """``hold_starved`` and ``release_floor``: the experiment's measuring
    knobs ``scheduler.hold_starved`` and ``scheduler.floor_release`` (the
    fabric description's ``scheduler``; _pace, policies.coflow_class)."""

    def __init__(self, g, queues, policy, scale=1.0,
                 decide_gap_s=DECIDE_GAP_S, net=None, class_map=None,
                 hold_starved=False, release_floor=False):
        self.g, self.queues, self.policy = g, queues, policy
        self.class_map = class_map       # policies.CLASS_MAPS, None: default
        # measuring knob: hold what strict priority starves at the
        # senders under policies that only order coflows too (_pace)
        self.hold_starved = bool(hold_starved)
        self.release_floor = bool(release_floor)
        self.scale = float(scale)
        self.min_gap_s = self.decide_gap_s = decide_gap_s
        self.cost_s = 0.0
        self.net = net if net is not None else fluid.Network(g)
        self.rules = RuleTable(queues)
        self.run = None
        # coflow serials (the cookies' low bits) start above this: a
        # restarted controller's switches hold the old ones' (core._adopt)
        self.serial_floor = 0
        # ... and wait while it is not known yet (agents back before the
        # switches: core.ControllerCore._op_register), see number_held
        self.serials_held = False
        # transfer reports wanted whatever the policy (a circuit scheduler
        # that reads the demand or the jobs)
        self.track_transfers = False
        self._reset()

    def _reset(self):
        self.demand = Demand(self.g, self.net)
        self.ended = set()            # coflows ended since the last step
        self.touched = set()          # connections whose rule may change
        self.classes = {}             # coflow -> class (ranked policies)
        self.send_classes = {}        # send -> class (per-send policies)
        self.conn_classes = {}        # connection -> its sends' classes
        self.rates = {}               # send -> emulated bytes/s
        self.shifts = {}              # job -> (shift, period, tol, max wait)
        self.serial = {}              # coflow -> owner serial (cookie)
        self.rate_limited = False
        self.lagging = set()          # connections kept above their class
        self.rules_due = False        # ... one of them may drop now
        self.dirty = False
        self.dirty_since = None
        self.dirty_reported = None
        self.recheck_at = None
        self.last_decision = None
        self.decisions = 0
        self.recovering = False       # agents re-registered with progress
        self.unnumbered = []          # coflows begun while serials wait
        self.early_done = set()       # ... received before their sender did

    # --- what the agents tell -------------------------------------------
    def register(self, req, now=None):
        """A host's connections and planned sends. A registration for
        another run first forgets the previous run (and its rules). A
        re-registration carries the agent's progress (``started``,
        ``done``, ``marks``: core.py's request list), taken as the
        reports it stands for (_catch_up); a host this scheduler still
        knows in this run (its channel broke, the controller did not
        restart) keeps what was known of it and takes only those."""
        self.demand.check_host(req.get('host'))
        progress = self._progress(req)    # checked before anything is kept
        out = Outcome({}, {}, [])
        run = str(req.get('run', ''))
        if run != self.run:
            # checked into a view of its own first: a bad registration
            # for a new run used to forget the previous one all the same
            fresh = Demand(self.g, self.net)
            fresh.add_host(req['host'], req.get('conns', ()),
                           req.get('sends', ()), req.get('jobs'))
            out.mods = self.rules.apply({}, set(self.serial.values()))
            self.run = run
            self._reset()
            self.demand = fresh
        elif progress is None or req['host'] not in self.demand.hosts:
            self.demand.add_host(req['host'], req.get('conns', ()),
                                 req.get('sends', ()), req.get('jobs'))
        self._catch_up(req['host'], progress, now)
        return out

    def _progress(self, req):
        """A re-registration's progress as report events (start, recv,
        mark), or None for a first registration; a malformed list is a
        NetschedError naming the host, the list and the item."""
        host = req.get('host')
        if not any(k in req for k in ('started', 'done', 'marks')):
            return None

        def items(what):
            x = req.get(what)
            if x is None:
                return []
            if not isinstance(x, list):
                raise NetschedError('register %s: %s must be a list, got %r'
                                    % (host, what, x))
            return x

        def bad(what, i, x, why):
            raise NetschedError('register %s: %s[%d] %s, got %r'
                                % (host, what, i, why, x))
        planned = set(self.demand.sends) \
            if str(req.get('run', '')) == self.run else set()
        for x in items('sends') if isinstance(req.get('sends'), list) \
                else ():
            if isinstance(x, dict) and isinstance(x.get('id'), int):
                planned.add(x['id'])
        events = []
        for i, x in enumerate(items('started')):
            if not isinstance(x, list) or len(x) != 2 or isinstance(
                    x[0], bool) or not isinstance(x[0], int):
                bad('started', i, x, 'must be [send id, ready time]')
            if x[0] not in planned:
                bad('started', i, x, 'is not a send it registered')
            if isinstance(x[1], bool) or not isinstance(
                    x[1], (int, float)) or not -1e300 < x[1] < 1e300:
                bad('started', i, x, 'ready must be a finite number')
            events.append({'ev': 'start', 'task': x[0], 'ready': x[1]})
        for i, x in enumerate(items('done')):
            if isinstance(x, bool) or not isinstance(x, int):
                bad('done', i, x, 'must be a transfer id')
            events.append({'ev': 'recv', 'task': x})
        for i, x in enumerate(items('marks')):
            if not isinstance(x, dict):
                bad('marks', i, x, 'must be a mark event')
            events.append(dict(x, ev='mark'))
        for ev in events:            # a start's send may be registered
            if ev['ev'] == 'mark':   # by this very message, a recv's
                self._check_event(host, ev)  # by its sender's, later
        return events

    def _catch_up(self, host, events, now):
        """A re-registration's progress, applied as reports (starts before
        receptions): what is known already changes nothing, and a
        transfer received before its sender re-registered waits in
        ``early_done`` until its send is registered. Transfers waiting
        there whose sends this registration brought are received now."""
        early = sorted(i for i in self.early_done if i in self.demand.sends)
        if events is None and not early:
            return
        if events is not None:
            self.recovering = True
        self.early_done.difference_update(early)
        self.report(host, (events or []) + [{'ev': 'recv', 'task': i}
                                            for i in early], now)

    def send_classes_of(self, host):
        """The per-send classes decided for a host's sends so far."""
        sends = self.demand.sends
        return {str(i): k for i, k in self.send_classes.items()
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
        """Agent reports (start / recv / mark); what they change is
        applied at the next step."""
        was = self.dirty
        d = self.demand
        for ev in events:             # all of them, before any is applied
            self._check_event(host, ev)
        for ev in events:
            kind = ev.get('ev')
            if kind == 'start':
                t = d.send(ev.get('task'))
                if d.start(t, ev.get('ready', ev.get('t'))):
                    self._number(t.coflow)
                    self.touched.add(t.conn)
                    self.dirty = True
            elif kind == 'recv':
                if ev.get('task') not in d.sends:   # recovering: its
                    self.early_done.add(ev['task'])  # sender re-registers
                    continue
                t = d.send(ev.get('task'))
                self._finished(t, d.finish(t))
                if t.conn in self.lagging:
                    self.touched.add(t.conn)
                    self.rules_due = True
            elif kind == 'mark':
                d.mark(ev['job'], ev['iter'], ev.get('t'), ev.get('loss'))
            elif kind == 'progress':
                # the policy reads bytes sent: ask it again (its recheck
                # time, predicted from rates, is only an estimate here)
                if d.progress(ev.get('t'), ev.get('sent') or {}):
                    self.dirty = True
            else:
                raise NetschedError('report from %s: unknown event %r'
                                    % (host, kind))
        if self.dirty and not was:
            self.dirty_since = now
            # the event's own time on its host (one clock for all): the
            # report's way to the core is a stage of a decision's delay
            ts = [ev['t'] for ev in events
                  if isinstance(ev.get('t'), (int, float))]
            self.dirty_reported = min(ts) if ts else None

    def _check_event(self, host, ev):
        """A NetschedError if a reported event is malformed (what
        report() would fail on half-way, or take and choke on later):
        the report is then dropped whole."""
        def bad(why):
            raise NetschedError('report from %s: malformed event (%s: %s)'
                                % (host, kind, why))

        def number(key, value, optional=True):
            if value is None and optional:
                return
            if isinstance(value, bool) or not isinstance(
                    value, (int, float)) or not -1e300 < value < 1e300:
                bad('%s must be a finite number, got %r' % (key, value))

        if not isinstance(ev, dict):
            raise NetschedError('report from %s: an event must be a '
                                'mapping, got %r' % (host, ev))
        kind = ev.get('ev')
        if kind in ('start', 'recv'):
            task = ev.get('task')
            if isinstance(task, bool) or not isinstance(task, int):
                bad('task must be a transfer id, got %r' % (task,))
            # registered, or refused: but after a restart a transfer is
            # received before its sender re-registered (report keeps it)
            if not (kind == 'recv' and self.recovering):
                self.demand.send(task)
            if kind == 'start':
                number('ready', ev.get('ready', ev.get('t')), False)
        elif kind == 'mark':
            if not isinstance(ev.get('job'), str):
                bad('job must be a job id, got %r' % (ev.get('job'),))
            it = ev.get('iter')
            if isinstance(it, bool) or not isinstance(it, int) or it < 0:
                bad('iter must be an iteration (>= 0), got %r' % (it,))
            number('t', ev.get('t'))
            number('loss', ev.get('loss'))
        elif kind == 'progress':
            number('t', ev.get('t'))
            sent = ev.get('sent') or {}
            if not isinstance(sent, dict):
                bad('sent must map transfer ids to bytes, got %r' % (sent,))
            for k, b in sent.items():
                if not str(k).isdigit() or not str(k).isascii():
                    bad('sent: %r is not a transfer id' % (k,))
                number('sent: %s' % k, b, False)
        else:
            raise NetschedError('report from %s: unknown event %r'
                                % (host, kind))

    def _finished(self, t, what):
        if what is None:
            return
        self.rates.pop(t.id, None)
        self.send_classes.pop(t.id, None)
        if what == 'coflow':
            self.ended.add(t.coflow)
            self.dirty = True
        elif self.rate_limited or asks_per_flow(self.policy):
            # a transfer ended inside a coflow that goes on: only
            # policies that decide per flow, or whose rates limit the
            # transfers (what it freed is back-filled), are asked again
            self.dirty = True

    def _number(self, coflow):
        """A coflow that began gets its serial (its rules' cookie), above
        the floor -- or waits for it (``serials_held``)."""
        if coflow in self.serial or coflow in self.unnumbered:
            return
        if self.serials_held:
            self.unnumbered.append(coflow)
        else:
            self.serial[coflow] = self.serial_floor + len(self.serial) + 1

    def number_held(self, now=None):
        """The floor is known (every ingress switch is back, or the wait
        ended): the coflows that began meanwhile get their serials, in
        the order they began, and their rules at the next step's
        decision. Until then they had none: their packets were classed
        by their senders' marks alone."""
        self.serials_held = False
        waiting, self.unnumbered = self.unnumbered, []
        for c in waiting:
            self._number(c)
            self.touched |= self.demand.carrying.get(c, set())
        if waiting and not self.dirty:
            self.dirty, self.dirty_since = True, now

    def note_cost(self, seconds):
        """What the last decision cost (measured by the caller): the gap
        between decisions follows a smoothed multiple of it."""
        self.cost_s += COST_SMOOTHING * (seconds - self.cost_s)
        self.decide_gap_s = max(self.min_gap_s, COST_FACTOR * self.cost_s)

    # --- deciding ---------------------------------------------------------
    def step(self, now):
        """Decide if something changed (or the policy's recheck time came)
        and the last decision is at least ``decide_gap_s`` old; apply
        ended coflows. Returns an Outcome (possibly empty)."""
        ended, self.ended = sorted(self.ended), set()
        for c in ended:
            self.classes.pop(c, None)
            self.demand.end_coflow(c)
            if c in self.unnumbered:
                self.unnumbered.remove(c)
        released = [self.serial[c] for c in ended if c in self.serial]
        due = self.dirty or (self.recheck_at is not None
                             and now >= self.recheck_at)
        if due and self.last_decision is not None and \
                now - self.last_decision < self.decide_gap_s:
            due = False
        out = Outcome({}, {}, [])
        if due:
            self._decide(now, out)
        if due or released or self.rules_due:   # rules change with these
            idle, self.demand.idle = self.demand.idle, set()
            out.mods = self.rules.apply(self._wanted(), released, idle)
            self.touched = set()
            self.rules_due = False
        return out

    def _decide(self, now, out):
        out.since = self.dirty_since if self.dirty else now
        out.reported = self.dirty_reported if self.dirty else None
        self.dirty = False
        self.recheck_at = None
        self.last_decision = now
        if not self.demand.in_flight or getattr(self.policy, 'static', False):
            return
        snap, pend, tasks = self.demand.snapshot(
            now, self.queues, getattr(self.policy, 'clairvoyant', False))
        d = self.policy.decide(snap)
        self.decisions += 1
        out.decided = True
        self.recheck_at = d.recheck_at
        names = snap.coflow_id
        cls = coflow_class(snap, d, [self.classes.get(c, -1) for c in names],
                           self.release_floor, self.class_map)
        if d.coflow_rank is not None:
            self._set_classes(now, names, cls, out)
        if d.flow_class is not None or d.pending_class is not None:
            self._set_send_classes(now, tasks, d.flow_class, pend,
                                   d.pending_class, out)
        if d.flow_rate is not None:
            self._pace(snap, tasks, cls, d.flow_rate, out)
        elif self.hold_starved and d.coflow_rank is not None:
            self._pace(snap, tasks, cls, None, out, hold_only=True)
        if d.job_shift is not None:
            self._set_shifts(now, d.job_shift, out)

    def _set_shifts(self, now, shifts, out):
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
            for h in self.demand.job_hosts.get(j, ()):
                per_host.setdefault(h, {})[j] = None if v is None \
                    else list(v)
        for h, m in sorted(per_host.items()):
            out.pushes.setdefault(h, []).append({'op': 'shifts',
                                                 'shifts': m})

    def _set_classes(self, now, names, cls, out):
        """Changed classes: to the agents that send in those coflows."""
        changed = {c: int(k) for c, k in zip(names, cls)
                   if self.classes.get(c) != int(k)}
        if not changed:
            return
        self.classes.update(changed)
        for c in changed:
            self.touched |= self.demand.carrying.get(c, set())
        out.log.append({'kind': 'classes', 't': now, 'classes': changed})
        per_host = {}
        for c, k in changed.items():
            for h in self.demand.senders.get(c, ()):
                per_host.setdefault(h, {})[c] = k
        for h, m in sorted(per_host.items()):
            out.pushes.setdefault(h, []).append({'op': 'classes',
                                                 'classes': m})

    def _set_send_classes(self, now, tasks, fcls, pend, pcls, out):
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
        sends = self.demand.sends
        for i, k in changed.items():
            c = sends[i].conn
            ks = self.conn_classes.setdefault(c, set())
            ks.add(k)
            self.touched.add(c)
            if len(ks) > 1:                 # mixed: the hosts' tags rule
                self.demand.idle.add(c)
        out.log.append({'kind': 'send_classes', 't': now,
                        'classes': {str(i): k for i, k in changed.items()}})
        per_host = {}
        for i, k in sorted(changed.items()):
            per_host.setdefault(sends[i].host, {})[str(i)] = k
        for h, m in sorted(per_host.items()):
            out.pushes.setdefault(h, []).append({'op': 'classes',
                                                 'classes': {}, 'sends': m})

    def _pace(self, snap, tasks, cls, explicit, out, hold_only=False):
        """For policies that give per-flow rates (Varys' MADD): the fluid
        allocation of the transfers in flight, as the simulator computes
        it (the policy's rates reserved, the rest back-filled by class in
        strict priority), applied at the senders. Each transfer's rate is
        kept by its agent; one the allocation gives nothing is held (its
        sender writes nothing until it is given a rate, as Varys' daemons
        pause flows). Policies that only order coflows are left to the
        switches' classes: holding their starved transfers too was
        measured neutral on the emulator's error against the simulator
        (three ring jobs: SEBF 9.7% vs 11.3%, Sincronia 9.5% vs 11.8%,
        FIFO 19.6% vs 17.0% per coflow, without vs with), and the
        allocation at every decision doubled the controller's decision
        time with 10 jobs under SEBF. The measuring knob
        ``scheduler.hold_starved`` (docs/emulation.md)
        holds them all the same (``hold_only``: the rest go unlimited)."""
        # one flow per connection: the transfer its sender writes. The
        # others in flight on it are written whole and only drain; as
        # flows of their own they took shares of the link that the
        # writer was then paced below (six in flight: a sixth each)
        head = np.array([self.demand.writing(t) for t in tasks], bool)
        rate = np.zeros(len(tasks))
        if head.any():
            rate[head], _ = fluid.allocate(
                snap.path_links, snap.flow_path[head],
                np.asarray(cls)[snap.flow_coflow][head], snap.link_capacity,
                None if explicit is None else np.asarray(explicit)[head])
        per_host, logged = {}, {}
        for t, r, h in zip(tasks, rate.tolist(), head.tolist()):
            if not h:
                continue
            bps = r / self.scale / 8.0 if r > 0 else HOLD
            if hold_only and bps != HOLD:
                bps = 0                  # unlimited: its class decides
            old = self.rates.get(t.id, 0)
            if bps <= 0 or old <= 0:
                changed = bps != old
            else:
                changed = abs(bps - old) > 0.01 * old
            if changed:
                self.rates[t.id] = bps
                per_host.setdefault(t.host, {})[str(t.id)] = round(bps)
                logged[str(t.id)] = HOLD if bps == HOLD else round(r)
        # what a transfer's end frees must be given out again at once
        self.rate_limited = True
        for h, rates in sorted(per_host.items()):
            out.pushes.setdefault(h, []).append({'op': 'rates',
                                                 'rates': rates})
        if logged:
            out.log.append({'kind': 'rates', 't': snap.t, 'rates': logged})

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
        conns, d = self.demand.conns, self.demand
        out = {}
        for key in self.touched:
            c = conns[key]
            if c.coflow is None or c.coflow not in self.serial:
                continue
            ks = self.conn_classes.get(key, ())
            if len(ks) > 1:
                continue
            k = next(iter(ks)) if ks else self.classes.get(c.coflow)
            if k is None:
                continue
            if not ks:
                tail = min((self.classes[f] for f in d.flying_coflows(key)
                            if f != c.coflow and f in self.classes),
                           default=k)
                if tail < k:
                    k = tail
                    self.lagging.add(key)
                else:
                    self.lagging.discard(key)
            out[key] = Rule(c.dpid, c.match, k, self.serial[c.coflow])
        return out

    # --- what `netsched status` shows ---------------------------------------
    def status(self):
        """The scheduler's state for the `decision` request (what
        `netsched status` prints): classes and rates per coflow and
        connection, the rules per switch."""
        d = self.demand
        flying = [d.sends[i] for i in sorted(d.in_flight)]
        cof = {}
        for t in flying:
            r = cof.setdefault(t.coflow, {
                'class': self.classes.get(t.coflow), 'in_flight': 0,
                'pending': len(d.unstarted.get(t.coflow, ())),
                'owner': self.serial.get(t.coflow)})
            r['in_flight'] += 1
        conns = []
        for key, c in sorted(d.conns.items()):
            if c.coflow is None:
                continue
            live = [t for t in flying if t.conn == key]
            ks = self.conn_classes.get(key, ())
            conns.append({'host': key[0], 'id': key[1],
                          'match': dict(c.match), 'coflow': c.coflow,
                          'class': next(iter(ks)) if len(ks) == 1
                          else self.classes.get(c.coflow),
                          'send_classes': {str(t.id): self.send_classes[t.id]
                                           for t in live
                                           if t.id in self.send_classes},
                          'rates_Bps': {str(t.id): self.rates[t.id]
                                        for t in live if t.id in self.rates}})
        return {'policy': getattr(self.policy, 'name', None),
                'run': self.run, 'hosts': sorted(d.hosts),
                'decisions': self.decisions,
                'jobs': {j: dict(v) for j, v in sorted(d.jobs.items())},
                'coflows': cof, 'connections': conns,
                'rules': {'%016x' % d: r
                          for d, r in self.rules.per_switch().items()}}

