"""The packet forecast of an emulated run (pipeline.forecast): the
simulator with the emulator's packets against its fluid model, and the
verdict's cause it makes (pipeline.verdict)."""
import os

import pytest

from netsched.pipeline import experiment, forecast, overrides, run, verdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
ARRIVALS = os.path.join(ROOT, 'experiments', 'fidelity', 'ft-arrivals.yaml')


def _forecast(policy, *sets):
    exp = experiment.load(ARRIVALS, backend='emu', policy=policy,
                          sets=overrides.single(list(sets)))
    return forecast.packets(exp, run.meta(exp))


def test_coarse_packets_under_an_ordering_policy_on_a_fat_tree():
    """A top-class ring coflow pays every step's last packet at every
    one of five hops: at scale 250 a 9000-byte packet is 1.8 ms on a
    40 Mbit/s link, against ring steps of tens of ms, and the forecast
    passes the verdict's limits. Ten times finer packets (scale 25)
    bring it within them, though the agents' send starts weigh ten
    times more there; fair sharing, where a coflow's steps overlap the
    others' packets, stays within them at 250."""
    coarse = _forecast('sebf')
    assert coarse['packet_ms'] == pytest.approx(1.8)
    assert coarse['mtu'] == 9000 and coarse['scale'] == 250
    assert coarse['jobs'] > verdict.LIMITS['packets_jobs']
    assert coarse['coflows'] > verdict.LIMITS['packets_coflows']
    fine = _forecast('sebf', 'scale=25')
    assert fine['packet_ms'] == pytest.approx(0.18)
    assert fine['coflows'] < verdict.LIMITS['packets_coflows']
    assert fine['jobs'] < verdict.LIMITS['packets_jobs']
    fair = _forecast('fair')
    assert fair['coflows'] < verdict.LIMITS['packets_coflows']
    assert fair['jobs'] < verdict.LIMITS['packets_jobs']
    assert coarse['start_ms'] == forecast.START_MS
    assert forecast.line(coarse).startswith(
        'fidelity forecast: at scale 250 a 9000-byte packet takes 1.80 ms')


def _fc(jobs, coflows):
    return {'jobs': jobs, 'coflows': coflows, 'packet_ms': 1.8,
            'mtu': 9000, 'scale': 250.0, 'start_ms': 1.0}


def _summary():
    return {'coflows': {'0': {'cct_s': 0.5}}}


def test_a_forecast_past_its_limits_degrades_with_the_packets_cause():
    v = verdict.judge({'packets': _fc(0.09, 0.21)}, _summary())
    assert v['verdict'] == 'degraded'
    assert v['causes'] == [
        'packets: at scale 250 a 9000-byte packet takes 1.80 ms on the '
        'slowest emulated link, and with packets that coarse and sends '
        'starting up to 1 ms late, as the agents start them, the simulator '
        'parts from its fluid model by 9.0% per job (limit 7.5%) and 21.0% '
        'per coflow (limit 10.0%): the emulated network answers differently '
        'from the one it stands for, however well the datapath keeps up']
    assert v['lags']['packets_coflows'] == pytest.approx(0.21)
    # one kind over its limit is enough, and names only that kind
    v = verdict.judge({'packets': _fc(0.01, 0.12)}, _summary())
    assert v['verdict'] == 'degraded' and 'per job' not in v['causes'][0]


def test_a_forecast_within_its_limits_or_absent_is_no_cause():
    v = verdict.judge({'packets': _fc(0.011, 0.018)}, _summary())
    assert v['verdict'] == 'faithful'
    assert v['lags']['packets_jobs'] == pytest.approx(0.011)
    # a trace's runs have no jobs: the coflows alone decide
    assert verdict.judge({'packets': _fc(None, 0.01)},
                         _summary())['verdict'] == 'faithful'
    assert verdict.judge({}, _summary())['verdict'] == 'faithful'


SLICE = os.path.join(ROOT, 'experiments', 'fidelity', 'trace-slice.yaml')


def test_short_streams_are_the_trace_slices_connections_at_scale_250():
    """The trace slice runs every flow on a connection of its own, 28
    packets at the median at scale 250: every byte is on a connection
    of at most 70 packets (three rounds of slow start from 10). At
    scale 2.5 the same connections are a hundred times longer and none
    is short; a ring's connections carry their job's every step and
    none is short at 250."""
    def share(path, *sets):
        exp = experiment.load(path, backend='emu',
                              sets=overrides.single(list(sets)))
        return forecast.short_streams(exp)
    assert share(SLICE) == {'short_share': 1.0, 'short_packets': 70}
    assert share(SLICE, 'scale=2.5')['short_share'] == 0.0
    assert share(ARRIVALS)['short_share'] == 0.0
    # a smaller initial window leaves fewer packets before feedback
    assert share(SLICE, 'emulator.tcp.initcwnd=2')['short_packets'] == 14


def test_short_streams_past_their_limit_degrade_with_the_streams_cause():
    fc = dict(_fc(0.01, 0.01), short_share=1.0, short_packets=70)
    v = verdict.judge({'packets': fc}, _summary())
    assert v['verdict'] == 'degraded' and len(v['causes']) == 1
    assert v['causes'][0].startswith(
        'streams: 100% of the bytes go on connections of at most 70 '
        'packets at scale 250')
    assert v['lags']['streams'] == 1.0
    fc['short_share'] = verdict.LIMITS['streams']
    assert verdict.judge({'packets': fc}, _summary())['verdict'] == \
        'faithful'
    assert 'of the bytes on connections of at most 70 packets' in \
        forecast.line(fc)
