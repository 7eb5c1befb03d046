"""A crosscheck's figures (its metric per policy on each backend, each
job's and coflow's time on one backend against another, the errors per
pair of backends) and a compare folder's. Each function returns a list
of (name, caption, Figure); pipeline.plots.save writes one."""
import numpy as np

from . import crosscheck
from .plots import diagonal, figure, log_axis


def crosscheck_figures(report, summaries):
    """[(name, caption, Figure)] of a crosscheck folder: report as in its
    crosscheck.json, summaries {(backend, policy): summary} of the runs
    there. Works on an interrupted crosscheck (some runs missing, the
    report with totals only): each figure shows what there is. With
    three backends the scatter and the errors show every pair."""
    bs = crosscheck.backends_of(report)
    pols = []
    for p in [p for b in bs
              for p in report.get('totals', {}).get(b, {})] + \
            [p for _, p in summaries]:
        if p not in pols:
            pols.append(p)
    exp = next((s.get('experiment') for s in summaries.values()), None)
    names = [crosscheck.NAMES.get(b, b) for b in bs]
    head = '%s (crosscheck, %s)' % (exp, ' against '.join(names) if
                                    len(bs) == 2 else '%s and %s' % (
                                        ', '.join(names[:-1]), names[-1]))
    out = []
    for fig in (_cc_totals, _cc_scatter, _cc_errors):
        got = fig(report, summaries, pols, head, bs)
        if got:
            out.append(got)
    return out


def _policy_ticks(ax, pols):
    """Policy names under grouped bars, slanted when they would crowd."""
    long = max(map(len, pols)) > 14       # wider than a group of bars
    ax.set_xticks(range(len(pols)), pols, fontsize='small',
                  rotation=25 if long else 0, ha='right' if long else 'center',
                  rotation_mode='anchor')


def _grouped(ax, pols, series):
    """Grouped bars: series [(label, color, [value or None per policy])];
    a missing value is marked n/a."""
    w = 0.8 / len(series)
    for i, (label, color, vals) in enumerate(series):
        x = np.arange(len(pols)) + (i - (len(series) - 1) / 2) * w
        have = [v is not None for v in vals]
        bars = ax.bar(x[have], [v for v in vals if v is not None], w,
                      label=label, color=color)
        ax.bar_label(bars, fmt='%.3g', padding=2, fontsize='x-small')
        for xi in x[~np.array(have)]:
            ax.text(xi, 0, 'n/a', ha='center', va='bottom',
                    fontsize='x-small', color='0.4')
    _policy_ticks(ax, pols)
    ax.set_xlim(-0.5, len(pols) - 0.5)     # an n/a at either end too
    ax.margins(y=0.15)
    ax.grid(alpha=0.3, axis='y')
    ax.legend(fontsize='small')


def _cc_totals(report, summaries, pols, head, bs):
    metric = report.get('metric')
    if not metric or not pols:
        return None

    def total(b, p):
        v = report.get('totals', {}).get(b, {}).get(p)
        if v is None and (b, p) in summaries:
            v = summaries[b, p]['totals'].get(metric)
        return v
    series = [(b, 'C%d' % i, [total(b, p) for p in pols])
              for i, b in enumerate(bs)]
    if all(v is None for *_, vals in series for v in vals):
        return None
    fig = figure(max(6.4, 0.6 * len(bs) * len(pols) + 2), 4.4)
    ax = fig.add_subplot()
    _grouped(ax, pols, series)
    ax.set_ylabel('%s (s, lower is better)' % metric)
    what = '%s per policy on %s backends' % (
        metric, 'both' if len(bs) == 2 else 'all %d' % len(bs))
    if 'agree' in report:
        what += ': %s' % ('the rankings agree' if report['agree'] else
                          'they disagree on %s' % ', '.join(
                              '%s vs %s' % tuple(pq)
                              for pq in report['disagreements']))
    fig.suptitle('%s\n%s' % (head, what), fontsize='medium')
    names = [crosscheck.NAMES.get(b, b) for b in bs]
    return ('crosscheck_totals', 'The crosscheck\'s metric (%s) per policy '
            'on %s side by side; n/a where a run is missing or has no '
            'value.' % (metric, 'the %s and on the %s' % tuple(names)
                        if len(bs) == 2 else 'each backend (%s)'
                        % ', '.join(names)), fig)


