"""The forest plots: a sweep's paired ratios to the baseline per policy
and metric with their intervals and a line at 1, first on its page; a
reproduction's measured speed-ups with the papers' figures beside them."""
import os

import matplotlib.lines
import pytest

from netsched.pipeline import plots, stats, sweep, sweep_plots


def _ratios():
    rows = [{'backend': 'sim', 'policy': p, 'seed': s, 'avg_jct_s': v,
             'avg_cct_s': v / 2}
            for p, vals in (('fair', (2.0, 4.0, 3.0)),
                            ('sebf', (1.0, 2.2, 1.4)),
                            ('mypackage.policies:AVeryLongPolicyClassName', (2, 4, 3)))
            for s, v in zip((1, 2, 3), vals)]
    return stats.against_baseline(rows, 'fair', ['avg_jct_s', 'avg_cct_s'],
                                  [])


def _texts(fig):
    fig.canvas.draw()
    return [t.get_text() for ax in fig.axes
            for t in ax.get_xticklabels() + ax.get_yticklabels()]


def test_one_point_and_interval_per_policy_and_metric():
    ratios = _ratios()
    pols = ['fair', 'sebf', 'mypackage.policies:AVeryLongPolicyClassName']
    (name, caption, fig), = sweep_plots.forest(
        ratios, pols, ['avg_jct_s', 'avg_cct_s'], 'fair', 'tiny')
    assert name == 'forest' and 'paired' in fig.get_suptitle()
    ax = fig.axes[0]
    assert ax.get_xscale() == 'log'
    # the line at 1
    assert any(isinstance(ln, matplotlib.lines.Line2D) and
               list(ln.get_xdata()) == [1.0, 1.0] for ln in ax.lines)
    pts = sorted(ln.get_xdata()[0] for ln in ax.lines
                 if ln.get_marker() == 'o')
    assert pts == pytest.approx(sorted(r['ratio'] for r in ratios))
    sebf = next(r for r in ratios if r['policy'] == 'sebf'
                and r['metric'] == 'avg_jct_s')
    assert sebf['verdict'] == 'better' and sebf['high'] < 1
    labels = _texts(fig)
    assert 'average JCT: sebf' in labels
    # a long name is cut, and no label is raw TeX
    assert any(t.endswith('…') and len(t) < 50 for t in labels)
    assert not any('$' in t or 'mathdefault' in t for t in labels)
    assert '1' in labels
    # nothing squeezed: the panel keeps most of its width
    fig.canvas.draw()
    assert ax.get_position().width > 0.3
    assert "ratio to fair" in caption or 'ratio to fair' in ax.get_xlabel()


def test_ratio_axis_ticks_hold_1_and_are_spread():
    fig = plots.figure(4, 2)
    ax = fig.subplots()
    plots.ratio_axis(ax, 'x', [0.93, 1.04])
    ticks = list(ax.get_xticks())
    assert 1.0 in ticks and len(ticks) >= 3
    lo, hi = ax.get_xlim()
    assert lo < 0.93 and hi > 1.04


def test_forest_is_first_on_the_sweep_page(tiny_sweep):
    out = tiny_sweep['out']
    with open(os.path.join(out, 'report.html'), encoding='utf-8') as f:
        page = f.read()
    first = page.index('<figure')
    assert page[first:first + 40].startswith('<figure id="forest"')
    assert first < page.index('The answer') + 3000
    assert page.index('id="forest"') < page.index('Ratios to')
    assert page.count('id="forest"') == 1


def test_study_forest_marks_the_papers_figure():
    row = {'speedup': 1.2, 'low': 1.1, 'high': 1.3, 'direction': 'agrees'}
    heads = [{'study': 'p3', 'policy': 'p3', 'against': 'fair',
              'metric': 'avg_iteration_s', 'axis': 'link_gbps',
              'regime': '10', 'paper_speedup': 1.66,
              'cols': {'sim': {'row': row}, 'sim_exact': {'row': None},
                       'emu': {'row': dict(row, speedup=1.05, low=0.9,
                                           high=1.2,
                                           direction='no difference')}}}]
    (name, caption, fig), = sweep_plots.study_forest(heads)
    ax = fig.axes[0]
    diamonds = [ln for ln in ax.lines if ln.get_marker() == 'D']
    assert [d.get_xdata()[0] for d in diamonds] == [1.66]
    pts = sorted(ln.get_xdata()[0] for ln in ax.lines
                 if ln.get_marker() == 'o')
    assert pts == [1.05, 1.2]
    assert "the paper's figure" in [t.get_text()
                                for t in fig.legends[0].get_texts()]
    assert 'diamond' in caption
    assert sweep_plots.study_forest([]) == []


def test_the_page_numbers_are_the_plotted_ones(tiny_sweep):
    out = tiny_sweep['out']
    ok = [r for r in sweep.read_rows(os.path.join(out, 'runs.csv'))
          if r['status'] == 'ok']
    ratios = stats.against_baseline(ok, 'fair', ['avg_jct_s'],
                                    ['link_gbps'])
    (_, _, fig), = sweep_plots.forest(ratios, ['fair', 'sebf'],
                                      ['avg_jct_s'], 'fair', 'tiny')
    assert len(fig.axes) == 2            # a panel per link rate
    got = sorted(ln.get_xdata()[0] for ax in fig.axes for ln in ax.lines
                 if ln.get_marker() == 'o')
    assert got == pytest.approx(sorted(r['ratio'] for r in ratios))
