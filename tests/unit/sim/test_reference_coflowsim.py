"""``model: coflowsim`` (netsched/sim/reference/coflowsim.py): CoflowSim's
rules on hand-worked cases, and the checks of the ``model`` key.

Every case runs on 1 Gbit/s = 2^30 bit/s ports: CoflowSim's step is
1024 / 128 = 8 ms of its clock, in which a port moves 2^30 / 8 * 8 / 1024
= 2^20 bytes = 1 MB at full rate; a flow ends at the end of the step in
which its last byte moves, and times are its ms (/ 1000 for s)."""
import json
import types

import numpy as np
import pytest

from netsched.errors import ConfigError
from netsched.pipeline import experiment, run
from netsched.policies import make
from netsched.sim import reference
from netsched.sim.reference import coflowsim as cs
from netsched.sim.reference import coflowsim_java as cj
from netsched.workload.trace import Coflow
from tests.support import trace_experiments

MB = 2 ** 20
GBIT = 2 ** 30


def sim(policy, coflows, ports=6, **params):
    """A Simulation of ``coflows`` ((id, arrival ms, mappers,
    {reducer: MB})) under ``policy``, run."""
    cofs = [Coflow(i, t / 1000.0, tuple(m), tuple((r, b * MB)
                                                 for r, b in red.items()))
            for i, t, m, red in coflows]
    exp = types.SimpleNamespace(policy=policy, policy_params=params,
                                link_bps=GBIT, timeout_s=None)
    s = cs.simulation(exp, cofs, ports)
    s.run()
    return s


def fin(s, src, dst, coflow=0):
    """The end (ms) of coflow ``coflow``'s flow src -> dst."""
    c = s.c
    f = np.arange(c.first[coflow], c.first[coflow + 1])
    return float(s.fin_ms[f[(c.src[f] == src) & (c.dst[f] == dst)][0]])


# --- reading and time -------------------------------------------------------

def test_the_trace_is_read_as_coflowsim_reads_it():
    # mappers {0, 1, 1} merge into 2; reducers in rack 2 merge (1.5 MB ->
    # 2 MB whole, + 1 MB) to 3 MB, rounded up to a multiple of 2 MB: 4 MB,
    # 2 MB a flow; rack 3's 0.25 MB -> 1 MB -> 2 MB: 1 MB a flow
    c = cs.Coflows([Coflow('a', 0.0, (1, 0, 1),
                           ((2, 1.5 * MB), (3, 0.25 * MB), (2, 1.0 * MB)))],
                   4)
    assert list(zip(c.src, c.dst, c.size / MB)) == [
        (0, 2, 2.0), (1, 2, 2.0), (0, 3, 1.0), (1, 3, 1.0)]
    assert c.bytes[0] == 6 * MB and c.width == [4]


def test_coflows_start_at_the_epoch_their_arrival_falls_in():
    # admitted at the first E (a multiple of 10240 ms) with arrival <= E +
    # 10240: 0 and 10240 -> 0, 10241 and 20480 -> 10240, 20481 -> 20480
    c = cs.Coflows([Coflow(str(i), t / 1000.0, (0,), ((1, MB),))
                    for i, t in enumerate((0, 10240, 10241, 20480, 20481))],
                   2)
    assert c.admit_ms.tolist() == [0, 0, 10240, 10240, 20480]


def test_a_cct_runs_from_the_epoch_start_not_the_arrival():
    # one 1 MB flow at full rate: 1 step. Arriving at 5000 ms it starts
    # at 0 and ends at 8 ms; arriving at 15000 ms it starts at 10240
    s = sim('fair', [('a', 5000, [0], {1: 1}), ('b', 15000, [0], {1: 1})])
    assert s.start_ms.tolist() == [0, 10240]
    assert s.end_ms.tolist() == [8, 10248]
    assert s.cct_ms.tolist() == [8, 8]