def _pairs(summaries, pols, kind, a='sim', b='emu'):
    """{policy: [(a's, b's)]} of per-job JCTs (kind 'jobs') or per-coflow
    CCTs ('coflows') both runs have, backend b's against a's."""
    key = {'jobs': 'jct_s', 'coflows': 'cct_s'}[kind]
    out = {}
    for p in pols:
        if (a, p) not in summaries or (b, p) not in summaries:
            continue
        x, y = summaries[a, p][kind], summaries[b, p][kind]
        xy = [(x[k][key], y[k][key]) for k in x
              if k in y and x[k][key] is not None and y[k][key] is not None]
        if xy:
            out[p] = xy
    return out


def _cc_scatter(report, summaries, pols, head, bs):
    rows = []
    for a, b in crosscheck.backend_pairs(bs):
        panels = [(kind, label, _pairs(summaries, pols, kind, a, b))
                  for kind, label in (
                      ('jobs', 'job completion time (s)'),
                      ('coflows', 'coflow completion time (s)'))]
        panels = [x for x in panels if x[2]]
        if panels:
            rows.append((a, b, panels))
    if not rows:
        return None
    cols = max(len(panels) for *_, panels in rows)
    fig = figure(5.2 * cols + 0.6, 5.4 * len(rows) - 0.4 * (len(rows) - 1))
    axs = fig.subplots(len(rows), cols, squeeze=False)
    kinds = []
    for r, (a, b, panels) in enumerate(rows):
        for ax in axs[r][len(panels):]:
            ax.set_visible(False)
        for ax, (kind, label, by_pol) in zip(axs[r], panels):
            if kind not in kinds:
                kinds.append(kind)
            _cc_scatter_panel(ax, pols, kind, label, by_pol,
                              crosscheck.NAMES.get(a, a),
                              crosscheck.NAMES.get(b, b), len(rows) > 1)
    names = [(crosscheck.NAMES.get(a, a), crosscheck.NAMES.get(b, b))
             for a, b, _ in rows]
    fig.suptitle('%s\n%s, per %s' % (
        head, '; '.join('%s against %s' % (y, x) for x, y in names),
        ' and per '.join('job (JCT)' if k == 'jobs' else 'coflow (CCT)'
                         for k in kinds)), fontsize='medium')
    what = ' or '.join('job' if k == 'jobs' else 'coflow' for k in kinds)
    if len(rows) == 1:
        (x, y), = names
        text = ('Each point is one %s under one policy, its time on the %s '
                '(x) against the %s (y); on the dashed line the backends '
                'agree.' % (what, x, y))
    else:
        text = ('Each point is one %s under one policy, its time on the '
                'first backend of a pair (x) against the second (y), a row '
                'per pair; on the dashed line the two agree.' % what)
    return ('crosscheck_scatter', text, fig)


def _cc_scatter_panel(ax, pols, kind, label, by_pol, xname, yname, titled):
    v = np.array([x for xy in by_pol.values() for x in xy]).ravel()
    log = v.min() > 0 and v.max() / v.min() > 20
    pad = 0.08 * (v.max() - v.min()) or 0.05 * v.max()
    lo, hi = (v.min() / 1.3, v.max() * 1.3) if log else \
        (v.min() - pad, v.max() + pad)
    ax.plot([lo, hi], [lo, hi], color='0.5', ls='--', lw=1, label='y = x')
    for i, p in enumerate(pols):
        if p in by_pol:
            x, y = np.array(by_pol[p]).T
            ax.scatter(x, y, s=14 if kind == 'jobs' else 6, alpha=0.7,
                       color='C%d' % (i % 10), label=p)
    if log:
        log_axis(ax, 'x', lo, hi, dense=2)
        log_axis(ax, 'y', lo, hi, dense=2)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect('equal')
    ax.set_xlabel('%s: %s' % (xname, label))
    ax.set_ylabel('%s: %s' % (yname, label))
    ax.set_title('%s%s' % ('%s against %s, ' % (yname, xname) if titled
                           else '', 'per job' if kind == 'jobs'
                           else 'per coflow'), fontsize='medium')
    ax.grid(alpha=0.3)
    ax.legend(fontsize='x-small', loc='upper left')


