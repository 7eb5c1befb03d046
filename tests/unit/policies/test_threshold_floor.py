"""The threshold floor: an experiment meant for the emulator raises a
policy's finest threshold (Aalo's and LAS' first queue, FIFO-LM's
heaviness) to a few of TCP's initial windows at the experiment's scale,
on both backends, so both decide on amounts the emulated TCP resolves."""
import pytest

from netsched import policies
from netsched.errors import ConfigError
from netsched.pipeline import experiment, run

MB = 2 ** 20


def exp(policy, backend='emu', **keys):
    d = dict(name='floor', topology='dumbbell,2', link_gbps=10, scale=250,
             backend=backend, policy=policy,
             jobs=[{'id': 'j', 'model': 'resnet50', 'pattern': 'ring',
                    'workers': 2, 'iterations': 1,
                    'placement': ['hl0', 'hr0']}])
    d.update(keys)
    return experiment.from_dict(d)


def test_aalo_first_queue_raised_to_two_windows():
    # 2 windows x 10 packets x 9000 B (MTU) x scale 250 = 45,000,000 B,
    # 42.92 MB; Aalo's default first queue is 10 MB
    e = exp('aalo')
    assert e.threshold_floor[:2] == (2.0, 45e6)
    param, old, new = e.threshold_floor[2]
    assert (param, old) == ('first_mb', 10.0)
    assert new == pytest.approx(45e6 / MB)
    pol = policies.make(e.policy, e.policy_params)
    assert pol.finest_bytes() == pytest.approx(45e6)
    # the queues above it keep their multiplier: 10 x the first
    assert pol.thresholds()[1] == pytest.approx(4.5e8)
    # what the run records
    assert run.meta(e)['threshold_floor']['raised'][0] == 'first_mb'


def test_fifolm_and_las():
    # scale 500: 2 x 10 x 9000 x 500 = 90,000,000 B = 85.83 MB, above
    # LAS' 10 MB, below FIFO-LM's 100 MB
    e = exp('las', scale=500)
    assert e.threshold_floor[2][0] == 'first_mb'
    assert e.policy_params['first_mb'] == pytest.approx(90e6 / MB)
    assert exp('fifo-lm', scale=500).threshold_floor[2] is None
    # scale 1000: 180,000,000 B = 171.66 MB, above FIFO-LM's too
    e = exp('fifo-lm', scale=1000)
    assert e.threshold_floor[2][0] == 'threshold_mb'
    assert e.policy_params['threshold_mb'] == pytest.approx(180e6 / MB)


def test_a_threshold_above_the_floor_is_kept():
    e = exp({'name': 'aalo', 'first_mb': 200})
    assert e.threshold_floor[2] is None
    assert e.policy_params['first_mb'] == 200


def test_no_floor_for_simulator_experiments_or_zero_windows():
    # a simulator experiment keeps the paper's thresholds at any scale
    e = exp('aalo', backend='sim')
    assert e.threshold_floor == (2.0, 0.0, None)
    assert e.policy_params.get('first_mb', 10.0) == 10.0
    e = exp('aalo', threshold_floor_windows=0)
    assert e.threshold_floor[2] is None
    # --backend sim on an emulator experiment: the file's backend rules,
    # so the simulator's reference run decides like the emulator
    e = experiment.from_dict(dict(exp('aalo').raw), backend='sim')
    assert e.backend == 'sim'
    assert e.threshold_floor[2][0] == 'first_mb'


def test_policies_without_a_threshold_are_untouched():
    e = exp('fair')
    assert e.threshold_floor[2] is None and e.policy_params == {}


def test_one_window_and_mtu():
    # 1 x 10 x 1500 x 250 = 3,750,000 B = 3.58 MB, below Aalo's 10 MB
    e = exp('aalo', threshold_floor_windows=1, mtu=1500)
    assert e.threshold_floor[2] is None
    # 2 x 10 x 1500 x 1000 = 30,000,000 B = 28.6 MB
    e = exp('aalo', threshold_floor_windows=2, mtu=1500, scale=1000)
    assert e.policy_params['first_mb'] == pytest.approx(30e6 / MB)


def test_bad_windows_named():
    with pytest.raises(ConfigError, match='threshold_floor_windows'):
        exp('aalo', threshold_floor_windows=-1)
    with pytest.raises(ConfigError, match='threshold_floor_windows'):
        exp('aalo', threshold_floor_windows='many')
