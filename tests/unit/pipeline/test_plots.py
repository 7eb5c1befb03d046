"""The run and crosscheck figures (netsched.pipeline.plots), drawn from
small simulated runs: which figures a run gets, their titles, the link
heat map's numbers, the topology's colours, readable tick labels, and
the files written."""
import copy
import itertools
import os

import numpy as np
import pytest
from matplotlib.collections import LineCollection, QuadMesh

from netsched import ROOT
from netsched.pipeline import crosscheck, experiment, metrics, run
from netsched.pipeline import crosscheck_plots, plots, report

BASE = ['iteration_cdf', 'jct', 'link_utilization', 'cct_cdf', 'topology']


def simulate(tmp_path_factory, name, draw=False):
    """One sim run of experiments/<name>.yaml: its directory, m, the
    summary as summary.json has it, and its figures by name."""
    exp = experiment.load(os.path.join(ROOT, 'experiments', name + '.yaml'),
                          backend='sim')
    result = run.execute(exp, str(tmp_path_factory.mktemp(name)),
                         say=lambda *_: None)
    if draw:
        report.write_run(result)
    d, s = result
    m = metrics.from_log(os.path.join(d, 'events.jsonl'))
    summary = metrics.load_summary(d)
    figs = plots.run_figures(m, summary)
    return {'dir': d, 'm': m, 'summary': summary, 'plots': s.get('plots'),
            'names': [n for n, _, _ in figs],
            'figs': {n: (caption, fig) for n, caption, fig in figs}}


@pytest.fixture(scope='module')
def demo(tmp_path_factory):            # k=4 fat-tree, 66 links used
    return simulate(tmp_path_factory, 'demo')


@pytest.fixture(scope='module')
def beamer(tmp_path_factory):          # tuning stages
    return simulate(tmp_path_factory, 'beamer')


@pytest.fixture(scope='module')
def pair(tmp_path_factory):            # CASSINI's circles; write_run draws
    return simulate(tmp_path_factory, 'cassini-pair', draw=True)


@pytest.fixture(scope='module')
def hybrid(tmp_path_factory):          # circuits
    return simulate(tmp_path_factory, 'hybrid')


RUNS = {'demo': BASE, 'beamer': BASE[:2] + ['sct'] + BASE[2:],
        'pair': BASE + ['circles'], 'hybrid': BASE + ['circuits']}


@pytest.mark.parametrize('which', sorted(RUNS))
def test_a_run_gets_the_figures_that_apply_to_it(which, request):
    r = request.getfixturevalue(which)
    assert r['names'] == RUNS[which]
    s = r['summary']
    for name, (caption, fig) in r['figs'].items():
        title = fig.get_suptitle()
        assert title.startswith(plots.headline(s) + '\n'), name
        for part in (s['experiment'], 'sim', 'policy ' + s['policy']):
            assert part in title, (name, title)
        assert caption.endswith('.') and caption.count('. ') == 0, caption


def test_the_headline_names_policy_parameters_and_circuits(hybrid):
    assert plots.headline(hybrid['summary']) == \
        'hybrid (sim, policy fair, circuits matching)'
    assert hybrid['summary']['circuit_scheduler'] == 'matching'
    s = {'experiment': 'x', 'backend': 'emu', 'policy': 'geryon',
         'policy_params': {'classes': 1}, 'circuit_scheduler': None}
    assert plots.headline(s) == 'x (emu, policy geryon:classes=1)'


