"""A hybrid fabric's circuits in the simulator (issue 13): the circuit
driver beside the workload, the blackout, rerouting as circuits come and
go, and summary.json's ``circuits`` section, on hybrid,4,1,1 fabrics
(10 Gbit/s hosts, 2.5 Gbit/s uplinks, 40 Gbit/s circuits, 10 ms
reconfiguration)."""
import os

import pytest

from netsched import events
from netsched.pipeline import experiment, metrics, report, run
from netsched import topology as topo
from netsched.circuits import check_circuits

MB = 2 ** 20
HOST, UPLINK = 10e9, 2.5e9       # bit/s
RECONFIG = 0.01                  # s


def run_hybrid(tmp_path, lines, circuits, plots=False, **kw):
    """Run a trace (rack i on host h{i}_0) on hybrid,4,1,1,oversub=4;
    returns (summary, events)."""
    trace = tmp_path / 'trace.txt'
    trace.write_text('4 %d\n' % len(lines) + '\n'.join(lines) + '\n')
    d = {'topology': 'hybrid,4,1,1,oversub=4', 'backend': 'sim',
         'link_gbps': 10, 'queues': 'exact', 'completion_tolerance': 0,
         'sample_s': 0.001, 'circuits': circuits,
         'trace': {'path': str(trace)}}
    d.update(kw)
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'))
    result = run.execute(exp, str(tmp_path / 'out'), say=lambda m: None)
    if plots:
        report.write_run(result)
    out, summary = result
    return summary, events.read(os.path.join(out, 'events.jsonl'))


def of(evs, kind):
    return [e for e in evs if e['ev'] == kind]


def cct(s, c):
    return s['coflows'][c]['cct_s']


def on_plane(link):
    return 'o0' in link.split('->')


STATIC = {'scheduler': 'static', 'pairs': [['t0', 't1']]}
# h0 -> h1 (racks 0 and 1) and h1 -> h2 (racks 1 and 2), 100 MB each, at 0
TWO = ['1 0 1 0 1 1:100', '2 0 1 1 1 2:100']


def test_a_static_circuit_carries_its_racks_traffic_after_the_blackout(
        tmp_path):
    s, evs = run_hybrid(tmp_path, TWO, STATIC)
    size = 100 * MB
    # t0-t1: the uplink's rate until the circuit is up, then the host's
    # (the circuit's 40 Gbit/s is not the bottleneck; the uplink's 2.5 is)
    core = UPLINK * RECONFIG / 8
    assert cct(s, '1') == pytest.approx(
        RECONFIG + (size - core) * 8 / HOST, abs=2e-6)
    # t1 -> t2 has no circuit: the uplink's rate throughout
    assert cct(s, '2') == pytest.approx(size * 8 / UPLINK, abs=2e-6)
    steps = [(e['t'], e['step'], e['circuits']) for e in of(evs, 'circuits')]
    assert steps == [(RECONFIG, 'add', [['o0', 't0', 't1']]),
                     (RECONFIG, 'route', [['o0', 't0', 't1']])]
    # while it is live, t0's traffic for t1 leaves its uplink for the circuit
    live = [e['util'] for e in of(evs, 'links')
            if RECONFIG + 0.001 <= e['t'] and e['t'] + e['dt'] <= 0.09]
    assert live and all(u['t0->o0'] == pytest.approx(0.25) and
                        u['o0->t1'] == pytest.approx(0.25) and
                        'to->s0' not in u and 's0->t1' not in u and
                        u['t1->s0'] == pytest.approx(1.0) for u in live)


# a swap while traffic flows: h0 -> h1 (2000 MB) from 0; at 300 ms
# h0 -> h2 and h1 -> h3 (1000 MB each) want t0's and t1's ports
SWAP = ['1 0 1 0 1 1:2000', '2 300 1 0 1 2:1000', '3 300 1 1 1 3:1000']
MATCHING = {'scheduler': 'matching', 'period_s': 0.05, 'hold_s': 0.1}


