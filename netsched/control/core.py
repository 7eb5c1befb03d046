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
from . import openflow as of
from .adopt import Adoption, holds_netsched
from .circuits import CircuitControl
from .linkload import LinkLoad
from .links import LinkState
from .manual import ManualRules
from .outcome import Outcome
from .scheduler import Scheduler
from .spec import ControllerSpec
from .. import fluid, qos
from .. import topology as topo
from ..errors import NetschedError


class ControllerCore:
    """Everything the controller decides, without a framework: the app
    feeds events in and sends what comes back, so all of it is tested
    as plain data (the module docstring lists the requests). It
    coordinates its managers: the links and their routes (links), the
    switches adopted with netsched's rules (adoption), the manual rules
    (manual), the scheduler and the circuits; OPS answers the channel's
    requests."""

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
        self.manual = ManualRules(self.queues)
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
        self.links = LinkState(g)
        # adopting switches that already hold netsched's rules (on_connect)
        self.adoption = Adoption()

    @classmethod
    def from_spec(cls, spec):
        """The core for a ControllerSpec (control.spec), the one input
        the app is started with."""
        from .. import circuits, policies
        policy = None if not spec.policy else policies.make(
            spec.policy, spec.policy_params, where='controller policy')
        sched = None if spec.circuits is None else circuits.make(
            spec.circuits[0], spec.circuits[1], where='controller circuits')
        return cls(spec.g, spec.queues, policy, spec.scale,
                   spec.decision_log, sched, spec.class_map, spec.scheduler)

    @classmethod
    def from_description(cls, desc):
        """The core for a fabric description (channel.fabric_description:
        a ControllerSpec as JSON)."""
        return cls.from_spec(ControllerSpec.from_dict(desc))

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
        secure) is adopted (Adoption.adopt): it gets only the difference,
        and ``adoption.records[dpid]`` the record of it for the decision
        log."""
        sw = self.switch_of.get(dpid)
        if sw is None:
            return None
        self.connected.add(dpid)
        self.ready.discard(dpid)
        mods = of.switch_program(self.live(), sw) if self.circuits is None \
            else self.circuits.program(sw)
        if table is not None and holds_netsched(table):
            mods = self.adoption.adopt(dpid, sw, mods[1:], table, now, self)
        else:
            self.adoption.forget(dpid)          # a clean slate
            self.links.routes[dpid] = mods[1:]
            if dpid in self.ingress:
                mods += self.manual.mods()
                if self.scheduler is not None:
                    mods += self.scheduler.rules.replay(dpid)
        if self.adoption.serials_held_since is not None and \
                self.ingress <= set(self.links.routes):
            self._number_held(now)
        return mods

    def on_port_desc(self, dpid, ports, now):
        """A switch listed its ports ({port: up}, the reply to the port
        description request every connecting switch is sent): those down
        count as if each had sent a port status, with one reroute at
        most; and once every link's state is known, the routes adopted
        switches kept are reconciled (Adoption.adopt). An Outcome as for
        on_port_status."""
        sw = self.switch_of.get(dpid)
        out = Outcome({}, {}, [])
        if sw is None or self.circuits is not None:
            return out
        self.links.listed(sw, ports)
        self._reroute(out, now, {'link': None, 'up': None, 'switch': sw,
                                 'cause': 'port_desc'})
        if self.adoption.routes_pending and self.links.known():
            self.adoption.reconcile(out, now, self.links,
                                    self.connected, self.switch_of)
        out.mods = self._connected_only(out.mods)
        return out

    def settle(self, now, wait_s):
        """Routes adopted switches kept for ``wait_s`` without every
        link's state becoming known (a switch of the fabric never
        connected) are reconciled with what is known: an Outcome. So
        are coflow serials held as long (the register op)."""
        out = Outcome({}, {}, [])
        held = self.adoption.serials_held_since
        if held is not None and now - held >= wait_s:
            self._number_held(now)
        pending = self.adoption.routes_pending
        if pending and now - min(pending.values()) >= wait_s:
            self.adoption.reconcile(out, now, self.links,
                                    self.connected, self.switch_of)
            out.mods = self._connected_only(out.mods)
        return out

    def _number_held(self, now):
        self.adoption.serials_held_since = None
        self.scheduler.number_held(now)

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
        return self.links.live()

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
        link = self.links.port(sw, port, up)
        if link is None:
            return out               # a port not of the topology (LOCAL)
        self._reroute(out, now, {'link': link, 'up': bool(up)})
        out.mods = self._connected_only(out.mods)
        return out

    def _reroute(self, out, now, fields):
        """Route around the links down now if they changed (LinkState):
        the flows' paths and the scheduler's demand follow."""
        down = self.links.reroute(out, now, fields, self.connected,
                                  self.dpid)
        if down is None:
            return
        self.net.set_down(down)
        if self.scheduler is not None:
            self.scheduler.demand.reroute()

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
            fn = OPS.get(op) if isinstance(op, str) else None
            if fn is None:
                raise NetschedError('unknown op %r' % (op,))
            out = fn(self, req, now)
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
        if self.adoption.kept and out.decided:
            self.adoption.replace(out, self.scheduler.demand)
        if self.adoption.kept:
            self.adoption.expire(out, now, self.switch_of)
        if self.circuits is not None and self.circuits_ready():
            self._add_circuits(out, self.circuits.step(
                now, None if self.scheduler is None
                else self.scheduler.demand))
        out.mods = self._connected_only(out.mods)
        return out

    def on_confirmed(self, token, now):
        """Every switch answered the barrier of a circuit step's
        FlowMods: the next step's Outcome."""
        out = Outcome({}, {}, [])
        if self.circuits is not None:
            self._add_circuits(out, self.circuits.confirmed(
                token, now, None if self.scheduler is None
                else self.scheduler.demand))
        out.mods = self._connected_only(out.mods)
        return out

    def circuits_ready(self):
        """Circuits are decided once every switch is up (a plane that
        connects later would get its circuits at connection anyway, but
        the first reconfiguration's blackout is then the run's)."""
        return len(self.ready) == len(self.switch_of)

    @staticmethod
    def _add_circuits(out, step):
        mods, log, token = step
        for dpid, ms in mods.items():
            out.mods.setdefault(dpid, []).extend(ms)
        out.log += log
        out.token = token

    def scheduling(self, op):
        """The scheduler, for a request only it answers."""
        if self.scheduler is None:
            raise NetschedError('%s: this controller runs no scheduling '
                                'policy (start it with --policy)' % op)
        return self.scheduler

    def policy_name(self):
        """The scheduling policy's name (None: routes only)."""
        return None if self.scheduler is None else self.scheduler.policy.name

    def to_ingress(self, mods):
        """The same FlowMods for every connected ingress switch."""
        return {d: list(mods) for d in sorted(self.ingress & self.connected)}

    def _connected_only(self, mods):
        return {d: m for d, m in mods.items() if d in self.connected and m}


