"""The ns-3 backend against closed-form expectations on tiny fabrics, and
whole runs of an experiment file against the fluid simulator where the
two must agree (one job alone, no contention left to model).

ns-3 (the ns3 wheel) is installed by `make setup`; without it these
skip, except under CI (CI=true), where a missing backend is a failure."""
import json
import os

import pytest

from tests.support import ns3_required

from netsched import topology as topo
from netsched.errors import ConfigError

ns3_required.require()

from netsched.ns3 import probe  # noqa: E402  (after the skip)

GBPS = 10e9
MTU = 9000
# bytes on the wire per byte of payload: a segment of MTU - 52 (IPv4, TCP,
# timestamps) carries MTU + 2 (PPP) on the link
WIRE = (MTU + 2) / (MTU - 52)


def line(n_left, n_right=None):
    """A dumbbell: n hosts each side, 10 Gbit/s everywhere."""
    return topo.dumbbell(n_left, link_bps=GBPS)


def test_one_transfer_takes_its_bytes_over_the_rate():
    """100 MB alone: its wire bytes at 10 Gbit/s, plus slow start's few
    round trips of a few microseconds."""
    size = 100_000_000
    done, trouble = probe.run(line(1), [probe.Transfer('hl0', 'hr0', size)])
    ideal = size * WIRE * 8 / GBPS
    assert done[0] == pytest.approx(ideal, rel=0.02)
    assert done[0] > ideal
    assert (trouble['retransmits'], trouble['timeouts']) == (0, 0)
    # each data packet and each (delayed: one per two) ACK crosses 3 hops
    data = size / (MTU - 52)
    assert trouble['packet_hops'] == pytest.approx(3 * 1.5 * data, rel=0.05)


def test_two_connections_in_one_class_share_the_bottleneck():
    """Two 50 MB transfers through the dumbbell's one bottleneck in the
    same class: each at half the rate, so both end at their sum's time."""
    size = 50_000_000
    done, _ = probe.run(line(2), [probe.Transfer('hl0', 'hr0', size),
                                  probe.Transfer('hl1', 'hr1', size)])
    both = 2 * size * WIRE * 8 / GBPS
    assert done[0] == pytest.approx(both, rel=0.05)
    assert done[1] == pytest.approx(both, rel=0.05)


def test_a_higher_class_preempts_a_lower_one():
    """The lower class starts first; the higher one, 5 ms later, takes
    the bottleneck whole (ends as if alone) and the lower one finishes
    with what is left: its bytes plus the other's at the link rate."""
    size = 50_000_000
    start = 0.005
    done, _ = probe.run(line(2), [
        probe.Transfer('hl0', 'hr0', size, cls=3),
        probe.Transfer('hl1', 'hr1', size, cls=0, start_s=start)])
    alone = size * WIRE * 8 / GBPS
    assert done[1] - start == pytest.approx(alone, rel=0.05)
    assert done[0] == pytest.approx(2 * alone, rel=0.05)
    assert done[1] < done[0]


def test_a_rate_holds_a_sender_to_it():
    """A sender's token bucket (Varys' rates): 2 Gbit/s on a 10 Gbit/s
    path takes five times as long as the link alone would."""
    size = 20_000_000
    done, _ = probe.run(line(1), [probe.Transfer('hl0', 'hr0', size,
                                                 rate_Bps=2e9 / 8)])
    assert done[0] == pytest.approx(size * 8 / 2e9, rel=0.03)


def _run(tmp_path, exp_text, name):
    from netsched.pipeline import experiment, run
    path = tmp_path / ('%s.yaml' % name)
    path.write_text(exp_text)
    exp = experiment.load(str(path))
    out, summary = run.execute(exp, str(tmp_path / name), say=lambda *a: None)
    return out, summary


RING = '''
name: ns3-ring
backend: %s
topology: dumbbell,2
link_gbps: 10
policy: %s
seed: 1
ns3: {congestion_control: cubic}
jobs:
  - {id: small, model: resnet50, pattern: ring, workers: 2, iterations: 3,
     compute_scale: 0, placement: [hl0, hr0]}
'''


def test_a_ring_job_alone_runs_as_the_fluid_model_says(tmp_path):
    """One ring job, no compute: its gradient exchange is the only
    traffic, so the packet-level JCT is the fluid one plus the packet
    overhead (headers, slow start): within 4%."""
    _, ns3 = _run(tmp_path, RING % ('ns3', 'fair'), 'ns3')
    _, sim = _run(tmp_path, RING % ('sim', 'fair'), 'sim')
    a = ns3['jobs']['small']['jct_s']
    b = sim['jobs']['small']['jct_s']
    assert b < a < b * 1.04
    assert ns3['backend'] == 'ns3'
    # summary.json keeps ns-3's packet-level facts, per port and class
    pk = ns3['packets']
    assert pk['timeouts'] == 0 and pk['drops'] == 0
    assert pk['packet_hops'] > 0
    queues = {p: q['peak_packets'] for p, q in pk['ports'].items()}
    assert all(len(q) == 8 for q in queues.values())
    assert max(max(q) for q in queues.values()) >= 1
    assert 'packets' not in sim