def test_the_step_follows_the_port_rate():
    assert cs.quantum_ms(GBIT) == 8             # 1024 / 128 MB/s
    assert cs.quantum_ms(2 ** 31) == 4          # 1024 / 256
    assert cs.quantum_ms(10 ** 9) == 8          # 1024 / int(119.2)
    with pytest.raises(ConfigError, match='link_bps.*coflowsim'):
        cs.quantum_ms(1e10)                     # 1024 // 1192 = 0


def test_java_random_gives_javas_doubles():
    # new java.util.Random(17).nextDouble(), three times, as Java 17
    # prints them
    r = cj.JavaRandom(17)
    assert [r.next_double() for _ in range(3)] == [
        0.7323115139597316, 0.6973704783607497, 0.08295611145017068]


def test_deadlines_are_skew_over_port_times_a_random_factor():
    # skew 2 MB at 128 MB/s: 15.625 ms x (1 + 0.7323...) = 27.067 ms; the
    # next 4 MB: 31.25 ms x 1.6974 = 53.04 ms
    d = cs.deadlines_ms([2 * MB, 4 * MB], GBIT)
    assert d == pytest.approx([15.625 * 1.7323115139597316,
                               31.25 * 1.6973704783607497])


# --- FAIR -------------------------------------------------------------------

def test_fair_takes_the_smaller_share_of_its_two_ports_and_no_refill():
    # a: 0 -> 1, 2, 3, 3 MB each; b: 4 -> 3, 6 MB. Flows at port 0 out: 3,
    # at 3 in: 2. Per step: a's flows min(1/1, 1/3) = min(1/1, 1/3) =
    # min(1/2, 1/3) = 1/3 MB; b's min(1/2, 1/1) = 1/2 MB (max-min would
    # give it 2/3: no refill). a ends after 3 / (1/3) = 9 steps = 72 ms;
    # b has 6 - 9/2 = 1.5 MB left, alone then at 1 MB a step: 2 more
    # steps, 11 = 88 ms
    s = sim('fair', [('a', 0, [0], {1: 3, 2: 3, 3: 3}),
                     ('b', 0, [4], {3: 6})])
    assert s.end_ms.tolist() == [72, 88]
    assert np.mean(s.cct_ms) == 80


def test_fair_recounts_every_step():
    # a: 0 -> 2, 2 MB; b: 0, 1 -> 2, 2 MB: 1 MB a flow. Three flows into 2:
    # 1/3 MB a step each; b's end after 3 steps (24 ms), a's has 1 MB left,
    # then 1 MB a step: 32 ms
    s = sim('fair', [('a', 0, [0], {2: 2}), ('b', 0, [0, 1], {2: 2})])
    assert s.end_ms.tolist() == [32, 24]


# --- SEBF (varys) and FIFO ---------------------------------------------------

def test_sebf_gives_madd_rates_then_back_fills():
    # one coflow, mappers 0, 1, reducers 2: 2 MB, 3: 4 MB: flows 0->2 and
    # 1->2 of 1 MB, 0->3 and 1->3 of 2 MB. Skew: port 3 in, 4 MB: MADD
    # rates (MB a step) 1/4, 1/4, 1/2, 1/2; free: out 0 and 1 1/4 each,
    # in 2 1/2, in 3 0. Back-fill in (reducer, mapper) order: 0->2 +1/4
    # (out 0 full), 1->2 +1/4 (out 1, in 2 full): 1/2 each, so the flows
    # into 2 end after 2 steps (16 ms), those into 3 after 4 (32 ms); a
    # flow ending frees nothing, and the coflow ends at 32 ms
    s = sim('varys', [('a', 0, [0, 1], {2: 2, 3: 4})])
    assert [fin(s, 0, 2), fin(s, 1, 2), fin(s, 0, 3), fin(s, 1, 3)] == \
        [16, 16, 32, 32]
    assert s.cct_ms.tolist() == [32]


