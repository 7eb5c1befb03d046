"""``netsched report DIR``: one self-contained HTML page for a run, a
sweep, a crosscheck or a compare folder.

Figures are inlined as PNG data (nothing is fetched, the page can be
mailed or archived alone); ``fmt`` also writes each figure to
``DIR/figures/`` as png, svg or pdf for a paper. A sweep's page opens
with the answer: each policy's ratio to the baseline with its 95%
interval over seeds, per metric.
"""
import base64
import io
import json
import os
import time

from ..errors import ConfigError
from . import paths, stats, sweep, sweep_plots

FORMATS = ('png', 'svg', 'pdf')
# the metric a sweep's answer leads with: the first one its runs have
PRIMARY = ('avg_jct_s', 'avg_sct_s', 'avg_cct_s', 'avg_iteration_s')
# the figures a page shows beside its answer, not among the others
LEAD = ('forest',)


def kind(path):
    """What a folder holds: sweep, crosscheck, compare or run."""
    k = paths.folder_kind(path)
    if k is not None:
        return k
    raise ConfigError('%s: not a run, sweep, crosscheck, compare or '
                      'reproduction folder (no summary.json, events.jsonl, '
                      'sweep.json, crosscheck.json, compare.json or '
                      'reproduce.json)' % path)


def write(path, baseline=None, fmt=None, figdir='figures', run=None,
          files=None, notes=None, figures=True, style=None):
    """Write ``path/report.html``; returns its path. ``fmt``: also write
    each figure to ``path/<figdir>/`` in that format (their paths are
    appended to ``files``). ``run``: a run's (metrics, summary) already
    in hand (write_run), not read again. ``notes``: a list that gets a
    line per run the page shows that did not finish (INCOMPLETE ...).
    ``figures`` False: the page's tables only, nothing drawn (a sweep's
    --no-figures). ``style``: 'paper' draws every figure for a paper's
    column (plots.style)."""
    from . import plots
    with plots.style(style):
        return _write(path, baseline, fmt, figdir, run, files, notes,
                      figures)


def write_run(result, figures=True):
    """A finished run's report.html and its figures as PNG files beside
    it, from run.execute's ``result`` (its measures in hand); returns the
    page's path. The summary gets ``plots`` (the figures' paths) and
    ``report``. ``figures`` False: the page's tables only."""
    out_dir, summary = result
    summary['plots'] = []
    summary['report'] = write(out_dir, fmt='png', figdir='',
                              run=(result.measures, summary),
                              files=summary['plots'], figures=figures)
    return summary['report']


def _write(path, baseline, fmt, figdir, run, files, notes, figures):
    if not os.path.isdir(path):
        raise ConfigError('%s: %s' % (path, 'a file, not a folder'
                                      if os.path.exists(path)
                                      else 'no such folder'))
    if fmt is not None and fmt not in FORMATS:
        raise ConfigError('--format must be one of %s, got %r'
                          % (', '.join(FORMATS), fmt))
    k = 'run' if run is not None else kind(path)
    if k == 'run':
        page = _run(path, *(run or ()), figures=figures)
    elif k == 'sweep':
        page = _sweep(path, baseline, figures)
    else:
        page = {'crosscheck': _crosscheck,
                'compare': _compare, 'reproduce': _reproduce}[k](
                    path, baseline)
    if notes is not None:
        notes.extend(page.get('notes', ()))
    figs = page.pop('figures')
    if not figures:      # the kinds that draw before they are asked not to
        figs = []
    try:
        page['figures'] = [_figure(path, name, caption, fig, fmt, figdir)
                           for name, caption, fig in figs]
    except OSError as e:          # figures/ cannot be made or written
        raise ConfigError('%s: cannot be written: %s' % (
            e.filename or os.path.join(path, figdir), e.strerror)) from None
    if files is not None:
        files.extend(os.path.join(path, f['file'])
                     for f in page['figures'] if f['file'])
    page.update(kind=k, folder=os.path.abspath(path),
                made=time.strftime('%Y-%m-%d %H:%M:%S'))
    out = os.path.join(path, 'report.html')
    tmp = out + '.tmp'
    text = render(page)
    try:
        with open(tmp, 'w', encoding='utf-8') as f:
            f.write(text)
        os.replace(tmp, out)
    except OSError as e:
        raise ConfigError('%s: cannot be written: %s' % (
            out, e.strerror)) from None
    return out


