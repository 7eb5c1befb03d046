"""A sweep's figures: the paired ratios to the baseline (a forest plot,
the page's first figure), each metric per policy with its 95% interval over
seeds, distributions pooled over seeds per policy, and each metric
against every numeric swept axis. Each function returns a list of
(name, caption, Figure); pipeline.plots.save writes one.

The metrics are times: a point is the geometric mean over seeds and its
interval Student's t on the logarithms, mapped back
(stats.positive_ci), so no interval reaches below zero."""
import csv
import os

import numpy as np

from . import metrics
from . import stats
from .shapes import brief
from ..errors import ConfigError
from .plots import diagonal, figure, log_axis, ratio_axis

NAMES = metrics.TOTALS


def axis_label(m):
    return '%s (s)' % NAMES.get(m, m)
# distributions read from each run's CSVs: (name, file, column, label)
DISTRIBUTIONS = (('iteration', 'iterations.csv', 'iteration_time_s',
                  'iteration time (s)'),
                 ('jct', 'jobs.csv', 'jct_s', 'job completion time (s)'),
                 ('cct', 'coflows.csv', 'cct_s',
                  'coflow completion time (s)'),
                 ('sct', 'stages.csv', 'sct_s', 'stage completion time (s)'))
MAX_GROUPS = 8
# a line's style tells the other axes' values apart (its colour is the
# policy's)
STYLES = ('-', '--', ':', '-.')


def group_label(group):
    """'sim' or 'sim, link_gbps=40'."""
    return ', '.join([group['backend']] + ['%s=%s' % (k, v) for k, v in
                                           group.items() if k != 'backend'])


# a forest's row label is cut to this many characters (a policy named by
# its module path would squeeze the panel to nothing)
LABEL_CHARS = 32


def short(text, n=LABEL_CHARS):
    """``text`` cut to ``n`` characters with an ellipsis."""
    text = str(text)
    return text if len(text) <= n else text[:n - 1] + '…'


def forest(ratios, policies, metrics, baseline, title):
    """The answer as a figure: per group (backend and axis values, a
    panel each), every policy's paired ratio to the baseline per metric
    with its 95% interval (stats.against_baseline), on a log axis with a
    line at 1; left of it is lower, which is better for every metric."""
    by_group = {}
    for r in ratios:
        by_group.setdefault(group_label(r['group']), {})[
            r['policy'], r['metric']] = r
    if not by_group:
        return []
    groups = list(by_group.items())[:MAX_GROUPS]
    rows = [(m, p) for m in metrics for p in policies if p != baseline
            and any((p, m) in g for _, g in groups)]
    fig = figure(min(14, 2.6 + 3.6 * len(groups)),
                 1.4 + 0.3 * len(rows) + 0.25 * len(metrics))
    axs = fig.subplots(1, len(groups), squeeze=False, sharey=True)[0]
    ys, labels, y = [], [], 0.0
    for i, (m, p) in enumerate(rows):
        if i and rows[i - 1][0] != m:
            y += 0.6                  # a gap between metrics
        ys.append(y)
        labels.append('%s: %s' % (NAMES.get(m, m), short(p)))
        y += 1
    values = []
    for ax, (g, cells) in zip(axs, groups):
        ax.axvline(1.0, color='0.3', lw=1, zorder=1)
        for yy, (m, p) in zip(ys, rows):
            r = cells.get((p, m))
            if r is None:
                continue
            c = 'C%d' % (policies.index(p) % 10 if p in policies else 0)
            lo, hi = r['low'], r['high']
            err = None if lo is None else [[r['ratio'] - lo],
                                           [hi - r['ratio']]]
            # filled where the interval excludes 1: a difference at 95%
            filled = r['verdict'] in ('better', 'worse')
            ax.errorbar([r['ratio']], [yy], xerr=err, fmt='o', color=c,
                        mfc=c if filled else 'white', capsize=3, zorder=3)
            values += [v for v in (r['ratio'], lo, hi) if v]
        ax.set_title(g, fontsize='medium')
        ax.grid(alpha=0.3, axis='x')
        ax.set_xlabel('ratio to %s (log scale)' % short(baseline, 24))
    for ax in axs:
        ratio_axis(ax, 'x', values)
    axs[0].set_yticks(ys, labels)
    axs[0].invert_yaxis()
    handles = _forest_legend()
    fig.legend(handles=handles, loc='outside lower center',
               ncol=len(handles), fontsize='small', frameon=False)
    fig.suptitle('%s: each policy against %s, paired by seed'
                 % (title, short(baseline, 24)))
    n = max((r['n'] for r in ratios), default=0)
    return [('forest', 'Each policy\'s ratio to %s per metric: the '
             'geometric mean of the per-seed ratios (each policy\'s run '
             'over the baseline\'s of the same seed and axis values, %d '
             'seeds at most) with its 95%% confidence interval (Student\'s '
             't on the logarithms, mapped back). Left of the line at 1 the '
             'policy is faster; a filled point\'s interval excludes 1.'
             % (baseline, n), fig)]


