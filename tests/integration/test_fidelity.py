"""The two backends against each other on the real emulator (issue 10):
every baseline on two experiments of the fidelity suite, by `netsched
crosscheck`. The rankings must agree (no pair of policies in opposite
orders beyond a 5% tie) and the emulator's mean per-job and per-coflow
errors against the simulator must stay within bounds: the benchmark's
targets (jobs 10%, coflows 15%) where the emulator meets them, and where
it does not, the bound docs/fidelity.md gives with the cause
(`make bench-fidelity` measures the spread)."""
import json
import os

import pytest

from netsched import events
from netsched.pipeline import crosscheck, experiment
from netsched.pipeline.fidelity import POLICIES, TARGET, TIE
from netsched import topology as topo
from netsched.emulator import ovs
from netsched.emulator.mininet_adapter import interfaces

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# where the emulator misses the target, the bound that holds, from
# `make bench-fidelity` (docs/fidelity.md). FIFO's bound was 30% jobs,
# 75% coflows (a coflow's first window stranded in a starved queue, the
# retransmission timeout inflated by it and a later tail loss waiting for
# it; max 23% / 62% over 5 reps with 32-packet queues) until 2026-11-25:
# htb served a lower class within its own guaranteed rate ahead of every
# higher class, so a connection moved to a lower class reordered its own
# packets and retransmitted what was only queued (tc module docstring).
# Without that guarantee, 7 reps on each of d2/d3-ring: max 4.6% jobs,
# 17.8% coflows; the bound keeps a margin because the timeouts remain
# (2-10 per run on d3-ring). Aalo decides on less data than the emulator
# resolves (docs/fidelity.md); its jobs bound was 25%
# until a CI run of 2026-11-24 measured 32% on d3-ring (eight other runs
# that evening: 11-17%): zero packets dropped, 163 retransmissions and 5
# timeouts (3 on bert's hr1), bert's two coflows 3.0x and 4.0x their
# simulated time. Aalo had demoted bert to class 6; its packets queued
# there past the retransmission timeout, which fired spuriously and
# backed off. That cause is not removed (7 reps on 2026-11-25: max 11.9%
# jobs, 22.1% coflows), so the bound stayed at 40 / 50% until a
# connection's next coflow waited for the last one's acknowledgement
# (transport.Transport._drain): Aalo's next coflow no longer overtakes
# the demoted tail of its last one, and its retransmissions per run fell
# from ~120 to 26-42, and 8 reps on each of d2/d3-ring gave at most
# 7.8% jobs, 15.7% coflows. But a CI run of 2026-11-25 (night) gave 18%
# / 53% on d3-ring: one connection (hr0#1) delivered nothing of
# ResNet-50's third coflow for 0.66 s, with one retransmission timeout
# and no drop counted anywhere; its class (0) was the top one and the
# rule it left (5) was above BERT's and VGG's, so not a starved queue.
# Not explained (docs/fidelity.md), so the bound stays at 40 / 50%,
# which that run exceeds too. Varys had its own bound (20%
# coflows) until 2026-11-25: the controller gave a share of a connection
# to every transfer written on it and not yet received; with one flow per
# connection Varys was within the target. Its coflows' error depends on
# the machine's speed, as its rates are paced by the agents: on d2-ring,
# 11.5% on an idle 700 Mbit/s machine (docs/testing.md) and 21.6% with
# one core kept busy (fair sharing 2.8% and 4.5%); a CI run there gave
# 15.9% and 15.1% on d2/d3-ring, so its coflows' bound is 20%; its
# jobs there measured 9.4-10.2% (2 reps) and 10.5% in a CI run, so 15%
BEYOND = {'fifo': {'job jct_s': 0.15, 'coflow cct_s': 0.30},
          'varys': {'job jct_s': 0.15, 'coflow cct_s': 0.20},
          'aalo': {'job jct_s': 0.40, 'coflow cct_s': 0.50}}
# pairs whose order is not asserted, with the measured reason: Aalo's
# emulated average CCT spreads +-10% over runs (100-200 TCP
# retransmissions each) and flipped against fair and FIFO once in 5 reps
# on d3-ring; FIFO's outlier runs (the RTO stall above) flipped it
# against fair once in 5 on each experiment
UNSTABLE = {('fair', 'aalo'), ('fifo', 'aalo'), ('fair', 'fifo')}


@pytest.mark.parametrize('name', ['d2-ring', 'd3-ring'])
def test_every_baseline_agrees_across_backends(tmp_path, name):
    path = os.path.join(ROOT, 'experiments', 'fidelity', name + '.yaml')
    rep = crosscheck.crosscheck(path, list(POLICIES), str(tmp_path),
                                tie=TIE, say=lambda m: None)
    names = set(interfaces(topo.parse_spec(experiment.load(path).topology)))
    why = crosscheck.table(rep)
    assert not set(map(tuple, rep['disagreements'])) - UNSTABLE, why
    # the ordering policies beat fair sharing on both backends
    for b in ('sim', 'emu'):
        tot = rep['totals'][b]
        for p in ('sebf', 'varys', 'sincronia'):
            assert crosscheck.order(tot[p], tot['fair'], TIE) == -1, why
    for p in POLICIES:
        for kind, err in rep['errors'][p].items():
            assert err is not None, (p, kind, why)
            bound = BEYOND.get(p, {}).get(kind, TARGET[kind])
            assert err <= bound, '%s %s %.1f%% > %.0f%%\n%s' % (
                p, kind, 100 * err, 100 * bound, why)
    # Varys' MADD rates reached the agents, none over the link, and the
    # transfers given nothing were held. (Here every coflow has one
    # transfer in flight per direction, each on a link of its own, so
    # MADD gives a transfer the whole link or nothing; the partial rates
    # seen before 2026-11-25 were the share a transfer written whole took
    # from the one being written on its connection.)
    evs = events.read(str(tmp_path / 'emu-varys' / 'events.jsonl'))
    caps = [r for e in evs if e['ev'] == 'rates' for r in e['rates'].values()]
    assert caps and max(caps) <= 10e9 and any(r > 0 for r in caps)
    assert -1 in caps
    # run.json says where packets were dropped: per interface of this
    # fabric (read from tc over the run), per OVS port, and per OVS
    # packet socket
    for p in POLICIES:
        with open(tmp_path / ('emu-' + p) / 'run.json') as f:
            info = json.load(f)['backend_info']
        by_intf = info['queue_drops_by_interface']
        assert info['queue_drops'] == sum(by_intf.values())
        assert all(n > 0 and i in names for i, n in
                   by_intf.items()), by_intf
        assert isinstance(info['ovs_drops_by_port'], dict)
        assert all(i in names for i in info['socket_drops_by_port'])
    g = topo.parse_spec('dumbbell,3')
    assert not set(topo.switches(g)) & set(ovs.bridges())
