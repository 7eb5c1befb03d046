"""netsched sweep on the emulator: emulations one at a time beside the
simulations, their runs and report, and Ctrl-C in the middle of an
emulation leaving nothing behind."""
import csv
import os
import signal
import subprocess
import sys

from netsched import topology as topo
from tests.integration.helpers import leftovers
from tests.support.tiny import TINY, interrupt_when

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _rows(out):
    with open(os.path.join(out, 'runs.csv'), newline='') as f:
        return list(csv.DictReader(f))


def _experiment(tmp_path):
    p = tmp_path / 'tiny.yaml'
    p.write_text(TINY)
    return str(p)


def test_a_sweep_on_both_backends_and_its_report(tmp_path):
    exp, out = _experiment(tmp_path), str(tmp_path / 'sw')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'sweep', exp,
                        '--backend', 'both', '--policies', 'fair,sebf',
                        '--out', out], cwd=ROOT, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = _rows(out)
    assert sorted((x['backend'], x['policy'], x['status']) for x in rows) \
        == [('emu', 'fair', 'ok'), ('emu', 'sebf', 'ok'),
            ('sim', 'fair', 'ok'), ('sim', 'sebf', 'ok')]
    # the emulator ran the same jobs to completion
    for x in rows:
        assert x['jobs_done'] == '2', x
    with open(os.path.join(out, 'report.html')) as f:
        html = f.read()
    assert 'emu: ' in html and 'sim: ' in html        # an answer for each
    assert 'Emulator against simulator' in html
    assert leftovers(topo.parse_spec('dumbbell,2')) == []


def test_ctrl_c_during_an_emulation_tears_it_down(tmp_path):
    exp, out = _experiment(tmp_path), str(tmp_path / 'sw')
    g = topo.parse_spec('dumbbell,2')
    p = subprocess.Popen([sys.executable, '-m', 'netsched', 'sweep', exp,
                          '--backend', 'emu', '--policies', 'fair,sebf',
                          '--out', out, '--no-report'], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    # once the first emulation's switches are up
    was, err = interrupt_when(
        p, lambda: any(b in _bridges() for b in topo.switches(g)),
        lambda: p.send_signal(signal.SIGINT))
    assert was, 'no emulation started'
    assert p.returncode == 130, err
    rows = _rows(out)
    assert [x['status'] for x in rows] == ['interrupted']
    assert leftovers(g) == []


def _bridges():
    from netsched.emulator import ovs
    return set(ovs.bridges())
