from netsched.control import channel
from netsched.control.core import ControllerCore
from netsched import topology as topo


def core():
    c = ControllerCore(topo.fat_tree(4), 4)
    return c


def test_connect_unknown_and_known_switch():
    c = core()
    assert c.on_connect(0xdead) is None
    mods = c.on_connect(0x030000)            # e0_0
    assert mods[0].command == 'delete' and len(mods) > 30
    assert c.handle({'op': 'status'}).reply['connected'] == 1
    c.on_ready(0x030000)
    st = c.handle({'op': 'status'}).reply
    assert st['ready'] == 1 and not st['all_ready']


def test_set_class_goes_to_connected_ingress_switches():
    c = core()
    for dpid in (0x030000, 0x030001, 0x020000, 0x010000):
        c.on_connect(dpid)
    out = c.handle({'op': 'set_class', 'match': {'ipv4_src': '10.0.0.2'},
                    'cls': 1})
    reply, sends = out.reply, out.mods
    assert reply == {'ok': True, 'id': 1}
    assert sorted(sends) == [0x030000, 0x030001]     # edges only
    (m,) = sends[0x030000]
    assert m.actions[0] == ('set_field', 'ip_dscp', 48)
    # the same match again reuses the rule id; a reconnect re-installs it
    assert c.handle({'op': 'set_class', 'match': {'ipv4_src': '10.0.0.2'},
                     'cls': 0}).reply['id'] == 1
    again = c.on_connect(0x030000)
    assert again[-1].actions[0] == ('set_field', 'ip_dscp', 56)
    out = c.handle({'op': 'clear_class', 'id': 1})
    reply, sends = out.reply, out.mods
    assert reply['ok'] and sends[0x030000][0].command == 'delete'
    assert c.handle({'op': 'rules'}).reply['rules'] == []


def test_bad_requests_are_errors_not_exceptions():
    c = core()
    for req, err in [({'op': 'nope'}, 'unknown op'),
                     ({'op': 'set_class', 'match': {'ipv4_src': '1.2.3.4'},
                       'cls': 4}, 'class must be'),
                     ({'op': 'set_class', 'match': {'bogus': 1}, 'cls': 0},
                      'unknown field'),
                     ({'op': 'clear_class', 'id': 9}, 'no classification rule'),
                     ([1, 2], 'unknown op')]:
        out = c.handle(req)
        reply, sends = out.reply, out.mods
        assert reply['ok'] is False and err in reply['error'] and not sends


def test_wire_encoding():
    line = channel.encode({'op': 'status'})
    assert line.endswith(b'\n') and channel.decode(line) == {'op': 'status'}
