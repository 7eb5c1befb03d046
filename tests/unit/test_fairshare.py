import numpy as np

from tests.unit.reference import max_min


def test_one_link_two_flows():
    assert np.allclose(max_min([['a'], ['a']], {'a': 10}), [5, 5])


def test_bottleneck_elsewhere_frees_capacity():
    # f0 crosses a (10) and b (2); f1 crosses a only: f0 gets 2, f1 8
    assert np.allclose(max_min([['a', 'b'], ['a']], {'a': 10, 'b': 2}),
                       [2, 8])


def test_three_flows_parking_lot():
    # long flow over a and b, one short flow on each: all get 5
    r = max_min([['a', 'b'], ['a'], ['b']], {'a': 10, 'b': 10})
    assert np.allclose(r, [5, 5, 5])


def test_never_over_capacity_and_bottlenecked():
    rng = np.random.default_rng(3)
    links = ['l%d' % i for i in range(8)]
    cap = {l: float(rng.uniform(1, 10)) for l in links}
    flows = [list(rng.choice(links, size=rng.integers(1, 4), replace=False))
             for _ in range(30)]
    r = max_min(flows, cap)
    load = {l: sum(r[i] for i, f in enumerate(flows) if l in f) for l in links}
    assert all(load[l] <= cap[l] * (1 + 1e-9) for l in links)
    # every flow has a saturated link on which it is among the largest
    for i, f in enumerate(flows):
        assert any(abs(load[l] - cap[l]) < 1e-6 and
                   r[i] >= max(r[j] for j, g in enumerate(flows) if l in g) - 1e-6
                   for l in f)
