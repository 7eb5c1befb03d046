"""``model: sincronia`` (netsched/sim/reference/sincronia.py): the rules
of Sincronia's offline simulator on hand-worked cases, properties on
random ones, and the run through the pipeline.

Times are the simulator's units: a port moves 1 MB per unit (1/128 s on
2^30 bit/s ports). Ports: a rack's sender (uplink) and its receiver
(downlink) are separate; every coflow starts at 0."""
import json
import types

import numpy as np
import pytest

from netsched.errors import ConfigError
from netsched.pipeline import run
from netsched.sim import reference
from netsched.sim.reference import sincronia as sc
from netsched.workload.trace import Coflow
from tests.support import trace_experiments

MB = 2 ** 20
GBIT = 2 ** 30


def cofs(*spec):
    """Coflows from (mappers, {reducer: MB}), ids 'a', 'b', ... in that
    (the trace's) order, all at 0."""
    return [Coflow(chr(97 + i), 0.0, tuple(m),
                   tuple((r, b * MB) for r, b in red.items()))
            for i, (m, red) in enumerate(spec)]


def sim(policy, coflows, ports=3, watch=None):
    c = sc.Coflows(coflows, ports)
    rank = c.rank(sc.ORDER[policy], GBIT)
    return sc.Simulation(c, rank, sc.RATES[policy], watch=watch).run()


def ends(s):
    return dict(zip(s.c.ids, s.coflow_end.tolist()))


def flow_end(s, src, dst, coflow):
    c = s.c
    j = c.ids.index(coflow)
    f = np.arange(c.first[j], c.first[j + 1])
    return float(s.flow_end[f[(c.src[f] == src) & (c.dst[f] == dst)][0]])


# A: 0 -> 1, 4 MB; B: 0 -> 2, 2 MB; C: 1 -> 2, 3 MB
ABC = cofs(([0], {1: 4}), ([0], {2: 2}), ([1], {2: 3}))


# --- reading ----------------------------------------------------------------

def test_sizes_are_whole_mb_split_by_integer_division():
    # reducer 1: 5 MB over 2 mappers -> 2 MB each (trace_producer.py's
    # integer division); reducer 2: 1.5 MB -> 1 MB -> 0 each: no flows.
    # Coflow b: 1 MB over 2 mappers -> nothing at all, it ends at 0; a's
    # two 2 MB flows share r1 one after the other: 4
    c = sc.Coflows(cofs(([0, 2], {1: 5, 2: 1.5}), ([0, 1], {2: 1})), 3)
    assert list(zip(c.src, c.dst, c.size)) == [(0, 1, 2.0), (2, 1, 2.0)]
    assert c.mb.tolist() == [4.0, 0.0] and c.width == [4, 2]
    s = sc.Simulation(c, np.array([0, 1]), 'greedy').run()
    assert ends(s) == {'a': 4.0, 'b': 0.0}


# --- orders -----------------------------------------------------------------

def test_bssi_order_and_greedy_rates():
    # BSSI (sender ports before receivers): loads s0 = 4 + 2 = 6, s1 = 3,
    # r1 = 4, r2 = 2 + 3 = 5. Step 1, port s0: A 1/4 < B 1/2, A goes
    # last (beta 1/4), B's weight 1 - 2/4 = 1/2. Step 2, loads s0 = 2,
    # s1 = 3, r2 = 5: port r2, B 0.5/2 = 0.25 < C 1/3: B goes second to
    # last. Order C, B, A.
    # Greedy: C takes s1 and r2, B meets r2, A takes s0 and r1. At 3 C
    # ends; B (before A) now takes s0 and r2, A (1 MB left) waits. B ends
    # at 3 + 2 = 5, A at 5 + 1 = 6.
    s = sim('sincronia', ABC)
    assert s.c.ids[s.order[0]] == 'c' and list(s.order) == [2, 1, 0]
    assert ends(s) == {'a': 6.0, 'b': 5.0, 'c': 3.0}


