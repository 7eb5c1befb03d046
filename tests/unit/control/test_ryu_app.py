"""The Ryu app turns netsched FlowMods into real OpenFlow 1.3 bytes."""
import importlib.util
import os

import pytest

from netsched.control import openflow as of
from netsched import topology as topo

pytest.importorskip('ryu')
APP = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'controllers',
                   'netsched_app.py')


@pytest.fixture(scope='module')
def app():
    import eventlet.wsgi
    if not hasattr(eventlet.wsgi, 'ALREADY_HANDLED'):
        eventlet.wsgi.ALREADY_HANDLED = object()
    spec = importlib.util.spec_from_file_location('netsched_app', APP)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class FakeDatapath:
    def __init__(self):
        from ryu.ofproto import ofproto_v1_3, ofproto_v1_3_parser
        self.ofproto, self.ofproto_parser = ofproto_v1_3, ofproto_v1_3_parser
        self.id = 0x030000
        self.sent = []

    def send_msg(self, msg):
        self.sent.append(msg)

    def set_xid(self, msg):
        msg.set_xid(len(self.sent) + 1)


def roundtrip(app, fm):
    from ryu.ofproto import ofproto_v1_3_parser as p
    dp = FakeDatapath()
    msg = app.to_ryu(dp, fm)
    msg.xid = 1
    msg.serialize()
    back = p.OFPFlowMod.parser(dp, msg.version, msg.msg_type, msg.msg_len,
                               msg.xid, msg.buf)
    return back


def test_ecmp_rule_bytes(app):
    g = topo.fat_tree(4)
    fm = [r for r in of.route_rules(g, 'a0_0') if r.table == 2][5]
    back = roundtrip(app, fm)
    assert back.table_id == 2 and back.priority == fm.priority
    assert back.cookie == fm.cookie
    assert dict(back.match.items()) == dict(fm.match)
    assert back.instructions[0].actions[0].port == dict(fm.actions)['output']


def test_classify_rule_bytes(app):
    fm = of.classify_rule({'ipv4_dst': '10.1.0.2', 'udp_dst': 9}, 2, 8, 3)
    back = roundtrip(app, fm)
    assert dict(back.match.items()) == dict(fm.match)
    apply, goto = back.instructions
    assert apply.actions[0].key == 'ip_dscp' and apply.actions[0].value == 40
    assert goto.table_id == 1


def test_forward_rule_with_metadata_bytes(app):
    g = topo.fat_tree(4)
    fm = next(r for r in of.route_rules(g, 'e0_0') if r.metadata)
    back = roundtrip(app, fm)
    meta, goto = back.instructions
    assert (meta.metadata, meta.metadata_mask) == fm.metadata
    assert goto.table_id == 2


def test_delete_by_cookie_bytes(app):
    back = roundtrip(app, of.classify_delete())
    assert back.command == 3 and back.table_id == 0xff   # OFPFC_DELETE, all
    assert back.cookie_mask == 0xff << 56


def test_schedule_rule_and_its_strict_delete_bytes(app):
    match = of.connection_match('10.0.0.2', '10.0.1.2', 40001, 5000)
    add = roundtrip(app, of.schedule_rule(match, 1, 8, 7))
    assert add.priority == 200 and add.cookie == (3 << 56) | 7
    assert add.instructions[0].actions[0].value == 48
    back = roundtrip(app, of.schedule_delete_rule(match, 7))
    assert back.command == 4 and back.table_id == 0       # DELETE_STRICT
    assert back.priority == 200 and back.cookie_mask == (1 << 64) - 1
    assert dict(back.match.items()) == dict(add.match.items())
