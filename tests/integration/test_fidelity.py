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
# where the emulator misses a target, the bound that holds, each for a
# measured cause (docs/testing.md: "Emulator tests that depend on the
# machine's speed" and "The fidelity test's other bounds")
BEYOND = {'fifo': {'job jct_s': 0.15, 'coflow cct_s': 0.30},
          'varys': {'job jct_s': 0.15, 'coflow cct_s': 0.20},
          'sebf': {'coflow cct_s': 0.20},
          'sincronia': {'coflow cct_s': 0.20},
          'aalo': {'job jct_s': 0.40, 'coflow cct_s': 0.50}}
# pairs whose order is not asserted (the same section)
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
    # transfers given nothing were held (each coflow has one transfer in
    # flight per direction, each on a link of its own, so MADD gives a
    # transfer the whole link or nothing)
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