# a reproduction's columns: (key in a headline's cols, label, colour)
STUDY_COLUMNS = (('sim', 'simulator, 8 classes', 'C0'),
                 ('sim_exact', 'simulator, full order', 'C2'),
                 ('emu', 'emulator', 'C3'),
                 ('ns3', 'ns-3', 'C1'))


def study_forest(heads):
    """A reproduction's answer as a figure: per claim, the measured
    speed-up of the policy over its paper's baseline (the baseline's
    value over the policy's, paired by seed, with its 95% interval) at
    each value of the study's axis (a row each) on each backend, and the
    paper's own figure as a diamond where the study gives it; a line at
    1, above which the policy is faster, as the papers state their
    claims."""
    rows = [h for h in heads if any(c['row'] for c in h['cols'].values())]
    if not rows:
        return []
    fig = figure(9, 1.6 + 0.55 * len(rows))
    ax = fig.subplots()
    ax.axvline(1.0, color='0.3', lw=1, zorder=1)
    values, shown = [], set()
    for i, h in enumerate(rows):
        for j, (key, label, c) in enumerate(STUDY_COLUMNS):
            r = h['cols'].get(key, {}).get('row')   # ns-3's where it ran
            if r is None or r['speedup'] is None:
                continue
            y = i - 0.15 + 0.15 * j    # the paper's diamond above
            err = None if r['low'] is None else [
                [r['speedup'] - r['low']], [r['high'] - r['speedup']]]
            filled = r['direction'] in ('agrees', 'opposite')
            ax.errorbar([r['speedup']], [y], xerr=err, fmt='o', color=c,
                        mfc=c if filled else 'white', capsize=3, zorder=3,
                        label=None if key in shown else label)
            shown.add(key)
            values += [v for v in (r['speedup'], r['low'], r['high']) if v]
        if h.get('paper_speedup'):
            ax.plot([h['paper_speedup']], [i - 0.3], marker='D', ms=8,
                    mfc='none', mec='k', ls='none', zorder=4,
                    label=None if 'paper' in shown else "the paper's figure")
            shown.add('paper')
            values.append(h['paper_speedup'])
    ratio_axis(ax, 'x', values)
    ax.set_yticks(range(len(rows)), [
        '%s: %s vs %s\n%s, %s=%s' % (
            h['study'], short(h['policy'], 20), short(h['against'], 20),
            NAMES.get(h['metric'], h['metric']), h['axis'], h['regime'])
        for h in rows], fontsize='small')
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel('speed-up over the baseline (log scale; above 1 the '
                  'policy is faster)')
    ax.grid(alpha=0.3, axis='x')
    fig.legend(loc='outside lower center', ncol=4, fontsize='small',
               frameon=False)
    fig.suptitle('Each policy against its paper\'s baseline, paired by '
                 'seed')
    return [('forest', 'Each claim\'s measured speed-up (the baseline\'s '
             'value over the policy\'s, the geometric mean of the per-seed '
             'ratios with its 95% interval) at each value of the '
             'study\'s axis, on each backend it ran on; a filled '
             'point\'s interval excludes 1. A diamond marks the '
             'paper\'s own figure where the study lists it.', fig)]


def _forest_legend():
    from matplotlib.lines import Line2D
    return [Line2D([], [], marker='o', color='0.3', ls='none',
                   label='interval excludes 1'),
            Line2D([], [], marker='o', color='0.3', mfc='white', ls='none',
                   label='interval holds 1 (or one seed)')]


