"""netsched report: a sweep's page leads with the answer (ratios to the
baseline with their intervals), a run's and a compare's pages carry
their figures, everything inline; and a real browser shows the sweep's
page with every image decoded and no console error."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from netsched.pipeline import report, stats, sweep, sweep_plots
from tests import browser

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
# where the browser test leaves its screenshot (CI keeps the clone)
ARTIFACTS = os.environ.get('NETSCHED_TEST_ARTIFACTS',
                           os.path.join(ROOT, 'results', 'test-artifacts'))


def _cli(*args):
    r = subprocess.run([sys.executable, '-m', 'netsched'] + list(args),
                       capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


@pytest.fixture
def swept(tiny_sweep):
    return tiny_sweep['out']


def _images(html):
    return re.findall(r'<img src="([^"]*)"', html)


def test_kind_names_what_a_folder_holds(swept, tmp_path):
    assert report.kind(swept) == 'sweep'
    run = os.path.join(swept, sweep.read_rows(
        os.path.join(swept, 'runs.csv'))[0]['run'])
    assert report.kind(run) == 'run'
    with pytest.raises(Exception, match='not a run, sweep, crosscheck'):
        report.kind(str(tmp_path))


def test_sweep_report_leads_with_the_ratios_and_their_intervals(swept):
    with open(os.path.join(swept, 'report.html')) as f:
        html = f.read()
    answer = html.index('The answer')
    assert answer < html.index('Ratios to fair') < html.index('Figures') \
        < html.index('<h2>Runs')
    # one answer line per group, naming the metric and the interval
    for link in ('link_gbps=10', 'link_gbps=20'):
        assert re.search(r'<p>sim, %s: .*average JCT.*95%% CI '
                         r'[0-9.]+–[0-9.]+, 2 seeds' % link, html), link
    imgs = _images(html)
    assert imgs and all(s.startswith('data:image/png;base64,') for s in imgs)
    assert 'http://' not in html and 'https://' not in html
    # bars per metric, a CDF panel per group, lines against link_gbps
    for fig in ('bars_avg_jct_s', 'cdf_sim__link_gbps_10',
                'line_link_gbps_avg_jct_s'):
        assert 'id="%s"' % fig in html, fig
    # the table of runs links each run's own report
    rows = sweep.read_rows(os.path.join(swept, 'runs.csv'))
    assert len(rows) == 8
    for r in rows:
        assert '<a href="%s/report.html">' % r['run'] in html
        assert os.path.isfile(os.path.join(swept, r['run'], 'report.html'))


def test_sweep_report_says_the_bars_intervals_are_unpaired(swept):
    """The bars' intervals (each policy alone) can overlap where the
    paired ratio above them is clear: the page says which to read."""
    with open(os.path.join(swept, 'report.html')) as f:
        html = f.read()
    note = html.index('id="unpaired"')
    assert html.index('<h2>Figures') < note < html.index('id="bars_avg_jct_s"')
    assert 'paired ratios to fair above' in html[note:]
    bars = html[html.index('id="bars_avg_jct_s"'):]
    assert 'The intervals are unpaired' in bars[:bars.index('</figure>')]


def test_sweep_report_with_another_baseline_and_figure_files(swept,
                                                             tmp_path):
    out = str(tmp_path / 'copy')
    shutil.copytree(swept, out)
    path = report.write(out, baseline='sebf', fmt='svg')
    with open(path) as f:
        html = f.read()
    assert 'Ratios to sebf' in html
    files = os.listdir(os.path.join(out, 'figures'))
    assert files and all(f.endswith('.svg') for f in files)
    assert len(files) == len(_images(html))
    # a baseline no run has: said, not a crash
    path = report.write(out, baseline='varys')
    with open(path) as f:
        assert 'No run of the baseline varys finished' in f.read()


def test_compare_writes_a_folder_with_its_report(swept, tmp_path):
    rows = sweep.read_rows(os.path.join(swept, 'runs.csv'))
    a = os.path.join(swept, next(r['run'] for r in rows
                                 if r['policy'] == 'fair'))
    b = os.path.join(swept, next(r['run'] for r in rows
                                 if r['policy'] == 'sebf'))
    out = str(tmp_path / 'cmp')
    r = _cli('compare', a, b, '--out', out)
    assert 'report: ' in r.stdout
    with open(os.path.join(out, 'report.html')) as f:
        html = f.read()
    assert 'job jct_s' in html and len(_images(html)) == 1


def test_a_real_browser_shows_the_sweep_report(swept):
    browser.require()
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, 'sweep-report.png')
    seen = browser.inspect(os.path.join(swept, 'report.html'),
                           screenshot=shot)
    assert seen['title'].startswith('netsched: sweep of tiny')
    assert len(seen['images']) >= 5
    assert seen['broken'] == []
    assert seen['console'] == []
    assert seen['requests'] == []
    assert 'does best' in seen['text'] or 'no policy beats' in seen['text']
    with open(shot, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    # a run's own page, as linked from the sweep's
    run = sweep.read_rows(os.path.join(swept, 'runs.csv'))[0]['run']
    seen = browser.inspect(os.path.join(swept, run, 'report.html'))
    assert seen['title'].startswith('netsched: tiny (sim, policy fair)')
    assert len(seen['images']) >= 4 and seen['broken'] == []
    assert seen['console'] == [] and seen['requests'] == []


# every figure's text as drawn, and the size on screen of each axes'
# background (matplotlib's SVG: <g id="axes_N"> whose first patch is it)
FIGURES_JS = '''
return Array.from(document.querySelectorAll('svg')).map(function (svg) {
  return {
    name: svg.parentNode.id,
    texts: Array.from(svg.querySelectorAll('text')).map(
      function (t) { return t.textContent; }),
    axes: Array.from(svg.querySelectorAll('g[id^="axes_"]')).map(
      function (g) {
        var p = g.querySelector('g[id^="patch_"]');
        var r = (p || g).getBoundingClientRect();
        return [r.width, r.height];
      })
  };
});
'''


def test_a_real_browser_reads_the_sweep_figures_text_and_axes(swept,
                                                              tmp_path):
    """The sweep page's figures, written as SVG with their text kept as
    text (--style paper) and shown inline: no tick label or legend is
    raw TeX, and no axes has collapsed (each at least 40 px a side)."""
    browser.require()
    out = str(tmp_path / 'svg')
    shutil.copytree(swept, out)
    # every run's distributions over four decades, so that the CDFs'
    # axes are logarithmic: where matplotlib's own labels would be TeX
    values = [0.004 * (30 / 0.004) ** (i / 19) for i in range(20)]
    for row in sweep.read_rows(os.path.join(out, 'runs.csv')):
        for _, fname, col, _ in sweep_plots.DISTRIBUTIONS:
            with open(os.path.join(out, row['run'], fname), 'w') as f:
                f.write('%s\n' % col + ''.join('%r\n' % v for v in values))
    report.write(out, fmt='svg', style='paper')
    figdir = os.path.join(out, 'figures')
    names = sorted(os.listdir(figdir))
    assert names and all(n.endswith('.svg') for n in names)
    page = tmp_path / 'figures.html'
    with open(page, 'w') as f:
        f.write('<!doctype html><html><head><meta charset="utf-8"><title>'
                'figures</title></head><body>')
        for n in names:
            with open(os.path.join(figdir, n)) as g:
                svg = g.read()
            f.write('<div id="%s">%s</div>' % (n, svg[svg.index('<svg'):]))
        f.write('</body></html>')
    seen = browser.inspect(str(page), script=FIGURES_JS)
    figures = seen["script"]
    assert [fig['name'] for fig in figures] == names
    for fig in figures:
        texts = [t for t in fig['texts'] if t.strip()]
        assert texts, fig['name']
        raw = [t for t in texts if '$' in t or 'mathdefault' in t]
        assert raw == [], (fig['name'], raw)
        assert fig['axes'], fig['name']
        small = [a for a in fig['axes'] if min(a) < 40]
        assert small == [], (fig['name'], fig['axes'])
    cdfs = [fig for fig in figures if fig['name'].startswith('cdf')]
    assert cdfs and all({'0.01', '0.1', '1', '10'} <= set(fig['texts'])
                        for fig in cdfs)


def test_the_answer_names_a_policy_whose_interval_is_below_one():
    """The lowest point ratio may be uncertain while another policy is
    better with 95% confidence: the answer names the latter."""
    def r(pol, ratio, lo, hi):
        return {'group': {'backend': 'sim'}, 'policy': pol,
                'metric': 'avg_jct_s', 'ratio': ratio, 'low': lo,
                'high': hi, 'n': 5, 'verdict': stats.verdict(ratio, lo, hi)}
    out = report._answer([r('wild', 0.70, 0.40, 1.20),
                          r('steady', 0.90, 0.85, 0.95)],
                         'avg_jct_s', 'fair', ['fair', 'wild', 'steady'])
    assert out == ["sim: steady does best: average JCT 0.900× fair's "
                   "(95% CI 0.850–0.950, 5 seeds), 10.0% lower."]
    out = report._answer([r('wild', 0.70, 0.40, 1.20)], 'avg_jct_s',
                         'fair', ['fair', 'wild'])
    assert out[0].startswith('sim: no policy beats fair')


def test_a_one_policy_sweep_shows_its_means(swept, tmp_path):
    out = str(tmp_path / 'one')
    shutil.copytree(swept, out)
    rows = sweep.read_rows(os.path.join(out, 'runs.csv'))
    keep = [r['run'] for r in rows if r['policy'] == 'fair']
    with open(os.path.join(out, 'runs.csv')) as f:
        lines = f.read().splitlines()
    with open(os.path.join(out, 'runs.csv'), 'w') as f:
        f.write('\n'.join([lines[0]] + [ln for ln in lines[1:]
                                        if ln.split(',')[0] in keep]) + '\n')
    with open(os.path.join(out, 'sweep.json')) as f:
        d = json.load(f)
    d['policies'] = ['fair']
    with open(os.path.join(out, 'sweep.json'), 'w') as f:
        json.dump(d, f)
    with open(report.write(out)) as f:
        html = f.read()
    assert 'One policy (fair): nothing to compare' in html
    assert 'Means over seeds' in html and 'Ratios to' not in html