def _pair_errors(report, summaries, pols, a, b):
    """{policy: errors} of backend b against a: the report's, else from
    the summaries where both runs of a policy are there."""
    pr = crosscheck.pairs_of(report).get(crosscheck.pair_name(a, b)) or {}
    errs = {}
    for p in pols:
        if p in pr.get('errors', {}):
            errs[p] = pr['errors'][p]
        elif (a, p) in summaries and (b, p) in summaries:
            errs[p] = crosscheck.errors(summaries[a, p], summaries[b, p])
    return errs


def _cc_errors(report, summaries, pols, head, bs):
    pairs = crosscheck.backend_pairs(bs)
    errs = {(a, b): _pair_errors(report, summaries, pols, a, b)
            for a, b in pairs}
    if not any(v is not None for e in errs.values() for x in e.values()
               for v in x.values()):
        return None
    shown = [p for p in pols if any(p in e for e in errs.values())]

    def pct(e, p, kind):
        x = (e.get(p) or {}).get(kind)
        return None if x is None else 100 * x
    if len(pairs) == 1:
        e, = errs.values()
        series = [(label, color, [pct(e, p, kind) for p in shown])
                  for kind, label, color in (
                      ('job jct_s', 'jobs\' JCT', 'C2'),
                      ('coflow cct_s', 'coflows\' CCT', 'C4'))]
        fig = figure(max(6.4, 1.2 * len(shown) + 2), 4.4)
        ax = fig.add_subplot()
        _grouped(ax, shown, series)
        ax.set_ylabel('mean |relative error| (%)')
        (a, b), = pairs
        x, y = crosscheck.NAMES.get(a, a), crosscheck.NAMES.get(b, b)
        fig.suptitle('%s\nhow far the %s is from the %s, per policy'
                     % (head, y, x), fontsize='medium')
        return ('crosscheck_errors', 'The %s\'s mean relative distance '
                'from the %s per policy, over the jobs\' JCTs and the '
                'coflows\' CCTs (both runs of a policy needed).' % (y, x),
                fig)
    fig = figure(2 * max(5.2, 0.5 * len(pairs) * len(shown) + 1.5), 4.6)
    axs = fig.subplots(1, 2)
    for ax, (kind, label) in zip(axs, (('job jct_s', 'per job (JCT)'),
                                       ('coflow cct_s', 'per coflow (CCT)'))):
        _grouped(ax, shown, [(crosscheck.pair_name(a, b), 'C%d' % (2 + i),
                              [pct(errs[a, b], p, kind) for p in shown])
                             for i, (a, b) in enumerate(pairs)])
        ax.set_title(label, fontsize='medium')
        ax.set_ylabel('mean |relative error| (%)')
    fig.suptitle('%s\nhow far each pair of backends is apart, per policy'
                 % head, fontsize='medium')
    return ('crosscheck_errors', 'Per pair of backends (a-b: b against a) '
            'and per policy, the mean relative distance of the jobs\' JCTs '
            '(left) and the coflows\' CCTs (right); both runs of a policy '
            'needed.', fig)


def compare_figures(rep):
    """A compare folder's figure: B's value against A's per job and per
    coflow (compare.json's rows), on the y = x line."""
    kinds = sorted({r[0] for r in rep['rows'] if r[2] is not None
                    and r[3] is not None})
    if not kinds:
        return []
    fig = figure(3.8 * len(kinds) + 0.5, 3.8)
    axs = fig.subplots(1, len(kinds), squeeze=False)
    for ax, k in zip(axs[0], kinds):
        pts = [(r[2], r[3]) for r in rep['rows'] if r[0] == k
               and r[2] is not None and r[3] is not None]
        x, y = zip(*pts)
        diagonal(ax, max(max(x), max(y)))
        ax.scatter(x, y, s=12, zorder=2)
        ax.set_xlabel('A: %s (s)' % k)
        ax.set_ylabel('B (s)')
        ax.grid(alpha=0.3)
    fig.suptitle('%s (B) against %s (A)' % (rep['b_label'], rep['a_label']))
    return [('compare', 'Each job\'s and coflow\'s value in B against A; '
             'points on the grey line are equal.', fig)]
