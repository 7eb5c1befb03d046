"""A hybrid fabric's circuits on the ns-3 backend: the simulator's circuit
driver decides, the optical circuit switches of the ns-3 fabric carry
out its steps. Closed-form times on a two-rack fabric, and the circuit
events against the simulator's on the same experiment file.

ns-3 (the ns3 wheel) is installed by `make setup`; without it these
skip, except under CI (CI=true), where a missing backend is a failure."""
import json
import os

import pytest

from tests.support import ns3_required

from netsched import topology as topo

ns3_required.require()

from netsched.ns3 import probe  # noqa: E402  (after the skip)

GBPS = 10e9
MTU = 9000
# bytes on the wire per byte of payload: a segment of MTU - 52 (IPv4, TCP,
# timestamps) carries MTU + 2 (PPP) on the link
WIRE = (MTU + 2) / (MTU - 52)
# two racks of one host: the packet core gives a rack a quarter of a host
# link (oversub=4), a circuit four host links (circuit_x=4)
TWO_RACKS = 'hybrid,2,1,1,oversub=4,circuit_x=4,reconfig_ms=10'


def test_a_circuit_carries_a_transfer_at_the_host_rate():
    """20 MB from rack 0 to rack 1. Over the circuit the host link (10
    Gbit/s) is the bottleneck: its wire bytes at 10 Gbit/s. Without it,
    the packet core (2.5 Gbit/s): four times as long. A circuit routed
    over but not joined by the OCS carries nothing."""
    size = 20_000_000
    g = topo.parse_spec(TWO_RACKS, link_bps=GBPS)
    one = [probe.Transfer('h0_0', 'h1_0', size)]
    circuit = {topo.circuit('o0', 't0', 't1')}
    done, trouble = probe.run(g, one, circuits=circuit)
    host = size * WIRE * 8 / GBPS
    assert done[0] == pytest.approx(host, rel=0.02)
    assert trouble['timeouts'] == 0
    done, _ = probe.run(g, one)
    assert done[0] == pytest.approx(4 * host, rel=0.02)


MODEL = '''
name: one-tensor
layers:
  - {name: body, forward_ms: 10, backward_ms: 20,
     tensors: [{name: body.weight, bytes: %d}]}
'''

HYBRID = '''
name: ns3-hybrid
backend: %(backend)s
topology: %(topology)s
link_gbps: 10
policy: fair
circuits: %(circuits)s
seed: 1
jobs:
%(jobs)s
'''


def _run(tmp_path, name, backend, topology, circuits, jobs, tensor_bytes):
    from netsched.pipeline import experiment, run
    model = tmp_path / 'model.yaml'
    model.write_text(MODEL % tensor_bytes)
    path = tmp_path / ('%s-%s.yaml' % (name, backend))
    path.write_text(HYBRID % {
        'backend': backend, 'topology': topology, 'circuits': circuits,
        'jobs': jobs.replace('MODEL', str(model))})
    exp = experiment.load(str(path))
    out, summary = run.execute(exp, str(tmp_path / ('%s-%s' % (name,
                                                              backend))),
                               say=lambda *a: None)
    events = [json.loads(x) for x in open(os.path.join(out,
                                                       'events.jsonl'))]
    return summary, events


def _circuit_events(events):
    return [e for e in events if e['ev'] in ('circuit_decision', 'circuits')]


def _same_events(ns3, sim, rel):
    """The same circuit decisions and steps in the same order, each at
    the simulator's time within ``rel`` (decisions taken when a job ends
    follow that job's end, which the two backends place a little apart)."""
    a, b = _circuit_events(ns3), _circuit_events(sim)
    strip = lambda e: {k: v for k, v in e.items() if k != 't'}  # noqa: E731
    assert [strip(e) for e in a] == [strip(e) for e in b]
    for x, y in zip(a, b):
        assert x['t'] == pytest.approx(y['t'], rel=rel, abs=1e-9), (x, y)


def test_a_static_circuit_carries_a_ring_job_as_closed_form(tmp_path):
    """A two-worker ring across the two racks: 30 ms of compute, then
    its 125 MB tensor in two steps of 62.5 MB each way. The circuit is
    decided at 0 and up (added, then routed over) after the 10 ms
    reconfiguration delay, before the first byte: each step takes its
    wire bytes at the host rate, so the JCT is 0.03 s + 125 MB x WIRE x
    8 / 10 Gbit/s = 0.1306 s (over the packet core it would be 0.43 s),
    within 1% (slow start and the ACK clock of each step). The circuit
    events are the simulator's."""
    jobs = ('  - {id: a, model: MODEL, pattern: ring, workers: 2, '
            'iterations: 1, placement: [h0_0, h1_0]}')
    args = (TWO_RACKS, '{scheduler: static, pairs: [[t0, t1]]}', jobs,
            125_000_000)
    ns3, ev3 = _run(tmp_path, 'static', 'ns3', *args)
    sim, evs = _run(tmp_path, 'static', 'sim', *args)
    expected = 0.03 + 125e6 * WIRE * 8 / GBPS
    assert ns3['jobs']['a']['jct_s'] == pytest.approx(expected, rel=0.01)
    assert ns3['backend'] == 'ns3'
    steps = [(e['t'], e['step']) for e in ev3 if e['ev'] == 'circuits']
    assert steps == [(0.01, 'add'), (0.01, 'route')]
    _same_events(ev3, evs, rel=0.01)
    assert ns3['circuits']['total']['bytes'] == pytest.approx(
        sim['circuits']['total']['bytes'], rel=0.02)


def test_matching_moves_the_circuit_as_the_simulator_does(tmp_path):
    """Three racks of two hosts, one plane, a decision every 50 ms. Ring
    job a (racks 0 and 1) runs first and gets a circuit; ring job b
    (racks 1 and 2) arrives after a ended, and a later decision moves
    the circuit: the ToRs leave it, the OCS drops it, 10 ms dark, the
    OCS joins t1-t2, the ToRs enter it. The same decisions and steps as
    the simulator's at the same times, and the JCTs within 2%."""
    jobs = ('  - {id: a, model: MODEL, pattern: ring, workers: 2, '
            'iterations: 2, placement: [h0_0, h1_0]}\n'
            '  - {id: b, model: MODEL, pattern: ring, workers: 2, '
            'iterations: 2, placement: [h1_1, h2_0], arrival_s: 0.125}')
    args = ('hybrid,3,2,1,oversub=4,circuit_x=4,reconfig_ms=10',
            '{scheduler: matching, period_s: 0.05, hold_s: 0.1}', jobs,
            25_000_000)
    ns3, ev3 = _run(tmp_path, 'matching', 'ns3', *args)
    sim, evs = _run(tmp_path, 'matching', 'sim', *args)
    steps = [e['step'] for e in ev3 if e['ev'] == 'circuits']
    assert steps == ['add', 'route', 'route', 'remove', 'add', 'route']
    _same_events(ev3, evs, rel=0.02)
    for j in ('a', 'b'):
        assert ns3['jobs'][j]['jct_s'] == pytest.approx(
            sim['jobs'][j]['jct_s'], rel=0.02)
