"""The controller's logic, without Ryu: what to send to which switch and
to which agent.

The Ryu app (controllers/netsched_app.py) feeds events in -- a switch
connected, became ready, went away, a line arrived on the control
socket, time passed -- and sends what comes back: FlowMods per switch
(each batch closed by a barrier), a reply to the client, messages to
agents. Time enters as ``now`` (seconds, CLOCK_MONOTONIC, which the
agents in every emulated host share).

Requests (a reply each):
  {"op": "status"}                    switches connected / ready, rules
  {"op": "set_class", "match": {...}, "cls": c, "priority": 100}
  {"op": "clear_class", "id": n}      (no id: clear every manual rule)
  {"op": "rules"}                     the manual rules
  {"op": "decision"}                  the scheduler's state: per job,
                                      coflow and connection its class
                                      and rate, the rules per switch
  {"op": "register", "host": h, "run": r, "conns": [...], "sends": [...],
   "jobs": {job: {iterations, bytes_per_iteration, group, stage_ends,
           compute_s, first_send_s}}}
                                      an agent; its channel then carries
                                      the scheduler's messages to it; the
                                      reply says which events to report.
   Re-registering (its channel broke: the controller restarted, or the
   line did) the agent adds its progress so far:
     "started": [[send id, ready time], ...]  its sends begun
     "done": [transfer id, ...]               transfers received at it
     "marks": [{"job", "iter", "t", "loss"}, ...]  its iteration marks
   applied as the reports they stand for (a transfer received before
   its sender re-registered is kept until it does); a host the
   scheduler still knows keeps what it knew and takes only those
Reports (no reply), from registered agents:
  {"op": "report", "events": [{"ev": "start"|"recv"|"mark", ...}]}
Replies carry "ok": true plus fields, or "ok": false and "error".
"""
from . import adopt
from . import openflow as of
from .linkload import LinkLoad
from .circuits import CircuitControl
from .scheduler import Outcome, Scheduler
from .. import fluid, qos
from .. import topology as topo
from ..errors import NetschedError

# how long an adopted scheduler rule waits for its host's agent: an agent
# tries to register again for 30 s after losing the controller
# (host.agent.ControllerLink.GIVE_UP_S); past that it never will, and
# nothing else would remove the rule
ADOPT_GRACE_S = 35.0