def test_sebf_skips_a_coflow_at_a_full_port_and_shares_among_the_skipped():
    # b (skew 2 MB: 3 -> 2) goes before a (skew 3 MB: 0 -> 1 of 2 MB, 0 -> 2
    # of 1 MB). MADD b: 1 MB a step, in 2 full. a needs in 2: skipped; the
    # skipped share what both ends have free: 0 -> 1 gets min(1/1, 1/1);
    # 0 -> 2 nothing. After 2 steps b has ended (16 ms) and a's 0 -> 1 too;
    # rates anew: a's 0 -> 2, 1 MB, at full rate: one step, 24 ms
    s = sim('varys', [('a', 0, [0], {1: 2, 2: 1}), ('b', 0, [3], {2: 2})])
    assert s.end_ms.tolist() == [24, 16]
    assert fin(s, 0, 1) == 16


def test_sebf_orders_by_skew_at_arrival_and_fifo_by_arrival():
    # a: 0 -> 2, 4 MB; b: 1 -> 2, 2 MB; both need in 2. SEBF: b first
    # (skew 2 < 4), 2 steps (16 ms), then a 4 steps (48 ms). FIFO: a
    # first, 32 ms, then b, 48 ms
    coflows = [('a', 0, [0], {2: 4}), ('b', 0, [1], {2: 2})]
    assert sim('varys', coflows).end_ms.tolist() == [48, 16]
    assert sim('sebf', coflows).end_ms.tolist() == [48, 16]
    assert sim('fifo', coflows).end_ms.tolist() == [32, 48]


def test_sebf_ties_keep_the_trace_order():
    # equal skews (2 MB into port 2): the first in the trace goes first,
    # whatever the names ('10' sorts before '9' as text)
    s = sim('varys', [('9', 0, [0], {2: 2}), ('10', 0, [1], {2: 2})])
    assert s.end_ms.tolist() == [16, 32]


def test_back_fill_visits_flows_in_order_until_one_side_is_full():
    # free (bit/s) out [1, 1, 0], in [1/2, 1, 0]; flows in order 0->0, 1->0,
    # 2->1, 0->1: 0->0 takes min(1, 1/2) = 1/2 (in 0 full), 1->0 nothing,
    # 2->1 nothing (out 2 full), 0->1 min(1/2, 1) = 1/2
    c = types.SimpleNamespace(src=np.array([0, 1, 2, 0]),
                              dst=np.array([0, 0, 1, 1]), ports=3)
    s = cs.Simulation.__new__(cs.Simulation)
    s.c, s.rate = c, np.zeros(4)
    out, into = np.array([1.0, 1.0, 0.0]), np.array([0.5, 1.0, 0.0])
    s._backfill(np.arange(4), out, into)
    assert s.rate.tolist() == [0.5, 0, 0, 0.5]
    assert out.tolist() == [0, 1, 0] and into.tolist() == [0, 0.5, 0]


def test_back_fill_goes_in_deadline_order():
    # the key is int(start + deadline - now) (toward zero): at now = 8,
    # 0 + 18.9 - 8 = 10.9 and 0 + 18.2 - 8 = 10.2 tie at 10, so the order
    # given (SEBF's: 0 before 1) stands; 2's 17.99 - 8 = 9.99 -> 9 first;
    # 3's 7.5 - 8 = -0.5 -> 0 (not -1) before it
    s = cs.Simulation.__new__(cs.Simulation)
    s.start_ms = np.zeros(4)
    s.deadline_ms = np.array([18.9, 18.2, 17.99, 7.5])
    assert s._by_deadline([0, 1, 2, 3], 8.0) == [3, 2, 0, 1]
    assert s._by_deadline([1, 0, 2, 3], 8.0) == [3, 2, 1, 0]


# --- CoflowSim's arithmetic -------------------------------------------------

def steps(x, c, n):
    """The reference: Java's flow step x -= min(c, x), n times or until
    x <= 1e-3, one at a time (Python floats are Java's doubles)."""
    for k in range(1, n + 1):
        b = min(c, x)
        if x - b == x:
            return x, n, False, 0.0
        x -= b
        if x <= cj.ZERO:
            return x, k, True, b
    return x, n, False, 0.0


