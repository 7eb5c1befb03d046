"""Transfers on an ns-3 fabric without a workload or a controller: each
a TCP connection of its own, in a class of its own choosing, from a
start time. The backend's closed-form tests and the packet-rate
benchmark use it."""
from dataclasses import dataclass

from .. import qos
from . import loader
from .fabric import IP_HEADERS, Fabric
from .runner import CONGESTION, configure_tcp

PORT = 7000


@dataclass(frozen=True)
class Transfer:
    src: str
    dst: str
    bytes: int
    cls: int = 0               # priority class (0 = highest)
    start_s: float = 0.0
    rate_Bps: float = 0.0      # 0: as fast as TCP goes


def run(g, transfers, queues=8, mtu=9000, congestion='cubic',
        until_s=60.0, queue_packets=2048, circuits=()):
    """Received time (s) of each transfer, in order (None: not received
    by ``until_s``), and the run's TCP trouble {retransmits, timeouts}
    and the packets all ports sent (``packet_hops``).
    Transfer k is sent from port 20000 + k. ``circuits``: on a hybrid
    fabric, the circuits (topology.circuit tuples) joined and routed
    over from the start."""
    ns, core = loader.load()
    core.ResetRun()
    try:
        configure_tcp(ns, mtu - IP_HEADERS, CONGESTION[congestion],
                      max(d['capacity_bps'] for _, _, d in
                          g.edges(data=True)), ecn=False, seed=1)
        fab = Fabric(ns, core, g, queues=queues, queue_packets=queue_packets,
                     mtu=mtu)
        fab.set_circuits(circuits)
        listeners, conns = {}, []
        for k, t in enumerate(transfers):
            sport = 20000 + k
            if t.dst not in listeners:
                listeners[t.dst] = core.MakeListener(
                    fab.node[t.dst], PORT, qos.class_dscp(0, queues) << 2)
            fab.route(t.src, t.dst, sport, PORT, circuits=circuits)
            sink = core.MakeSink()
            listeners[t.dst].Register(fab.ip(t.src), sport, sink)
            conn = core.MakeConn(fab.node[t.src], fab.ip(t.src), sport,
                                 fab.ip(t.dst), PORT, sink, 64 * 1024,
                                 32 * 1024)
            conns.append(conn)
        bus = core.GetBus()
        done = [None] * len(transfers)
        pending = sorted(range(len(transfers)),
                         key=lambda k: transfers[k].start_s)
        now = 0.0
        while now < until_s and any(d is None for d in done):
            while pending and transfers[pending[0]].start_s <= now:
                k = pending.pop(0)
                t = transfers[k]
                conns[k].Push(k, int(t.bytes), qos.class_dscp(t.cls, queues),
                              float(t.rate_Bps))
            nxt = transfers[pending[0]].start_s if pending else until_s
            now = float(core.RunUntil(nxt))
            for k in bus.received:
                done[int(k)] = now
            bus.received.clear()
            bus.written.clear()
        trouble = core.GetTrouble()
        return done, {'retransmits': int(trouble.retransmits),
                      'timeouts': int(trouble.timeouts),
                      'packet_hops': fab.packet_hops()}
    finally:
        ns.Simulator.Destroy()
