"""scale: auto (pipeline.autoscale): the demand is the simulator's busiest
window over the links into switches, the scale the smallest round one
that keeps it within the budget of the measured capacity; without a
measurement the default, said why. The measurement itself (emulator)
is in tests/integration/test_autoscale.py."""
import json
import time
import os

import pytest
import yaml

from netsched.emulator import calibrate
from netsched.pipeline import autoscale, experiment, run

# two rings of 2 across a dumbbell at 10 Gbit/s: at their busiest both
# ends' uplinks and the bottleneck both ways are full, 4 x 10 Gbit/s
# into switches
D2 = {'name': 'd2', 'backend': 'sim', 'topology': 'dumbbell,2',
      'link_gbps': 10, 'scale': 'auto', 'mtu': 9000,
      'jobs': [{'id': 'a', 'model': 'resnet50', 'pattern': 'ring',
                'workers': 2, 'iterations': 2, 'compute_scale': 0,
                'placement': ['hl0', 'hr0']},
               {'id': 'b', 'model': 'vgg16', 'pattern': 'ring',
                'workers': 2, 'iterations': 1, 'compute_scale': 0,
                'placement': ['hl1', 'hr1']}]}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = str(tmp_path / 'datapath.json')
    monkeypatch.setattr(calibrate, 'CACHE', path)
    monkeypatch.setattr(calibrate, 'can_measure', lambda: False)
    return path


def test_round_up_keeps_to_the_ladder():
    assert [autoscale.round_up(x) for x in (0.2, 1, 46.3, 50, 51, 101,
                                            2400, 8001)] == \
        [1, 1, 50, 50, 60, 125, 2500, 10000]


def test_the_scale_keeps_the_busiest_moment_within_the_budget(cache):
    calibrate.store('dumbbell,2', 9000, {
        'hops_per_s': 36000.0, 'measured_at': time.time(), 'when': 'then'})
    exp = experiment.from_dict(dict(D2))
    # 4e10 bit/s / (8 x 9000) = 555,556 packets a second, x 1.5 with the
    # ACKs = 833,333 hops at scale 1; within 0.5 x 36,000: scale >= 46.3
    assert exp.scale == 50.0
    c = exp.scale_choice
    assert c['busiest_bps'] == pytest.approx(4e10)
    assert c['asked_hops_per_s'] == pytest.approx(833333.3 / 50, rel=1e-4)
    assert c['asked_hops_per_s'] <= autoscale.BUDGET * 36000
    assert '36000 this datapath carries' in c['reason']
    # the experiment is the one a file with scale: 50 makes
    fixed = experiment.from_dict(dict(D2, scale=50))
    assert exp.policy_params == fixed.policy_params
    assert exp.threshold_floor == fixed.threshold_floor


def test_a_faster_datapath_gets_faster_links_never_past_mininets(cache):
    calibrate.store('dumbbell,2', 9000, {
        'hops_per_s': 1e9, 'measured_at': time.time(), 'when': 'then'})
    exp = experiment.from_dict(dict(D2))
    assert exp.scale == 10.0          # 10 Gbit/s held to 1 Gbit/s
    assert 'held to 1 Gbit/s' in exp.scale_choice['reason']


def test_without_a_measurement_the_default_and_why(cache):
    exp = experiment.from_dict(dict(D2))
    assert exp.scale == autoscale.DEFAULT_SCALE
    assert 'not measured' in exp.scale_choice['reason']


def test_a_stale_or_damaged_record_is_not_used(cache):
    calibrate.store('dumbbell,2', 9000, {'hops_per_s': 36000.0,
                                         'measured_at': 0.0})
    assert calibrate.cached('dumbbell,2', 9000, now=calibrate.MAX_AGE_S
                            + 1) is None
    with open(cache, 'w') as f:
        f.write('[not a record')
    assert calibrate.cached('dumbbell,2', 9000) is None


def test_the_choice_goes_into_run_json(cache, tmp_path):
    calibrate.store('dumbbell,2', 9000, {
        'hops_per_s': 36000.0, 'measured_at': time.time(), 'when': 'then'})
    path = tmp_path / 'd2.yaml'
    path.write_text(yaml.safe_dump(D2))
    said = []
    out, _ = run.execute(experiment.load(str(path)), str(tmp_path / 'r'),
                         say=said.append)
    with open(os.path.join(out, 'run.json')) as f:
        rec = json.load(f)
    assert rec['scale'] == 50.0
    assert rec['scale_choice']['reason'].startswith('the busiest moment')
    assert any(s.startswith('scale: auto -> 50:') for s in said)
