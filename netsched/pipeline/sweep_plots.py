"""A sweep's figures: each metric per policy with its 95% interval over
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
from .plots import diagonal, figure, log_axis

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