def test_sebf_order_and_greedy_rates():
    # Gamma: A 4, B 2, C 3: order B, C, A. B takes s0 and r2; C meets
    # r2, A meets s0. At 2 B ends: C takes s1, r2 (ends at 5), A takes
    # s0, r1 (ends at 6)
    s = sim('sebf', ABC)
    assert list(s.order) == [1, 2, 0]
    assert ends(s) == {'a': 6.0, 'b': 2.0, 'c': 5.0}


def test_ties_sebf_keeps_the_trace_order_bssi_puts_the_first_last():
    # two equal coflows 0 -> 1, 2 MB. SEBF (a stable sort): a, b. BSSI:
    # port s0 (4, tied with r1: senders first), terms 1/2 and 1/2, the
    # first (a) goes last: b, a
    two = cofs(([0], {1: 2}), ([0], {1: 2}))
    assert ends(sim('sebf', two)) == {'a': 2.0, 'b': 4.0}
    assert ends(sim('sincronia', two)) == {'a': 4.0, 'b': 2.0}


# --- MADD -------------------------------------------------------------------

# X: 0 -> 0, 4 MB (Gamma 4); Y: 1 -> 0, 3 MB and 1 -> 1, 2 MB (Gamma 5,
# at s1); Z: 2 -> 1, 6 MB (Gamma 6). SEBF order X, Y, Z.
XYZ = cofs(([0], {0: 4}), ([1], {0: 3, 1: 2}), ([2], {1: 6}))


def test_madd_skips_a_coflow_at_a_full_port_and_serves_the_next():
    # t = 0: X gets 1 on s0, r0 (Gamma 4). Y needs r0, full: skipped. Z:
    # Gamma 6, rate 1 on s2, r1. The skipped Y shares what is left: its
    # 1 -> 1 meets r1 (Z took it), its 1 -> 0 meets r0: nothing. Next
    # event: the smallest Gamma, 4. X ends at 4; Z has 2 MB left.
    # t = 4: Y Gamma max(5/1, 3/1, 2/1) = 5: rates 3/5 on 1 -> 0, 2/5 on
    # 1 -> 1, leaving r1 3/5. Z: Gamma max(2/1, 2/(3/5)) = 10/3, rate 3/5.
    # Next event 4 + 10/3 = 22/3: Z ends; Y moved 2 and 4/3, has 1 and
    # 2/3 left: Gamma 5/3, it ends at 22/3 + 5/3 = 9
    s = sim('varys', XYZ)
    e = ends(s)
    assert e['a'] == 4.0
    assert e['b'] == pytest.approx(9.0, abs=1e-9)
    assert e['c'] == pytest.approx(22 / 3, abs=1e-9)
    # greedy rates on the same order: Y's 1 -> 1 runs at 0 and ends at 2,
    # then Z runs from 2 (ends at 8); Y's 1 -> 0 runs from 4 to 7
    assert ends(sim('sebf', XYZ)) == {'a': 4.0, 'b': 7.0, 'c': 8.0}


def test_madd_skipped_coflows_share_and_free_nothing_until_the_next_event():
    # X: 0 -> 0, 4 MB; Y: 1 -> 0 3 MB, 1 -> 1 1 MB, 1 -> 2 1 MB (Gamma 5
    # at s1). t = 0: X gets 1 (Gamma 4); Y needs r0, full: skipped. Its
    # flows with both ends free, 1 -> 1 and 1 -> 2, share s1: min(1/2,
    # 1/1) = 1/2 each (back-fill would have given the first all of it).
    # They move their 1 MB by 2, but the next event is X's Gamma, 4: they
    # are counted ended at 4. Then Y's 1 -> 0 alone: 3 MB, ends at 7
    xy = cofs(([0], {0: 4}), ([1], {0: 3, 1: 1, 2: 1}))
    seen = []
    s = sim('varys', xy, watch=lambda t, dt, f, r: seen.append(
        (t, dt, f.tolist(), r.tolist())))
    assert seen[0] == (0.0, 4.0, [0, 2, 3], [1.0, 0.5, 0.5])
    assert flow_end(s, 1, 1, 'b') == flow_end(s, 1, 2, 'b') == 4.0
    assert ends(s) == {'a': 4.0, 'b': 7.0}
    # greedy rates: 1 -> 1 takes s1 at 0 and ends at 1, 1 -> 2 at 2
    g = sim('sebf', xy)
    assert (flow_end(g, 1, 1, 'b'), flow_end(g, 1, 2, 'b')) == (1.0, 2.0)


