"""Figures of a run, from the metrics alone (a crosscheck's and a
compare's: pipeline.crosscheck_plots; a sweep's: pipeline.sweep_plots).

The figures are matplotlib Figures made without pyplot: nothing is kept
in a global registry and no display is needed, so the HTML report
(pipeline.report) can embed them and write them beside a run's CSVs. Every
run figure's title starts with :func:`headline`, and each figure comes
with a one-sentence caption.
"""
import collections
import contextlib
import math
import os

import numpy as np
from matplotlib import colormaps, rcParams
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import (FixedLocator, FuncFormatter, LogLocator,
                               NullFormatter, NullLocator)

from .. import topology
from ..errors import ConfigError
from . import metrics

# job and coflow names are the user's, drawn as they are: a pair of '$'
# in one would otherwise be read as mathematics (and may not parse)
rcParams['text.parse_math'] = False

DPI = 150                # png
FORMATS = ('png', 'svg', 'pdf')
FEW_JOBS = 12            # a legend entry or a coflow-strip row per job
HEAT_LINKS = 24          # rows of the link heat map: the busiest links
HEAT_BINS = 600          # its time bins at most
LABEL_NODES = 36         # node names drawn up to a k=4 fat-tree's
TITLE_CHARS = 100        # an experiment's name in a figure's title, at most
NAMED_BARS = 40          # a bar chart names every row up to this many
# utilisation 0 (light) to 1 (dark); YlOrRd's palest part left out so
# that an idle link still shows on white
UTIL_CMAP = ListedColormap(colormaps['YlOrRd'](np.linspace(0.12, 1, 256)),
                           name='utilisation')
# topology layers, bottom up; a hybrid fabric's circuit switches sit
# beside its spines so that a ToR's two kinds of uplink fan apart
LAYERS = {'host': 0, 'edge': 1, 'leaf': 1, 'switch': 1, 'aggregation': 2,
          'core': 3, 'spine': 3, 'ocs': 3}
# role -> marker, colour, name in the legend
ROLE_STYLE = {'host': ('s', '#9e9e9e', 'host'),
              'edge': ('o', '#4c72b0', 'edge switch'),
              'leaf': ('o', '#4c72b0', 'leaf (ToR)'),
              'switch': ('o', '#4c72b0', 'switch'),
              'aggregation': ('o', '#6a51a3', 'aggregation switch'),
              'core': ('o', '#2d2d2d', 'core switch'),
              'spine': ('o', '#2d2d2d', 'spine'),
              'ocs': ('D', '#1b9e77', 'circuit switch')}


def headline(summary):
    """What ran: 'demo (sim, policy fair)', the policy with its
    parameters ('geryon:classes=1') and, on a hybrid fabric, the circuit
    scheduler ('hybrid (sim, policy fair, circuits matching)'); a run
    that did not finish ends in ', INCOMPLETE'."""
    pol = summary.get('policy')
    params = summary.get('policy_params') or {}
    if params:
        pol += ':' + ':'.join('%s=%s' % kv for kv in sorted(params.items()))
    parts = [summary.get('backend'), 'policy %s' % pol]
    sched = summary.get('circuit_scheduler') or \
        (summary.get('circuits') or {}).get('scheduler')
    if sched:
        parts.append('circuits %s' % sched)
    return '%s (%s)%s' % (_drawn(summary.get('experiment')),
                          ', '.join(parts),
                          ', INCOMPLETE' if summary.get('complete') is False
                          else '')


def _drawn(name, most=TITLE_CHARS):
    """An experiment's name as a title draws it: a character the fonts
    have no glyph for (a control character: NUL) as its escape, and a
    name of thousands of characters cut, which took matplotlib seconds
    a figure to lay out."""
    text = ''.join(c if c.isprintable() else repr(c)[1:-1]
                   for c in str(name))
    return text if len(text) <= most else text[:most - 3] + '...'


def run_figures(m, summary):
    """[(name, caption, Figure)] of a run, those that apply to it: m from
    metrics.from_log, summary as in summary.json."""
    out = []
    for fig in (_iteration_cdf, _jct, _sct, _link_heat, _cct_cdf,
                _topology, _circles, _circuits):
        got = fig(m, summary)
        if got:
            out.append(got)
    return out