# --- the channel's requests: one handler each, (core, req, now) -> Outcome
def _reply(fields, mods=None):
    return Outcome(mods or {}, {}, [], reply=fields)


def op_status(core, req, now):
    """Switches connected and ready, rules, the controller's settings."""
    return _reply({'switches': len(core.switch_of),
                   'connected': len(core.connected),
                   'ready': len(core.ready),
                   'all_ready': len(core.ready) == len(core.switch_of),
                   'rules': len(core.manual.rules),
                   'adopted_schedule_rules': sum(
                       len(v) for v in core.adoption.kept.values()),
                   'hosts': topo.hosts(core.g), 'queues': core.queues,
                   'policy': core.policy_name(), 'scale': core.scale,
                   'class_map': core.class_map,
                   'scheduler': dict(core.knobs),
                   'decision_log': core.decision_log})


def op_rules(core, req, now):
    """The manual rules."""
    return _reply({'rules': core.manual.listing()})


def op_decision(core, req, now):
    """The scheduler's state, the busiest links and the circuits."""
    st = {'policy': None} if core.scheduler is None \
        else core.scheduler.status()
    st['links'] = core.load.busiest()
    if core.circuits is not None:
        st['circuits'] = core.circuits.status()
    return _reply(st)


def op_circuits(core, req, now):
    """Ask for a circuit configuration by hand: ``pairs`` [[ToR, ToR],
    ...] (each on the lowest plane free at both), set up at the next step
    through the usual reconfiguration; the scheduler's next decision may
    change it again (``static`` and ``none`` never do unless the jobs
    change). The reply says what was asked."""
    if core.circuits is None:
        raise NetschedError('circuits: this fabric has no circuit switch')
    from ..circuits import make
    want = make('static', {'pairs': req.get('pairs', [])},
                where='circuits').circuits(tuple(core.circuits.tors),
                                           len(core.circuits.planes))
    core.circuits.request(want)
    return _reply({'circuits': [list(c) for c in sorted(
        core.circuits.names(want))]})