def counts(left, fr, per, fin, last, s):
    """The reference for count_down: each step the flows take off per
    (last in their ending step fin, nothing after) one after the other."""
    left, zero = [float(v) for v in left], [0] * len(left)
    for q in range(1, s + 1):
        for i, r in enumerate(fr):
            if not zero[r] and fin[i] >= q:
                left[r] -= last[i] if fin[i] == q else per[i]
        for r in range(len(left)):
            if not zero[r] and left[r] <= cj.ZERO:
                zero[r] = q
    return left, zero


def test_drain_rounds_ties_to_even_as_java_does():
    # 1.5 is 3 * 2^51 spacings u = 2^-52 (an even count); 1.5 u is half-way
    # between 1 and 2 spacings: 1.5 - 1.5 u rounds to the even count, 1.5 -
    # 2u, and so on: 3 steps take 6u. From 1.5 + u (odd) the first step
    # lands on the even 1.5 (a drop of u), then 2u a step: 1.5 - 4u
    u = 2.0 ** -52
    assert steps(1.5, 1.5 * u, 3)[0] == 1.5 - 6 * u
    assert steps(1.5 + u, 1.5 * u, 3)[0] == 1.5 - 4 * u
    x, k, done, _ = cj.drain([1.5, 1.5 + u], [1.5 * u] * 2, 3)
    assert x.tolist() == [1.5 - 6 * u, 1.5 - 4 * u] and k.tolist() == [3, 3]
    assert not done.any()


def test_drain_ends_a_flow_where_java_does():
    # 1 MB at a third of a MB a step: after 2 steps about 1/3 MB is left
    # (as rounded), the third step takes it all (min(c, x)): 3 steps, and
    # the last amount is what was left
    x, k, done, last = cj.drain([MB], [MB / 3], cj.BIG)
    ref = steps(float(MB), MB / 3, 10)
    assert (k[0], done[0], last[0]) == (3, True, ref[3]) and ref[1] == 3
    assert last[0] == pytest.approx(MB / 3)
    # a flow 1e-3 bytes or less from its end is done: 1 MB + 0.0005 at
    # 1 MB a step ends after 1 step, 0.0005 left over
    x, k, done, _ = cj.drain([MB + 0.0005], [float(MB)], cj.BIG)
    assert (k[0], done[0]) == (1, True) and x[0] == pytest.approx(0.0005)


def test_count_down_takes_flows_one_after_the_other():
    # a count of 4 and two flows of 0.25 a step (exact: multiples of the
    # spacing); the second ends in step 2 with 0.1: 4 - 0.5 = 3.5, then
    # 3.5 - 0.25 - 0.1 = 3.15, then 3.15 - 0.25 = 2.9 (as rounded)
    left, zero = cj.count_down([4.0], np.array([0, 0]), np.array([0.25, 0.25]),
                               np.array([np.inf, 2.0]), np.array([0.0, 0.1]),
                               3)
    assert left[0] == ((4.0 - 0.25 - 0.25) - 0.25 - 0.1) - 0.25
    assert left[0] == pytest.approx(2.9) and zero[0] == 0
    # a count of 1 at 0.4 a step: 0.6, 0.2, then below 1e-3 in step 3
    assert cj.count_down([1.0], np.array([0]), np.array([0.4]),
                         np.array([np.inf]), np.array([0.0]), 5)[1][0] == 3


