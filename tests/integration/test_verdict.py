"""The emulator's fidelity verdict on the real emulator (issue 39): a
light run is faithful, a fabric loaded past what the userspace datapath
forwards is degraded, with the datapath named as the cause; both say so
in summary.json, on the console and at the top of report.html."""
import os

import yaml

from netsched.pipeline import experiment, report, run
from netsched import topology as topo

from .helpers import ROOT, leftovers


def _run(path, out):
    said = []
    exp = experiment.load(str(path))
    result = run.execute(exp, str(out), say=said.append)
    report.write_run(result)
    s = result[1]
    assert not leftovers(topo.parse_spec(exp.topology))
    with open(os.path.join(str(out), 'report.html')) as f:
        page = f.read()
    return s, said, page


def test_a_light_run_is_faithful(tmp_path):
    """Two ring jobs across a dumbbell at the suite's rate: the probes
    arrive, they wait no more than the links allow, and the verdict
    says faithful."""
    path = os.path.join(ROOT, 'experiments', 'fidelity', 'd2-ring.yaml')
    s, said, page = _run(path, tmp_path / 'light')
    f = s['fidelity']
    why = f['causes']
    assert f['verdict'] == 'faithful', why
    dp = f['figures']['datapath']
    assert dp['probes_received'] > 0.99 * dp['probes_sent'] > 50
    assert f['lags']['datapath'] <= f['limits']['datapath']
    assert f['figures']['agents']['wakeups'] > 0
    assert f['time_scale_s'] == f['figures']['ideal_cct_s_median'] > 0
    assert any(line.startswith('fidelity: faithful') for line in said)
    assert 'Fidelity: FAITHFUL.' in page


def test_an_overloaded_fabric_is_degraded_by_its_datapath(tmp_path):
    """Eight hosts of a k=4 fat-tree in two rings across the pods, at
    250 Mbit/s links and MTU 1500: about 170,000 packet hops a second
    asked of a datapath that forwards well under half of that. The
    probes wait far beyond what the links allow, and the verdict names
    the datapath first."""
    ring = lambda i: {  # noqa: E731
        'id': 'r%d' % i, 'model': 'resnet50', 'pattern': 'ring',
        'workers': 4, 'iterations': 1, 'compute_scale': 0,
        'placement': ['h%d_0_%d' % (p, i) for p in range(4)]}
    d = {'name': 'overload', 'backend': 'emu', 'topology': 'fattree,4',
         'link_gbps': 10, 'scale': 40, 'mtu': 1500, 'policy': 'fair',
         'jobs': [ring(0), ring(1)]}
    path = tmp_path / 'overload.yaml'
    path.write_text(yaml.safe_dump(d))
    s, said, page = _run(path, tmp_path / 'heavy')
    f = s['fidelity']
    assert f['verdict'] == 'degraded', f
    assert f['causes'][0].startswith('datapath:'), f['causes']
    assert f['lags']['datapath'] > 5 * f['limits']['datapath']
    assert any(line.startswith('fidelity: DEGRADED: datapath')
               for line in said)
    assert 'Fidelity: DEGRADED.' in page