def render(page):
    import jinja2
    env = jinja2.Environment(
        loader=jinja2.PackageLoader('netsched.pipeline', 'templates'),
        autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters['num'] = _num
    env.filters['ratio'] = _ratio
    return env.get_template('report.html.j2').render(**page)


def _figure(path, name, caption, fig, fmt, figdir):
    """A figure for the page: its PNG inline (the file's own bytes where
    it is written as PNG), and its file."""
    from . import plots
    # figures of several panels get the page's whole width
    wide = fig.get_figwidth() > 7.5
    file = None
    if fmt != 'png':
        buf = io.BytesIO()
        fig.savefig(buf, format='png', dpi=110)
        png = buf.getvalue()
    if fmt is not None:
        d = os.path.join(path, figdir) if figdir else path
        os.makedirs(d, exist_ok=True)
        saved = plots.save(fig, d, name, fmt)
        file = os.path.relpath(saved, path)
        if fmt == 'png':
            with open(saved, 'rb') as f:
                png = f.read()
    return {'name': name, 'caption': caption, 'file': file, 'wide': wide,
            # the page's answer as a figure: shown with the answer
            'lead': name in LEAD,
            'png': base64.b64encode(png).decode('ascii')}


def _num(x, digits=4):
    if x is None or x == '':
        return '-'
    if isinstance(x, float):
        return '%.*g' % (digits, x)
    return str(x)


def _ratio(r):
    if r is None:
        return '-'
    return '%.3f×' % r


# --- a run -----------------------------------------------------------------

def _read_json(p, what):
    try:
        with open(p) as f:
            return json.load(f)
    except OSError as e:
        raise ConfigError('%s: %s' % (p, e.strerror)) from None
    except ValueError:
        raise ConfigError('%s: %s is not JSON' % (p, what)) from None


def _run(path, m=None, summary=None, figures=True):
    """A run's page; what is damaged in its folder (metrics.reading) is
    an error that names the file, line and field."""
    from . import metrics
    with metrics.reading(path):
        return _run_page(path, m, summary, figures)


def _run_page(path, m, summary, figures=True):
    from . import metrics, shapes
    from . import plots
    if summary is None and not os.path.isfile(os.path.join(path,
                                                          'summary.json')):
        m, summary = metrics.partial(path)     # it did not finish
    elif summary is None:
        summary = metrics.load_summary(path)
        # a page takes more of it than a comparison
        shapes.check(summary, shapes.SUMMARY_PAGE,
                     os.path.join(path, 'summary.json'))
        m = metrics.from_log(os.path.join(path, 'events.jsonl'))
    info = {}
    if os.path.isfile(os.path.join(path, 'run.json')):
        info = _read_json(os.path.join(path, 'run.json'), 'run.json')
    tot = summary['totals']
    return {
        'title': plots.headline(summary),
        'summary': summary, 'run': info,
        'totals': [(k, tot.get(k)) for k in
                   ('avg_jct_s', 'avg_iteration_s', 'avg_early_iteration_s',
                    'avg_cct_s', 'p95_cct_s', 'avg_sct_s', 'front_tensor_s',
                    'jobs_done', 'coflows_done', 'jobs_unfinished',
                    'coflows_unfinished', 'iterations_done')
                   if tot.get(k) is not None],
        'incomplete': metrics.incomplete_text(summary, head=''),
        'fidelity': summary.get('fidelity'),
        'notes': _table(summary) if summary.get('complete') is False
        else [],
        'jobs': sorted(summary['jobs'].items()),
        'stages': sorted(summary['stages'].items()),
        'figures': plots.run_figures(m, summary) if figures else []}


def _table(summary):
    """A run's summary as printed lines (an incomplete run's, for
    ``netsched report``: it says INCOMPLETE first)."""
    from . import run
    return run.table(summary).splitlines()


# --- a sweep ---------------------------------------------------------------

def _sweep(path, baseline=None, figures=True):
    from . import tables
    d = sweep.read_definition(path)
    csv_path = os.path.join(path, 'runs.csv')
    # a run runs.csv says ok whose summary is gone: missing, not ok
    rows = sweep.read_rows(csv_path, path) if os.path.isfile(csv_path) \
        else []
    rows = sweep.unfinished(path, rows, d.get('labels') or {})
    # the tables and ratios.csv hold the numbers this page shows
    data = tables.Sweep(path, baseline, rows)
    tables.write_sweep(path, data=data)
    ok, axes, policies = data.ok, data.axes, data.policies
    baseline, metrics = data.baseline, data.metrics
    primary = next((m for m in PRIMARY if m in metrics), None)
    ratios = data.ratios()
    title = os.path.splitext(os.path.basename(d['experiment']))[0]
    figs = []
    if ok and figures:
        shown = [primary] + [m for m in metrics if m != primary][:3] \
            if primary else metrics[:4]
        figs += sweep_plots.forest(ratios, policies, metrics, baseline,
                                   title)
        figs += sweep_plots.bars(ok, policies, shown, axes, title)
        figs += sweep_plots.cdfs(path, ok, policies, axes, title)
        figs += sweep_plots.lines(ok, policies, shown[:2], axes, title)
        figs += sweep_plots.backends(ok, policies, primary, axes, title)
    degraded = _degraded(path, rows)
    cols = ['run', 'backend', 'policy', 'seed'] + axes + ['status'] + \
        metrics + ['wall_s', 'error']
    return {
        'title': 'sweep of %s' % title,
        'sweep': d, 'baseline': baseline, 'primary': primary,
        'answer': _answer(ratios, primary, baseline, policies),
        'baseline_missing': bool(ok) and not any(
            r['policy'] == baseline for r in ok),
        'ratios': ratios, 'matrix': _matrix(ratios, metrics),
        'means': _means(ok, policies, metrics, axes),
        'backends': _backends(path, ok, policies, primary, axes),
        'metrics': metrics, 'axes': axes,
        'policies': policies,
        'counts': {s: sum(1 for r in rows if r.get('status') == s)
                   for s in sweep.STATUSES},
        'columns': cols,
        'rows': [dict(r, has_report=os.path.isfile(os.path.join(
            path, r['run'], 'report.html'))) for r in rows],
        'unfinished': [r['run'] for r in rows if r.get('incomplete')],
        'notes': ['INCOMPLETE run %s: %s' % (r['run'], r['incomplete'])
                  for r in rows if r.get('incomplete')]
        + ['DEGRADED run %s: %s' % kv for kv in degraded.items()],
        'degraded': degraded,
        'figures': figs}


def _degraded(path, rows):
    """{run: its causes} of the emulated runs whose fidelity verdict is
    degraded (runs.csv's ``fidelity``; the causes from summary.json)."""
    out = {}
    for r in rows:
        if r.get('fidelity') != 'degraded':
            continue
        try:
            with open(os.path.join(path, r['run'], 'summary.json')) as f:
                causes = (json.load(f).get('fidelity') or {}).get('causes')
        except (OSError, ValueError):
            causes = None
        out[r['run']] = '; '.join(causes or ['(summary.json unreadable)'])
    return out


def _backends(path, rows, policies, primary, axes):
    """Where a run ran on both backends: per policy (and axis values),
    the emulator's primary metric over the simulator's and the mean
    |difference| per job and per coflow, over the seeds both have."""
    from . import metrics
    pairs = {}
    for r in rows:
        k = (r['policy'],) + tuple(r.get(a) for a in axes) + (r['seed'],)
        pairs.setdefault(k, {})[r['backend']] = r
    out = {}
    for k, by_b in pairs.items():
        if set(by_b) != {'sim', 'emu'}:
            continue
        sim, emu = by_b['sim'], by_b['emu']
        errs = metrics.error_stats(metrics.compare(
            metrics.load_summary(os.path.join(path, sim['run'])),
            metrics.load_summary(os.path.join(path, emu['run']))))
        g = out.setdefault(k[:-1], {'ratios': [], 'jobs': [], 'coflows': []})
        if primary and sim.get(primary) and emu.get(primary):
            g['ratios'].append(emu[primary] / sim[primary])
        for kind, key in (('jobs', 'job jct_s'), ('coflows', 'coflow cct_s')):
            if errs.get(key, {}).get('mean_abs') is not None:
                g[kind].append(errs[key]['mean_abs'])
    mean = lambda xs: sum(xs) / len(xs) if xs else None     # noqa: E731
    return [{'policy': k[0], 'axes': dict(zip(axes, k[1:])),
             'n': max(len(v['ratios']), len(v['jobs'])),
             'ratio': mean(v['ratios']), 'jobs': mean(v['jobs']),
             'coflows': mean(v['coflows'])}
            for k, v in sorted(out.items(), key=lambda kv: [
                stats.sort_key(x) for x in kv[0]])]


def _means(rows, policies, metrics, axes):
    """tables.means with each group's label: (group label, [(policy,
    {metric: (mean, low, high, n)})])."""
    from . import tables
    return [(sweep_plots.group_label(g), t)
            for g, t in tables.means(rows, policies, metrics, axes)]


def _matrix(ratios, metrics):
    """The ratios as one table per group: (group label, metrics shown,
    [(policy, {metric: ratio dict})])."""
    out = {}
    for r in ratios:
        g = out.setdefault(sweep_plots.group_label(r['group']), {})
        g.setdefault(r['policy'], {})[r['metric']] = r
    return [(g, [m for m in metrics if any(m in v for v in pols.values())],
             list(pols.items())) for g, pols in out.items()]


def _answer(ratios, primary, baseline, policies):
    """Sentences, one per group: which policy does best on the primary
    metric against the baseline, by how much, with what confidence."""
    out = []
    by_group = {}
    for r in ratios:
        if r['metric'] == primary:
            by_group.setdefault(sweep_plots.group_label(r['group']),
                                []).append(r)
    for g, rs in by_group.items():
        # the best of those whose interval is below 1, else the lowest
        better = [r for r in rs if r['verdict'] == 'better']
        best = min(better or rs, key=lambda r: r['ratio'])
        label = sweep_plots.NAMES.get(primary, primary)
        if best['low'] is None:
            out.append('%s: %s has the lowest %s, %.3f× %s\'s on one '
                       'seed (no interval: run more seeds).'
                       % (g, best['policy'], label, best['ratio'],
                          baseline))
            continue
        pct = 100 * abs(1 - best['ratio'])
        ci = '95%% CI %.3f–%.3f, %d seeds' % (best['low'], best['high'],
                                              best['n'])
        if better:
            out.append('%s: %s does best: %s %.3f× %s\'s (%s), %.1f%% '
                       'lower.' % (g, best['policy'], label, best['ratio'],
                                   baseline, ci, pct))
        elif all(r['verdict'] == 'worse' for r in rs):
            out.append('%s: %s does best on %s: every other policy is worse'
                       ' with 95%% confidence; the closest, %s, is %.3f× '
                       '(%s).' % (g, baseline, label, best['policy'],
                                  best['ratio'], ci))
        else:
            out.append('%s: no policy beats %s on %s with 95%% confidence; '
                       'the lowest, %s, is %.3f× (%s).'
                       % (g, baseline, label, best['policy'], best['ratio'],
                          ci))
    return out


# --- a crosscheck and a compare --------------------------------------------

def _reproduce(path, baseline=None):
    from . import reproduce
    page = reproduce.page(path)
    page['figures'] = sweep_plots.study_forest(page['heads'])
    return page


def _crosscheck(path, baseline=None):
    from . import crosscheck, crosscheck_plots, metrics
    rep = _read_json(os.path.join(path, 'crosscheck.json'),
                     'crosscheck.json')
    bs = crosscheck.backends_of(rep)
    summaries = {}
    for b in bs:
        for p in rep.get('totals', {}).get(b, {}):
            d = os.path.join(path, '%s-%s' % (b, p))
            if os.path.isfile(os.path.join(d, 'summary.json')):
                summaries[b, p] = metrics.load_summary(d)
    complete = 'ranking' in rep
    names = [crosscheck.NAMES.get(b, b) for b in bs]
    heading = ('%s against %s' % (names[1], names[0]) if len(bs) == 2
               else 'Every pair of backends')
    return {'title': 'crosscheck of %s' % os.path.basename(
                os.path.abspath(path)),
            'crosscheck': rep, 'complete': complete,
            'heading': heading[:1].upper() + heading[1:]
            if not heading.startswith('ns-3') else heading,
            'pairs': _crosscheck_pairs(rep, bs) if complete else None,
            'table': crosscheck.table(rep) if complete else None,
            'figures': crosscheck_plots.crosscheck_figures(rep, summaries)}


def _crosscheck_pairs(rep, bs):
    """With more than two backends, every pair's errors per policy and
    its verdict, for the page's table: {'names': [pair], 'rows':
    [(policy, [text per pair and kind])], 'verdicts': [(pair, text)]};
    None with two (the text table has them)."""
    from . import crosscheck
    pairs = crosscheck.pairs_of(rep)
    if len(bs) <= 2 or not pairs:
        return None

    def pct(x):
        return '-' if x is None else '%.1f%%' % (100 * x)
    pols = list(rep['totals'].get(bs[0]) or {})
    rows = [(p, [pct((pr['errors'].get(p) or {}).get(kind))
                 for pr in pairs.values()
                 for kind in ('job jct_s', 'coflow cct_s')])
            for p in pols]
    verdicts = [(n, 'the same ranking' if pr['agree'] else
                 'they disagree on %s' % ', '.join(
                     '%s vs %s' % tuple(pq) for pq in pr['disagreements']))
                for n, pr in pairs.items()]
    return {'names': list(pairs), 'rows': rows, 'verdicts': verdicts}


def _compare(path, baseline=None):
    from . import crosscheck_plots, metrics, shapes
    rep = sweep.read_json(os.path.join(path, 'compare.json'),
                          shapes.COMPARE, 'a compare record')
    return {'title': 'compare: %s against %s' % (rep['b'], rep['a']),
            'compare': rep,
            'notes': ['INCOMPLETE %s: %s' % kv for kv in sorted(
                rep.get('incomplete', {}).items())],
            'stats': sorted(metrics.error_stats(
                [tuple(r) for r in rep['rows']]).items()),
            'figures': crosscheck_plots.compare_figures(rep)}


def write_compare(out_dir, a, b, sa, sb, rows):
    """A compare folder: compare.json (the rows and both runs' labels;
    ``incomplete``: {A or B: what stopped it} where a run did not
    finish)."""
    from .metrics import incomplete_text
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise ConfigError('--out %s: cannot be made: %s' % (
            out_dir, e.strerror)) from None
    label = lambda s: '%s, %s' % (s.get('backend'),            # noqa: E731
                                  s.get('policy'))
    d = {'a': os.path.abspath(a), 'b': os.path.abspath(b),
         'a_label': label(sa), 'b_label': label(sb),
         'rows': [list(r) for r in rows]}
    cut = {side: incomplete_text(s, '') for side, s in (('A', sa),
                                                        ('B', sb))
           if incomplete_text(s)}
    if cut:
        d['incomplete'] = cut
    try:
        with open(os.path.join(out_dir, 'compare.json'), 'w') as f:
            json.dump(d, f, indent=1)
    except OSError as e:
        raise ConfigError('--out %s: cannot be written: %s' % (
            out_dir, e.strerror)) from None
