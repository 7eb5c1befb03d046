"""The controller's one spec (control.spec): built and checked once,
round-tripped through the fabric description the controller process
receives, and taken whole by the fabric and the controller process."""
import json
from types import SimpleNamespace

import pytest

from netsched import topology as topo
from netsched.control.channel import fabric_description
from netsched.control.core import ControllerCore
from netsched.control.spec import ControllerSpec
from netsched.errors import ConfigError
from netsched.pipeline import experiment


def exp(**over):
    d = {'topology': 'dumbbell,2', 'backend': 'emu', 'scale': 500,
         'queues': 4, 'policy': 'sebf', 'class_map': 'share',
         'scheduler': {'hold_starved': True},
         'jobs': [dict(model='resnet50', pattern='ring', workers=2,
                       iterations=1, compute_scale=0)]}
    d.update(over)
    return experiment.from_dict(d, 'exp.yaml', environ={})


def test_from_experiment_carries_the_controller_settings():
    e = exp()
    s = ControllerSpec.from_experiment(e, '/tmp/d.jsonl')
    assert (s.queues, s.scale, s.policy, s.class_map) == (
        4, 500.0, 'sebf', 'share')
    assert s.policy_params == e.policy_params and s.circuits is None
    assert s.scheduler == {'floor_release': False, 'hold_starved': True}
    assert s.decision_log == '/tmp/d.jsonl' and s.socket is None
    assert topo.to_dict(s.g) == topo.to_dict(e.graph())


def test_json_round_trip_is_what_the_controller_receives():
    s = ControllerSpec(topo.parse_spec('dumbbell,1'), 8, 2.5, 'sebf',
                       {'x': 1}, ('static', {'pairs': []}), 'stable',
                       {'floor_release': 1}, '/tmp/log', '/tmp/sock')
    back = ControllerSpec.from_json(s.to_json())
    assert back == s and back.to_json() == s.to_json()
    assert topo.to_dict(back.g) == topo.to_dict(s.g)
    d = json.loads(s.to_json())
    assert d['policy'] == {'name': 'sebf', 'params': {'x': 1}}
    assert d['circuits'] == {'name': 'static', 'params': {'pairs': []}}
    assert d['scheduler'] == {'floor_release': True, 'hold_starved': False}
    assert fabric_description(s, '/other') == dict(d, socket='/other')
    c = ControllerCore.from_spec(back.placed(policy_params={},
                                             circuits=None))
    assert c.queues == 8 and c.scale == 2.5 and c.scheduler is not None


def test_frozen_and_checked_once():
    g = topo.parse_spec('dumbbell,1')
    s = ControllerSpec(g)
    with pytest.raises(AttributeError):
        s.queues = 4
    for bad in ({'queues': 0}, {'queues': 9}, {'queues': True},
                {'scale': 0}, {'scale': float('nan')}, {'scale': '1'},
                {'circuits': ('static',)}, {'policy_params': [1]}):
        with pytest.raises(ConfigError):
            ControllerSpec(g, **bad)
    with pytest.raises(ConfigError, match='link_mbps'):
        ControllerSpec.for_link(g, 0)


def test_for_link_scales_as_the_fabric_did():
    g = topo.fat_tree(4)
    cap = max(d['capacity_bps'] for _, _, d in g.edges(data=True))
    s = ControllerSpec.for_link(g, 20, policy='fair')
    assert s.scale == cap / (20 * 1e6) and s.policy == 'fair'
    assert s.link_mbps() == pytest.approx(20)


def test_fabric_and_controller_process_take_it_whole(tmp_path):
    from netsched.emulator.controller import ControllerProcess
    from netsched.emulator.fabric import Fabric
    s = ControllerSpec.from_experiment(exp(), str(tmp_path / 'd.jsonl'))
    f = Fabric(s, mtu=1500)
    assert f.spec is s and f.g is s.g and f.scale == s.scale
    assert (f.queues, f.policy, f.decision_log) == (4, 'sebf',
                                                     s.decision_log)
    assert f.link_mbps == pytest.approx(10e9 / 500 / 1e6)
    p = ControllerProcess(SimpleNamespace(dir=str(tmp_path)), s)
    assert p.desc == s.placed(socket=str(tmp_path / 'ctl.sock')).to_dict()
    with pytest.raises(ConfigError, match='link_mbps'):
        Fabric(ControllerSpec.from_experiment(exp(scale=1)))