def test_the_arithmetic_equals_javas_step_by_step():
    # random amounts (among them ties: half-way between two spacings),
    # against the one-step-at-a-time references above
    rng = np.random.default_rng(7)

    def tie(x):
        u = float(np.ldexp(1.0, np.frexp(x)[1] - 53))
        return (np.floor(rng.random() * 1e6) + 0.5) * u * 2.0 ** int(
            rng.integers(0, 12))
    for _ in range(300):
        x = float(rng.choice([MB * rng.integers(1, 100), rng.random() * 1e9,
                              rng.random() * 10]))
        c = float(rng.choice([x / rng.integers(1, 50), rng.random() * 1e5,
                              GBIT / 1024 / 3, tie(x), tie(x / 3)]))
        n = int(rng.choice([1, 5, 100, 20000]))
        got = cj.drain([x], [c], n)
        ref = steps(x, c, n)
        assert (got[1][0], got[2][0]) == (ref[1], ref[2]), (x, c, n)
        assert (got[3][0] if ref[2] else got[0][0]) == \
            (ref[3] if ref[2] else ref[0]), (x, c, n)
    for _ in range(100):
        m = rng.integers(1, 4, 2)
        fr = np.repeat([0, 1], m)
        left = np.array([float(rng.choice([MB * rng.integers(1, 60),
                                           rng.random() * 5e7, 3.0]))
                         for _ in range(2)])
        per = np.array([float(rng.choice([GBIT / 1024 / 3, rng.random() * 2e5,
                                          tie(left[r]), tie(left[r] / 5)]))
                        for r in fr])
        s = int(rng.choice([1, 7, 50, 400]))
        fin = np.array([float(rng.choice([np.inf, rng.integers(1, s + 2)]))
                        for _ in fr])
        last = per * rng.random(len(fr))
        got = cj.count_down(left, fr, per, fin, last, s)
        ref = counts(left, fr, per, fin, last, s)
        assert got[1].tolist() == ref[1], (left, per, fin, s)
        assert [g for g, z in zip(got[0], ref[1]) if not z] == \
            [r for r, z in zip(ref[0], ref[1]) if not z]


# --- DARK (aalo) -------------------------------------------------------------

THIN = {'first_mb': 2.0, 'multiplier': 10.0, 'num_queues': 2}


def test_dark_demotes_a_coflow_past_its_threshold_at_the_next_departure():
    # one threshold, 2 MB. a: 0 -> 1, 4 MB; b: 2 -> 3, 3 MB; c: 0 -> 4, 1 MB;
    # all in queue 0 in that order: a and b at 1 MB a step, c nothing
    # (out 0 full). b ends after 3 steps (24 ms); a has sent 3 MB > 2 MB:
    # queue 1, behind c. c at full rate: 1 step (32 ms); then a's last 1
    # MB: 40 ms
    s = sim('aalo', [('a', 0, [0], {1: 4}), ('b', 0, [2], {3: 3}),
                     ('c', 0, [0], {4: 1})], **THIN)
    assert s.end_ms.tolist() == [40, 24, 32]


def test_dark_moves_on_exceeding_a_threshold_not_reaching_it():
    # as above but b of 2 MB: it ends after 2 steps, when a has sent
    # exactly 2 MB: not more than the threshold, so a stays ahead of c
    # and ends at 32 ms, c after it at 40 ms
    s = sim('aalo', [('a', 0, [0], {1: 4}), ('b', 0, [2], {3: 2}),
                     ('c', 0, [0], {4: 1})], **THIN)
    assert s.end_ms.tolist() == [32, 16, 40]


def test_dark_shares_per_port_inside_a_coflow_without_refill():
    # one coflow, 0 -> 1 of 1 MB and 0 -> 2 of 3 MB: 2 flows out of port
    # 0, 1/2 MB a step each. 0 -> 1 ends after 2 steps (16 ms); 0 -> 2
    # keeps 1/2 MB (rates change only when a coflow arrives or ends):
    # 6 steps, 48 ms (with refill it would have ended at 32 ms)
    s = sim('aalo', [('a', 0, [0], {1: 1, 2: 3})])
    assert fin(s, 0, 1) == 16
    assert s.end_ms.tolist() == [48]


def test_dark_takes_aalos_thresholds():
    # aalo's defaults (10 MB x 10^k, 10 queues) are DARK's
    thr = make('aalo').thresholds()
    assert thr[0] == 10 * MB and len(thr) == 9
    assert thr[1] == 100 * MB


# --- the model key and the run ----------------------------------------------

TRACE = '6 2\n1 0 1 0 3 1:3.0 2:3.0 3:3.0\n2 0 1 4 1 3:6.0\n'


