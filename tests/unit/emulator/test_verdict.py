"""The emulator's fidelity verdict: the figures it measures of itself
(emulator.monitor, host.probes) and how they are judged
(pipeline.verdict)."""
import socket
import time

import pytest

from netsched import routing, topology as topo
from netsched.emulator import monitor
from netsched.host.probes import Probes
from netsched.pipeline import verdict


def summary(ccts):
    return {'coflows': {str(i): {'cct_s': c} for i, c in enumerate(ccts)}}


def figures(excess=1.0, late=1.0, applied=5.0, timeouts=0, rto=0.0,
            sent=100, lost=0):
    return {'datapath': {'excess_ms': {'p99': excess}, 'probes_sent': sent,
                         'probes_lost': lost},
            'agents': {'late_ms': {'mean': late}},
            'controller': {'applied_ms': {'p95': applied}},
            'tcp': {'timeouts': timeouts, 'rto_recovery_s': rto}}


def test_time_scale_is_the_median_coflow_time():
    assert verdict.time_scale(summary([0.1, 0.3, 0.2])) == 0.2
    assert verdict.time_scale(summary([0.1, 0.3])) == 0.2
    assert verdict.time_scale(summary([None])) is None


def test_light_run_is_faithful():
    # 1 ms against a 0.5 s median: 0.2%, far under every limit
    v = verdict.judge(figures(), summary([0.5] * 4))
    assert v['verdict'] == 'faithful' and v['causes'] == []
    assert v['lags']['datapath'] == pytest.approx(0.002)
    assert v['lags']['controller'] == pytest.approx(0.01)
    assert verdict.line(v).startswith('fidelity: faithful')
    # the plan's ideal time scale, where measured, comes first: the same
    # 1 ms against 25 ms is 4%
    v = verdict.judge(dict(figures(), ideal_cct_s_median=0.025),
                      summary([0.5] * 4))
    assert v['time_scale_s'] == 0.025 and v['causes'][0].startswith(
        'datapath:')


@pytest.mark.parametrize('kw,cause', [
    # 15 ms is 3% of 0.5 s, over the 2% limit
    ({'excess': 15.0}, 'datapath'),
    # 20 ms is 4%, over 3%
    ({'late': 20.0}, 'agents'),
    # 120 ms is 24%, over 20%
    ({'applied': 120.0}, 'controller'),
    # 1.2 s of recovery against 4 x 0.5 s of coflows: 60%, over 50%
    ({'timeouts': 2, 'rto': 1.2}, 'tcp'),
    ({'lost': 5}, 'datapath'),
])
def test_each_lag_over_its_limit_degrades_with_its_cause(kw, cause):
    v = verdict.judge(figures(**kw), summary([0.5] * 4))
    assert v['verdict'] == 'degraded'
    assert len(v['causes']) == 1 and v['causes'][0].startswith(cause + ':')
    assert verdict.line(v).startswith('fidelity: DEGRADED: ' + cause)


def test_the_same_lag_is_faithful_on_a_slower_time_scale():
    # 15 ms against a 2 s median coflow time is 0.75%
    assert verdict.judge(figures(excess=15.0),
                         summary([2.0]))['verdict'] == 'faithful'


def test_a_run_without_finished_coflows_cannot_be_called_faithful():
    v = verdict.judge(figures(), summary([]))
    assert v['verdict'] == 'degraded' and v['causes'][0].startswith(
        'unknown')


def test_missing_figures_are_not_causes():
    v = verdict.judge({'datapath': {}, 'agents': {'late_ms': None}},
                      summary([0.5]))
    assert v['verdict'] == 'faithful'


def test_allowance_is_serialisation_plus_the_links_burst_per_hop():
    g = topo.build('fattree', 4)
    rate = lambda u, v: 20e6     # noqa: E731
    src, dst = 'h0_0_0', 'h1_0_0'         # across pods: 6 hops
    ft = routing.FiveTuple(g.nodes[src]['ip'], g.nodes[dst]['ip'],
                           routing.UDP, monitor.PROBE_PORT,
                           monitor.PROBE_PORT)
    hops = len(routing.path_links(g, ft))
    assert hops == 6
    # the htb trees' burst: two jumbo frames (emulator.tc)
    want = 6 * (60 + 2 * (9000 + 14)) * 8 / 20e6
    assert monitor.allowance_s(g, src, dst, rate, 9000) == \
        pytest.approx(want)


