"""netsched's rate allocator (netsched.fluid.allocate: strict priority
classes, max-min fair inside a class) against the independent reference
filler of tests/support/reference.py, on the same inputs: hand-worked cases
whose numbers both must give, and random ones (one class, a few, and
more classes than fluid's few-levels path takes)."""
import numpy as np
import pytest

from netsched import fluid
from tests.support.reference import max_min


def netsched_rates(flows, cap, keys=None):
    """fluid.allocate on flows given as lists of link names; flows with
    the same links share one path id, as the simulator's do (fluid fills
    them as one weighted group)."""
    links = sorted(cap)
    index = {l: i for i, l in enumerate(links)}
    paths = sorted({tuple(index[l] for l in f) for f in flows})
    pid = {p: i for i, p in enumerate(paths)}
    table = np.full((len(paths), max(len(p) for p in paths)), -1)
    for i, p in enumerate(paths):
        table[i, :len(p)] = p
    flow_path = np.array([pid[tuple(index[l] for l in f)] for f in flows])
    keys = np.zeros(len(flows), int) if keys is None else np.asarray(keys)
    rate, load = fluid.allocate(table, flow_path, keys,
                                np.array([float(cap[l]) for l in links]))
    carried = {l: sum(r for f, r in zip(flows, rate) if l in f)
               for l in links}
    assert load == pytest.approx([carried[l] for l in links], abs=1e-9)
    return rate


def reference_rates(flows, cap, keys=None):
    """Strict priority by hand: the reference max-min filler over each
    class in turn, on what the classes before it left."""
    keys = [0] * len(flows) if keys is None else list(keys)
    left = {l: float(c) for l, c in cap.items()}
    rate = np.zeros(len(flows))
    for k in sorted(set(keys)):
        idx = [i for i, kk in enumerate(keys) if kk == k]
        r = max_min([flows[i] for i in idx], left)
        for i, x in zip(idx, r):
            rate[i] = x
            for l in flows[i]:
                left[l] = max(left[l] - x, 0.0)
    return rate


def both(flows, cap, keys=None):
    got = netsched_rates(flows, cap, keys)
    assert got == pytest.approx(reference_rates(flows, cap, keys),
                                rel=1e-9, abs=1e-9)
    return got


def test_one_link_two_flows():
    assert both([['a'], ['a']], {'a': 10}) == pytest.approx([5, 5])


def test_bottleneck_elsewhere_frees_capacity():
    # f0 crosses a (10) and b (2); f1 crosses a only: f0 gets 2, f1 8
    assert both([['a', 'b'], ['a']], {'a': 10, 'b': 2}) == \
        pytest.approx([2, 8])


def test_three_flows_parking_lot():
    # long flow over a and b, one short flow on each: all get 5
    assert both([['a', 'b'], ['a'], ['b']], {'a': 10, 'b': 10}) == \
        pytest.approx([5, 5, 5])


def test_flows_on_one_path_share_as_a_group():
    # three flows on a alone (one path, one group of weight 3) and one
    # over a and b: b (1) holds the last to 1; a's 10 - 1 = 9 split 3 ways
    assert both([['a'], ['a'], ['a'], ['a', 'b']], {'a': 10, 'b': 1}) == \
        pytest.approx([3, 3, 3, 1])


def test_strict_priority_serves_a_class_before_the_next():
    # f0 (class 0) alone on b (3) shares a (10) with f1 (class 1): f0
    # takes 3, f1 the 7 left on a
    assert both([['a', 'b'], ['a']], {'a': 10, 'b': 3}, [0, 1]) == \
        pytest.approx([3, 7])
    # f0 (class 0) fills a (10); f1 (class 1) crosses a and b and gets
    # nothing, though b is free; f2 (class 1) on b alone takes all 4
    assert both([['a'], ['a', 'b'], ['b']], {'a': 10, 'b': 4},
                [0, 1, 1]) == pytest.approx([10, 0, 4])


def _random_case(seed, classes):
    rng = np.random.default_rng(seed)
    links = ['l%d' % i for i in range(8)]
    cap = {l: float(rng.uniform(1, 10)) for l in links}
    pool = [sorted(rng.choice(links, size=rng.integers(1, 4), replace=False))
            for _ in range(12)]      # few paths: flows share them
    flows = [list(pool[i]) for i in rng.integers(0, len(pool), 60)]
    keys = rng.permutation(len(flows)) % classes    # every class occurs
    return flows, cap, keys


@pytest.mark.parametrize('classes', [1, 3, 40])
@pytest.mark.parametrize('seed', range(4))
def test_random_cases_agree_with_the_reference(seed, classes):
    """40 classes: more than fluid.FEW_LEVELS, so its indexed path."""
    flows, cap, keys = _random_case(seed, classes)
    assert len(set(keys)) == classes
    r = both(flows, cap, keys)
    assert r.sum() > 0


@pytest.mark.parametrize('seed', range(4))
def test_max_min_properties_of_netsched_rates(seed):
    """One class: no link over capacity, and every flow has a full link
    on which no flow gets more (the definition of max-min fairness)."""
    flows, cap, _ = _random_case(seed, 1)
    r = netsched_rates(flows, cap)
    load = {l: sum(r[i] for i, f in enumerate(flows) if l in f) for l in cap}
    assert all(load[l] <= cap[l] * (1 + 1e-9) for l in cap)
    for i, f in enumerate(flows):
        assert any(abs(load[l] - cap[l]) < 1e-6 and
                   r[i] >= max(r[j] for j, g in enumerate(flows)
                               if l in g) - 1e-6
                   for l in f), i