def reconfigurations(evs):
    """[(decision, [its steps])]: the circuits events after each
    circuit_decision, up to the next."""
    out = []
    for e in evs:
        if e['ev'] == 'circuit_decision':
            out.append((e, []))
        elif e['ev'] == 'circuits':
            out[-1][1].append(e)
    return out


def blackouts(evs):
    """[(from, to)] per reconfiguration that added circuits: from its
    'remove' (else its decision) to its 'add'."""
    out = []
    for d, steps in reconfigurations(evs):
        t0 = next((e['t'] for e in steps if e['step'] == 'remove'), d['t'])
        out += [(t0, e['t']) for e in steps if e['step'] == 'add']
    return out


def test_nothing_crosses_a_circuit_during_its_blackout(tmp_path):
    s, evs = run_hybrid(tmp_path, SWAP, MATCHING)
    dark = blackouts(evs)
    assert [b - a for a, b in dark] == pytest.approx([RECONFIG] * len(dark))
    assert len(dark) >= 2 and any(
        e['step'] == 'remove' for e in of(evs, 'circuits'))
    samples = of(evs, 'links')
    for a, b in dark:
        inside = [e for e in samples
                  if e['t'] >= a - 1e-9 and e['t'] + e['dt'] <= b + 1e-9]
        assert len(inside) >= 9
        for e in inside:
            assert all(u == 0 for k, u in e['util'].items()
                       if on_plane(k)), (a, b, e)
        # the plane carries traffic right before a swap's blackout and
        # right after every one (so the check above could fail)
        after = [e for e in samples if b <= e['t'] < b + 0.003]
        assert any(on_plane(k) and u > 0.1 for e in after
                   for k, u in e['util'].items())


def test_matching_follows_the_demand_and_installs_what_it_decided(tmp_path):
    s, evs = run_hybrid(tmp_path, SWAP, MATCHING)
    tors = ['t0', 't1', 't2', 't3']

    def idx(names):
        return {(0, tors.index(a), tors.index(b)) for _, a, b in names}
    live = set()
    for d, steps in reconfigurations(evs):
        if steps:
            live = idx(steps[-1]['live'])
        # what is live once the decision is carried out is what it decided
        assert live == idx(d['circuits']), d
    for e in of(evs, 'circuits'):         # no port in two circuits
        check_circuits(idx(e['live']), 4, 1)
    # the circuits follow the demand: t0-t1 first; t0-t2 and t1-t3 once
    # those pairs have more to send; t0-t1 again when they are done
    first = [(d['t'], d['circuits']) for d, steps in reconfigurations(evs)
             if steps]
    assert first[0] == (0.0, [['o0', 't0', 't1']])
    assert first[1][0] == pytest.approx(0.3) and first[1][1] == [
        ['o0', 't0', 't2'], ['o0', 't1', 't3']]
    assert first[-1][1] == [['o0', 't0', 't1']]
    assert s['circuits']['total']['reconfigurations'] == len(first)
    # the periodic scheduler does not keep the run going after the work
    last_flow = max(e['t'] for e in of(evs, 'flow'))
    assert of(evs, 'run_end')[0]['t'] == pytest.approx(last_flow)
    # between the swaps h1 -> h3 crosses t1-t3 at its host's rate (a
    # quarter of the circuit), h0 -> h1 the packet core at the uplink's
    # 2.5 Gbit/s and h0 -> h2 t0-t2 at what is left of h0's 10
    swapped = [e['util'] for e in of(evs, 'links')
               if 0.311 <= e['t'] and e['t'] + e['dt'] <= first[2][0]]
    assert len(swapped) > 100 and all(
        u['t1->o0'] == pytest.approx(0.25) and
        u['t0->s0'] == pytest.approx(1.0) and
        u['t0->o0'] == pytest.approx(7.5 / 40)
        for u in swapped)


