"""Ratios to a baseline with 95% confidence intervals over seeds.

A policy's runs and the baseline's are paired by seed (and by every
other axis value): the same seed draws the same arrivals and placements
for both, so the per-seed ratio removes most of the workload's own
variation. The ratio reported is the geometric mean of the per-seed
ratios, and its interval is Student's t on their logarithms, mapped
back: a ratio and its inverse get mirror-image intervals, and a ratio
never goes below zero.

A policy's own values over seeds (times, all positive) are summarised
the same way by :func:`positive_ci`: the geometric mean with Student's t
on the logarithms, mapped back, so an interval never reaches zero; a
linear interval (mean_ci) on a few skewed seeds would ("3.154, -0.457 to
6.765" for a p95 CCT over two seeds).
"""
import math

# Student's t, 97.5th percentile (a two-sided 95% interval), by degrees
# of freedom; the normal quantile beyond the table
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
         2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
         2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
         2.048, 2.045, 2.042)


def t975(df):
    """Student's t quantile for a two-sided 95% interval: the table to
    30 degrees of freedom, then the Cornish-Fisher expansion around the
    normal quantile (within 0.001 of the exact value beyond 30)."""
    if df < 1:
        raise ValueError('no degrees of freedom')
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + \
        (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def mean_ci(xs):
    """(mean, low, high) of xs with a 95% t interval; low and high are
    None for fewer than two values."""
    xs = [float(x) for x in xs if x is not None]
    if not xs:
        return None, None, None
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, None, None
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    h = t975(len(xs) - 1) * sd / math.sqrt(len(xs))
    return m, m - h, m + h


def positive_ci(xs):
    """(geometric mean, low, high) of xs with a 95% t interval on their
    logarithms, mapped back: for positive quantities (times) the interval
    stays above zero and is as wide in ratio below the mean as above it.
    low and high are None for fewer than two values. Where a value is
    zero or negative the logarithms do not exist: mean_ci's arithmetic
    mean and interval, its low end cut at zero when no value is negative
    (a quantity that cannot be negative has no interval below zero)."""
    xs = [float(x) for x in xs if x is not None]
    if not xs or min(xs) <= 0:
        m, lo, hi = mean_ci(xs)
        if lo is not None and min(xs) >= 0:
            lo = max(lo, 0.0)
        return m, lo, hi
    m, lo, hi = mean_ci([math.log(x) for x in xs])
    return (math.exp(m), None if lo is None else math.exp(lo),
            None if hi is None else math.exp(hi))


def ratio_ci(pairs):
    """(ratio, low, high, n) of x over base from (x, base) pairs: the
    geometric mean of the ratios and a 95% t interval on their logs.
    Pairs with a missing or non-positive value are left out."""
    logs = [math.log(x / b) for x, b in pairs
            if x is not None and b is not None and x > 0 and b > 0]
    if not logs:
        return None, None, None, 0
    m, lo, hi = mean_ci(logs)
    return (math.exp(m), None if lo is None else math.exp(lo),
            None if hi is None else math.exp(hi), len(logs))


def verdict(ratio, lo, hi):
    """'better', 'worse' (lower is better) or 'no difference' when the
    interval holds 1; 'one seed' without an interval."""
    if ratio is None:
        return 'no data'
    if lo is None:
        return 'one seed'
    if hi < 1:
        return 'better'
    if lo > 1:
        return 'worse'
    return 'no difference'


def sort_key(x):
    """Numbers in numeric order before text (axis cells are text)."""
    try:
        return (0, float(x), '')
    except (TypeError, ValueError):
        return (1, 0.0, str(x))


def groups(rows, axes):
    """(group, rows) per backend and value of every other axis, in
    order; a group is {'backend': b, axis: value, ...}."""
    out = {}
    for r in rows:
        out.setdefault((r['backend'],) + tuple(r.get(a) for a in axes),
                       []).append(r)
    return [(dict(zip(('backend',) + tuple(axes), g)), rs) for g, rs in
            sorted(out.items(), key=lambda kv: [sort_key(x)
                                                for x in kv[0]])]


def _positive(x):
    return x is not None and x > 0


def against_baseline(rows, baseline, metrics, axes):
    """Per (backend, other axis values) group and policy: each metric's
    ratio to the baseline's, paired by seed. ``rows``: runs.csv rows
    with status ok; ``axes``: the swept keys besides policy and seed.
    Returns a list of dicts: group, policy, metric, ratio, low, high,
    n, unpaired, verdict, mean and base_mean (over the paired seeds)."""
    out = []
    for group, rs in groups(rows, axes):
        by_pol = {}
        for r in rs:
            by_pol.setdefault(r['policy'], {})[r['seed']] = r
        base = by_pol.get(baseline)
        if base is None:
            continue
        for pol, by_seed in by_pol.items():
            if pol == baseline:
                continue
            for m in metrics:
                seeds = [sd for sd in sorted(set(by_seed) & set(base))
                         if _positive(by_seed[sd].get(m))
                         and _positive(base[sd].get(m))]
                if not seeds:
                    continue
                ratio, lo, hi, n = ratio_ci([(by_seed[sd][m], base[sd][m])
                                             for sd in seeds])
                out.append({
                    'group': group,
                    'policy': pol, 'metric': m, 'ratio': ratio,
                    'low': lo, 'high': hi, 'n': n,
                    # seeds either run has without a value to pair
                    'unpaired': len(set(by_seed) | set(base)) - n,
                    'verdict': verdict(ratio, lo, hi),
                    'mean': mean_ci([by_seed[sd][m] for sd in seeds])[0],
                    'base_mean': mean_ci([base[sd][m] for sd in seeds])[0]})
    return out
