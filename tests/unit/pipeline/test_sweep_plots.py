"""A sweep's figures and its table of means, drawn from a made-up sweep
folder (no runs): log axes carry plain-number tick labels, not raw TeX,
the intervals of times stay above zero, and the bar charts say their
intervals are unpaired."""
import csv
import math

import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.text import Text

from netsched.pipeline import plots, report, sweep_plots

POLICIES = ['fair', 'sebf']
# per seed: average JCT, and the distributions' span (over decades on
# both links, so the CDFs' axes are logarithmic)
JCT = {1: 1.0, 2: 2.0, 3: 4.0}
SPAN = {'1': (0.004, 30.0), '100': (0.05, 4.0)}     # 3.9 and 1.9 decades


def write_csv(path, column, values):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow([column])
        w.writerows([[v] for v in values])


@pytest.fixture
def swept(tmp_path):
    """runs.csv's rows of a sweep over two policies, three seeds and
    link_gbps 1 and 100, each run's CSVs written in tmp_path."""
    rows = []
    for p in POLICIES:
        for link, (lo, hi) in SPAN.items():
            for seed, jct in JCT.items():
                run = 'sim-%s-link_gbps=%s-s%d' % (p, link, seed)
                d = tmp_path / run
                d.mkdir()
                values = [lo * (hi / lo) ** (i / 19) for i in range(20)]
                for _, fname, col, _ in sweep_plots.DISTRIBUTIONS:
                    write_csv(d / fname, col, values)
                rows.append({'run': run, 'backend': 'sim', 'policy': p,
                             'seed': seed, 'link_gbps': link,
                             'status': 'ok', 'avg_jct_s': jct})
    return str(tmp_path), rows


def texts(fig):
    """Every piece of text of a drawn figure: tick labels, titles,
    labels, legends."""
    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def log_tick_labels(fig):
    """The drawn tick labels of every log axis: {(axes index, 'x' or
    'y'): [label, ...]}."""
    fig.canvas.draw()
    out = {}
    for i, ax in enumerate(fig.axes):
        for which in 'xy':
            if getattr(ax, 'get_%sscale' % which)() == 'log':
                axis = getattr(ax, which + 'axis')
                out[i, which] = [t.get_text() for t in
                                 axis.get_ticklabels(which='both')
                                 if t.get_text()]
    return out


def raw_tex(labels):
    return [s for s in labels if '$' in s or 'mathdefault' in s]


def test_the_check_sees_matplotlibs_own_log_labels():
    """A log axis left to matplotlib, under plots' settings
    (text.parse_math off), prints TeX: what the checks below look for."""
    fig = Figure()
    ax = fig.subplots()
    ax.plot([0.01, 100], [0, 1])
    ax.set_xscale('log')
    assert raw_tex(log_tick_labels(fig)[0, 'x'])


def test_sweep_log_axes_have_plain_tick_labels(swept):
    root, rows = swept
    figs = sweep_plots.cdfs(root, rows, POLICIES, ['link_gbps'], 'tiny') \
        + sweep_plots.lines(rows, POLICIES, ['avg_jct_s'], ['link_gbps'],
                            'tiny')
    # a CDF figure per link rate, a figure of the JCT against it
    assert [n for n, _, _ in figs] == ['cdf_sim__link_gbps_1',
                                       'cdf_sim__link_gbps_100',
                                       'line_link_gbps_avg_jct_s']
    for name, _, fig in figs:
        labels = log_tick_labels(fig)
        # the CDFs' panels (iteration, JCT, CCT, SCT) and the line's axis
        # are logarithmic
        assert len(labels) == (4 if name.startswith('cdf') else 1), name
        for where, ls in labels.items():
            assert len(ls) >= 2, (name, where, ls)
            assert raw_tex(ls) == [], (name, where)
            for s in ls:
                float(s)                        # a plain number
        assert raw_tex(texts(fig)) == [], name
    # 3.9 decades: the decades alone; 1.9 decades: 1, 2 and 5 of each
    wide, narrow = (log_tick_labels(f)[0, 'x'] for _, _, f in figs[:2])
    assert {'0.01', '0.1', '1', '10'} <= set(wide) and '0.2' not in wide
    assert {'0.1', '0.2', '0.5', '1', '2'} <= set(narrow)


def test_log_axis_labels_both_axes_plainly():
    """The crosscheck's emulator-against-simulator scatter puts both
    axes on log_axis."""
    fig = plots.figure(4, 4)
    ax = fig.subplots()
    ax.plot([0.02, 50], [0.02, 50])
    plots.log_axis(ax, 'x', 0.02, 50, dense=2)
    plots.log_axis(ax, 'y', 0.02, 50, dense=2)
    labels = log_tick_labels(fig)
    assert set(labels) == {(0, 'x'), (0, 'y')}
    for ls in labels.values():
        assert raw_tex(ls) == [] and {'0.1', '1', '10'} <= set(ls)


def test_bar_and_table_intervals_of_times_stay_above_zero(swept):
    """JCTs of 1, 2 and 4 s: a linear t interval reaches -1.46 s; the
    log-scale one is 0.357-11.19 s around the geometric mean, 2 s
    (tests/unit/pipeline/test_stats.py works it by hand)."""
    _, rows = swept
    k = 4.303 / math.sqrt(3)
    lo, hi = 2 * 2 ** -k, 2 * 2 ** k
    fig = sweep_plots.bars(rows, POLICIES, ['avg_jct_s'], ['link_gbps'],
                           'tiny')[0][2]
    ax = fig.axes[0]
    containers = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(containers) == len(POLICIES)
    for bars in containers:
        assert [b.get_height() for b in bars] == [pytest.approx(2.0)] * 2
        for seg in bars.errorbar.lines[2][0].get_segments():
            assert seg[0][1] == pytest.approx(lo) and seg[0][1] > 0
            assert seg[1][1] == pytest.approx(hi)
    for _, table in report._means(rows, POLICIES, ['avg_jct_s'],
                                  ['link_gbps']):
        for _, cells in table:
            assert cells['avg_jct_s'] == (pytest.approx(2.0),
                                          pytest.approx(lo),
                                          pytest.approx(hi), 3)


def test_bar_charts_say_their_intervals_are_unpaired(swept):
    _, rows = swept
    (name, caption, fig), = sweep_plots.bars(rows, POLICIES, ['avg_jct_s'],
                                             ['link_gbps'], 'tiny')
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == \
        POLICIES + ['unpaired 95% CI']
    assert 'unpaired 95% CI' in ax.get_title()
    assert 'The intervals are unpaired' in caption
    assert 'paired ratios to the baseline' in caption
    (_, caption, fig), = sweep_plots.lines(rows, POLICIES, ['avg_jct_s'],
                                           ['link_gbps'], 'tiny')
    assert 'unpaired' in caption and 'unpaired' in fig.get_suptitle()
