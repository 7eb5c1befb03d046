"""Ratios to a baseline with 95% confidence intervals over seeds.

A policy's runs and the baseline's are paired by seed (and by every
other axis value): the same seed draws the same arrivals and placements
for both, so the per-seed ratio removes most of the workload's own
variation. The ratio reported is the geometric mean of the per-seed
ratios, and its interval is Student's t on their logarithms, mapped
back: a ratio and its inverse get mirror-image intervals, and a ratio
never goes below zero.
"""
import math

# Student's t, 97.5th percentile (a two-sided 95% interval), by degrees
# of freedom; the normal quantile beyond the table
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
         2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
         2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
         2.048, 2.045, 2.042)


def t975(df):
    if df < 1:
        raise ValueError('no degrees of freedom')
    return _T975[df - 1] if df <= len(_T975) else 1.960


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


def against_baseline(rows, baseline, metrics, axes):
    """Per (backend, other axis values) group and policy: each metric's
    ratio to the baseline's, paired by seed. ``rows``: runs.csv rows
    with status ok; ``axes``: the swept keys besides policy and seed.
    Returns a list of dicts: group, policy, metric, ratio, low, high,
    n, verdict, mean, base_mean."""
    groups = {}
    for r in rows:
        g = (r['backend'],) + tuple(r.get(a) for a in axes)
        groups.setdefault(g, {}).setdefault(r['policy'], {})[r['seed']] = r
    out = []
    for g, by_pol in sorted(groups.items(), key=lambda kv: [
            str(x) for x in kv[0]]):
        base = by_pol.get(baseline)
        if base is None:
            continue
        for pol, by_seed in by_pol.items():
            if pol == baseline:
                continue
            for m in metrics:
                seeds = sorted(set(by_seed) & set(base))
                pairs = [(by_seed[s].get(m), base[s].get(m)) for s in seeds]
                ratio, lo, hi, n = ratio_ci(pairs)
                if n == 0:
                    continue
                out.append({
                    'group': dict(zip(('backend',) + tuple(axes), g)),
                    'policy': pol, 'metric': m, 'ratio': ratio,
                    'low': lo, 'high': hi, 'n': n,
                    'verdict': verdict(ratio, lo, hi),
                    'mean': mean_ci([by_seed[s].get(m) for s in seeds])[0],
                    'base_mean': mean_ci([base[s].get(m)
                                          for s in seeds])[0]})
    return out