def save(fig, out_dir, name, fmt='png'):
    """Write fig as out_dir/name.fmt (png at DPI, svg or pdf); returns
    the path. The figure is not pyplot's, so there is nothing to close:
    it goes with its last reference."""
    if fmt not in FORMATS:
        raise ValueError('format must be one of %s, got %r'
                         % (', '.join(FORMATS), fmt))
    path = os.path.join(out_dir, '%s.%s' % (name, fmt))
    # no creation date in svg and pdf: the same run gives the same file
    fig.savefig(path, format=fmt, dpi=DPI, metadata={
        'svg': {'Date': None}, 'pdf': {'CreationDate': None}}.get(fmt))
    return path


# --style paper: a figure as a paper's column (or, past PAPER_WIDE
# inches on screen, its full text width) takes it, in a serif font that
# pdf and ps files embed as TrueType (Type 3 fonts are refused by many
# publishers' checks)
STYLES = ('default', 'paper')
PAPER_COLUMN_IN, PAPER_TEXT_IN, PAPER_WIDE = 3.3, 7.0, 7.5
PAPER_RC = {'font.family': 'serif', 'font.size': 8, 'axes.titlesize': 8,
            'axes.labelsize': 8, 'xtick.labelsize': 7, 'ytick.labelsize': 7,
            'legend.fontsize': 7, 'figure.titlesize': 9,
            'lines.linewidth': 1.0, 'lines.markersize': 4,
            'pdf.fonttype': 42, 'ps.fonttype': 42, 'svg.fonttype': 'none'}
# serif faces tried in this order; DejaVu Serif ships with matplotlib
PAPER_SERIF = ('Times New Roman', 'Nimbus Roman', 'TeX Gyre Termes',
               'Liberation Serif', 'DejaVu Serif')
_paper = False             # inside style('paper'): figure() sizes for it


@contextlib.contextmanager
def style(name=None):
    """Figures made and saved inside are drawn in ``name``'s style
    (None or 'default': as on the page; 'paper': PAPER_RC, sized by
    :func:`figure` for a column). A ConfigError for another name."""
    global _paper
    from matplotlib import font_manager, rc_context
    if name not in (None,) + STYLES:
        raise ConfigError('--style must be one of %s, got %r'
                          % (', '.join(STYLES), name))
    if name != 'paper':
        yield
        return
    have = {f.name for f in font_manager.fontManager.ttflist}
    # only faces this machine has: a missing one is a warning per figure
    serif = [f for f in PAPER_SERIF if f in have] or ['DejaVu Serif']
    with rc_context(dict(PAPER_RC, **{'font.serif': serif})):
        _paper = True
        try:
            yield
        finally:
            _paper = False


def figure(width, height):
    """A figure without pyplot (nothing to close; freed with its last
    reference), constrained layout; in the paper style scaled, its shape
    kept, to a column's width (a wide one to the text's)."""
    if _paper:
        scale = (PAPER_COLUMN_IN if width <= PAPER_WIDE
                 else PAPER_TEXT_IN) / width
        width, height = width * scale, max(1.6, height * scale)
    fig = Figure(figsize=(width, height), layout='constrained')
    FigureCanvasAgg(fig)        # fig.canvas.draw() works without pyplot
    return fig


def log_axis(ax, which, lo, hi, dense=3):
    """Put ax's ``which`` axis ('x' or 'y') on a log scale for values from
    lo to hi (both positive), its ticks at 1, 2 and 5 of each decade (1
    alone from ``dense`` decades on: fewer for a narrow panel) labelled
    as plain numbers ('0.2', '10'), minor ticks unlabelled. Every log
    axis goes through here: with text.parse_math off, matplotlib's own
    log labels are mathtext that prints as raw TeX
    ('$\\mathdefault{10^{0}}$')."""
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 0.0
    getattr(ax, 'set_%sscale' % which)('log')
    axis = getattr(ax, which + 'axis')
    axis.set_major_locator(LogLocator(
        subs=(1.0, 2.0, 5.0) if decades < dense else (1.0,),
        numticks=10))
    axis.set_major_formatter(FuncFormatter(lambda v, _: '%g' % v))
    # the minor labels are what overlapped, and matplotlib's are TeX too
    axis.set_minor_formatter(NullFormatter())


# ticks a ratio axis may have, from which those in its range are drawn
RATIO_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 0.95,
               1.0, 1.05, 1.1, 1.25, 1.5, 2.0, 4.0, 5.0, 10.0, 20.0, 50.0,
               100.0)


