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
                                      reply says which events to report
Reports (no reply), from registered agents:
  {"op": "report", "events": [{"ev": "start"|"recv"|"mark", ...}]}
Replies carry "ok": true plus fields, or "ok": false and "error".
"""
from . import openflow as of
from .linkload import LinkLoad
from .circuits import CircuitControl
from .scheduler import Outcome, Scheduler
from .. import fluid, qos
from .. import topology as topo
from ..errors import NetschedError


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
    def on_connect(self, dpid):
        """FlowMods for a switch that connected, or None if it is not
        part of this fabric."""
        sw = self.switch_of.get(dpid)
        if sw is None:
            return None
        self.connected.add(dpid)
        self.ready.discard(dpid)
        mods = of.switch_program(self.live(), sw) if self.circuits is None \
            else self.circuits.program(sw)
        self.routes[dpid] = mods[1:]
        if dpid in self.ingress:
            mods += [self._rule_mod(i) for i in sorted(self.rules)]
            if self.scheduler is not None:
                mods += self.scheduler.rules.replay(dpid)
        return mods

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
        down = frozenset(
            topo.link_id(u, topo.neighbor_on_port(self.g, u, p))
            for u, p in self.ports_down
            if self.g.nodes[topo.neighbor_on_port(self.g, u, p)]['role']
            != topo.HOST)
        if down == self.links_down:
            return out
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
        out.log.append({'kind': 'reroute', 't': now,
                        'link': topo.link_id(sw, peer),
                        'up': bool(up), 'links_down': sorted(down),
                        'flow_mods': out.n_mods, 'applied_ms': None})
        out.mods = self._connected_only(out.mods)
        return out

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
        if self.circuits is not None and self.circuits_ready():
            self._add_circuits(out, self.circuits.step(now, self._demand()))
        out.mods = self._connected_only(out.mods)
        return out

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
        out = sch.register(req)
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

