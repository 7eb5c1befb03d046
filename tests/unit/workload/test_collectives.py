"""Collective algorithms: bytes per rank and steps against the textbook
formulas, hand-worked trees, and simulated times on one switch against
the alpha-beta cost (alpha = 0 in the fluid model: the beta term)."""
import json

import pytest

from netsched.errors import ConfigError
from netsched.pipeline import experiment, run
from netsched.workload import collectives

S = 840 * 1024          # divides by 2, 3, ... 8 and by the chunks used
MB = 2 ** 20
B = 8 * MB              # link bit/s: S/B = 0.8203125 s


def sent(name, p, **kw):
    s = collectives.make(name, p, S, **kw)
    return [b / S for b in s.sent_bytes()], s.steps


@pytest.mark.parametrize('p', [2, 3, 4, 5, 8])
def test_ring_all_reduce(p):
    per, steps = sent('ring', p)
    assert per == pytest.approx([2 * (p - 1) / p] * p)
    assert steps == 2 * (p - 1)


@pytest.mark.parametrize('p,logp', [(2, 1), (4, 2), (8, 3)])
def test_halving_doubling_power_of_two(p, logp):
    per, steps = sent('halving-doubling', p)
    assert per == pytest.approx([2 * (p - 1) / p] * p)   # the ring's bytes
    assert steps == 2 * logp


@pytest.mark.parametrize('p', [3, 5, 6, 7])
def test_halving_doubling_other_sizes(p):
    # p' = 4 (or 2 for p = 3) ranks run it; ranks 2i < 2r hand their
    # buffer to 2i+1 before and get the result after: S each way
    p2 = 1 << (p.bit_length() - 1)
    r = p - p2
    per, steps = sent('halving-doubling', p)
    core = 2 * (p2 - 1) / p2
    want = [1.0 if i < 2 * r and i % 2 == 0 else
            core + 1.0 if i < 2 * r else core for i in range(p)]
    assert per == pytest.approx(want)
    assert steps == 2 * (p2.bit_length() - 1) + 2


def test_double_binary_tree_is_nccls():
    # NCCL's trees.cc picture for 4 ranks: 0 - 2 - {1, 3}; mirrored
    # 3 - 1 - {0, 2}
    (pa, ca), (pb, cb) = collectives.double_tree(4)
    assert pa == [-1, 2, 0, 2] and ca == [[2], [], [1, 3], []]
    assert pb == [1, 3, 1, -1] and cb == [[], [0, 2], [], [1]]
    # 14 ranks: the btree of its comment (0 - 8; 8 - 4, 12; 12 - 10, 13)
    (parent, children), _ = collectives.double_tree(14)
    assert children[0] == [8] and children[8] == [4, 12]
    assert children[12] == [10, 13] and parent[13] == 12


@pytest.mark.parametrize('p', [2, 4, 6, 8, 16])
def test_complementary_trees(p):
    # every rank is an inner node in at most one of the two trees
    (_, ca), (_, cb) = collectives.double_tree(p)
    assert not any(ca[r] and cb[r] for r in range(p))


@pytest.mark.parametrize('p,chunks', [(4, 1), (8, 1), (8, 4)])
def test_tree_bytes_and_steps(p, chunks):
    # S/2 a tree: up once where not the root, down to each child
    per, steps = sent('tree', p, chunks=chunks)
    want = [0.0] * p
    for parent, children in collectives.double_tree(p):
        for r in range(p):
            want[r] += 0.5 * ((parent[r] >= 0) + len(children[r]))
    assert per == pytest.approx(want) and max(per) == pytest.approx(2.0)
    # H = 2 (p = 4) or 3 (p = 8) heights below the root, depth H - 1 of
    # the deepest sender: (chunks + H - 1) up and (chunks + H - 1) down
    H = {4: 2, 8: 3}[p]
    assert steps == 2 * (chunks + H - 1)


@pytest.mark.parametrize('p,g', [(4, 2), (8, 2), (8, 4), (6, 3)])
def test_hierarchical(p, g):
    n = p // g
    per, steps = sent('hierarchical', p, group=g)
    want = 2 * (g - 1) / g + 2 * (n - 1) / (n * g)
    assert per == pytest.approx([want] * p)
    assert steps == 2 * (g - 1) + 2 * (n - 1)