def ratio_axis(ax, which, values):
    """A log axis for ratios around 1: its range holds 1 and every value
    with a margin, its ticks the RATIO_TICKS in it spread over it,
    labelled as plain numbers (log_axis's, which puts ticks at
    decades only, would leave a range of 0.9-1.1 with the one tick at 1)."""
    vals = [v for v in values if v and v > 0] + [1.0]
    lo, hi = min(vals), max(vals)
    pad = max(math.log(hi / lo) * 0.08, 0.02)
    lo, hi = lo * math.exp(-pad), hi * math.exp(pad)
    getattr(ax, 'set_%sscale' % which)('log')
    getattr(ax, 'set_%slim' % which)(lo, hi)
    # outward from 1, a tick where it is at least an eighth of the range
    # from the last one kept: spread evenly, never crowded about 1
    gap = math.log(hi / lo) / 8
    ticks = [1.0]
    for side in ([t for t in RATIO_TICKS if lo <= t < 1][::-1],
                 [t for t in RATIO_TICKS if 1 < t <= hi]):
        last = 1.0
        for t in side:
            if abs(math.log(t / last)) >= gap:
                ticks.append(t)
                last = t
    ticks.sort()
    axis = getattr(ax, which + 'axis')
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _: '%g' % v))
    axis.set_minor_locator(NullLocator())


def _title(fig, summary, what):
    fig.suptitle('%s\n%s' % (headline(summary), what), fontsize='medium')


def _cdf(x):
    """A step plot's points of x's empirical CDF, rising from 0 at the
    smallest value (so that one value still shows)."""
    x = np.sort(x)
    return np.r_[x[0], x], np.arange(len(x) + 1) / len(x)


def _iteration_cdf(m, summary):
    by_job = {job: [d for _, _, d, _ in rows if d is not None]
              for job, rows in m['iteration_times'].items()}
    by_job = {job: x for job, x in by_job.items() if x}
    if not by_job:
        return None
    fig = figure(6.4, 4.4)
    ax = fig.add_subplot()
    for job in sorted(by_job, key=topology.natural):
        ax.step(*_cdf(np.asarray(by_job[job]) * 1e3), where='post',
                label=job)
    ax.set_xlabel('iteration time (ms, data-center units)')
    ax.set_ylabel('CDF')
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if len(by_job) <= FEW_JOBS:
        ax.legend(fontsize='small', loc='lower right')
    _title(fig, summary, 'iteration time per job (CDF)')
    return ('iteration_cdf', 'The distribution of each job\'s iteration '
            'times (one iteration\'s end to the next), a step curve per '
            'job%s.' % ('' if len(by_job) <= FEW_JOBS
                        else ' (%d jobs, no legend)' % len(by_job)), fig)