def test_a_decision_due_during_a_reconfiguration_waits_for_its_end(
        tmp_path):
    # rechecks every 4 ms, reconfigurations take 10 ms
    s, evs = run_hybrid(tmp_path, SWAP, dict(MATCHING, period_s=0.004,
                                             hold_s=0.02))
    recs = [(d['t'], steps[-1]['t']) for d, steps in reconfigurations(evs)
            if steps]
    times = [e['t'] for e in of(evs, 'circuit_decision')]
    assert len(recs) >= 2
    for a, b in recs:
        assert not [t for t in times if a < t < b - 1e-12]
        assert b - a == pytest.approx(RECONFIG)
        if b < max(times):                # the recheck due at a + 4 ms
            assert b in times


def test_eps_only_never_has_a_live_circuit(tmp_path):
    s, evs = run_hybrid(tmp_path, TWO, 'none')
    assert not [e for e in of(evs, 'circuits') if e['live']]
    assert [e['circuits'] for e in of(evs, 'circuit_decision')] == [[]]
    assert cct(s, '1') == pytest.approx(100 * MB * 8 / UPLINK, abs=2e-6)
    tot = s['circuits']['total']
    assert tot['bytes'] == 0 and tot['share'] == 0
    assert tot['reconfigurations'] == 0 and s['circuits']['by_circuit'] == {}
    assert tot['packet_bytes'] == pytest.approx(200 * MB, rel=1e-5)


def test_the_summary_counts_a_circuit_by_hand(tmp_path):
    # at 50 ms, after the blackout: h0 -> h1 (100 MB) all over the
    # circuit, h2 -> h3 (50 MB) over the packet core
    s, evs = run_hybrid(tmp_path, ['1 50 1 0 1 1:100', '2 50 1 2 1 3:50'],
                        STATIC, plots=True)
    c = s['circuits']
    r = c['by_circuit']['o0:t0-t1']
    assert c['scheduler'] == 'static'
    assert r['bytes'] == pytest.approx(100 * MB, rel=1e-5)
    assert c['total']['packet_bytes'] == pytest.approx(50 * MB, rel=1e-5)
    assert r['share'] == pytest.approx(100 / 150, rel=1e-5)
    assert c['total']['share'] == pytest.approx(100 / 150, rel=1e-5)
    assert r['blackout_s'] == c['total']['blackout_s'] == pytest.approx(
        RECONFIG)
    assert r['reconfigurations'] == c['total']['reconfigurations'] == 1
    end = 0.05 + 50 * MB * 8 / UPLINK            # the last flow's end
    assert s['duration_s'] == pytest.approx(end, abs=2e-6)
    assert r['live_s'] == pytest.approx(end - RECONFIG, abs=2e-6)
    assert r['utilisation'] == pytest.approx(
        100 * MB / (2 * 40e9 / 8 * (end - RECONFIG)), rel=1e-4)
    assert any(p.endswith('circuits.png') for p in s['plots'])


def ev_circuits(t, step, circuits, live):
    return {'ev': 'circuits', 't': t, 'step': step, 'circuits': circuits,
            'live': live}