TWO = '''
name: ns3-two
backend: ns3
topology: dumbbell,2
link_gbps: 10
policy: %s
seed: 1
ns3: {congestion_control: cubic}
jobs:
  - {id: small, model: resnet50, pattern: ring, workers: 2, iterations: 4,
     compute_scale: 0, placement: [hl0, hr0]}
  - {id: large, model: vgg16, pattern: ring, workers: 2, iterations: 1,
     compute_scale: 0, placement: [hl1, hr1]}
'''


def test_sebf_in_the_loop_serves_the_small_job_first(tmp_path):
    """SEBF decided by the controller's core and applied after the
    control delay: the small job's coflows get the top class and finish
    sooner than under fair sharing, the large one's later; the decisions
    are in the event log with the time they took effect."""
    out, sebf = _run(tmp_path, TWO % 'sebf', 'sebf')
    _, fair = _run(tmp_path, TWO % 'fair', 'fair')
    assert sebf['jobs']['small']['jct_s'] < 0.8 * fair['jobs']['small'][
        'jct_s']
    assert sebf['jobs']['large']['jct_s'] > 0.99 * fair['jobs']['large'][
        'jct_s']
    classes = [json.loads(x) for x in open(os.path.join(out,
                                                        'events.jsonl'))
               if '"ev":"classes"' in x]
    assert classes
    first = classes[0]
    assert first['applied'] == pytest.approx(first['t'] + 0.003, abs=1e-6)


def test_check_refuses_what_ns3_cannot_run(tmp_path):
    from netsched.pipeline import experiment
    bad = (RING % ('ns3', 'fair')) + 'big_switch: true\n'
    path = tmp_path / 'big.yaml'
    path.write_text(bad)
    with pytest.raises(ConfigError, match='big_switch'):
        experiment.load(str(path))
    path.write_text((RING % ('ns3', 'fair')).replace(
        'congestion_control: cubic', 'congestion_control: vegas'))
    with pytest.raises(ConfigError, match='ns3: congestion_control'):
        experiment.load(str(path))


FAULT = '''
name: ns3-fault
backend: ns3
topology: fattree,4
link_gbps: 10
policy: fair
seed: 1
jobs:
  - {id: a, model: resnet50, pattern: ring, workers: 4, iterations: 3,
     compute_scale: 0, placement: [h0_0_0, h0_1_0, h1_0_0, h1_1_0]}
faults:
  - {link: [e0_1, a0_0], at: 0.05, until: 0.15}
'''


def test_a_link_down_reroutes_after_the_control_delay(tmp_path):
    """The link goes down at 50 ms and back at 150 ms: the controller
    reroutes 3 ms after each change, moving a connection each time, and
    the job still finishes."""
    out, s = _run(tmp_path, FAULT, 'fault')
    ev = [json.loads(x) for x in open(os.path.join(out, 'events.jsonl'))]
    rr = [e for e in ev if e['ev'] == 'reroute']
    assert [round(e['t'], 6) for e in rr] == [0.053, 0.153]
    assert rr[0]['links_down'] == ['a0_0-e0_1'] and rr[1]['links_down'] == []
    assert all(e['flows_moved'] >= 1 and e['stranded'] == 0 for e in rr)
    assert s['jobs']['a']['jct_s'] > 0


def test_a_run_stops_at_its_event_limit_and_says_so(tmp_path):
    """ns-3 keeps the simulator's limits: with ``max_events`` set low the
    run ends there, incomplete, with the limit named in its log."""
    out, summary = _run(tmp_path, (RING % ('ns3', 'fair'))
                        + 'max_events: 5\n', 'limited')
    with open(os.path.join(out, 'events.jsonl')) as f:
        stops = [json.loads(x) for x in f if '"run_incomplete"' in x]
    assert len(stops) == 1 and stops[0]['cause'] == 'limit'
    assert 'max_events 5' in stops[0]['why']
    assert summary['jobs']['small'].get('jct_s') is None


def test_the_reproduction_study_runs_on_ns3(tmp_path):
    """`reproduce --backend ns3`: the study's reduced seeds and axis run
    packet by packet, and the table gains an ns-3 column."""
    import csv
    import subprocess
    import sys
    from tests.unit.pipeline.test_reproduce import ROOT, _study
    path = _study(tmp_path)
    out = str(tmp_path / 'out')
    r = subprocess.run([sys.executable, '-m', 'netsched', 'reproduce', path,
                        '--backend', 'ns3', '--out', out],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '| emulator | ns-3 | over the axis |' in r.stdout
    with open(os.path.join(out, 'tiny', 'ns3', 'runs.csv')) as f:
        runs = list(csv.DictReader(f))
    # two arms, the emulator's one seed, the axis's first value only
    assert sorted((x['policy'], x['seed'], x['link_gbps'], x['status'])
                  for x in runs) == [('fair', '1', '10', 'ok'),
                                     ('sebf', '1', '10', 'ok')]
    with open(os.path.join(out, 'reproduction.csv')) as f:
        table = list(csv.DictReader(f))
    assert {x['backend'] for x in table} == {'ns3'} and len(table) == 2
    html = open(os.path.join(out, 'report.html')).read()
    assert '<th>ns-3</th>' in html