def test_madd_back_fills_flows_in_order_with_what_both_ends_have_left():
    # one coflow, mappers 0 and 1; reducer 0 gets 6 MB (3 a flow), reducer
    # 1 2 MB (1 a flow). Gamma = 6 (r0); rates 1/2, 1/2, 1/6, 1/6 leave
    # s0 and s1 1/3 each, r1 2/3. Back-fill in flow order: 0 -> 1 adds
    # min(1/3, 2/3) = 1/3, 1 -> 1 adds min(1/3, 1/3) = 1/3: both 1/2
    seen = []
    s = sim('varys', cofs(([0, 1], {0: 6, 1: 2})), ports=2,
            watch=lambda t, dt, f, r: seen.append((dt, r)))
    dt, r = seen[0]
    assert dt == 6.0 and r == pytest.approx([0.5, 0.5, 0.5, 0.5])
    # the 1 MB flows are done by 2 but counted at the event, 6
    assert s.flow_end.tolist() == [6.0] * 4


# --- properties -------------------------------------------------------------

def naive_greedy(c, rank):
    """The greedy loop as scheduler.cpp states it: at every event every
    flow in priority order takes its two ports if both are free."""
    order = np.argsort(rank, kind='stable')
    flows = [f for j in order for f in range(c.first[j], c.first[j + 1])]
    rem = c.size.copy()
    end = np.full(len(rem), np.nan)
    t = 0.0
    while (rem > 0).any():
        busy_s, busy_r, going = set(), set(), []
        for f in flows:
            if rem[f] > 0 and c.src[f] not in busy_s \
                    and c.dst[f] not in busy_r:
                busy_s.add(c.src[f])
                busy_r.add(c.dst[f])
                going.append(f)
        dt = min(rem[f] for f in going)
        t += dt
        for f in going:
            rem[f] -= dt
            if rem[f] == 0:
                end[f] = t
    return end


def random_coflows(rng, ports, n):
    out = []
    for _ in range(n):
        m = sorted(rng.choice(ports, rng.randint(1, ports + 1), replace=False))
        red = {int(r): len(m) * int(rng.randint(1, 6))
               for r in rng.choice(ports, rng.randint(1, ports + 1),
                                   replace=False)}
        out.append((m, red))
    return cofs(*out)


@pytest.mark.parametrize('seed', range(12))
def test_the_kept_greedy_matching_is_the_loops_own(seed):
    rng = np.random.RandomState(seed)
    cs = random_coflows(rng, 4, 6)
    for pol in ('sincronia', 'sebf'):
        s = sim(pol, cs, ports=4)
        assert s.flow_end.tolist() == naive_greedy(
            s.c, np.argsort(s.order)).tolist()


@pytest.mark.parametrize('policy', ['sincronia', 'sebf', 'varys'])
@pytest.mark.parametrize('seed', range(6))
def test_no_port_over_capacity_and_every_byte_moves(policy, seed):
    rng = np.random.RandomState(100 + seed)
    cs = random_coflows(rng, 4, 6)
    c = sc.Coflows(cs, 4)
    moved = np.zeros(len(c.size))
    slots = []

    def watch(t, dt, f, r):
        assert (r >= 0).all()
        slots.append((t, dt))
        for ends_ in (c.src[f], c.dst[f]):
            assert np.bincount(ends_, r, 4).max() <= 1 + 1e-9
        np.add.at(moved, f, np.minimum(r * dt, c.size[f]))

    s = sc.Simulation(c, c.rank(sc.ORDER[policy], GBIT), sc.RATES[policy],
                      watch=watch).run()
    assert np.isfinite(s.flow_end).all()
    assert (moved >= c.size - 1e-6).all()
    # events follow one another; a coflow ends with its last flow
    assert all(abs(a + da - b) < 1e-9 for (a, da), (b, _) in
               zip(slots, slots[1:]))
    for j in range(len(c.ids)):
        assert s.coflow_end[j] == s.flow_end[c.first[j]:c.first[j + 1]].max()


