"""Rate allocation: hand-worked cases and properties."""
import numpy as np
import pytest

from netsched import fluid, routing, topology


def alloc(paths, keys=None, cap=(10.0,), explicit=None):
    H = max(len(p) for p in paths)
    table = np.full((len(paths), H), -1)
    for i, p in enumerate(paths):
        table[i, :len(p)] = p
    keys = np.zeros(len(paths), int) if keys is None else np.array(keys)
    rate, load = fluid.allocate(table, np.arange(len(paths)), keys,
                                np.array(cap, float), explicit)
    expect = np.zeros(len(cap))
    for p, x in zip(paths, rate):
        expect[p] += x
    assert load == pytest.approx(expect)
    return rate


def test_two_flows_one_link_share_equally():
    assert alloc([[0], [0]]).tolist() == [5.0, 5.0]


def test_three_flows_two_links_max_min():
    # f0 crosses both links; f1 only link 0; f2, f3 only link 1 (cap 12):
    # link 1 gives 4 each to f0, f2, f3; f1 takes the 6 left on link 0
    r = alloc([[0, 1], [0], [1], [1]], cap=(10.0, 12.0))
    assert r.tolist() == pytest.approx([4.0, 6.0, 4.0, 4.0])


def test_strict_priority_high_class_first_low_gets_leftover():
    # f0 (class 0) alone on link 1 and shares link 0 with f1 (class 1)
    r = alloc([[0, 1], [0]], keys=[0, 1], cap=(10.0, 3.0))
    assert r.tolist() == pytest.approx([3.0, 7.0])
    r = alloc([[0], [0], [0]], keys=[1, 0, 1])
    assert r.tolist() == pytest.approx([0.0, 10.0, 0.0])


def test_explicit_rates_reserved_then_backfilled():
    r = alloc([[0, 1], [0], [1]], cap=(10.0, 10.0),
              explicit=np.array([8.0, np.nan, np.nan]))
    assert r.tolist() == pytest.approx([9.0, 1.0, 1.0])


def test_explicit_rates_over_capacity_are_scaled_down():
    r = alloc([[0], [0]], explicit=np.array([8.0, 12.0]))
    assert r.sum() == pytest.approx(10.0)
    assert r[1] / r[0] == pytest.approx(1.5)


def _random_case(seed, n=300):
    g = topology.fat_tree(4, link_bps=10.0)
    hosts = topology.hosts(g)
    rng = np.random.default_rng(seed)
    links = {}
    for u, v, d in g.edges(data=True):
        links[(u, v)] = links[(v, u)] = None
    index = {l: i for i, l in enumerate(sorted(links))}
    cap = np.full(len(index), 10.0)
    paths = []
    for _ in range(n):
        s, d = rng.choice(len(hosts), 2, replace=False)
        ft = routing.FiveTuple(g.nodes[hosts[s]]['ip'],
                               g.nodes[hosts[d]]['ip'], 6,
                               int(rng.integers(1024, 65535)), 5001)
        paths.append([index[h] for h in routing.path_links(g, ft)])
    keys = rng.integers(0, 3, n)
    explicit = np.where(rng.random(n) < 0.1, rng.random(n) * 3, np.nan)
    return paths, keys, cap, explicit


@pytest.mark.parametrize('seed', range(5))
def test_never_over_capacity_and_work_conserving(seed):
    paths, keys, cap, explicit = _random_case(seed)
    for ex in (None, explicit):
        r = alloc(paths, keys, cap, ex)
        load = np.zeros(len(cap))
        for p, x in zip(paths, r):
            load[p] += x
        assert (r >= 0).all()
        assert (load <= cap * (1 + 1e-9)).all()
        # work conservation: every flow crosses a full link (otherwise it
        # could have been given more)
        full = load >= cap * (1 - 1e-9)
        assert all(full[p].any() for p in paths)


def test_max_min_matches_the_reference_filler():
    from tests.support.reference import max_min
    paths, _, cap, _ = _random_case(7, n=60)
    r = alloc(paths, cap=cap)
    ref = max_min([tuple(p) for p in paths], dict(enumerate(cap)))
    assert r == pytest.approx(ref)
