"""The topology graph as an ns-3 network: a node per host and switch, a
point-to-point link per edge at the graph's rate and delay, the
strict-priority classes on every egress port (hosts' and switches'),
netsched's routes (the controller's 5-tuple ECMP paths, from
netsched.routing over the same graph) and the connections of a plan.
A hybrid fabric's optical circuit switches forward by their circuits
alone (set_circuits).

Switches are IPv4 routers here, not OpenFlow switches: what the
controller would install (a route per connection along its ECMP path,
a DSCP rule at its ingress switch) is set in each node's Router
(core.h) directly.
"""
import ipaddress

from .. import routing
from .. import topology as topo

# a link's propagation delay where the graph gives none (edge attribute
# ``delay_s``): a data-center hop's cable, switch latency left to queues
DEFAULT_DELAY_S = 1e-6
# the agents' TCP_NOTSENT_LOWAT (netsched.host.transport): what a sender
# keeps written ahead of the wire, so a rate or hold applies promptly
NOTSENT_LOWAT = 32 * 1024
WRITE_CHUNK = 64 * 1024
IP_HEADERS = 52            # IPv4 (20) + TCP (20) + timestamps option (12)
# switch interfaces' addresses (the graph gives hosts theirs): a block no
# experiment's hosts use
SWITCH_NET = int(ipaddress.IPv4Address('100.64.0.0'))


def ip_int(ip):
    return int(ipaddress.IPv4Address(ip))


