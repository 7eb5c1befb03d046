"""The one place that turns a topology graph into Mininet: a Topo with
the graph's names, addresses, datapath ids and port numbers (used by the
Fabric and by `mn --custom topologies/...`), and interface names."""
from .. import topology as topo
from ..errors import PrerequisiteError


def _mininet():
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        raise PrerequisiteError('Mininet is not installed: run `make setup` '
                                '(as root)') from None
    from mininet.link import Link
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import OVSSwitch, RemoteController
    from mininet.topo import Topo
    return Mininet, Topo, Link, OVSSwitch, RemoteController, setLogLevel


def mininet_topo(g):
    """A mininet.topo.Topo with the graph's names, addresses, datapath
    ids and port numbers (usable with `mn --custom` too)."""
    Topo = _mininet()[1]

    class GraphTopo(Topo):
        def build(self):
            for n in topo.switches(g):
                self.addSwitch(n, dpid='%016x' % g.nodes[n]['dpid'],
                               protocols='OpenFlow13')
            for n in topo.hosts(g):
                d = g.nodes[n]
                self.addHost(n, ip=d['ip'] + '/8', mac=d['mac'])
            for u, v, d in sorted(g.edges(data=True),
                                  key=lambda e: topo.link_id(e[0], e[1])):
                self.addLink(u, v, port1=d['ports'][u], port2=d['ports'][v])

    return GraphTopo()


def intf_name(node, port):
    return '%s-eth%d' % (node, port)


def interfaces(g, hosts=True):
    """Every interface of the fabric built from ``g``: its switches'
    and (``hosts``) its hosts'."""
    return sorted(intf_name(n, d['ports'][n])
                  for u, v, d in g.edges(data=True) for n in (u, v)
                  if hosts or g.nodes[n]['role'] != topo.HOST)


def switch_interfaces(g):
    return interfaces(g, hosts=False)