# --- the model in the pipeline ----------------------------------------------

# ABC above as a trace: arrivals 0, 0.5 and 0.9 s in the file
TRACE = '3 3\n1 0 1 0 1 1:4.0\n2 500 1 0 1 2:2.0\n3 900 1 1 1 2:3.0\n'


BASE = {'name': 'sc', 'backend': 'sim', 'model': 'sincronia',
        'topology': 'bigswitch,3', 'big_switch': True, 'link_bps': GBIT,
        'policy': 'sincronia',
        'trace': {'path': 't.txt', 'time_scale': 0}}


def spec(tmp_path, **over):
    return trace_experiments.spec(tmp_path, TRACE, BASE, over)


def load(tmp_path, **over):
    return trace_experiments.load(tmp_path, spec(tmp_path, **over))


def test_time_scale_zero_releases_every_coflow_at_once(tmp_path):
    exp = load(tmp_path)
    assert exp.trace.time_scale == 0
    run.check(exp)
    with pytest.raises(ConfigError, match=r'model sincronia is offline: '
                       r'every coflow is released at once, but coflow 1 '
                       r'arrives at 0 s and coflow 2 at 0.5 s \(set trace: '
                       r'time_scale: 0\)'):
        run.check(load(tmp_path, trace={'path': 't.txt'}))


def test_check_names_the_policies_the_model_implements(tmp_path):
    assert reference.module('sincronia') is sc
    with pytest.raises(ConfigError, match=r'model sincronia implements the '
                                          r'policies sincronia, sebf, varys; '
                                          r"got 'fair'"):
        run.check(load(tmp_path, policy='fair'))


def test_a_run_writes_the_usual_results(tmp_path):
    # the BSSI case above: CCTs 6, 5 and 3 MB-times of 1/128 s
    exp = load(tmp_path)
    out, summary = run.execute(exp, str(tmp_path / 'out'), say=lambda *a: 0)
    assert summary['totals']['avg_cct_s'] == pytest.approx(14 / 3 / 128)
    assert summary['coflows']['1']['cct_s'] == pytest.approx(6 / 128)
    assert summary['model'] == 'sincronia'
    ev = [json.loads(x) for x in open(tmp_path / 'out' / 'events.jsonl')]
    flows = [e for e in ev if e['ev'] == 'flow']
    assert [(f['coflow'], f['t'], f['bytes']) for f in flows] == [
        ('3', 3 / 128, 3 * MB), ('2', 5 / 128, 2 * MB), ('1', 6 / 128, 4 * MB)]
    assert [e['coflow'] for e in ev if e['ev'] == 'coflow_end'] == \
        ['3', '2', '1']


def test_the_rules_match_with_a_shifted_start(tmp_path):
    # every coflow at start_s = 2 s: the same CCTs, times shifted
    exp = load(tmp_path, trace={'path': 't.txt', 'time_scale': 0,
                                'start_s': 2.0})
    out, summary = run.execute(exp, str(tmp_path / 'out'), say=lambda *a: 0)
    assert summary['coflows']['3']['cct_s'] == pytest.approx(3 / 128)
    ex = types.SimpleNamespace(path='x', name='x')
    with pytest.raises(ConfigError, match='offline'):
        sc.released_at_once(ex, cofs(([0], {1: 1}))
                            + [Coflow('z', 1.0, (0,), ((1, MB),))])