def bars(rows, policies, shown, axes, title):
    """Per metric: each policy's geometric mean over seeds with its 95%
    interval (stats.positive_ci), one cluster of bars per group (backend
    and axis values). The intervals are unpaired (each policy's seeds on
    their own), and the legend and caption say so: overlapping bars can
    hide a difference the paired ratios to the baseline show."""
    gs = stats.groups(rows, axes)[:MAX_GROUPS]
    out = []
    for m in shown:
        fig = figure(max(5.5, 0.9 * len(gs) * len(policies) ** 0.5 + 2.5),
                     3.6)
        ax = fig.subplots()
        width = 0.8 / max(1, len(policies))
        x = np.arange(len(gs))
        handles = []
        for i, p in enumerate(policies):
            means, errs = [], [[], []]
            for _, rs in gs:
                mean, lo, hi = stats.positive_ci([r.get(m) for r in rs
                                                  if r['policy'] == p])
                means.append(np.nan if mean is None else mean)
                errs[0].append(0 if lo is None else mean - lo)
                errs[1].append(0 if hi is None else hi - mean)
            handles.append(ax.bar(
                x + (i - (len(policies) - 1) / 2) * width, means, width,
                yerr=errs, capsize=3, label=p, color='C%d' % (i % 10)))
        ax.set_xticks(x, [group_label(g) for g, _ in gs],
                      rotation=20 if len(gs) > 3 else 0,
                      ha='right' if len(gs) > 3 else 'center')
        ax.set_ylabel(axis_label(m))
        ax.set_ylim(bottom=0)
        ax.set_title('%s: %s per policy\ngeometric mean over seeds, '
                     'unpaired 95%% CI' % (title, NAMES.get(m, m)),
                     fontsize='medium')
        ax.grid(alpha=0.3, axis='y')
        # the error bars get their own legend entry, so that the figure
        # alone says they are unpaired
        ax.legend(handles + [handles[0].errorbar],
                  policies + ['unpaired 95% CI'], fontsize='small',
                  ncol=min(4, len(policies) + 1))
        out.append(('bars_%s' % m, 'The %s of each policy: the geometric '
                    'mean over its seeds, with its 95%% confidence interval '
                    '(Student\'s t on the logarithms, mapped back: never '
                    'below zero). The intervals are unpaired: each policy\'s'
                    ' seeds on their own, the workload\'s seed-to-seed '
                    'variation left in, so bars whose intervals overlap can '
                    'still differ. Compare policies by the paired ratios to '
                    'the baseline (the table of ratios).' % NAMES.get(m, m),
                    fig))
    return out


def read_column(run_dir, fname, column):
    """The non-empty values of one column of a run's CSV ([] without the
    file); a value that is not a number, or a file that is not CSV text,
    is a ConfigError naming the file and line."""
    path = os.path.join(run_dir, fname)
    out = []
    try:
        with open(path, newline='') as f:
            reader = csv.DictReader(f)
            for r in reader:
                v = r.get(column)
                if v in (None, ''):
                    continue
                try:
                    out.append(float(v))
                except (TypeError, ValueError):
                    raise ConfigError('%s:%d: %s: not a number: %s' % (
                        path, reader.line_num, column,
                        brief(v))) from None
    except OSError:
        return []
    except (csv.Error, UnicodeDecodeError) as e:
        raise ConfigError('%s: not CSV text: %s' % (path, e)) from None
    return out


def cdfs(root, rows, policies, axes, title):
    """Per group: CDFs of iteration time, JCT, CCT and SCT, each
    policy's runs pooled over seeds."""
    out = []
    for g, rs in stats.groups(rows, axes)[:MAX_GROUPS]:
        data = {}
        for name, fname, col, label in DISTRIBUTIONS:
            per = {p: [x for r in rs if r['policy'] == p
                       for x in read_column(os.path.join(root, r['run']),
                                            fname, col)]
                   for p in policies}
            if any(per.values()):
                data[name] = (label, per)
        if not data:
            continue
        n = len(data)
        fig = figure(3.6 * n + 0.5, 3.4)
        axs = fig.subplots(1, n, squeeze=False)
        for ax, (name, (label, per)) in zip(axs[0], data.items()):
            for i, p in enumerate(policies):
                x = np.sort(per.get(p) or [])
                if len(x):
                    ax.step(x, np.arange(1, len(x) + 1) / len(x),
                            where='post', label=p, color='C%d' % (i % 10))
            ax.grid(alpha=0.3)
            lo = np.nanmin([min(v) if v else np.nan
                            for v in per.values()] + [np.inf])
            hi = np.nanmax([max(v) if v else np.nan for v in per.values()])
            log = lo > 0 and hi > 20 * lo
            if log:
                log_axis(ax, 'x', lo, hi, dense=2)    # narrow panels
            # 'iteration time (s)' -> 'iteration time (s, log scale)'
            ax.set_xlabel(label[:-1] + ', log scale)' if log else label)
        axs[0][0].set_ylabel('CDF')
        axs[0][-1].legend(fontsize='small')
        fig.suptitle('%s (%s): distributions, seeds pooled'
                     % (title, group_label(g)))
        out.append(('cdf_%s' % _file_part(group_label(g)),
                    'Distributions on %s, every seed of each policy '
                    'pooled.' % group_label(g), fig))
    return out


def _sentence(text):
    return text[:1].upper() + text[1:]


def _file_part(text):
    return ''.join(c if c.isalnum() or c in '.-' else '_' for c in text)