def test_datapath_figures_from_probe_reports():
    g = topo.build('fattree', 4)
    rate = lambda u, v: 20e6     # noqa: E731
    allow = monitor.allowance_s(g, 'h0_0_0', 'h0_0_1', rate, 1500)
    a_ip = g.nodes['h0_0_0']['ip']
    # three probes from h0_0_0 to h0_0_1: 1, 2 and 10 ms
    reports = {'h0_0_1': {'sent': {}, 'received': {a_ip: 3},
                          'delays_us': {a_ip: [1000, 2000, 10000]}},
               'h0_0_0': {'sent': {g.nodes['h0_0_1']['ip']: 4},
                          'received': {}, 'delays_us': {}}}
    d = monitor.datapath(g, reports, rate, 1500)
    assert (d['probes_sent'], d['probes_received'], d['probes_lost']) == \
        (4, 3, 1)
    assert d['delay_ms']['max'] == 10.0 and d['delay_ms']['p50'] == 2.0
    assert d['excess_ms']['max'] == pytest.approx(10.0 - allow * 1e3,
                                                  abs=1e-3)


def test_ideal_scale_is_the_busiest_hosts_bytes_at_its_rate():
    """Two coflows: one sends 10 MB out of one host (8 ms at 10 Gbit/s),
    the other 5 MB from each of two hosts into one (8 ms in)... and a
    third of 1 MB (0.8 ms): the median is 8 ms."""
    from types import SimpleNamespace as T
    g = topo.build('fattree', 4)
    for u, v, d in g.edges(data=True):
        d['capacity_bps'] = 10e9
    send = lambda c, h, d, b: T(kind='send', coflow=c, host=h, dst=d,  # noqa
                                bytes=b)
    plan = T(tasks=[send(1, 'h0_0_0', 'h1_0_0', 10e6),
                    send(2, 'h0_0_0', 'h2_0_0', 5e6),
                    send(2, 'h0_0_1', 'h2_0_0', 5e6),
                    send(3, 'h0_0_0', 'h2_0_0', 1e6),
                    T(kind='compute', coflow=None, host='h0_0_0', dst=None,
                      bytes=0)])
    assert monitor.ideal_scale(g, plan) == pytest.approx(8e-3)


def test_one_late_wake_up_among_few_is_no_cause():
    """Thirty wake-ups, one of them 14 ms late (a stall of the host) and
    the rest 0.2 ms: its p99 is most of that stall, 12% of an 82 ms time
    scale, but it delays what one wake-up starts once; the mean, 0.65 ms, is
    within the limit. Every wake-up 3 ms late is a cause."""
    one = {'h': {'n': 30, 'max': 14000, 'kept': [200] * 29 + [14000]}}
    f = monitor.agents(one)
    assert f['late_ms']['p99'] > 0.12 * 82
    figs = dict(figures(), agents=f)
    v = verdict.judge(figs, summary([0.082] * 3))
    assert v['verdict'] == 'faithful', v['causes']
    slow = {'h': {'n': 30, 'max': 3000, 'kept': [3000] * 30}}
    v = verdict.judge(dict(figures(), agents=monitor.agents(slow)),
                      summary([0.082] * 3))
    assert v['causes'] == ['agents: agents woke 3.0 ms late for the plan '
                           '(mean of wake-ups), 3.7% of the median ideal '
                           'coflow time 0.082 s (limit 3%)']


def test_agent_figures_merge_hosts():
    late = {'a': {'n': 3, 'max': 9000, 'kept': [0, 100, 9000]},
            'b': {'n': 1, 'max': 50, 'kept': [50]}, 'c': None}
    f = monitor.agents(late)
    assert f['wakeups'] == 4 and f['late_ms']['max'] == 9.0
    assert f['late_ms']['mean'] == 2.288          # rounded to the us
    assert monitor.agents({})['late_ms'] is None


