"""Link load as the switches count it: port statistics (transmitted
bytes per switch port) turned into the rate of every directed link
leaving a switch, in data-center bit/s (emulated rate x scale)."""
import numpy as np

from .. import topology as topo


class LinkLoad:
    """Link rates from the switches' port counters, for the `decision`
    request's busiest links: the load as the switches measured it."""

    def __init__(self, g, net, scale=1.0):
        self.scale = float(scale)
        self.net = net
        self.link_of = {}             # (dpid, port) -> directed link index
        for s in topo.switches(g):
            for m in g[s]:
                port = g[s][m]['ports'][s]
                self.link_of[(g.nodes[s]['dpid'], port)] = net.index[(s, m)]
        self.last = {}                # (dpid, port) -> (tx_bytes, time)
        self.bps = np.zeros(len(net.capacity))
        self.updated = None

    def update(self, dpid, tx_bytes, now):
        """tx_bytes: {port: counter} of one switch at time now."""
        for port, n in tx_bytes.items():
            key = (dpid, int(port))
            link = self.link_of.get(key)
            if link is None:
                continue
            prev = self.last.get(key)
            self.last[key] = (n, now)
            if prev is not None and now > prev[1] and n >= prev[0]:
                self.bps[link] = (n - prev[0]) * 8.0 / (now - prev[1]) \
                    * self.scale
        self.updated = now

    def busiest(self, k=5):
        """The k most loaded links: name, load bit/s, utilisation."""
        util = self.bps / self.net.capacity
        idx = np.argsort(-util, kind='stable')[:k]
        return [{'link': self.net.names[i], 'bps': float(self.bps[i]),
                 'util': round(float(util[i]), 4)}
                for i in idx if self.bps[i] > 0]