BASE = {'name': 'cs', 'backend': 'sim', 'model': 'coflowsim',
        'topology': 'bigswitch,6', 'big_switch': True,
        'link_bps': GBIT, 'policy': 'fair', 'trace': {'path': 't.txt'}}


def spec(tmp_path, **over):
    return trace_experiments.spec(tmp_path, TRACE, BASE, over)


def load(tmp_path, **over):
    return trace_experiments.load(tmp_path, spec(tmp_path, **over))


def test_models_are_the_same_in_both_places():
    # the experiment loader may not import the simulator (test_layout):
    # it keeps its own copy of the list
    assert experiment.MODELS == reference.MODELS
    assert reference.module('coflowsim') is cs
    with pytest.raises(ConfigError, match='no reference module'):
        reference.module('maxmin')


@pytest.mark.parametrize('over, match', [
    ({'backend': 'emu', 'big_switch': None},
     r'model: coflowsim runs on the simulator only \(backend sim\), got '
     r'backend emu'),
    ({'big_switch': None}, r'model: coflowsim runs on a big switch'),
    ({'sim_packets': 'dc'}, r'model: coflowsim is a fluid model'),
    ({'model': 'ns3'}, r'model: must be one of maxmin, coflowsim, '
                       r'sincronia, got .ns3.'),
])
def test_the_model_key_is_checked(tmp_path, over, match):
    with pytest.raises(ConfigError, match=match):
        load(tmp_path, **over)


def test_a_model_runs_a_trace_alone(tmp_path):
    d = spec(tmp_path, trace=None)
    d['jobs'] = [{'id': 'j', 'model': 'resnet50', 'pattern': 'ring',
                  'workers': 2, 'iterations': 1}]
    with pytest.raises(ConfigError, match='model: coflowsim runs a coflow '
                                          'trace: the experiment has no '
                                          'trace section'):
        experiment.from_dict(d, str(tmp_path / 'e.yaml'))
    d['trace'] = {'path': str(tmp_path / 't.txt')}
    with pytest.raises(ConfigError, match='runs a coflow trace alone'):
        experiment.from_dict(d, str(tmp_path / 'e.yaml'))


def test_check_names_the_policies_the_model_implements(tmp_path):
    exp = load(tmp_path, policy='sincronia')
    with pytest.raises(ConfigError, match=r'policy: model coflowsim '
                                          r'implements the policies fair, '
                                          r"fifo, varys, sebf, aalo; got "
                                          r"'sincronia'"):
        run.check(exp)
    run.check(load(tmp_path, policy='aalo'))
    with pytest.raises(ConfigError, match='link_bps: model coflowsim'):
        run.check(load(tmp_path, link_bps=10 ** 10))


def test_a_run_writes_the_usual_results_and_records_the_model(tmp_path):
    # the FAIR case above (test_fair_takes_the_smaller_share...) through
    # netsched's pipeline: CCTs 72 and 88 ms, average 80 ms
    exp = load(tmp_path)
    out, summary = run.execute(exp, str(tmp_path / 'out'), say=lambda *a: 0)
    assert summary['totals']['avg_cct_s'] == pytest.approx(0.080)
    assert summary['coflows']['1']['cct_s'] == pytest.approx(0.072)
    assert summary['model'] == 'coflowsim'
    with open(tmp_path / 'out' / 'run.json') as f:
        info = json.load(f)
    assert info['model'] == 'coflowsim'
    assert info['backend_info']['model'] == 'coflowsim'
    flows = [json.loads(x) for x in open(tmp_path / 'out' / 'events.jsonl')
             if '"ev":"flow"' in x]
    assert len(flows) == 4 and {f['bytes'] for f in flows} == {3 * MB, 6 * MB}


def test_the_default_model_is_maxmin_and_recorded(tmp_path):
    exp = load(tmp_path, model=None)
    assert exp.model == 'maxmin'
    assert run.meta(exp)['model'] == 'maxmin'
    assert run.meta(load(tmp_path, model=None, backend='emu',
                         big_switch=None))['model'] is None