class ControllerCore:
    """Everything the controller decides, without a framework: the app
    feeds events in and sends what comes back, so all of it is tested
    as plain data (the module docstring lists the requests)."""

    def __init__(self, g, queues, policy=None, scale=1.0, decision_log=None,
                 circuits=None, class_map=None, knobs=None):
        """``knobs``: the scheduler's measuring knobs ({'floor_release',
        'hold_starved'}; None: both off)."""
        self.g = g
        self.scale = scale
        self.decision_log = decision_log
        self.queues = qos.check_queues(queues)
        self.switch_of = topo.by_dpid(g)
        self.ingress = {self.dpid(s) for s in of.ingress_switches(g)}
        self.connected, self.ready = set(), set()
        self.rules = {}                 # id -> (match dict, cls, priority)
        self._next_id = 1
        net = fluid.Network(g)          # one path table for all
        self.class_map = class_map
        self.knobs = {k: bool((knobs or {}).get(k))
                      for k in ('floor_release', 'hold_starved')}
        self.scheduler = None if policy is None else Scheduler(
            g, self.queues, policy, scale, net=net, class_map=class_map,
            hold_starved=self.knobs['hold_starved'],
            release_floor=self.knobs['floor_release'])
        self.circuits = None if circuits is None else CircuitControl(
            g, circuits, net)
        if self.scheduler is not None and self.circuits is not None:
            self.scheduler.track_transfers = bool(circuits.needs)
        self.load = LinkLoad(g, net, scale)
        self.net = net
        self.ports_down = set()         # (switch, port) reported down
        self.links_down = frozenset()   # link_ids routed around now
        self.routes = {}                # dpid -> route rules it holds
        # adopting switches that already hold netsched's rules (on_connect)
        self.ports_known = set()        # switches whose ports were listed
        self.routes_pending = {}        # dpid -> when adopted, routes kept
        self.adopted = {}               # dpid -> {key: scheduler rule held}
        self.adopted_at = {}            # dpid -> when those were adopted
        self.adoptions = {}             # dpid -> 'adopt' record, for the app
        self._rule_ids = set()          # manual rule ids made or recovered
        self.serials_held_since = None  # agents back before the switches

    @classmethod
    def from_description(cls, desc):
        """The core for a fabric description (channel.fabric_description),
        the one input the app is started with."""
        from .. import circuits, policies
        p = desc.get('policy') or {}
        policy = None if not p.get('name') else policies.make(
            p['name'], p.get('params'), where='controller policy')
        c = desc.get('circuits') or {}
        sched = None if not c.get('name') else circuits.make(
            c['name'], c.get('params'), where='controller circuits')
        return cls(topo.from_dict(desc['topology']), desc['queues'], policy,
                   desc.get('scale', 1.0), desc.get('decision_log'), sched,
                   desc.get('class_map'), desc.get('scheduler'))

    def dpid(self, switch):
        """A switch's datapath id: the name it gives itself on the wire."""
        return self.g.nodes[switch]['dpid']

    # --- switch events -----------------------------------------------
    def knows(self, dpid):
        """Whether a datapath id is a switch of this fabric."""
        return dpid in self.switch_of

    def on_connect(self, dpid, table=None, now=0.0):
        """FlowMods for a switch that connected, or None if it is not
        part of this fabric. ``table``: the rules it holds (FlowMod
        values, from its flow-stats reply). A switch with none of
        netsched's gets the clean-slate program; one that has them (the
        controller restarted while the switch kept forwarding, failing
        secure) is adopted (_adopt): it gets only the difference, and
        ``adoptions[dpid]`` the record of it for the decision log."""
        sw = self.switch_of.get(dpid)
        if sw is None:
            return None
        self.connected.add(dpid)
        self.ready.discard(dpid)
        mods = of.switch_program(self.live(), sw) if self.circuits is None \
            else self.circuits.program(sw)
        if table is not None and adopt.holds_netsched(table):
            mods = self._adopt(dpid, sw, mods[1:], table, now)
        else:
            self.routes_pending.pop(dpid, None)     # a clean slate
            self.adopted.pop(dpid, None)
            self.routes[dpid] = mods[1:]
            if dpid in self.ingress:
                mods += [self._rule_mod(i) for i in sorted(self.rules)]
                if self.scheduler is not None:
                    mods += self.scheduler.rules.replay(dpid)
        if self.serials_held_since is not None and \
                self.ingress <= set(self.routes):
            self._number_held(now)
        return mods

    def _adopt(self, dpid, sw, routes, table, now):
        """A switch that holds netsched's rules keeps them: it is sent
        only the difference between what it holds and what the core
        wants, never a wipe and never a rule it has.
          Routes (routing and circuit owners): the routes around the
            links down now, once every switch-to-switch link's state is
            known from the port description of one of its ends; until
            then the routes held stay (a link that went down while the
            controller was away is known only from its switches' ports,
            and routing over it meanwhile would drop packets), and
            on_port_desc or settle reconciles them. ECMP rules of
            next-hop sets no longer used stay, as a reroute leaves them.
          Manual classification rules: recovered into ``rules`` (id from
            the cookie, match and class from the entry), new ids counted
            on above the largest; one this core made and cleared since
            goes.
          Scheduler rules: the scheduler's own (a switch that reconnected
            to this controller) are resent where missing; the others are
            kept until the scheduler's first decision after their hosts
            registered replaces them (step), and coflow serials start
            above the largest they carry, so no new cookie is an old
            one's.
        A rule of no netsched owner is foreign and left alone."""
        held = {}
        for m in table:
            held.setdefault(adopt.OWNERS.get(adopt.owner(m.cookie)),
                            []).append(adopt.canonical(m))
        mine = held.get('routing', []) + held.get('circuit', [])
        if self.circuits is not None or self._links_known():
            mods = adopt.diff(mine, routes, keep_unused_sets=True)
            self.routes[dpid] = adopt.after(mine, mods)
            self.routes_pending.pop(dpid, None)
        else:
            mods = []
            self.routes[dpid] = mine
            self.routes_pending[dpid] = now
        recovered = []
        for m in held.get('classify', ()):
            r = adopt.read_classify(m, self.queues)
            if r is not None and r[0] not in self._rule_ids:
                rid, match, cls, prio = r
                self._rule_ids.add(rid)
                self.rules[rid] = (match, cls, prio)
                self._next_id = max(self._next_id, rid + 1)
                recovered.append(rid)
        want = [self._rule_mod(i) for i in sorted(self.rules)] \
            if dpid in self.ingress else []
        mods += adopt.diff(held.get('classify', []), want)
        sched = held.get('schedule', [])
        want = [] if self.scheduler is None \
            else self.scheduler.rules.replay(dpid)
        have = {adopt.key(m): m for m in sched}
        keys = {adopt.key(m) for m in want}
        mods += [m for m in want if have.get(adopt.key(m)) != m]
        kept = {adopt.key(m): m for m in sched if adopt.key(m) not in keys}
        if self.scheduler is None:       # nothing would ever replace them
            mods += [adopt.delete(m) for m in kept.values()]
            kept = {}
        else:
            self.scheduler.serial_floor = max(
                [self.scheduler.serial_floor]
                + [adopt.serial(m.cookie) for m in sched])
        if kept:
            self.adopted[dpid] = kept
            self.adopted_at[dpid] = now
        else:
            self.adopted.pop(dpid, None)
        touched = {adopt.key(m) for m in mods}
        ours = [m for k, v in held.items() if k is not None for m in v]
        self.adoptions[dpid] = {
            'kind': 'adopt', 't': now, 'switch': sw,
            'adopted': sum(adopt.key(m) not in touched for m in ours),
            'sent': len(mods),
            'held': {str(k or 'foreign'): len(v)
                     for k, v in sorted(held.items(), key=lambda x: str(
                         x[0] or 'foreign'))},
            'recovered_rules': recovered, 'schedule_kept': len(kept),
            'routes_pending': dpid in self.routes_pending,
            'applied_ms': None}
        return mods

    def _links_known(self):
        """Whether every switch-to-switch link's state is known: one of
        its ends listed its ports (a link down is down at both)."""
        sw = lambda n: self.g.nodes[n]['role'] != topo.HOST  # noqa: E731
        return all(u in self.ports_known or v in self.ports_known
                   for u, v in self.g.edges if sw(u) and sw(v))

    def on_port_desc(self, dpid, ports, now):
        """A switch listed its ports ({port: up}, the reply to the port
        description request every connecting switch is sent): those down
        count as if each had sent a port status, with one reroute at
        most; and once every link's state is known, the routes adopted
        switches kept are reconciled (_adopt). An Outcome as for
        on_port_status."""
        sw = self.switch_of.get(dpid)
        out = Outcome({}, {}, [])
        if sw is None or self.circuits is not None:
            return out
        for port, up in sorted(ports.items()):
            try:
                topo.neighbor_on_port(self.g, sw, port)
            except KeyError:
                continue             # a port not of the topology (LOCAL)
            (self.ports_down.discard if up else self.ports_down.add)(
                (sw, port))
        self.ports_known.add(sw)
        self._reroute(out, now, {'link': None, 'up': None, 'switch': sw,
                                 'cause': 'port_desc'})
        if self.routes_pending and self._links_known():
            self._reconcile(out, now)
        out.mods = self._connected_only(out.mods)
        return out

    def settle(self, now, wait_s):
        """Routes adopted switches kept for ``wait_s`` without every
        link's state becoming known (a switch of the fabric never
        connected) are reconciled with what is known: an Outcome. So
        are coflow serials held as long (_op_register)."""
        out = Outcome({}, {}, [])
        if self.serials_held_since is not None and \
                now - self.serials_held_since >= wait_s:
            self._number_held(now)
        if self.routes_pending and \
                now - min(self.routes_pending.values()) >= wait_s:
            self._reconcile(out, now)
            out.mods = self._connected_only(out.mods)
        return out

    def _number_held(self, now):
        self.serials_held_since = None
        self.scheduler.number_held(now)

    def _reconcile(self, out, now):
        """The routes of the adopted switches that kept theirs: the
        difference to the routes around the links down now."""
        new, n = self.live(), 0
        for dpid in sorted(self.routes_pending):
            if dpid in self.connected:
                d = adopt.diff(self.routes[dpid],
                               of.route_rules(new, self.switch_of[dpid]),
                               keep_unused_sets=True)
                self.routes[dpid] = adopt.after(self.routes[dpid], d)
                if d:
                    out.mods.setdefault(dpid, []).extend(d)
                    n += len(d)
        self.routes_pending = {}
        out.log.append({'kind': 'adopt_routes', 't': now,
                        'links_down': sorted(self.links_down),
                        'flow_mods': n, 'applied_ms': None})

    def on_ready(self, dpid):
        """A switch confirmed its program by barrier: only then does it
        count toward all_ready, which netsched waits for."""
        if dpid in self.connected:
            self.ready.add(dpid)

    def on_port_stats(self, dpid, tx_bytes, now):
        """Transmitted-byte counters {port: bytes} of one switch."""
        if dpid in self.connected:
            self.load.update(dpid, tx_bytes, now)

    def live(self):
        """The topology less the links down now: what routes follow."""
        return topo.without(self.g, self.links_down)

    def on_port_status(self, dpid, port, up, now):
        """A switch port went down or came back (OFPT_PORT_STATUS): a link
        counts as down while either of its ends is, and when the set of
        links down changes every connected switch gets the difference
        between its old routes and its routes around them (next-hop sets
        skip the dead links; a set left with one port becomes a plain
        output). The Outcome's 'reroute' record has ``applied_ms`` None
        until the shell fills it in from the switches' barriers."""
        sw = self.switch_of.get(dpid)
        out = Outcome({}, {}, [])
        if sw is None or self.circuits is not None:
            return out               # a hybrid fabric routes by circuits
        try:
            peer = topo.neighbor_on_port(self.g, sw, port)
        except KeyError:
            return out               # a port not of the topology (LOCAL)
        (self.ports_down.discard if up else self.ports_down.add)((sw, port))
        self._reroute(out, now, {'link': topo.link_id(sw, peer),
                                 'up': bool(up)})
        out.mods = self._connected_only(out.mods)
        return out

    def _reroute(self, out, now, fields):
        """The links down from the ports down: if that set changed, every
        connected switch's route difference goes into ``out`` with a
        'reroute' record (``fields`` name the cause)."""
        down = frozenset(
            topo.link_id(u, topo.neighbor_on_port(self.g, u, p))
            for u, p in self.ports_down
            if self.g.nodes[topo.neighbor_on_port(self.g, u, p)]['role']
            != topo.HOST)
        if down == self.links_down:
            return
        self.links_down = down
        new = self.live()
        for s in topo.switches(self.g):
            dpid = self.dpid(s)
            if dpid not in self.connected:
                continue
            have, want = self.routes[dpid], of.route_rules(new, s)
            d = of.rule_diff(have, want, keep_unused_sets=True)
            if d:
                out.mods[dpid] = d
                gone = {(m.table, m.priority, m.match) for m in d
                        if m.command != 'add'}
                key = lambda m: (m.table, m.priority, m.match)  # noqa: E731
                held = {key(m): m for m in have if key(m) not in gone}
                held.update((key(m), m) for m in want)
                self.routes[dpid] = list(held.values())
        self.net.set_down(down)
        if self.scheduler is not None:
            self.scheduler.demand.reroute()
        out.log.append(dict({'kind': 'reroute', 't': now}, **fields,
                            links_down=sorted(down), flow_mods=out.n_mods,
                            applied_ms=None))

    def on_disconnect(self, dpid):
        """A switch went away: nothing goes to it until it reconnects and
        gets its whole program again."""
        self.connected.discard(dpid)
        self.ready.discard(dpid)

    # --- the control channel ---------------------------------------------
    def handle(self, req, now=0.0):
        """The Outcome of one line from the channel: its reply (None for
        a report), FlowMods per connected switch, messages to agents."""
        try:
            op = req.get('op') if isinstance(req, dict) else None
            fn = getattr(self, '_op_' + str(op), None)
            if fn is None:
                raise NetschedError('unknown op %r' % (op,))
            out = fn(req, now)
            if out.reply is not None:
                out.reply = dict(out.reply, ok=True)
        except NetschedError as e:
            out = Outcome({}, {}, [], reply={'ok': False, 'error': str(e)})
        out.mods = self._connected_only(out.mods)
        return out

    def note_cost(self, seconds):
        """The wall time the last deciding step took (see Scheduler)."""
        if self.scheduler is not None:
            self.scheduler.note_cost(seconds)

    def step(self, now):
        """Time passed: the scheduler decides if something changed, and
        on a hybrid fabric the circuit scheduler (its steps' FlowMods
        carry a token: confirm them with on_confirmed)."""
        out = Outcome({}, {}, []) if self.scheduler is None \
            else self.scheduler.step(now)
        if self.adopted and out.decided:
            self._replace_adopted(out)
        if self.adopted:
            self._expire_adopted(out, now)
        if self.circuits is not None and self.circuits_ready():
            self._add_circuits(out, self.circuits.step(now, self._demand()))
        out.mods = self._connected_only(out.mods)
        return out

    def _replace_adopted(self, out):
        """The scheduler decided: the scheduler rules adopted from the
        switches (_adopt) whose source host has registered since are
        replaced by the decision's, or go where it has none for their
        connection (with one deleted, the host's own DSCP marks class
        its packets, as for any connection without a rule)."""
        hosts = self.scheduler.demand.hosts
        by_ip = self.scheduler.demand.by_ip
        for dpid in sorted(self.adopted):
            kept = self.adopted[dpid]
            new = {adopt.key(m) for m in out.mods.get(dpid, ())
                   if m.command == 'add'}
            gone = [k for k, m in kept.items()
                    if by_ip.get(dict(m.match).get('ipv4_src')) in hosts]
            dels = [adopt.delete(kept.pop(k)) for k in gone if k not in new]
            for k in gone:
                kept.pop(k, None)
            if dels:
                out.mods.setdefault(dpid, []).extend(dels)
            if not kept:
                del self.adopted[dpid]

    def _expire_adopted(self, out, now):
        """The scheduler rules adopted ADOPT_GRACE_S ago or more whose
        hosts never registered go (their agents died or gave up while the
        controller was away): deleted, with an ``adopt_expired`` record."""
        for dpid in sorted(self.adopted):
            if now - self.adopted_at[dpid] < ADOPT_GRACE_S:
                continue
            kept = self.adopted.pop(dpid)
            out.mods.setdefault(dpid, []).extend(
                adopt.delete(m) for m in kept.values())
            out.log.append({'kind': 'adopt_expired', 't': now,
                            'switch': self.switch_of.get(dpid, str(dpid)),
                            'flow_mods': len(kept), 'applied_ms': None})

    def on_confirmed(self, token, now):
        """Every switch answered the barrier of a circuit step's
        FlowMods: the next step's Outcome."""
        out = Outcome({}, {}, [])
        if self.circuits is not None:
            self._add_circuits(out, self.circuits.confirmed(
                token, now, self._demand()))
        out.mods = self._connected_only(out.mods)
        return out

    def circuits_ready(self):
        """Circuits are decided once every switch is up (a plane that
        connects later would get its circuits at connection anyway, but
        the first reconfiguration's blackout is then the run's)."""
        return len(self.ready) == len(self.switch_of)

    def _demand(self):
        return None if self.scheduler is None else self.scheduler.demand

    @staticmethod
    def _add_circuits(out, step):
        mods, log, token = step
        for dpid, ms in mods.items():
            out.mods.setdefault(dpid, []).extend(ms)
        out.log += log
        out.token = token

    def _op_status(self, req, now):
        return _reply({'switches': len(self.switch_of),
                       'connected': len(self.connected),
                       'ready': len(self.ready),
                       'all_ready': len(self.ready) == len(self.switch_of),
                       'rules': len(self.rules),
                       'adopted_schedule_rules': sum(
                           len(v) for v in self.adopted.values()),
                       'hosts': topo.hosts(self.g), 'queues': self.queues,
                       'policy': self._policy_name(), 'scale': self.scale,
                       'class_map': self.class_map,
                       'scheduler': dict(self.knobs),
                       'decision_log': self.decision_log})

    def _op_rules(self, req, now):
        return _reply({'rules': [{'id': i, 'match': m, 'cls': c,
                                  'priority': p}
                                 for i, (m, c, p) in sorted(
                                     self.rules.items())]})

    def _op_decision(self, req, now):
        st = {'policy': None} if self.scheduler is None \
            else self.scheduler.status()
        st['links'] = self.load.busiest()
        if self.circuits is not None:
            st['circuits'] = self.circuits.status()
        return _reply(st)

    def _op_circuits(self, req, now):
        """Ask for a circuit configuration by hand: ``pairs`` [[ToR,
        ToR], ...] (each on the lowest plane free at both), set up at the
        next step through the usual reconfiguration; the scheduler's next
        decision may change it again (``static`` and ``none`` never do
        unless the jobs change). The reply says what was asked."""
        if self.circuits is None:
            raise NetschedError('circuits: this fabric has no circuit '
                                'switch')
        from ..circuits import make
        want = make('static', {'pairs': req.get('pairs', [])},
                    where='circuits').circuits(tuple(self.circuits.tors),
                                               len(self.circuits.planes))
        self.circuits.request(want)
        return _reply({'circuits': [list(c) for c in sorted(
            self.circuits.names(want))]})

    def _op_start(self, req, now):
        """A run's common start ``t0`` (the hosts' clock), sent by the
        coordinator with the agents' 'go': a hybrid fabric's circuit
        scheduler decides at t0 and on its period from there, as the
        simulator's does from t = 0, not wherever the fabric's set-up
        left its clock (the run's agreement with the simulator depended
        on set-up time)."""
        t0 = req.get('t0')
        # not NaN, inf nor an int past float's range: no start time
        if isinstance(t0, bool) or not isinstance(t0, (int, float)) \
                or not -1e300 < t0 < 1e300:
            raise NetschedError('start: t0 must be a number, got %r' % (t0,))
        if self.circuits is not None:
            self.circuits.start_at(float(t0))
        return _reply({'t0': float(t0)})

    def _op_set_class(self, req, now):
        match = of.check_match(req.get('match'))
        cls = req.get('cls')
        qos.class_dscp(cls, self.queues)            # validates cls
        prio = req.get('priority', 100)
        if not isinstance(prio, int) or not 1 <= prio <= 0xfffe:
            raise NetschedError('priority must be an integer in 1..65534')
        rid = next((i for i, (m, _, p) in self.rules.items()
                    if m == match and p == prio), None)
        if rid is None:
            rid, self._next_id = self._next_id, self._next_id + 1
        self._rule_ids.add(rid)
        self.rules[rid] = (match, cls, prio)
        return _reply({'id': rid}, self._to_ingress([self._rule_mod(rid)]))

    def _op_clear_class(self, req, now):
        rid = req.get('id')
        if rid is None:
            self.rules.clear()
            return _reply({'cleared': 'all'},
                          self._to_ingress([of.classify_delete()]))
        # a list for an id raised TypeError (unhashable) below
        if isinstance(rid, bool) or not isinstance(rid, int):
            raise NetschedError('clear_class: id must be a rule id (an '
                                'integer), got %r' % (rid,))
        if rid not in self.rules:
            raise NetschedError('no classification rule with id %r' % rid)
        del self.rules[rid]
        return _reply({'cleared': rid},
                      self._to_ingress([of.classify_delete(rid)]))

    def _op_register(self, req, now):
        sch = self._scheduler('register')
        if any(k in req for k in ('started', 'done', 'marks')) and \
                not self.ingress <= set(self.routes) and \
                self.serials_held_since is None:
            # an agent is back before the switches (a restart: they
            # reconnect at Open vSwitch's backoff): their tables give the
            # floor new coflows' serials must start above; until every
            # ingress switch is back they wait (they need no rule before)
            sch.serials_held, self.serials_held_since = True, now
        out = sch.register(req, now)
        out.reply = {'policy': self._policy_name(), 'queues': self.queues,
                     'classes': dict(sch.classes),
                     'sends': sch.send_classes_of(req.get('host')),
                     'reports': sch.reports_wanted(),
                     'wait_for_class': sch.waits_for_class()}
        return out

    def _op_report(self, req, now):
        sch = self._scheduler('report')
        events = req.get('events')
        if not isinstance(events, list):
            raise NetschedError('report: events must be a list')
        try:
            sch.report(req.get('host'), events, now)
        except (KeyError, TypeError, ValueError) as e:
            raise NetschedError('report from %s: malformed event (%s: %s)'
                                % (req.get('host'), type(e).__name__, e))
        return Outcome({}, {}, [])

    def _scheduler(self, op):
        if self.scheduler is None:
            raise NetschedError('%s: this controller runs no scheduling '
                                'policy (start it with --policy)' % op)
        return self.scheduler

    def _policy_name(self):
        return None if self.scheduler is None else self.scheduler.policy.name

    def _rule_mod(self, rid):
        match, cls, prio = self.rules[rid]
        return of.classify_rule(match, cls, self.queues, rid, prio)

    def _to_ingress(self, mods):
        return {d: list(mods) for d in sorted(self.ingress & self.connected)}

    def _connected_only(self, mods):
        return {d: m for d, m in mods.items() if d in self.connected and m}


def _reply(fields, mods=None):
    return Outcome(mods or {}, {}, [], reply=fields)