class Fabric:
    """The ns-3 network of graph ``g``: ``queues`` strict-priority
    classes per port, ``queue_packets`` packets per class, ``mtu``
    bytes; ``ce_threshold_s`` > 0 marks ECN above that queueing delay
    (DCTCP's K)."""

    def __init__(self, ns, core, g, queues=8, queue_packets=128 * 16,
                 mtu=9000, ce_threshold_s=0.0):
        self.ns, self.core, self.g = ns, core, g
        self.queues = queues
        self.mtu = mtu
        names = sorted(g.nodes, key=topo.natural)
        self.hosts = topo.hosts(g)
        self.node = {}
        self.router = {}
        for n in names:
            self.node[n] = ns.CreateObject[ns.Node]()
        stack = ns.InternetStackHelper()
        for n in names:
            stack.Install(self.node[n])
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute('Mtu', ns.UintegerValue(mtu))
        # a short device queue: packets wait in the classes, not behind
        # them (the queue disc is told when the device has room)
        p2p.SetQueue('ns3::DropTailQueue<Packet>', 'MaxSize',
                     ns.StringValue('2p'))
        self.dev = {}              # (u, v) -> u's device toward v
        self.iface = {}            # (u, v) -> its interface index on u
        self.meter = {}            # (u, v) -> core.PortMeter of u's port
        for u, v, d in sorted(g.edges(data=True),
                              key=lambda e: (topo.natural(e[0]),
                                             topo.natural(e[1]))):
            p2p.SetDeviceAttribute('DataRate', ns.DataRateValue(
                ns.DataRate(int(d['capacity_bps']))))
            p2p.SetChannelAttribute('Delay', ns.TimeValue(ns.Seconds(
                float(d.get('delay_s', DEFAULT_DELAY_S)))))
            devs = p2p.Install(self.node[u], self.node[v])
            self.dev[(u, v)] = devs.Get(0)
            self.dev[(v, u)] = devs.Get(1)
        for (u, v), dev in sorted(self.dev.items()):
            self.meter[(u, v)] = core.InstallPort(
                dev, queues, int(queue_packets), float(ce_threshold_s),
                int(mtu) + 14)
        serial = 0
        for n in names:
            self.router[n] = core.InstallRouter(self.node[n])
        for (u, v), dev in sorted(self.dev.items()):
            if u in g.nodes and g.nodes[u].get('role') == topo.HOST:
                ip = ip_int(g.nodes[u]['ip'])
            else:
                serial += 1
                ip = SWITCH_NET + serial
            self.iface[(u, v)] = core.AddAddress(self.node[u], dev, ip)
        for h in self.hosts:
            up = next(iter(g[h]))
            self.router[h].SetUplink(self.iface[(h, up)])
        self.planes = topo.planes(g)
        for p in self.planes:
            self.router[p].SetCircuitSwitch()
        self._routed = {}          # 5-tuple -> its links, as routed now

    def route(self, src, dst, sport, dport, live=None, circuits=()):
        """Route the connection's both directions along netsched's ECMP
        paths over graph ``live`` (the fabric less what is down); returns
        the forward path's directed links."""
        fwd = routing.FiveTuple(self.g.nodes[src]['ip'],
                                self.g.nodes[dst]['ip'], routing.TCP,
                                sport, dport)
        rev = routing.FiveTuple(fwd.dst, fwd.src, routing.TCP, dport, sport)
        g = self.g if live is None else live
        # both paths first: one that has none leaves both directions as
        # they were (ValueError)
        paths = [(ft, routing.path_links(g, ft, circuits))
                 for ft in (fwd, rev)]
        out = None
        for ft, links in paths:
            a, b = ip_int(ft.src), ip_int(ft.dst)
            for u, v in links[1:]:          # a host's one link needs none
                self.router[u].SetRoute(a, b, ft.sport, ft.dport,
                                        self.iface[(u, v)])
            self._routed[ft] = links
            out = links if out is None else out
        return out

    def routed(self, src, dst, sport, dport):
        """The forward path's links as the connection is routed now."""
        return self._routed.get(routing.FiveTuple(
            self.g.nodes[src]['ip'], self.g.nodes[dst]['ip'], routing.TCP,
            sport, dport))

    def ip(self, host):
        """A host's address as an integer (the graph's)."""
        return ip_int(self.g.nodes[host]['ip'])

    def set_rule(self, src, dst, sport, dport, dscp):
        """The class rule of a connection at its ingress switch: its
        packets re-marked to ``dscp`` there (None: the rule goes, and
        the sender's own mark stands)."""
        ingress = next(iter(self.g[src]))
        self.router[ingress].SetDscp(
            ip_int(self.g.nodes[src]['ip']), ip_int(self.g.nodes[dst]['ip']),
            sport, dport, -1 if dscp is None else int(dscp))

    def set_circuits(self, circuits):
        """The optical circuit switches join the ports of ``circuits``
        (topology.circuit tuples) from now on; every other port of theirs
        is dark (drops what enters it)."""
        for p in self.planes:
            self.router[p].ClearPatches()
        for p, a, b in sorted(circuits):
            self.router[p].SetPatch(self.iface[(p, a)], self.iface[(p, b)])
            self.router[p].SetPatch(self.iface[(p, b)], self.iface[(p, a)])

    def set_link(self, u, v, up):
        """Link u-v up or down (both directions): a down interface drops
        what is routed over it until the routes change."""
        for a, b in ((u, v), (v, u)):
            ipv4 = self.node[a].GetObject[self.ns.Ipv4]()
            if up:
                ipv4.SetUp(self.iface[(a, b)])
            else:
                ipv4.SetDown(self.iface[(a, b)])

    def port_bytes(self, links):
        """Bytes each directed link (u, v) carried so far (u's port)."""
        return [int(self.meter[k].bytes) for k in links]

    def packet_hops(self):
        """Packets sent by every port so far (data and ACKs, each hop)."""
        return sum(int(m.packets) for m in self.meter.values())

    def port_stats(self):
        """Per port (u->v): drops, and per class the deepest queue seen
        (packets); only ports with either."""
        out = {}
        for k in sorted(self.dev):
            drops = int(self.core.PortDrops(self.dev[k]))
            peak = [int(x) for x in self.meter[k].peak]
            if drops or any(peak):
                out['%s->%s' % k] = {'drops': drops, 'peak_packets': peak}
        return out