def op_start(core, req, now):
    """A run's common start ``t0`` (the hosts' clock), sent by the
    coordinator with the agents' 'go': a hybrid fabric's circuit
    scheduler decides at t0 and on its period from there, as the
    simulator's does from t = 0, not wherever the fabric's set-up left
    its clock (the run's agreement with the simulator depended on set-up
    time)."""
    t0 = req.get('t0')
    # not NaN, inf nor an int past float's range: no start time
    if isinstance(t0, bool) or not isinstance(t0, (int, float)) \
            or not -1e300 < t0 < 1e300:
        raise NetschedError('start: t0 must be a number, got %r' % (t0,))
    if core.circuits is not None:
        core.circuits.start_at(float(t0))
    return _reply({'t0': float(t0)})


def op_set_class(core, req, now):
    """A manual rule in every ingress switch."""
    rid = core.manual.set(req)
    return _reply({'id': rid}, core.to_ingress([core.manual.mod(rid)]))


def op_clear_class(core, req, now):
    """Remove one manual rule (or all)."""
    rid = req.get('id')
    mod = core.manual.clear(rid)
    return _reply({'cleared': 'all' if rid is None else rid},
                  core.to_ingress([mod]))


def op_register(core, req, now):
    """An agent registers (or re-registers with its progress)."""
    sch = core.scheduling('register')
    if any(k in req for k in ('started', 'done', 'marks')) and \
            not core.ingress <= set(core.links.routes) and \
            core.adoption.serials_held_since is None:
        # an agent is back before the switches (a restart: they
        # reconnect at Open vSwitch's backoff): their tables give the
        # floor new coflows' serials must start above; until every
        # ingress switch is back they wait (they need no rule before)
        sch.intake.serials_held = True
        core.adoption.serials_held_since = now
    out = sch.register(req, now)
    out.reply = {'policy': core.policy_name(), 'queues': core.queues,
                 'classes': dict(sch.decided.classes),
                 'sends': sch.send_classes_of(req.get('host')),
                 'reports': sch.reports_wanted(),
                 'wait_for_class': sch.waits_for_class()}
    return out


def op_report(core, req, now):
    """An agent's report of events (no reply)."""
    sch = core.scheduling('report')
    events = req.get('events')
    if not isinstance(events, list):
        raise NetschedError('report: events must be a list')
    try:
        sch.report(req.get('host'), events, now)
    except (KeyError, TypeError, ValueError) as e:
        raise NetschedError('report from %s: malformed event (%s: %s)'
                            % (req.get('host'), type(e).__name__, e))
    return Outcome({}, {}, [])


# the requests the channel answers, by op (the module docstring)
OPS = {'status': op_status, 'rules': op_rules, 'decision': op_decision,
       'circuits': op_circuits, 'start': op_start,
       'set_class': op_set_class, 'clear_class': op_clear_class,
       'register': op_register, 'report': op_report}
