"""The scheduler's intake: what the agents tell the controller --
registrations (a host's connections, planned sends and jobs) and
progress (sends starting, transfers received, iterations marked,
bytes sent) -- kept in a Demand, with what changed since the last step
(coflows ended, connections whose rule may change, whether to decide
again) and the coflows' serials (their rules' cookies).

Pure: no sockets, no clock (time comes in as ``now``)."""
from .demand import Demand
from ..errors import NetschedError


class Intake:
    """The agents' registrations and reports, and what they changed
    since the scheduler's last step."""

    def __init__(self, g, net):
        self.g, self.net = g, net
        self.run = None
        # coflow serials (the cookies' low bits) start above this: a
        # restarted controller's switches hold the old ones' (adopt)
        self.serial_floor = 0
        # ... and wait while it is not known yet (agents back before the
        # switches: core.op_register), see number_held
        self.serials_held = False
        self.reset()

    def reset(self, demand=None):
        """A new run: nothing known of the previous one."""
        self.demand = demand if demand is not None \
            else Demand(self.g, self.net)
        self.ended = set()            # coflows ended since the last step
        self.touched = set()          # connections whose rule may change
        self.serial = {}              # coflow -> owner serial (cookie)
        self.dirty = False
        self.dirty_since = None
        self.dirty_reported = None
        self.recovering = False       # agents re-registered with progress
        self.unnumbered = []          # coflows begun while serials wait
        self.early_done = set()       # ... received before their sender did

    def admit(self, req):
        """A registration checked before anything is kept: (its progress
        as report events or None, a fresh Demand holding the host if it
        is for another run than this one's, else None)."""
        self.demand.check_host(req.get('host'))
        progress = self._progress(req)
        if str(req.get('run', '')) == self.run:
            return progress, None
        # checked into a view of its own first: a bad registration for a
        # new run used to forget the previous one all the same
        fresh = Demand(self.g, self.net)
        fresh.add_host(req['host'], req.get('conns', ()),
                       req.get('sends', ()), req.get('jobs'))
        return progress, fresh

    def add_host(self, req, progress):
        """A registration for this run: a host it does not know yet, or a
        first registration, is added; one it knows that brings its
        progress keeps what was known of it."""
        if progress is None or req['host'] not in self.demand.hosts:
            self.demand.add_host(req['host'], req.get('conns', ()),
                                 req.get('sends', ()), req.get('jobs'))

    def _progress(self, req):  # noqa: C901 (one branch per report field)
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

    def catch_up(self, host, events, now, finished):
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
                                            for i in early], now, finished)

    def report(self, host, events, now, finished):
        """Agent reports (start / recv / mark / progress); what they
        change is applied at the next step. ``finished(transfer, what)``:
        the scheduler's part in a transfer received (Demand.finish says
        ``what`` ended), True if the policy must be asked again."""
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
                if finished(t, d.finish(t)):
                    self.dirty = True
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

    def _check_event(self, host, ev):  # noqa: C901 (one check per field)
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