def test_the_heat_map_averages_to_each_links_mean_utilisation(demo):
    s = demo['summary']
    fig = demo['figs']['link_utilization'][1]
    ax = fig.axes[0]
    mesh, = [c for c in ax.collections if isinstance(c, QuadMesh)]
    util = np.asarray(mesh.get_array())
    t = mesh.get_coordinates()[0, :, 0]           # bin edges (s)
    names = [x.get_text() for x in ax.get_yticklabels()]
    assert util.shape == (plots.HEAT_LINKS, len(t) - 1)
    assert len(s['links']) > plots.HEAT_LINKS     # some are hidden
    assert '(%d hidden)' % (len(s['links']) - plots.HEAT_LINKS) in \
        fig.get_suptitle()
    assert t[0] == 0 and t[-1] == pytest.approx(s['duration_s'], abs=1e-9)
    assert util.min() >= 0 and util.max() <= 1 + 1e-9
    mean = [s['links'][n]['mean_util'] for n in names]
    assert mean == sorted(mean, reverse=True)     # the busiest on top
    assert mean[0] == max(r['mean_util'] for r in s['links'].values())
    # each bin is the exact integral of the samples over it and the bins
    # tile [0, duration], so the length-weighted row average is the
    # summary's busy time / duration; only the bin edges' rounding to
    # 1 ns (on a run of ~10 s) separates them
    got = (util * np.diff(t)).sum(axis=1) / s['duration_s']
    assert list(got) == pytest.approx(mean, rel=1e-6, abs=1e-9)


def test_the_heat_map_bins_are_the_sample_intervals(pair):
    edges, util = plots.link_matrix(pair['m'], ['sl->sr'])
    width = np.diff(edges)
    assert np.median(width) == pytest.approx(0.02)   # the file's sample_s
    assert util.shape == (1, len(edges) - 1)


def test_the_topology_colours_each_link_by_its_utilisation(demo):
    s = demo['summary']
    ax = demo['figs']['topology'][1].axes[0]
    lines, = [c for c in ax.collections if isinstance(c, LineCollection)]
    vals = np.asarray(lines.get_array())
    g = metrics.graph(s)
    util = plots.link_util(g, s['links'])
    assert len(vals) == g.number_of_edges() == 48
    assert sorted(vals) == pytest.approx(sorted(util.values()))
    # the busiest link's edge: the strongest colour and the widest line
    busiest = max(s['links'], key=lambda k: s['links'][k]['mean_util'])
    u, _, v = busiest.partition('->')
    pos = plots.layout(g)
    seg = lines.get_segments()[int(np.argmax(vals))]
    assert {tuple(p) for p in seg} == {pos[u], pos[v]}
    assert vals.max() == pytest.approx(s['links'][busiest]['mean_util'])
    widths = lines.get_linewidths()
    assert np.argmax(widths) == np.argmax(vals)
    # 36 nodes: every one named
    assert {x.get_text() for x in ax.texts} == set(g)


def visible_tick_labels(ax, axis):
    lo, hi = sorted(getattr(ax, 'get_%slim' % axis)())
    return [x for x in getattr(ax, 'get_%sticklabels' % axis)(minor=False)
            + getattr(ax, 'get_%sticklabels' % axis)(minor=True)
            if x.get_visible() and x.get_text()
            and lo <= x.get_position()[axis == 'y'] <= hi]


def overlaps(labels, renderer):
    boxes = [x.get_window_extent(renderer) for x in labels]
    return [(a.get_text(), b.get_text())
            for (a, p), (b, q) in itertools.combinations(
                zip(labels, boxes), 2) if p.overlaps(q)]


def test_the_cct_cdf_has_a_log_axis_with_readable_labels(demo):
    fig = demo['figs']['cct_cdf'][1]
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_xscale() == 'log'          # 0.2 s to 2.4 s
    xs = visible_tick_labels(ax, 'x')
    assert len(xs) >= 3
    assert overlaps(xs, fig.canvas.get_renderer()) == []
    assert [x.get_text() for x in xs] == ['0.2', '0.5', '1', '2']


@pytest.mark.parametrize('which', sorted(RUNS))
def test_no_tick_labels_overlap(which, request):
    for name, (_, fig) in request.getfixturevalue(which)['figs'].items():
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        for ax in fig.axes:
            if ax.name != 'rectilinear':
                continue
            for axis in 'xy':
                assert overlaps(visible_tick_labels(ax, axis), r) == [], \
                    (which, name, axis)


MAGIC = {'png': b'\x89PNG\r\n\x1a\n', 'svg': b'<?xml', 'pdf': b'%PDF-'}


