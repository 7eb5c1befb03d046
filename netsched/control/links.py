"""What the controller knows of the fabric's links: the ports its
switches reported down, the links routed around now, and the routes each
switch holds, so that a change of the links down sends every connected
switch only the difference between its old routes and its routes around
them (ControllerCore.on_port_status, on_port_desc).

Pure: no framework, no I/O."""
from . import openflow as of
from .. import topology as topo


class LinkState:
    """The ports down, the links down that follow from them, and the
    route rules per switch (dpid)."""

    def __init__(self, g):
        self.g = g
        self.ports_down = set()         # (switch, port) reported down
        self.down = frozenset()         # link_ids routed around now
        self.routes = {}                # dpid -> route rules it holds
        self.ports_known = set()        # switches whose ports were listed

    def live(self):
        """The topology less the links down now: what routes follow."""
        return topo.without(self.g, self.down)

    def known(self):
        """Whether every switch-to-switch link's state is known: one of
        its ends listed its ports (a link down is down at both)."""
        sw = lambda n: self.g.nodes[n]['role'] != topo.HOST  # noqa: E731
        return all(u in self.ports_known or v in self.ports_known
                   for u, v in self.g.edges if sw(u) and sw(v))

    def port(self, sw, port, up):
        """A port of ``sw`` went up or down: its link's id, or None for a
        port not of the topology (LOCAL), which changes nothing."""
        try:
            peer = topo.neighbor_on_port(self.g, sw, port)
        except KeyError:
            return None
        (self.ports_down.discard if up else self.ports_down.add)((sw, port))
        return topo.link_id(sw, peer)

    def listed(self, sw, ports):
        """A switch listed its ports ({port: up}): each counts as a port
        status, and its links' state is known from now."""
        for port, up in sorted(ports.items()):
            self.port(sw, port, up)
        self.ports_known.add(sw)

    def reroute(self, out, now, fields, connected, dpid):
        """The links down from the ports down: if that set changed, every
        connected switch's route difference goes into ``out`` with a
        'reroute' record (``fields`` name the cause) and the new set is
        returned; None if it did not change. ``dpid``: a switch's
        datapath id."""
        down = frozenset(
            topo.link_id(u, topo.neighbor_on_port(self.g, u, p))
            for u, p in self.ports_down
            if self.g.nodes[topo.neighbor_on_port(self.g, u, p)]['role']
            != topo.HOST)
        if down == self.down:
            return None
        self.down = down
        new = self.live()
        for s in topo.switches(self.g):
            d = dpid(s)
            if d not in connected:
                continue
            have, want = self.routes[d], of.route_rules(new, s)
            diff = of.rule_diff(have, want, keep_unused_sets=True)
            if diff:
                out.mods[d] = diff
                gone = {(m.table, m.priority, m.match) for m in diff
                        if m.command != 'add'}
                key = lambda m: (m.table, m.priority, m.match)  # noqa: E731
                held = {key(m): m for m in have if key(m) not in gone}
                held.update((key(m), m) for m in want)
                self.routes[d] = list(held.values())
        out.log.append(dict({'kind': 'reroute', 't': now}, **fields,
                            links_down=sorted(down), flow_mods=out.n_mods,
                            applied_ms=None))
        return down
