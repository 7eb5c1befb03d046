"""The controller's logic, without Ryu: what to send to which switch.

The Ryu app (controllers/netsched_app.py) feeds events in -- a switch
connected, became ready, went away, a request arrived on the control
socket -- and sends the FlowMods that come back. Requests and replies are
JSON objects, one per line, on a Unix socket (Mininet hosts live in other
network namespaces but share the filesystem, so the socket reaches them).

Requests:
  {"op": "status"}
  {"op": "set_class", "match": {...}, "cls": c, "priority": 100}
  {"op": "clear_class", "id": n}          (no id: clear every rule)
  {"op": "rules"}
Replies carry "ok": true plus fields, or "ok": false and "error".
"""
import json

from . import openflow as of
from . import qos
from . import topology as topo
from .errors import NetschedError


def fabric_description(g, queues, socket_path):
    """What the controller is started with (written as JSON)."""
    return {'topology': topo.to_dict(g), 'queues': queues,
            'socket': socket_path}


class ControllerCore:
    def __init__(self, g, queues):
        self.g = g
        self.queues = qos.check_queues(queues)
        self.switch_of = topo.by_dpid(g)
        self.ingress = {self.dpid(s) for s in of.ingress_switches(g)}
        self.connected, self.ready = set(), set()
        self.rules = {}                 # id -> (match dict, cls, priority)
        self._next_id = 1

    @classmethod
    def from_description(cls, desc):
        return cls(topo.from_dict(desc['topology']), desc['queues'])

    def dpid(self, switch):
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
        mods = of.switch_program(self.g, sw)
        if dpid in self.ingress:
            mods += [self._rule_mod(i) for i in sorted(self.rules)]
        return mods

    def on_ready(self, dpid):
        if dpid in self.connected:
            self.ready.add(dpid)

    def on_disconnect(self, dpid):
        self.connected.discard(dpid)
        self.ready.discard(dpid)

    # --- requests ------------------------------------------------------
    def handle(self, req):
        """(reply, {dpid: [FlowMod]}) for one request object."""
        try:
            op = req.get('op') if isinstance(req, dict) else None
            fn = getattr(self, '_op_' + str(op), None)
            if fn is None:
                raise NetschedError('unknown op %r' % (op,))
            reply, sends = fn(req)
            return dict(reply, ok=True), sends
        except NetschedError as e:
            return {'ok': False, 'error': str(e)}, {}

    def _op_status(self, req):
        return {'switches': len(self.switch_of),
                'connected': len(self.connected),
                'ready': len(self.ready),
                'all_ready': len(self.ready) == len(self.switch_of),
                'rules': len(self.rules)}, {}

    def _op_rules(self, req):
        return {'rules': [{'id': i, 'match': m, 'cls': c, 'priority': p}
                          for i, (m, c, p) in sorted(self.rules.items())]}, {}

    def _op_set_class(self, req):
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
        return {'id': rid}, self._to_ingress([self._rule_mod(rid)])

    def _op_clear_class(self, req):
        rid = req.get('id')
        if rid is None:
            self.rules.clear()
            return {'cleared': 'all'}, self._to_ingress(
                [of.classify_delete()])
        if rid not in self.rules:
            raise NetschedError('no classification rule with id %r' % rid)
        del self.rules[rid]
        return {'cleared': rid}, self._to_ingress([of.classify_delete(rid)])

    def _rule_mod(self, rid):
        match, cls, prio = self.rules[rid]
        return of.classify_rule(match, cls, self.queues, rid, prio)

    def _to_ingress(self, mods):
        return {d: list(mods) for d in sorted(self.ingress & self.connected)}


def encode(obj):
    return (json.dumps(obj, sort_keys=True) + '\n').encode()


def decode(line):
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        raise NetschedError('bad request: %s' % e) from None
    if not isinstance(obj, dict):
        raise NetschedError('bad request: not a JSON object')
    return obj