@pytest.mark.parametrize('fmt', sorted(MAGIC))
def test_save_writes_the_format(fmt, pair, tmp_path):
    fig = pair['figs']['jct'][1]
    path = plots.save(fig, str(tmp_path), 'jct', fmt)
    assert path == str(tmp_path / ('jct.' + fmt))
    with open(path, 'rb') as f:
        head = f.read(24)
    assert head.startswith(MAGIC[fmt])
    if fmt == 'png':                  # IHDR: width, height in pixels
        w, h = int.from_bytes(head[16:20], 'big'), \
            int.from_bytes(head[20:24], 'big')
        assert (w, h) == (round(fig.get_figwidth() * plots.DPI),
                          round(fig.get_figheight() * plots.DPI))


def test_save_refuses_other_formats(pair, tmp_path):
    with pytest.raises(ValueError, match='png, svg, pdf'):
        plots.save(pair['figs']['jct'][1], str(tmp_path), 'jct', 'gif')


def test_plot_writes_every_run_figure(pair, tmp_path):
    assert [os.path.basename(p) for p in pair['plots']] == \
        [n + '.png' for n in RUNS['pair']]
    assert all(os.path.getsize(p) for p in pair['plots'])
    # netsched report --format svg: the same figures, as files
    got = []
    report.write(str(tmp_path), fmt='svg', figdir='', files=got,
                 run=(pair['m'], pair['summary']))
    assert got == [str(tmp_path / (n + '.svg')) for n in RUNS['pair']]
    assert all(os.path.exists(p) for p in got)


def slower(s, by):
    """A copy of summary s with every JCT and CCT times ``by``."""
    s = copy.deepcopy(s)
    for kind, key in (('jobs', 'jct_s'), ('coflows', 'cct_s')):
        for r in s[kind].values():
            if r[key] is not None:
                r[key] *= by
    return s


def test_crosscheck_figures_of_an_interrupted_crosscheck(pair):
    s = pair['summary']
    # cassini ran on both backends (the "emulator" 10% slower), fair on
    # the simulator only; the report has its totals so far, no errors
    summaries = {('sim', 'cassini'): s, ('emu', 'cassini'): slower(s, 1.1),
                 ('sim', 'fair'): s}
    report = {'metric': 'avg_jct_s', 'totals': {
        'sim': {'cassini': 1.0, 'fair': 1.2}, 'emu': {'cassini': 1.1}}}
    figs = {n: fig for n, _, fig in crosscheck_plots.crosscheck_figures(report,
                                                             summaries)}
    assert list(figs) == ['crosscheck_totals', 'crosscheck_scatter',
                          'crosscheck_errors']
    for fig in figs.values():
        assert fig.get_suptitle().startswith('cassini-pair (crosscheck')
    ax = figs['crosscheck_totals'].axes[0]
    assert [x.get_text() for x in ax.get_xticklabels()] == ['cassini', 'fair']
    assert sorted(p.get_height() for p in ax.patches) == \
        pytest.approx([1.0, 1.1, 1.2])
    na, = [x for x in ax.texts if x.get_text() == 'n/a']
    assert na.get_position()[0] == pytest.approx(1.2)   # fair, emu's bar
    jobs, coflows = figs['crosscheck_scatter'].axes[:2]
    x, y = np.asarray(jobs.collections[0].get_offsets()).T
    assert len(x) == len(s['jobs']) and y == pytest.approx(1.1 * x)
    assert len(coflows.collections[0].get_offsets()) == \
        s['totals']['coflows_done']
    err = figs['crosscheck_errors'].axes[0]
    want = crosscheck.errors(s, summaries['emu', 'cassini'])
    assert [100 * want[k] for k in ('job jct_s', 'coflow cct_s')] == \
        pytest.approx([10, 10])
    assert [p.get_height() for p in err.patches] == pytest.approx([10, 10])


def test_crosscheck_figures_of_the_simulator_alone(pair):
    s = pair['summary']
    report = {'metric': 'avg_jct_s', 'totals': {'sim': {'cassini': 1.0}}}
    names = [n for n, _, _ in crosscheck_plots.crosscheck_figures(
        report, {('sim', 'cassini'): s})]
    assert names == ['crosscheck_totals']
    assert crosscheck_plots.crosscheck_figures({'metric': 'avg_jct_s'}, {}) == []
