"""The controller schedules: under SEBF, the class the controller's
scheduler decided is set by its rule in the ingress switch and seen on
the wire downstream (scapy on the far switch's ports), while the hosts
send unmarked; the registered agent is told the same class."""
import time

import pytest

from netsched.emulator import measure
from netsched.emulator.fabric import Fabric
from netsched.topology import dumbbell

from .helpers import leftovers

MB = 1e6
# (host, dst, client port, server port, coflow, bytes)
CONNS = [('hl0', 'hr0', 41001, 5301, 'small/0', 1 * MB),
         ('hl1', 'hr1', 41002, 5302, 'large/0', 10 * MB)]


@pytest.fixture(scope='module')
def fab():
    g = dumbbell(2)
    f = Fabric(g, link_mbps=20, queues=8, policy='sebf')
    with f:
        pids = [(p['pid'], p['start']) for p in f.state.data['pids']]
        yield f
    assert leftovers(g, pids) == []


def register(fab, agents):
    """Act as the agents of two hosts: register one connection and one
    send each, report both sends started."""
    for i, (h, dst, sport, dport, coflow, size) in enumerate(CONNS):
        c = fab.client()
        agents.append(c)
        c.request('register', host=h, run='wire-test',
                  conns=[{'id': 1, 'sport': sport, 'dport': dport,
                          'dst_ip': fab.ip(dst)}],
                  sends=[{'id': i + 1, 'coflow': coflow, 'job': coflow[:-2],
                          'bytes': size, 'conn': 1, 'dst': dst}])
    now = time.monotonic()
    for i, c in enumerate(agents):
        c.tell('report', events=[{'ev': 'start', 'task': i + 1,
                                  'ready': now, 't': now}])


def test_controller_dscp_is_on_the_wire_downstream(fab):
    from scapy.all import IP, TCP, AsyncSniffer
    agents = []
    try:
        register(fab, agents)
        deadline = time.monotonic() + 5
        with fab.client() as c:
            while True:
                d = c.request('decision')
                rules = [r for rs in d['rules'].values() for r in rs]
                if len(rules) == 2 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        assert sorted(r['class'] for r in rules) == [0, 1], d
        assert list(d['rules']) == ['%016x' % fab.g.nodes['sl']['dpid']]
        # each registered agent is told its coflow's class (a coflow
        # that was alone at first may have been told 0 before)
        for a, (_, _, _, _, coflow, _) in zip(agents, CONNS):
            want = d['coflows'][coflow]['class']
            told = None
            while told != want:
                m = a.receive('classes')
                assert m['op'] == 'classes' and list(m['classes']) == [coflow]
                told = m['classes'][coflow]
        assert d['coflows']['small/0']['class'] == 0
        # (no libpcap here: a Python-side filter instead of BPF)
        sniffers = {sport: AsyncSniffer(
            iface='sr-eth%d' % fab.g['sr'][dst]['ports']['sr'], store=True,
            lfilter=lambda p, sport=sport: TCP in p and p[TCP].sport == sport)
            for _, dst, sport, _, _, _ in CONNS}
        for s in sniffers.values():
            s.start()
        time.sleep(0.5)
        flows = [measure.Flow(h, dst, sport, dport, 2)
                 for h, dst, sport, dport, _, _ in CONNS]
        measure.run_iperf(fab, flows)          # iperf3 sends with TOS 0
        seen = {}
        for sport, s in sniffers.items():
            pkts = s.stop()
            data = [p for p in pkts if TCP in p and len(p[TCP].payload)]
            assert len(data) > 10, (sport, len(pkts))
            seen[sport] = {p[IP].tos >> 2 for p in data}
        # small/0 ranks first: class 0 = DSCP 56; large/0: class 1 = 48
        assert seen == {41001: {56}, 41002: {48}}
    finally:
        for a in agents:
            a.close()