def test_probes_measure_one_way_delay_on_loopback():
    """Two probers on 127.0.0.1 (distinct ports) exchange probes; the
    kernel's receive timestamps give delays well under a second."""
    port = _free_udp_port()
    p = Probes('127.0.0.1', port, ['127.0.0.1'], 0.01)
    p.start(time.monotonic())
    time.sleep(0.25)
    r = p.stop()
    assert r['sent']['127.0.0.1'] >= 10
    got = r['delays_us']['127.0.0.1']
    assert len(got) >= 10 and r['received']['127.0.0.1'] == len(got)
    assert 0 <= min(got) and max(got) < 200_000


def _free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_sweep_names_its_degraded_runs(tmp_path):
    """runs.csv's fidelity column marks a degraded emulated run; the
    sweep page names it with the causes from its summary."""
    import json
    from netsched.pipeline import report, sweep
    s = {'totals': {}, 'jobs': {}, 'fidelity': {
        'verdict': 'degraded', 'causes': ['datapath: probes held 9 ms']}}
    assert sweep.headline(s)['fidelity'] == 'degraded'
    assert 'fidelity' in sweep.Table.LAST
    (tmp_path / 'emu-a').mkdir()
    (tmp_path / 'emu-a' / 'summary.json').write_text(json.dumps(s))
    rows = [{'run': 'emu-a', 'fidelity': 'degraded'},
            {'run': 'emu-b', 'fidelity': 'faithful'},
            {'run': 'sim-a', 'fidelity': ''},
            {'run': 'emu-c', 'fidelity': 'degraded'}]
    assert report._degraded(str(tmp_path), rows) == {
        'emu-a': 'datapath: probes held 9 ms',
        'emu-c': '(summary.json unreadable)'}


def test_floor_share_by_hand():
    """A over 0-10 s sits in the floor class (3 of 4 classes) from the
    start; B, under way 2-8 s, drops to it at 5 s; C, 4-6 s, is never
    classed and so in class 0. Two coflows share the floor 5-8 s: 3 of
    the 10 s."""
    coflows = {'A': {'arrival_s': 0.0, 'end_s': 10.0},
               'B': {'arrival_s': 2.0, 'end_s': 8.0},
               'C': {'arrival_s': 4.0, 'end_s': 6.0},
               'D': {'arrival_s': 1.0, 'end_s': None}}   # never ended
    changes = [(0.0, {'A': 3}), (2.0, {'B': 1}), (5.0, {'B': 3})]
    floor = verdict.floor_class(4)
    assert floor == 3
    assert verdict.floor_share(coflows, changes, floor) == pytest.approx(0.3)
    # a class below the floor counts as the floor ('exact' queues: the
    # most a port has), and nothing under way is no share at all
    assert verdict.floor_class('exact') == verdict.MAX_CLASSES - 1
    assert verdict.floor_share(coflows, changes, 1) == pytest.approx(0.6)
    assert verdict.floor_share({'D': coflows['D']}, changes, floor) is None


def test_floor_crowding_beyond_the_simulators_is_a_cause():
    def fig(own, sim):
        return {'classes': {'floor_share': own},
                'packets': {'floor_share': sim, 'jobs': 0.01,
                            'coflows': 0.01, 'packet_ms': 1.8, 'mtu': 9000,
                            'scale': 250}}
    v = verdict.judge(fig(0.63, 0.0), summary([0.5]))
    assert v['verdict'] == 'degraded' and len(v['causes']) == 1
    assert v['causes'][0].startswith(
        'classes: two or more coflows shared the lowest class for 63% of '
        'the coflows\' time, against 0% in the simulator')
    assert v['lags']['floor'] == pytest.approx(0.63)
    # crowding the simulator shares (FIFO, Aalo) is the policy's own
    v = verdict.judge(fig(0.70, 0.55), summary([0.5]))
    assert v['verdict'] == 'faithful'
    assert v['lags']['floor'] == pytest.approx(0.15)
    # without the simulator's figure there is nothing to set it against
    assert verdict.judge({'classes': {'floor_share': 0.9}},
                         summary([0.5]))['verdict'] == 'faithful'
