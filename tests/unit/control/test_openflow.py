"""Golden OpenFlow programs: what the controller installs, rule by rule."""
import pytest

from netsched.control import openflow as of
from netsched import topology as topo
from netsched.errors import ConfigError

R = 1 << 56        # routing owner cookie
C = 2 << 56        # classification owner cookie


def test_golden_dumbbell_switch():
    g = topo.dumbbell(1)
    got = [m.to_dict() for m in of.switch_program(g, 'sl')]
    assert got == [
        {'command': 'delete', 'table': 255, 'priority': 0, 'cookie': 0,
         'match': {}, 'actions': []},
        {'command': 'add', 'table': 0, 'priority': 0, 'cookie': R,
         'match': {}, 'actions': [], 'goto': 1},
        {'command': 'add', 'table': 1, 'priority': 100, 'cookie': R,
         'match': {'eth_type': 0x800, 'ipv4_dst': '10.0.0.2'},
         'actions': [['output', 1]]},
        {'command': 'add', 'table': 1, 'priority': 100, 'cookie': R,
         'match': {'arp_tpa': '10.0.0.2', 'eth_type': 0x806},
         'actions': [['output', 1]]},
        {'command': 'add', 'table': 1, 'priority': 100, 'cookie': R,
         'match': {'eth_type': 0x800, 'ipv4_dst': '10.0.1.2'},
         'actions': [['output', 2]]},
        {'command': 'add', 'table': 1, 'priority': 100, 'cookie': R,
         'match': {'arp_tpa': '10.0.1.2', 'eth_type': 0x806},
         'actions': [['output', 2]]},
    ]


def test_golden_fat_tree_edge_ecmp():
    g = topo.fat_tree(4)
    rules = of.route_rules(g, 'e0_0')
    by_table = {t: [r for r in rules if r.table == t] for t in (0, 1, 2)}
    assert len(by_table[0]) == 1
    # 16 destinations, each with an IPv4 and an ARP rule
    assert len(by_table[1]) == 32
    # the ECMP table: one next-hop set {3,4} (id 0b1100: its ports' bits);
    # 16 TCP + 16 UDP + 4 other
    assert len(by_table[2]) == 36
    remote = next(r for r in by_table[1]
                  if dict(r.match).get('ipv4_dst') == '10.3.1.3')
    assert remote.to_dict() == {
        'command': 'add', 'table': 1, 'priority': 100, 'cookie': R,
        'match': {'eth_type': 0x800, 'ipv4_dst': '10.3.1.3'},
        'actions': [], 'goto': 2, 'metadata': [12, 2 ** 64 - 1]}
    tcp = [r.to_dict() for r in by_table[2] if dict(r.match).get('ip_proto') == 6]
    assert tcp[0] == {
        'command': 'add', 'table': 2, 'priority': 20, 'cookie': R,
        'match': {'eth_type': 0x800, 'ip_proto': 6, 'metadata': [12, 2 ** 64 - 1],
                  'tcp_src': [0, 1], 'tcp_dst': [0, 1],
                  'ipv4_src': ['0.0.0.0', '0.0.0.1'],
                  'ipv4_dst': ['0.0.0.0', '0.0.0.1']},
        'actions': [['output', 3]]}
    # all-ones bits XOR to 0 -> first port; one odd bit -> second port
    outs = {tuple(v[0] if isinstance(v, list) else v
                  for k, v in sorted(r['match'].items())
                  if k in ('tcp_src', 'tcp_dst')): r['actions'][0][1]
            for r in tcp if r['match']['ipv4_src'][0] == '0.0.0.0'
            and r['match']['ipv4_dst'][0] == '0.0.0.0'}
    assert outs == {(0, 0): 3, (0, 1): 4, (1, 0): 4, (1, 1): 3}


def test_aggregation_reads_other_port_bits():
    # salt 1: the aggregation tier reads bit 1 of the ports, not bit 0
    g = topo.fat_tree(4)
    ecmp = [r for r in of.route_rules(g, 'a0_0') if r.table == 2]
    tcp = [dict(r.match)['tcp_src'] for r in ecmp
           if dict(r.match).get('ip_proto') == 6]
    assert {m for _, m in tcp} == {2}


def test_core_and_single_path_switches_have_no_ecmp():
    g = topo.fat_tree(4)
    assert not [r for r in of.route_rules(g, 'c0') if r.table == 2]


def test_classify_rule_golden():
    m = of.classify_rule({'ipv4_src': '10.0.0.2', 'tcp_dst': 5201}, 0, 8, 7)
    assert m.to_dict() == {
        'command': 'add', 'table': 0, 'priority': 100, 'cookie': C | 7,
        'match': {'eth_type': 0x800, 'ip_proto': 6, 'ipv4_src': '10.0.0.2',
                  'tcp_dst': 5201},
        'actions': [['set_field', 'ip_dscp', 56]], 'goto': 1}
    assert of.classify_delete(7).to_dict() == {
        'command': 'delete', 'table': 0, 'priority': 0, 'cookie': C | 7,
        'cookie_mask': (1 << 64) - 1, 'match': {}, 'actions': []}
    assert of.classify_delete().to_dict()['cookie_mask'] == 0xff << 56


@pytest.mark.parametrize('match,err', [
    ({}, 'non-empty'), ({'vlan': 3}, "unknown field 'vlan'"),
    ({'ipv4_src': '10.0.0.300'}, 'not an IPv4 address'),
    ({'tcp_dst': -1}, 'tcp_dst=-1'),
    ({'tcp_dst': 80, 'ip_proto': 17}, 'needs ip_proto=6')])
def test_bad_matches_name_the_problem(match, err):
    with pytest.raises(ConfigError, match=err):
        of.check_match(match)


def test_ingress_switches():
    assert of.ingress_switches(topo.fat_tree(4)) == \
        ['e0_0', 'e0_1', 'e1_0', 'e1_1', 'e2_0', 'e2_1', 'e3_0', 'e3_1']


def test_programs_are_idempotent_values():
    g = topo.fat_tree(4)
    a, b = of.switch_program(g, 'e1_1'), of.switch_program(g, 'e1_1')
    assert a == b and len(set(a)) == len(a)    # no duplicate rules
