"""Reading where an emulated run dropped packets (netsched.emulator.drops):
tc's and OVS's counters, and the difference over a run."""
import json

from netsched import topology as topo
from netsched.emulator import drops
from netsched.emulator.mininet_adapter import interfaces, switch_interfaces


def test_root_qdiscs_count_per_interface():
    text = json.dumps([
        {'kind': 'noqueue', 'handle': '0:', 'dev': 'lo', 'root': True,
         'drops': 0},
        {'kind': 'htb', 'handle': '1:', 'dev': 'e2_0-eth1', 'root': True,
         'drops': 131, 'overlimits': 9},
        # a leaf's drops are in its htb root's already
        {'kind': 'pfifo', 'handle': '8013:', 'dev': 'e2_0-eth1',
         'parent': '1:113', 'drops': 131},
        {'kind': 'htb', 'handle': '1:', 'dev': 'hl0-eth0', 'root': True,
         'drops': 2}])
    assert drops.parse_qdiscs(text) == {'lo': 0, 'e2_0-eth1': 131,
                                        'hl0-eth0': 2}
    assert drops.parse_qdiscs('') == {} and drops.parse_qdiscs('oops') == {}


def test_ovs_port_statistics():
    text = json.dumps({'headings': ['name', 'statistics'], 'data': [
        ['sl-eth1', ['map', [['rx_bytes', 10], ['rx_dropped', 3],
                             ['tx_dropped', 4]]]],
        ['sl', ['map', [['rx_bytes', 0]]]],
        ['odd', 'not a map']]})
    assert drops.parse_ovs_interfaces(text) == {'sl-eth1': 7, 'sl': 0}
    assert drops.parse_ovs_interfaces('') == {}


def test_packet_socket_drops_of_ovs_ports():
    """``ss -0 -m -p``: the skmem drop count of ovs-vswitchd's packet
    sockets, per interface they are bound to (another process's socket,
    or one bound to no interface, does not count)."""
    own = 'users:(("ovs-vswitchd",pid=7,fd=%d))'
    text = '\n'.join([
        'Netid Recv-Q Send-Q Local Address:Port Peer Address:PortProcess',
        'p_raw 0 0 [0]:* * %s skmem:(r0,rb212992,t0,tb6,f0,w0,o0,bl0,d9)'
        % (own % 200),
        'p_raw 0 0 *:sl-eth1 * %s skmem:(r0,rb212992,t0,tb2,f0,w0,o176,'
        'bl0,d7) ' % (own % 40),
        'p_raw 0 0 *:sl-eth2 * %s skmem:(r0,rb2,t0,tb2,f0,w0,o1,bl0,d0)'
        % (own % 41),
        'p_raw 0 0 *:eth0 * users:(("dhclient",pid=9,fd=3)) '
        'skmem:(r0,rb2,t0,tb2,f0,w0,o0,bl0,d3)'])
    assert drops.parse_packet_sockets(text) == {'sl-eth1': 7, 'sl-eth2': 0}
    assert drops.parse_packet_sockets('') == {}


def test_delta_keeps_what_grew():
    before = {'queue': {'a': 5, 'b': 1}, 'ovs': {'p': 2}}
    after = {'queue': {'a': 5, 'b': 4, 'c': 2}, 'ovs': {'p': 2}}
    assert drops.delta(before, after) == {'queue': {'b': 3, 'c': 2},
                                          'ovs': {}, 'socket': {}}


def test_route_options_from_the_measuring_knobs(monkeypatch):
    """emulator.tcp's rto_min_ms, initcwnd and cwnd_clamp (the
    experiment's measuring knobs, pipeline.knobs); the environment is no
    longer read here."""
    from netsched.emulator import interfaces
    monkeypatch.setenv('NETSCHED_RTO_MIN_MS', '3000')
    assert interfaces.route_options() == ''
    assert interfaces.route_options(3000) == 'rto_min 3000ms'
    assert interfaces.route_options(3000, 2) == 'rto_min 3000ms initcwnd 2'
    assert interfaces.route_options(3000, 2, 6) == \
        'rto_min 3000ms initcwnd 2 cwnd lock 6'
    assert interfaces.route_options(cwnd_clamp=6) == 'cwnd lock 6'


def test_only_the_fabrics_interfaces_count():
    """The fabric's interfaces are the graph's (mininet_adapter.interfaces:
    switch and host sides), not the machine's own or another fabric's."""
    g = topo.parse_spec('dumbbell,1')
    names = interfaces(g)
    assert 'hl0-eth0' in names and set(switch_interfaces(g)) < set(names)
    sw = switch_interfaces(g)[0]
    counts = {'eth0': 5, 'lo': 0, sw: 3, 'hl0-eth0': 1, 'h0_0_0-eth0': 2}
    assert drops.ours(counts, set(names)) == {sw: 3, 'hl0-eth0': 1}


def test_an_attached_fabric_counts_its_switch_ports(monkeypatch):
    """A run attached to another process's fabric cannot enter its hosts:
    the root namespace's switch ports are read, nothing fails."""
    class Attached:
        g = topo.parse_spec('dumbbell,1')
    sw = switch_interfaces(Attached.g)[0]
    monkeypatch.setattr(drops, '_tc_root', lambda: json.dumps([
        {'dev': sw, 'root': True, 'drops': 4},
        {'dev': 'eth0', 'root': True, 'drops': 1}]))
    monkeypatch.setattr(drops, '_ovs', lambda: '')
    monkeypatch.setattr(drops, '_packet_sockets', lambda: '')
    assert drops.snapshot(Attached()) == {'queue': {sw: 4}, 'ovs': {},
                                          'socket': {}}