def numeric_axes(rows, axes):
    """The swept keys whose values (text in runs.csv) are all numbers,
    two or more of them: {key: {cell: number}}."""
    out = {}
    for a in axes:
        try:
            vals = {r.get(a): float(r.get(a)) for r in rows}
        except (TypeError, ValueError):
            continue
        if len(vals) > 1:
            out[a] = vals
    return out


def lines(rows, policies, shown, axes, title):
    """Per numeric axis and metric: each policy's geometric mean with its
    95% interval (stats.positive_ci) against the axis value, a line per
    policy and other axis values (in the policy's colour), a panel per
    backend."""
    out = []
    for a, number in numeric_axes(rows, axes).items():
        others = [x for x in axes if x != a]
        backends = sorted({r['backend'] for r in rows})
        xs_all = sorted(set(number.values()))
        for m in shown:
            fig = figure(5 * len(backends) + 1, 3.8)
            axs = fig.subplots(1, len(backends), squeeze=False)
            for ax, b in zip(axs[0], backends):
                series, rest = {}, {}
                for r in rows:
                    if r['backend'] != b:
                        continue
                    k = (r['policy'],) + tuple(r.get(o) for o in others)
                    series.setdefault(k, {}).setdefault(
                        number[r[a]], []).append(r.get(m))
                for j, (k, by_x) in enumerate(sorted(
                        series.items(), key=lambda kv: (
                            policies.index(kv[0][0])
                            if kv[0][0] in policies else len(policies),
                            [stats.sort_key(x) for x in kv[0][1:]]))):
                    xs = sorted(by_x)
                    cis = [stats.positive_ci(by_x[x]) for x in xs]
                    ys = np.array([np.nan if c[0] is None else c[0]
                                   for c in cis])
                    lo = np.array([0 if c[1] is None else c[0] - c[1]
                                   for c in cis])
                    hi = np.array([0 if c[2] is None else c[2] - c[0]
                                   for c in cis])
                    i = policies.index(k[0]) if k[0] in policies else j
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker='o',
                                capsize=3, color='C%d' % (i % 10),
                                label=', '.join([k[0]] + [
                                    '%s=%s' % (o, v) for o, v in
                                    zip(others, k[1:])]),
                                linestyle=STYLES[rest.setdefault(
                                    k[1:], len(rest)) % len(STYLES)])
                if xs_all[0] > 0 and xs_all[-1] / xs_all[0] > 20:
                    # values over decades; the axis values label it
                    log_axis(ax, 'x', xs_all[0], xs_all[-1])
                ax.set_xticks(xs_all, ['%g' % x for x in xs_all])
                ax.set_xlabel(a)
                ax.set_ylabel(axis_label(m))
                ax.set_title(b)
                ax.grid(alpha=0.3)
                ax.legend(fontsize='x-small')
            fig.suptitle('%s: %s against %s\ngeometric mean over seeds, '
                         'unpaired 95%% CI' % (title, NAMES.get(m, m), a))
            out.append(('line_%s_%s' % (_file_part(a), m),
                        '%s against the swept %s, each point the geometric '
                        'mean over seeds with its 95%% interval (Student\'s '
                        't on the logarithms, mapped back), unpaired: each '
                        'policy\'s seeds on their own.'
                        % (_sentence(NAMES.get(m, m)), a), fig))
    return out


def backends(rows, policies, metric, axes, title):
    """Where runs ran on both backends: each run's metric on the
    emulator against the simulator's, a colour per policy, on y = x."""
    if metric is None:
        return []
    pts = {}
    for r in rows:
        k = (r['policy'],) + tuple(r.get(a) for a in axes) + (r['seed'],)
        pts.setdefault(k, {})[r['backend']] = r.get(metric)
    both = {k: v for k, v in pts.items() if v.get('sim') is not None
            and v.get('emu') is not None}
    if not both:
        return []
    fig = figure(5, 4.4)
    ax = fig.subplots()
    diagonal(ax, max(max(v['sim'], v['emu']) for v in both.values()))
    for i, p in enumerate(policies):
        xy = [(v['sim'], v['emu']) for k, v in both.items() if k[0] == p]
        if xy:
            x, y = zip(*xy)
            ax.scatter(x, y, s=18, label=p, color='C%d' % (i % 10),
                       zorder=2)
    ax.set_xlabel('simulator: ' + axis_label(metric))
    ax.set_ylabel('emulator: ' + axis_label(metric))
    ax.set_title('%s: emulator against simulator\n%s, one point per run'
                 % (title, NAMES.get(metric, metric)), fontsize='medium')
    ax.grid(alpha=0.3)
    ax.legend(fontsize='small')
    return [('backends_%s' % metric, 'Each run\'s %s on the emulator '
             'against the same run on the simulator; on the grey line '
             'they agree.' % NAMES.get(metric, metric), fig)]