def _bars(names, values, colors=None):
    """A figure with one horizontal bar per name, top to bottom, each
    with its value; only every k-th name beyond NAMED_BARS rows."""
    n = len(names)
    fig = figure(6.4, min(12.0, 1.7 + 0.26 * n))
    ax = fig.add_subplot()
    bars = ax.barh(range(n), values, color=colors or 'C0')
    step = -(-n // NAMED_BARS)
    ax.set_yticks(range(0, n, step), names[::step],
                  fontsize='small' if n <= NAMED_BARS else 'x-small')
    ax.set_ylim(n - 0.5, -0.5)
    if n <= NAMED_BARS:
        ax.bar_label(bars, fmt='%.3g', padding=2, fontsize='x-small')
    ax.set_xlim(0, 1.15 * max(values))       # room for the values
    ax.grid(alpha=0.3, axis='x')
    return fig, ax


def _jct(m, summary):
    done = sorted(((j, r['jct_s']) for j, r in summary['jobs'].items()
                   if r['jct_s'] is not None),
                  key=lambda x: topology.natural(x[0]))
    if not done:
        return None
    fig, ax = _bars([j for j, _ in done], [v for _, v in done])
    ax.set_xlabel('job completion time (s)')
    n = len(summary['jobs'])
    _title(fig, summary, 'job completion time (JCT) per job'
           + ('' if len(done) == n else ', the %d of %d that finished'
              % (len(done), n)))
    return ('jct', 'Each finished job\'s completion time, from its '
            'arrival to its last iteration\'s end.', fig)


def _sct(m, summary):
    done = sorted(((s, r['sct_s']) for s, r in summary['stages'].items()
                   if r['sct_s'] is not None),
                  key=lambda x: topology.natural(x[0]))
    if not done:
        return None
    groups = sorted({s.partition('/')[0] for s, _ in done},
                    key=topology.natural)
    fig, ax = _bars([s for s, _ in done], [v for _, v in done],
                    ['C%d' % (groups.index(s.partition('/')[0]) % 10)
                     for s, _ in done])
    ax.set_xlabel('stage completion time (s)')
    _title(fig, summary, 'stage completion time (SCT) per tuning stage')
    return ('sct', 'Each tuning stage\'s completion time, from its start '
            'to its last configuration\'s end, a colour per tuning group.',
            fig)


def link_matrix(m, names):
    """The links' utilisation over time: (bin edges from 0 to the run's
    end, a row per name). The bins are the links' own sample intervals
    while there are fewer than HEAT_BINS of them, else HEAT_BINS equal
    bins; each holds the exact time average of the samples over it (a
    link's samples do not overlap, each holds for its dt, and a link is
    idle without one), so a row's average weighted by bin length is the
    link's mean_util in summary.json."""
    dur = max(m['duration_s'], 1e-12)
    cuts = np.unique(np.round([x for name in names
                               for t, dt, _ in m['links'][name]
                               for x in (t, t + dt)], 9))
    cuts = cuts[(cuts > 1e-9) & (cuts < dur - 1e-9)]
    edges = np.r_[0.0, cuts, dur] if len(cuts) + 1 < HEAT_BINS \
        else np.linspace(0.0, dur, HEAT_BINS + 1)
    out = np.zeros((len(names), len(edges) - 1))
    for i, name in enumerate(names):
        t, dt, u = np.array(sorted(m['links'][name]), float).reshape(-1, 3).T
        # busy time from 0 to each edge: the whole samples before it,
        # and the part of the one it falls in
        done = np.r_[0.0, np.cumsum(u * dt)]
        k = np.searchsorted(t, edges, side='right') - 1
        kk = np.maximum(k, 0)
        busy = np.where(k >= 0, done[kk] + u[kk] * np.clip(
            edges - t[kk], 0.0, dt[kk]), 0.0)
        out[i] = np.diff(busy) / np.diff(edges)
    return edges, out


def _phases(m):
    """[(job, [(start, length)])] of its coflows, for FEW_JOBS jobs or
    fewer (else [])."""
    phases = {}
    for c in m['coflows'].values():
        if c.get('job') is not None and c.get('arrival_s') is not None:
            end = c['end_s'] if c.get('end_s') is not None \
                else m['duration_s']
            phases.setdefault(c['job'], []).append(
                (c['arrival_s'], end - c['arrival_s']))
    if len(phases) > FEW_JOBS:
        return []
    return sorted(phases.items(), key=lambda kv: topology.natural(kv[0]))


def _link_heat(m, summary):
    """link_utilization: a heat map of the busiest links over time; below
    it, with FEW_JOBS jobs or fewer, when each job's coflows were active
    (who takes turns on the busiest link)."""
    if not m['links']:
        return None
    links = summary['links']
    ranked = sorted(links, key=lambda k: (-links[k]['mean_util'],
                                          topology.natural(k)))
    names = ranked[:HEAT_LINKS]
    edges, util = link_matrix(m, names)
    phases = _phases(m)
    h_heat = 0.8 + 0.2 * len(names)
    h_strip = 0.6 + 0.25 * len(phases) if phases else 0.0
    fig = figure(7.5, 1.4 + h_heat + h_strip)
    gs = fig.add_gridspec(1 + bool(phases), 2, width_ratios=[40, 1],
                          height_ratios=[h_heat, h_strip] if phases
                          else None)
    ax = fig.add_subplot(gs[0, 0])
    # rasterised: a vector file gets one image, not a patch per bin
    im = ax.pcolormesh(edges, np.arange(len(names) + 1), util,
                       cmap=UTIL_CMAP, norm=Normalize(0, 1), rasterized=True)
    ax.set_ylim(len(names), 0)
    ax.set_yticks(np.arange(len(names)) + 0.5, names, fontsize='x-small')
    ax.set_ylabel('link (busiest on top)')
    fig.colorbar(im, cax=fig.add_subplot(gs[0, 1]), label='utilisation')
    bottom = ax
    if phases:
        bottom = fig.add_subplot(gs[1, 0], sharex=ax)
        for i, (job, spans) in enumerate(phases):
            bottom.broken_barh(spans, (i - 0.35, 0.7), color='C%d' % (i % 10))
        bottom.set_yticks(range(len(phases)), [job for job, _ in phases],
                          fontsize='small')
        bottom.set_ylim(len(phases) - 0.5, -0.5)
        bottom.set_ylabel('coflows')
        bottom.grid(alpha=0.3, axis='x')
        ax.tick_params(labelbottom=False)
    bottom.set_xlabel('time (s)')
    hidden = len(ranked) - len(names)
    _title(fig, summary, 'link utilisation over time, the %d busiest links%s'
           % (len(names), ' of %d (%d hidden)' % (len(ranked), hidden)
              if hidden else ''))
    return ('link_utilization', 'Each row is one direction of a link, the '
            'busiest (by mean utilisation) on top, coloured by its '
            'utilisation over time (%s)%s%s.' % (
                'a column per sample interval' if len(edges) <= HEAT_BINS
                else '%d equal time bins' % HEAT_BINS,
                '; %d less busy links are left out' % hidden if hidden
                else '',
                '; below, when each job\'s coflows were active' if phases
                else ''), fig)


def _cct_cdf(m, summary):
    x = np.sort([c['cct_s'] for c in summary['coflows'].values()
                 if c['cct_s'] is not None])
    if not len(x):
        return None
    fig = figure(6.4, 4.2)
    ax = fig.add_subplot()
    ax.step(*_cdf(x), where='post')
    decades = math.log10(x[-1] / x[0]) if x[0] > 0 else 0.0
    # a log axis for CCTs that span a decade or more (log_axis: readable
    # ticks)
    if decades >= 1:
        log_axis(ax, 'x', x[0], x[-1])
    ax.set_xlabel('coflow completion time (s%s)'
                  % (', log scale' if decades >= 1 else ''))
    ax.set_ylabel('CDF')
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.grid(alpha=0.12, which='minor')
    _title(fig, summary, 'coflow completion time (CCT), %d coflows (CDF)'
           % len(x))
    return ('cct_cdf', 'The distribution of the completion times of the '
            '%d coflows that finished, from arrival to their last flow\'s '
            'end.' % len(x), fig)


def layout(g):
    """Node -> (x, y) for drawing a topology: a row per layer of roles
    (LAYERS, empty ones dropped), hosts at the bottom in natural order,
    each layer above ordered by where its neighbours below sit (ties by
    name), so that pods and racks stay together; x in (0, 1)."""
    levels = sorted({LAYERS[d['role']] for _, d in g.nodes(data=True)})
    pos = {}
    for y, level in enumerate(levels):
        row = [n for n, d in g.nodes(data=True)
               if LAYERS[d['role']] == level]

        def below(n):
            xs = [pos[v][0] for v in g[n] if v in pos]
            return (float(np.mean(xs)) if xs else 0.5, topology.natural(n))
        row.sort(key=below)
        for i, n in enumerate(row):
            pos[n] = ((i + 0.5) / len(row), float(y))
    return pos


def link_util(g, links):
    """Graph edge (u, v) -> mean utilisation of its busier direction,
    from summary.json's links ("u->v"; a link never sampled is idle)."""
    def one(a, b):
        return links.get('%s->%s' % (a, b), {}).get('mean_util', 0.0)
    return {(u, v): max(one(u, v), one(v, u)) for u, v in g.edges()}


def _topology(m, summary):
    """topology: the run's graph in layers, each link coloured and
    widened by its utilisation (link_util); node names up to
    LABEL_NODES nodes."""
    g = metrics.graph(summary)
    if g is None or not summary['links']:
        return None
    util = link_util(g, summary['links'])
    edges = sorted(util, key=util.get)           # the busiest drawn last
    pos = layout(g)
    rows = collections.Counter(y for _, y in pos.values())
    labels = len(g) <= LABEL_NODES
    fig = figure(min(14.0, max(6.5, 0.45 * max(rows.values()) + 2)),
                  1.6 + 1.1 * len(rows) + 0.4 * labels)
    ax = fig.add_subplot()
    vals = np.array([util[e] for e in edges])
    lines = LineCollection(
        [(pos[u], pos[v]) for u, v in edges], array=vals, cmap=UTIL_CMAP,
        norm=Normalize(0, 1), linewidths=0.8 + 4 * vals, zorder=1,
        linestyles=['--' if g.edges[e].get('circuit') else '-'
                    for e in edges])
    ax.add_collection(lines)
    fig.colorbar(lines, ax=ax, shrink=0.8,
                 label='mean utilisation (the busier direction)')
    size = 60 if labels else max(6.0, 3000.0 / len(g))
    keys = []
    for role in topology.ROLES:
        nodes = [n for n, d in g.nodes(data=True) if d['role'] == role]
        if not nodes:
            continue
        marker, color, label = ROLE_STYLE[role]
        ax.scatter([pos[n][0] for n in nodes], [pos[n][1] for n in nodes],
                   s=size, marker=marker, color=color, zorder=2,
                   edgecolors='white', linewidths=0.5)
        keys.append(Line2D([], [], ls='', marker=marker, color=color,
                           label=label))
        if not labels:
            continue
        for n in nodes:
            x, y = pos[n]
            if role == topology.HOST:
                ax.text(x, y - 0.1, n, rotation=90, ha='center', va='top',
                        fontsize=6.5)
            else:
                ax.text(x, y + 0.1, n, ha='center', va='bottom',
                        fontsize=7, bbox={'boxstyle': 'round,pad=0.1',
                                          'fc': 'white', 'ec': 'none',
                                          'alpha': 0.8})
    circuits = any(d.get('circuit') for *_, d in g.edges(data=True))
    if circuits:
        keys.append(Line2D([], [], ls='--', color='k', label='circuit port'))
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.5 if labels else -0.2, len(rows) - 0.7)
    ax.axis('off')
    ax.legend(handles=keys, loc='upper left', bbox_to_anchor=(0, -0.01),
              ncol=len(keys), fontsize='small', frameon=False)
    _title(fig, summary, 'mean link utilisation on the topology (%s)'
           % summary.get('topology'))
    return ('topology', 'The topology in layers (hosts at the bottom), '
            'each link coloured and widened by its mean utilisation over '
            'the run, the busier of its two directions%s.'
            % (', circuit ports dashed' if circuits else ''),
            fig)


