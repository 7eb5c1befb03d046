"""scale: auto on the real emulator: the datapath's capacity measured on
the experiment's own topology (greedy flows at unbinding link rates, the
switch ports' receive counters), kept per machine, and the run that
follows on the scale it gives, with nothing left behind."""
import json
import os

import yaml

from netsched import topology as topo
from netsched.emulator import calibrate
from netsched.pipeline import experiment, run

from .helpers import leftovers


def test_the_datapath_is_measured_once_and_the_run_uses_it(tmp_path,
                                                           monkeypatch):
    monkeypatch.setattr(calibrate, 'CACHE', str(tmp_path / 'dp.json'))
    said = []
    rec = calibrate.measure('dumbbell,1', 9000, say=said.append)
    assert not leftovers(topo.parse_spec('dumbbell,1'))
    # two greedy flows each way over 2 switches: thousands of hops a
    # second at the very least, and what the record says is kept
    assert rec['hops_per_s'] > 1000 and rec['flows'] == 2
    assert calibrate.cached('dumbbell,1', 9000) == json.loads(
        json.dumps(rec))
    assert said[0].startswith('calibrating the datapath on dumbbell,1')
    path = tmp_path / 'd1.yaml'
    path.write_text(yaml.safe_dump({
        'name': 'd1', 'backend': 'emu', 'topology': 'dumbbell,1',
        'link_gbps': 10, 'scale': 'auto',
        'jobs': [{'id': 'a', 'model': 'resnet50', 'pattern': 'ring',
                  'workers': 2, 'iterations': 2, 'compute_scale': 0,
                  'placement': ['hl0', 'hr0']}]}))
    exp = experiment.load(str(path))           # the cached measurement
    assert exp.scale_choice['capacity_hops_per_s'] == rec['hops_per_s']
    assert exp.scale_choice['asked_hops_per_s'] <= rec['hops_per_s'] / 2
    out, s = run.execute(exp, str(tmp_path / 'r'), say=said.append)
    assert not leftovers(topo.parse_spec('dumbbell,1'))
    assert s['scale'] == exp.scale and s['jobs']['a']['jct_s'] > 0
    with open(os.path.join(out, 'run.json')) as f:
        assert json.load(f)['scale_choice'] == exp.scale_choice
