"""Ratios to a baseline and their 95% intervals, worked by hand."""
import math
import random

import pytest

from netsched.pipeline import stats


def test_mean_ci_by_hand():
    # mean 2, sample sd 1, n 3: half-width t(2) * 1 / sqrt(3)
    m, lo, hi = stats.mean_ci([1.0, 2.0, 3.0])
    h = 4.303 / math.sqrt(3)
    assert m == pytest.approx(2.0)
    assert (lo, hi) == (pytest.approx(2 - h), pytest.approx(2 + h))
    assert stats.mean_ci([5.0]) == (5.0, None, None)
    assert stats.mean_ci([None]) == (None, None, None)


def test_positive_ci_stays_above_zero_where_the_linear_one_does_not():
    xs = [1.0, 2.0, 4.0]                      # seconds, three seeds
    # linear: mean 7/3, sample sd sqrt(7/3) = 1.5275, half-width
    # 4.303 * 1.5275 / sqrt(3) = 3.7949, so the low end is -1.4616 s
    m, lo, hi = stats.mean_ci(xs)
    assert m == pytest.approx(7 / 3)
    assert lo == pytest.approx(-1.461556, abs=1e-5) and lo < 0
    # on the logs: 0, ln 2, 2 ln 2; mean ln 2 (the geometric mean 2),
    # sample sd ln 2, half-width 4.303 ln 2 / sqrt(3); mapped back,
    # 2 * 2 ** -+(4.303 / sqrt(3)) = 2 * 2 ** -+2.48434: 0.35741 to 11.192
    g, glo, ghi = stats.positive_ci(xs)
    k = 4.303 / math.sqrt(3)
    assert g == pytest.approx(2.0)
    assert glo == pytest.approx(2 * 2 ** -k)
    assert glo == pytest.approx(0.35741, abs=1e-5)
    assert ghi == pytest.approx(2 * 2 ** k)
    assert ghi == pytest.approx(11.192, abs=1e-3)
    # as wide in ratio below the geometric mean as above it
    assert g / glo == pytest.approx(ghi / g)
    assert stats.positive_ci([5.0]) == (pytest.approx(5.0), None, None)
    assert stats.positive_ci([None, None]) == (None, None, None)


def test_positive_ci_without_logarithms():
    # a zero: the linear interval (mean 1, sd 1, half-width 2.4843), its
    # low end cut at zero; with a negative value, left as it is
    m, lo, hi = stats.positive_ci([0.0, 1.0, 2.0])
    assert (m, lo) == (pytest.approx(1.0), 0.0)
    assert hi == pytest.approx(1 + 4.303 / math.sqrt(3))
    assert stats.positive_ci([-1.0, 1.0]) == stats.mean_ci([-1.0, 1.0])


def test_positive_ci_never_crosses_zero():
    rnd = random.Random(41)
    for _ in range(200):
        xs = [rnd.lognormvariate(0, 2) for _ in range(rnd.randint(2, 6))]
        g, lo, hi = stats.positive_ci(xs)
        assert 0 < lo <= g <= hi


def test_ratio_ci_is_the_geometric_mean_with_a_t_interval_on_logs():
    pairs = [(math.exp(0.1), 1.0), (2 * math.exp(0.3), 2.0)]
    r, lo, hi, n = stats.ratio_ci(pairs)
    # logs 0.1 and 0.3: mean 0.2, sd 0.1414, t(1) 12.706
    h = 12.706 * math.sqrt(0.02) / math.sqrt(2)
    assert n == 2
    assert r == pytest.approx(math.exp(0.2))
    assert lo == pytest.approx(math.exp(0.2 - h))
    assert hi == pytest.approx(math.exp(0.2 + h))
    # a ratio and its inverse mirror each other
    r2, lo2, hi2, _ = stats.ratio_ci([(b, x) for x, b in pairs])
    assert (r2, lo2, hi2) == (pytest.approx(1 / r), pytest.approx(1 / hi),
                              pytest.approx(1 / lo))
    # identical ratios: a zero-width interval
    assert stats.ratio_ci([(2, 1), (4, 2), (6, 3)])[:3] == \
        (pytest.approx(2), pytest.approx(2), pytest.approx(2))
    # missing or non-positive values are left out
    assert stats.ratio_ci([(None, 1), (1, 0), (3, 1)]) == \
        (pytest.approx(3.0), None, None, 1)


@pytest.mark.parametrize('ratio, lo, hi, verdict', [
    (0.9, 0.85, 0.95, 'better'), (1.1, 1.05, 1.2, 'worse'),
    (0.95, 0.8, 1.1, 'no difference'), (0.9, None, None, 'one seed'),
    (None, None, None, 'no data')])
def test_verdict(ratio, lo, hi, verdict):
    assert stats.verdict(ratio, lo, hi) == verdict


def test_against_baseline_pairs_by_seed_within_each_group():
    rows = []
    for link in (10, 40):
        for seed, base in ((1, 2.0), (2, 4.0), (3, 3.0)):
            rows.append({'backend': 'sim', 'link_gbps': link, 'seed': seed,
                         'policy': 'fair', 'avg_jct_s': base})
            # sebf is 0.5x fair at 10 Gbit/s, 1x at 40, seed by seed
            rows.append({'backend': 'sim', 'link_gbps': link, 'seed': seed,
                         'policy': 'sebf',
                         'avg_jct_s': base * (0.5 if link == 10 else 1.0)})
    rows.append({'backend': 'sim', 'link_gbps': 10, 'seed': 4,
                 'policy': 'sebf', 'avg_jct_s': 100.0})    # no pair: unused
    out = stats.against_baseline(rows, 'fair', ['avg_jct_s'], ['link_gbps'])
    by = {r['group']['link_gbps']: r for r in out}
    assert set(by) == {10, 40}
    assert by[10]['ratio'] == pytest.approx(0.5) and by[10]['n'] == 3
    assert by[10]['verdict'] == 'better'
    assert by[10]['base_mean'] == pytest.approx(3.0)
    assert by[40]['ratio'] == pytest.approx(1.0)
    assert all(r['policy'] == 'sebf' for r in out)