def test_circuit_summary_from_events_alone():
    """A swap by hand: o0:t0-t1 from 0.01 to 0.5, then o0:t0-t2 after a
    blackout to the end (1.0); a links sample spanning the swap is
    split by the time each circuit was live in it."""
    A, B = ['o0', 't0', 't1'], ['o0', 't0', 't2']
    evs = [{'ev': 'circuit_decision', 't': 0.0, 'scheduler': 'matching',
            'circuits': [A]},
           ev_circuits(0.01, 'add', [A], [A]),
           ev_circuits(0.01, 'route', [A], [A]),
           {'ev': 'circuit_decision', 't': 0.3, 'scheduler': 'matching',
            'circuits': [A]},                  # no change
           {'ev': 'circuit_decision', 't': 0.5, 'scheduler': 'matching',
            'circuits': [B]},
           ev_circuits(0.5, 'route', [], [A]),
           ev_circuits(0.502, 'remove', [A], []),
           ev_circuits(0.512, 'add', [B], [B]),
           ev_circuits(0.512, 'route', [B], [B]),
           # t0 sends 1/4 of 40G for 0.1 s; t1 1/8 for 0.1 s
           {'ev': 'links', 't': 0.1, 'dt': 0.1,
            'util': {'t0->o0': 0.25, 't1->o0': 0.125, 't0->s0': 1.0}},
           # 0.45-0.55: A live 0.052 s of it, B 0.038 s
           {'ev': 'links', 't': 0.45, 'dt': 0.1, 'util': {'t0->o0': 0.5}},
           {'ev': 'run_end', 't': 1.0}]
    m = metrics.compute(evs)
    g = topo.parse_spec('hybrid,4,1,1,oversub=4', link_bps=HOST)
    c = metrics.circuit_summary(m, g)
    rate = 40e9 / 8
    span = 0.5 * rate * 0.1                   # the spanning sample's bytes
    a = 0.25 * rate * 0.1 + 0.125 * rate * 0.1 + span * 0.052 / 0.09
    b = span * 0.038 / 0.09
    core = 2.5e9 / 8 * 0.1
    ra, rb = c['by_circuit']['o0:t0-t1'], c['by_circuit']['o0:t0-t2']
    assert ra['bytes'] == pytest.approx(a) and rb['bytes'] == pytest.approx(b)
    assert ra['live_s'] == pytest.approx(0.492)
    assert rb['live_s'] == pytest.approx(0.488)
    assert ra['blackout_s'] == pytest.approx(0.01)      # nothing removed
    assert rb['blackout_s'] == pytest.approx(0.01)      # from the remove
    assert ra['utilisation'] == pytest.approx(a / (2 * rate * 0.492))
    assert c['total']['share'] == pytest.approx((a + b) / (a + b + core))
    assert c['total']['reconfigurations'] == 2
    assert c['total']['blackout_s'] == pytest.approx(0.02)
    assert c['decisions'] == 3
    # without the graph (no rates): the times, no bytes
    c = metrics.circuit_summary(m)
    assert c['by_circuit']['o0:t0-t1']['bytes'] is None
    assert c['total']['blackout_s'] == pytest.approx(0.02)


def dl(tmp_path, circuits):
    d = {'topology': 'hybrid,4,1,1,oversub=4', 'backend': 'sim',
         'link_gbps': 10, 'circuits': circuits,
         'jobs': [{'id': 'a', 'model': 'resnet50', 'pattern': 'ring',
                   'workers': 2, 'iterations': 3, 'compute_scale': 0.2,
                   'placement': ['h0_0', 'h1_0']},
                  {'id': 'b', 'model': 'resnet50', 'pattern': 'ring',
                   'workers': 2, 'iterations': 2, 'arrival_s': 0.5,
                   'compute_scale': 0.2, 'placement': ['h2_0', 'h3_0']}]}
    exp = experiment.from_dict(d, str(tmp_path / 'dl.yaml'))
    out, s = run.execute(exp, str(tmp_path / ('out-' + str(circuits)[:20])),
                         say=lambda m: None)
    return s, events.read(os.path.join(out, 'events.jsonl'))


def test_jobs_get_circuits_from_a_job_aware_scheduler(tmp_path):
    eps, _ = dl(tmp_path, 'none')
    s, evs = dl(tmp_path, 'osdl')
    decided = of(evs, 'circuit_decision')
    # asked at the start and as the jobs come and go (b arrives at 0.5)
    assert len(decided) >= 4
    assert any(d['circuits'] == [['o0', 't0', 't1']] for d in decided)
    assert any(['o0', 't2', 't3'] in d['circuits'] for d in decided
               if d['t'] >= 0.5)
    for j in ('a', 'b'):
        assert s['jobs'][j]['jct_s'] < 0.8 * eps['jobs'][j]['jct_s'], j
    assert s['circuits']['total']['share'] > 0.5