def _circles(m, summary):
    """circles: the unified circle (clockwise from the top), a ring per
    time-shifted job with its coflows' arcs (metrics.circle_arcs) and a
    tick at each of its grid points, the one at its shift the longest."""
    c = metrics.circle_arcs(m)
    if not c:
        return None
    fig = figure(6.6, 7.0)
    ax = fig.add_subplot(projection='polar')
    ax.set_theta_zero_location('N')
    ax.set_theta_direction(-1)
    turn = 2 * np.pi
    for i, (j, r) in enumerate(sorted(c['jobs'].items())):
        color = 'C%d' % (i % 10)
        ax.bar([turn * (a + b) / 2 for a, b in r['arcs']], 0.6,
               width=[turn * (b - a) for a, b in r['arcs']], bottom=i + 0.7,
               color=color, alpha=0.8, label='%s: period %.0f ms, shift '
               '%.0f ms' % (j, r['period_s'] * 1e3, r['shift_s'] * 1e3))
        at = (r['shift_s'] % c['perimeter_s']) / c['perimeter_s']
        for g in r['grid']:
            h = 0.5 if abs(g - at) < 1e-9 else 0.35
            ax.plot([turn * g] * 2, [i + 1 - h, i + 1 + h], color='k',
                    lw=2 if h == 0.5 else 1)
    n = len(c['jobs'])
    ax.set_ylim(0, n + 0.5)
    ax.set_yticks([])
    ax.set_xticks(np.linspace(0, turn, 8, endpoint=False))
    ax.set_xticklabels(['%.0f ms' % (c['perimeter_s'] * 1e3 * k / 8)
                        for k in range(8)], fontsize='small')
    if n <= FEW_JOBS:
        ax.legend(fontsize='small', loc='upper center',
                  bbox_to_anchor=(0.5, -0.06), ncol=2)
    _title(fig, summary, 'unified circle of %.0f ms%s: coflows folded onto '
           'it, ticks at grid points (long: the shift)' % (
               c['perimeter_s'] * 1e3,
               ' (capped; LCM %.0f ms)' % (c['lcm_s'] * 1e3)
               if c['capped'] else ''))
    return ('circles', 'CASSINI\'s unified circle: a ring per time-shifted '
            'job, its coflows\' active time folded onto the circle and a '
            'tick at each of its grid points.', fig)