@pytest.mark.parametrize('p', [3, 4, 8])
def test_gather_scatter_broadcast_all_to_all(p):
    assert sent('all-gather', p) == (pytest.approx([(p - 1) / p] * p),
                                     p - 1)
    assert sent('reduce-scatter', p) == (pytest.approx([(p - 1) / p] * p),
                                         p - 1)
    assert sent('all-to-all', p) == (pytest.approx([(p - 1) / p] * p), 1)
    per, steps = sent('broadcast', p, chunks=4)
    assert per == pytest.approx([1.0] * (p - 1) + [0.0])
    assert steps == p - 1 + 4 - 1


@pytest.mark.parametrize('name', sorted(collectives.ALGORITHMS))
def test_transfers_wait_only_for_earlier_ones(name):
    s = collectives.make(name, 6, S, chunks=3, group=3)
    for i, t in enumerate(s.transfers):
        assert all(a < i for a in t.after)
        assert all(s.transfers[a].dst == t.src for a in t.after)
    for r, done in enumerate(s.done):
        assert all(s.transfers[a].dst == r for a in done)


def test_unknown_collective_and_groups():
    with pytest.raises(ConfigError, match="unknown collective 'butterfly'"):
        collectives.make('butterfly', 4, S)
    with pytest.raises(ConfigError, match='group of 3 does not divide 8'):
        collectives.make('hierarchical', 8, S, group=3)


# ------------------------------------------------ simulated, one switch

def simulated(tmp_path, name, p, **kw):
    """The time of one collective of S bytes over p hosts of one switch
    (communication only), in units of S/B, and its coflows."""
    prof = tmp_path / 'one.json'
    prof.write_text(json.dumps({'name': 'one', 'layers': [
        {'name': 'l', 'forward_ms': 0, 'backward_ms': 0,
         'tensors': [{'name': 'w', 'bytes': S}]}]}))
    d = {'topology': 'bigswitch,%d' % p, 'backend': 'sim', 'link_bps': B,
         'completion_tolerance': 0,
         'jobs': [dict(id='j', model='one.json', collective=name, workers=p,
                       iterations=1, compute_scale=0, bucket_mb=100, **kw)]}
    exp = experiment.from_dict(d, str(tmp_path / 'exp.yaml'))
    _, s = run.execute(exp, str(tmp_path / ('out-%s-%d' % (name, p))),
                       say=lambda m: None)
    return s['jobs']['j']['jct_s'] / (S * 8 / B), len(s['coflows'])


@pytest.mark.parametrize('name,p,kw,want', [
    # every step a rank sends and receives one part at the full rate
    ('ring', 4, {}, 2 * 3 / 4),
    ('ring', 8, {}, 2 * 7 / 8),
    ('halving-doubling', 4, {}, 2 * 3 / 4),
    ('halving-doubling', 8, {}, 2 * 7 / 8),
    ('reduce-scatter', 8, {}, 7 / 8),
    ('all-gather', 8, {}, 7 / 8),
    ('all-to-all', 8, {}, 7 / 8),             # p-1 flows share a port
    # (p - 1 + chunks - 1) steps of one chunk each
    ('broadcast', 4, {'chunks': 1}, 3),
    ('broadcast', 4, {'chunks': 4}, 6 / 4),
    # 2 (g-1)/g S + 2 (n-1)/n S/g: on one switch the ring's cost
    ('hierarchical', 8, {'group_size': 2}, 2 * 7 / 8),
    ('hierarchical', 8, {'group_size': 4}, 2 * 7 / 8),
    # hand-worked, 4 ranks, one chunk: leaves 1, 3 -> 2 and 2, 0 -> 1
    # share the downlinks of 2 and 1 (S/2 each at B/2: S/B); 2 -> 0 and
    # 1 -> 3 (S/2: 1/2); 0 -> 2 and 3 -> 1 (1/2); 2 -> 1, 3 and 1 -> 2, 0
    # share the uplinks of 2 and 1 (S/B): 3 S/B
    ('tree', 4, {'chunks': 1}, 3.0),
])
def test_simulated_time_is_the_alpha_beta_cost(tmp_path, name, p, kw, want):
    t, coflows = simulated(tmp_path, name, p, **kw)
    assert t == pytest.approx(want, rel=1e-3)
    # one coflow per step
    sched = collectives.make(name, p, S, chunks=kw.get('chunks', 1),
                             group=kw.get('group_size'))
    assert coflows == sched.steps


@pytest.mark.parametrize('p,chunks', [(4, 64), (8, 128)])
def test_pipelined_tree_reaches_its_bandwidth_bound(tmp_path, p, chunks):
    # inner nodes send and receive 2S: 2 S/B once the pipeline's fill is
    # small (within 1%)
    t, _ = simulated(tmp_path, 'tree', p, chunks=chunks)
    assert 2.0 <= t <= 2.0 * 1.01