def _uplink_gbps(m, g):
    """(sample times, Gbit/s the ToRs sent over circuits, over the
    packet core) from the links samples."""
    grid = sorted({round(x, 9) for v in m['links'].values()
                   for t, dt, _ in v for x in (t, t + dt)})
    pos = {t: i for i, t in enumerate(grid)}     # a sample holds for dt
    out = np.zeros((2, len(grid)))
    for link, samples in m['links'].items():
        u, _, v = link.partition('->')
        if u not in g or v not in g[u] or g.nodes[u]['role'] != 'leaf' \
                or g.nodes[v]['role'] == 'host':
            continue
        row = 0 if g[u][v].get('circuit') else 1
        for t, _, x in samples:
            out[row, pos[round(t, 9)]] += x * g[u][v]['capacity_bps'] / 1e9
    return grid, out


def _circuits(m, summary):
    """circuits: the circuit schedule, a row per ToR pair that ever had a
    circuit (a band per plane), bars while live, hatched blackouts
    before each set-up; above it, with the run's graph, what the ToRs
    sent over circuits and over the packet core."""
    if not (m.get('circuits') or {}).get('steps'):
        return None
    sched = metrics.circuit_schedule(m)
    g = metrics.graph(summary)
    pairs = sorted({x[1:] for x in sched['live']},
                   key=lambda p: (topology.natural(p[0]),
                                  topology.natural(p[1])))
    planes = sorted({x[0] for x in sched['live']}, key=topology.natural)
    top = g is not None and bool(m['links'])
    fig = figure(7, 2.6 * top + 1.8 + 0.35 * len(pairs))
    axs = fig.subplots(1 + top, 1, sharex=True, squeeze=False,
                       height_ratios=[2, 1 + 0.15 * len(pairs)] if top
                       else None)
    ax = axs[-1][0]
    h = 0.8 / max(len(planes), 1)
    for x in sorted(sched['live']):
        i, k = pairs.index(x[1:]), planes.index(x[0])
        y = i - 0.4 + k * h
        color = 'C%d' % (k % 10)
        ax.broken_barh([(a, b - a) for a, b in sched['live'][x]], (y, h),
                       color=color, alpha=0.8)
        ax.broken_barh([(a, b - a) for a, b in sched['dark'].get(x, ())],
                       (y, h), facecolor='none', edgecolor=color,
                       hatch='////', lw=0.5)
    keys = [Patch(color='C%d' % (k % 10), label='live on %s' % p)
            for k, p in enumerate(planes)]
    keys.append(Patch(facecolor='none', edgecolor='k', hatch='////',
                      label='blackout'))
    ax.set_yticks(range(len(pairs)), ['%s-%s' % p for p in pairs])
    ax.set_ylim(-0.6, len(pairs) - 0.4)
    ax.invert_yaxis()
    ax.set_ylabel('ToR pair')
    ax.set_xlabel('time (s)')
    ax.grid(alpha=0.3, axis='x')
    ax.legend(handles=keys, fontsize='x-small', ncol=len(planes) + 1,
              loc='lower right', bbox_to_anchor=(1, 1))
    if top:
        t, y = _uplink_gbps(m, g)
        up = axs[0][0]
        up.step(t, y[0], where='post', label='over circuits', color='C0')
        up.step(t, y[1], where='post', label='over the packet core',
                color='k')
        up.set_ylabel('ToRs send (Gbit/s)')
        up.legend(fontsize='x-small')
        up.grid(alpha=0.3)
    tot = (summary.get('circuits') or {}).get('total') or {}
    what = 'circuit schedule'
    if tot.get('share') is not None:
        n = tot['reconfigurations']
        what += ': %d reconfiguration%s, %.0f%% of the ToRs\' bytes on ' \
            'circuits' % (n, '' if n == 1 else 's', 100 * tot['share'])
    _title(fig, summary, what)
    return ('circuits', 'When each ToR pair had a circuit (bars, a band '
            'per plane) and the reconfiguration blackouts before them '
            '(hatched)%s.' % ('; above, what the ToRs sent over circuits '
                              'and over the packet core' if top else ''),
            fig)


def diagonal(ax, top):
    """Axes from 0 to a little above ``top`` on both sides, with the
    y = x line (where two measures agree) in grey."""
    top *= 1.05
    ax.plot([0, top], [0, top], color='0.6', lw=1, zorder=1)
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
