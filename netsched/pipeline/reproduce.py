"""``netsched reproduce STUDY``: each seed policy against the baselines
its own paper chose, over seeds and one axis of load or link rate, on
both backends; a reproduction table and a report.

A study file (``experiments/reproduce/study.yaml``) lists, per policy,
an experiment set in its paper's regime, the arms (label -> policy
spec: the policy, its paper's baselines, an ablation of its own
mechanism), the axis, and the claims: which arm against which, the
paper's words and figure. Each study is an ordinary sweep per backend
(``OUT/<study>/sim``, ``OUT/<study>/emu``), so every run keeps its
folder and report and an interrupted study resumes where it stopped.
Where a study has ordering baselines (``exact: true``), the simulator
runs every arm both with the switches' classes and with the full order
(``queues: exact``): no policy may owe its margin to how another's
order is squeezed into Q classes.

A claim's figure is the speed-up, baseline over policy on the study's
metric (above 1: the policy is faster, as the papers state them),
paired by seed: the geometric mean of the per-seed ratios with a 95% t
interval (pipeline.stats). Its direction agrees when the interval lies
above 1. The table has a row per claim and axis value: a claim is shown
in every regime its study runs, not only in its paper's.
"""
import csv
import json
import math
import os
import sys
import time

import yaml

from . import metrics
from ..errors import ConfigError, yaml_loader
from . import overrides, stats, sweep
from .checker import Checker
from .paths import safe_name

BACKENDS = ('sim', 'emu', 'ns3')
# the packet-level backends run the study's reduced seeds and axis
# (`emulator_seeds`, the axis's `emulator:` values): a run costs them
# minutes where the simulator takes seconds
PACKET = ('emu', 'ns3')
# the table's columns: (name, backend, queues, label); ns-3's shows where
# a study ran on it
COLUMNS = (('sim', 'sim', '8', 'simulator, 8 classes'),
           ('sim_exact', 'sim', 'exact', 'simulator, full order'),
           ('emu', 'emu', '8', 'emulator'),
           ('ns3', 'ns3', '8', 'ns-3'))
VERDICTS = {'better': 'agrees', 'worse': 'opposite',
            'no difference': 'no difference', 'one seed': 'one seed'}


class Claim:
    """One row of the table: arm ``policy`` against arm ``against``."""

    def __init__(self, policy, against, metric, paper, speedup, finding,
                 figure=None):
        self.policy, self.against, self.paper = policy, against, paper
        self.metric, self.speedup, self.finding = metric, speedup, finding
        # the paper's own figure where it is not a speed-up on this
        # metric (95.7% scaling efficiency), or why there is none
        self.figure = figure


class Study:
    """One policy's study: an experiment, its arms, axis and claims."""

    def __init__(self, id, title, experiment, metric, arms, policy, axis,
                 emu_axis, exact, claims, emu):
        self.id, self.title, self.experiment = id, title, experiment
        self.metric, self.arms, self.policy = metric, arms, policy
        self.axis, self.emu_axis, self.exact = axis, emu_axis, exact
        self.claims, self.emu = claims, emu

    def specs(self):
        return list(self.arms.values())

    def axes(self, backend):
        """[(dotted key, [values])] the backend's sweep runs over."""
        key, values = self.axis
        out = [(key, list(self.emu_axis if backend in PACKET else values))]
        if backend == 'sim' and self.exact:
            out.append(('queues', [8, 'exact']))
        return out


def load(path):
    """The study file at ``path``, every key checked; experiments are
    checked when planned (:func:`plan`)."""
    try:
        with open(path) as f:     # no aliases (errors.yaml_loader)
            d = yaml.load(f, Loader=yaml_loader())
    except OSError as e:
        raise ConfigError('%s: %s' % (path, e.strerror)) from None
    except yaml.YAMLError as e:
        raise ConfigError('%s: not valid YAML: %s'
                          % (path, str(e).splitlines()[0])) from None
    c = Checker(path, d if d is not None else {})
    seeds = sweep.parse_seeds(_text(c, 'seeds', '1-5'))
    emu_seeds = sweep.parse_seeds(_text(c, 'emulator_seeds', '1-3'))
    raw = c.items('studies', required=True)
    c.done()
    base = os.path.dirname(os.path.abspath(path))
    studies = [_study('%s: studies.%d' % (path, i), s, base)
               for i, s in enumerate(raw)]
    ids = [s.id for s in studies]
    for i in ids:
        if ids.count(i) > 1:
            raise ConfigError('%s: study id %r appears twice' % (path, i))
    return {'path': os.path.abspath(path), 'seeds': seeds,
            'emulator_seeds': emu_seeds, 'studies': studies}


def _text(c, key, default):
    v = c.get(key, default)
    if not isinstance(v, (str, int)) or isinstance(v, bool):
        c.fail(key, 'must be seeds as 1-5 or 1,3,8, got %r' % (v,))
    return str(v)


def _study(where, d, base):
    c = Checker(where, d)
    sid = c.string('id', required=True)
    if not sid or sid != safe_name(sid):
        c.fail('id', 'must be a name safe in a path (letters, digits, '
               '- _ .), got %r' % sid)
    title = c.string('paper', required=True)
    exp = c.string('experiment', required=True)
    exp = os.path.normpath(os.path.join(base, exp))
    if not os.path.isfile(exp):
        c.fail('experiment', 'no such file: %s' % exp)
    metric = c.choice('metric', tuple(metrics.TOTALS), required=True)
    arms = c.get('arms', required=True)
    if not isinstance(arms, dict) or len(arms) < 2:
        c.fail('arms', 'must map at least two labels to policy specs')
    for label, spec in arms.items():
        if not isinstance(spec, str) or not spec:
            c.fail('arms', '%s: must be a policy spec (NAME or '
                   'NAME:key=value,...), got %r' % (label, spec))
    specs = list(arms.values())
    for s in specs:
        if specs.count(s) > 1:
            c.fail('arms', 'policy %s is named by two labels' % s)
    policy = c.string('policy', required=True)
    if policy not in arms:
        c.fail('policy', '%r is not one of the arms (%s)'
               % (policy, ', '.join(arms)))
    ac = Checker(where + ': axis', c.get('axis', required=True))
    key = ac.string('key', required=True)
    values = _values(ac, 'values', required=True)
    emu_values = _values(ac, 'emulator', default=values[:1])
    ac.done()
    if key in sweep.OWN_FLAGS or key == 'queues':
        c.fail('axis', 'key %s is not an axis of load or rate (the study '
               'sets it)' % key)
    exact = c.flag('exact')
    emu = c.flag('emulator', True)
    raw = c.items('claims', required=True)
    claims = []
    for i, r in enumerate(raw):
        cc = Checker('%s: claims.%d' % (where, i), r)
        pol = cc.string('policy', policy)
        against = cc.string('against', required=True)
        for k, v in (('policy', pol), ('against', against)):
            if v not in arms:
                cc.fail(k, '%r is not one of the arms (%s)'
                        % (v, ', '.join(arms)))
        if pol == against:
            cc.fail('against', 'the same arm as policy: %r' % pol)
        speedup = cc.num('speedup', None, positive=True)
        claims.append(Claim(pol, against,
                            cc.choice('metric', tuple(metrics.TOTALS),
                                      metric),
                            cc.string('paper', ''), speedup,
                            cc.string('finding'), cc.string('figure')))
        cc.done()
    c.done()
    return Study(sid, title, exp, metric, dict(arms), policy,
                 (key, values), emu_values, exact, claims, emu)


def _values(c, key, default=None, required=False):
    v = c.items(key, 'values', default, required)
    if len(set(map(overrides.value_text, v))) != len(v):
        c.fail(key, 'names a value twice: %r' % (v,))
    return list(v)


def plan(study, backends, only=None, seeds=None):
    """[(Study, backend, [RunSpec])], every run checked as ``netsched
    check`` checks it, before any starts. ``only``: study ids."""
    if only:
        known = [s.id for s in study['studies']]
        for i in only:
            if i not in known:
                raise ConfigError('--only %s: no such study (the file has '
                                  '%s)' % (i, ', '.join(known)))
    out = []
    for s in study['studies']:
        if only and s.id not in only:
            continue
        for b in backends:
            if b == 'emu' and not s.emu:
                continue
            sd = seeds or study['emulator_seeds' if b in PACKET
                                else 'seeds']
            out.append((s, b, sweep.plan(s.experiment, s.specs(), sd,
                                         s.axes(b), [b])))
    return out


def folder(out, s, backend):
    return os.path.join(out, s.id, backend)


def run(study, planned, out, jobs=None, force=False, progress=None,
        done=None):
    """Run each planned sweep into ``OUT/<study>/<backend>`` (resuming
    one that stopped), then write the table (:func:`write`).
    ``progress(label, metric)``: a SweepProgress per sweep, showing the
    study's metric; ``done(folder, baseline)``: called after each sweep,
    finished or stopped, once its sweep.json is there (the command line
    writes its report)."""
    os.makedirs(out, exist_ok=True)
    for s, b, specs in planned:
        root = folder(out, s, b)
        sweep.check_out(root, s.experiment)
        baseline = s.arms[s.claims[0].against]
        definition = {'experiment': s.experiment, 'policies': s.specs(),
                      'seeds': sorted({x.seed for x in specs}),
                      'sets': [[k, [overrides.value_text(v) for v in vs]]
                               for k, vs in s.axes(b)],
                      'backends': [b], 'baseline': baseline, 'trace': None,
                      'cluster': None, 'command': sys.argv,
                      'study': study['path'], 'study_id': s.id}
        try:
            sweep.run_sweep(specs, root, definition,
                            sweep.LocalExecutor(jobs), force,
                            progress('%s/%s' % (s.id, b), s.metric)
                            if progress else None)
        finally:
            if done is not None and os.path.isfile(
                    os.path.join(root, 'sweep.json')):
                done(root, baseline)
    write(study, out)


# --- the table ---------------------------------------------------------------

def table(study, out):
    """One row per claim, backend and value of the swept keys (axis, and
    queues where the study runs the full order): the speed-up with its
    interval over seeds, and whether its direction agrees."""
    rows = []
    for s in study['studies']:
        for b in BACKENDS:
            path = os.path.join(folder(out, s, b), 'runs.csv')
            if not os.path.isfile(path):
                continue
            ok = [r for r in sweep.read_rows(path, folder(out, s, b))
                  if r.get('status') == 'ok']
            axes = [k for k, _ in s.axes(b)]
            for ci, cl in enumerate(s.claims):
                pol, base = s.arms[cl.policy], s.arms[cl.against]
                got = [x for x in stats.against_baseline(
                    ok, base, [cl.metric], axes) if x['policy'] == pol]
                for x in got:
                    g = x['group']
                    sp, lo, hi = _invert(x['ratio'], x['low'], x['high'])
                    rows.append({
                        'study': s.id, 'claim': ci, 'policy': cl.policy,
                        'against': cl.against, 'metric': cl.metric,
                        'backend': b, 'axis': s.axis[0],
                        'value': g.get(s.axis[0]),
                        'queues': str(g.get('queues', 8)),
                        'speedup': sp, 'low': lo, 'high': hi, 'n': x['n'],
                        'direction': VERDICTS.get(x['verdict'],
                                                  x['verdict']),
                        'policy_mean': x['mean'], 'base_mean': x['base_mean'],
                        'paper': cl.paper, 'paper_speedup': cl.speedup,
                        'paper_figure': cl.figure})
    return rows


def _invert(r, lo, hi):
    """policy/baseline -> baseline/policy, the interval mirrored."""
    if r is None:
        return None, None, None
    return 1 / r, None if hi is None else 1 / hi, \
        None if lo is None else 1 / lo


def alike(r):
    """'same': the two arms ran alike on every seed (a ratio of exactly
    1: the policy's mechanism never acted, so the row tests nothing);
    'constant': every seed gave the same ratio to the table's three
    decimals (the seed's compute jitter does not reach the metric; an
    interval printed as "1.262-1.262" would only hide that); None
    otherwise."""
    if r is None or r['speedup'] is None or r['low'] is None:
        return None
    if not math.isclose(r['low'], r['high'], rel_tol=1e-9) and \
            '%.3f' % r['low'] != '%.3f' % r['high']:
        return None
    return 'same' if math.isclose(r['low'], 1.0, rel_tol=1e-9) and \
        math.isclose(r['high'], 1.0, rel_tol=1e-9) else 'constant'


def cell(r):
    """'1.310x (1.250-1.370)' for a row, '' for none: three decimals,
    as a policy's margin is often a few per cent. An interval of no
    width says why: the arms ran alike (not exercised), or every seed
    gave the same ratio."""
    if r is None or r['speedup'] is None:
        return ''
    if r['low'] is None:
        return '%.3fx (one seed)' % r['speedup']
    a = alike(r)
    if a == 'same':
        return 'not exercised: 1.000x, the arms ran alike on every seed'
    if a == 'constant':
        return '%.3fx (the same on every seed)' % r['speedup']
    return '%.3fx (%.3f-%.3f)' % (r['speedup'], r['low'], r['high'])


MARK = {'agrees': '+', 'opposite': '-', 'no difference': '=',
        'one seed': '?'}


def headline(study, rows):
    """Per claim and value of its study's axis (the first is its paper's
    regime): the paper's words and figure, and per backend (and queues)
    the speed-up there, with how many axis values agree over the claim's
    whole axis. Every regime is a row of its own, so no claim is shown
    only where it is kindest."""
    out = []
    for s in study['studies']:
        values = [overrides.value_text(v) for v in s.axis[1]]
        for ci, cl in enumerate(s.claims):
            mine = [r for r in rows if r['study'] == s.id
                    and r['claim'] == ci]

            def at(b, q, v=None):
                return [r for r in mine if r['backend'] == b
                        and str(r['queues']) == q
                        and (v is None or str(r['value']) == v)]
            for v in values:
                cols = {}
                for name, b, q, _ in COLUMNS:
                    over = at(b, q)
                    head = next(iter(at(b, q, v)), None)
                    cols[name] = {
                        'row': head, 'text': cell(head),
                        'agree': sum(r['direction'] == 'agrees'
                                     for r in over), 'n': len(over),
                        'mark': MARK.get(head['direction'], '')
                        if head and alike(head) != 'same' else ''}
                heads = [c['row'] for c in cols.values() if c['row']]
                if not heads:             # not run (yet) at this value
                    continue
                out.append({'study': s.id, 'title': s.title,
                            'policy': cl.policy, 'against': cl.against,
                            'metric': cl.metric, 'paper': cl.paper,
                            'paper_speedup': cl.speedup,
                            'paper_figure': cl.figure,
                            'finding': cl.finding,
                            'axis': s.axis[0], 'regime': v,
                            'first': v == values[0], 'values': values,
                            'cols': cols,
                            'reproduced': all(
                                r['direction'] == 'agrees' for r in heads)})
    return out


def shown(heads):
    """The columns of COLUMNS a table of ``heads`` shows: the
    simulator's and the emulator's always, ns-3's where it ran."""
    return [c for c in COLUMNS if c[1] != 'ns3'
            or any(h['cols'][c[0]]['row'] for h in heads)]


def figure_text(h):
    """The paper's own figure for a head: its speed-up, its figure in
    words where that is not a speed-up on this metric, or that it gives
    none."""
    if h['paper_speedup']:
        text = '%.2gx' % h['paper_speedup']
        return text + (' (%s)' % h['paper_figure']
                       if h.get('paper_figure') else '')
    return h.get('paper_figure') or 'none stated'


def markdown(heads):
    """The reproduction table as Markdown (docs/reproduction.md): a row
    per claim and axis value, the paper's regime (the first) in bold."""
    cols = shown(heads)
    lines = ['| study | policy | against | metric | regime | paper '
             '| paper\'s figure | %s | over the axis |'
             % ' | '.join(label for _, _, _, label in cols),
             '|---|---|---|---|---|---|---|%s---|' % ('---|' * len(cols))]
    for h in heads:
        def c(name):
            x = h['cols'][name]
            return ('%s %s' % (x['mark'], x['text'])).strip() \
                if x['text'] else ''
        sim = h['cols']['sim']
        regime = '%s=%s' % (h['axis'], h['regime'])
        lines.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            h['study'], h['policy'], h['against'], h['metric'],
            '**%s**' % regime if h['first'] else regime,
            h['paper'] or '', figure_text(h),
            ' | '.join(c(name) for name, _, _, _ in cols),
            '%d of %d agree' % (sim['agree'], sim['n'])
            if sim['n'] else ''))
    lines.append('')
    lines.append('Speed-up = baseline / policy at the row\'s axis value '
                 '(in bold: the paper\'s regime), the geometric mean over '
                 'seeds with its 95% interval; + the paper\'s direction '
                 '(interval above 1), - the opposite, = no difference. '
                 '"Not exercised": both arms ran alike on every seed, so '
                 'the row tests nothing. "The same on every seed": the '
                 'ratio moved less than the three decimals shown from '
                 'seed to seed (the seed\'s compute jitter does not reach '
                 'the metric; the findings say why).')
    return '\n'.join(lines) + '\n'



CSV_COLUMNS = ('study', 'policy', 'against', 'metric', 'backend', 'axis',
               'value', 'queues', 'speedup', 'low', 'high', 'n',
               'direction', 'policy_mean', 'base_mean', 'paper',
               'paper_speedup', 'paper_figure')


def write(study, out):
    """``OUT/reproduction.csv``, ``reproduction.md`` and
    ``reproduce.json`` (its report.html: report.write)."""
    rows = table(study, out)
    heads = headline(study, rows)
    with open(os.path.join(out, 'reproduction.csv'), 'w', newline='') as f:
        w = csv.DictWriter(f, CSV_COLUMNS, extrasaction='ignore')
        w.writeheader()
        for r in rows:
            w.writerow({k: ('%.6g' % v if isinstance(v, float) else v)
                        for k, v in r.items()})
    with open(os.path.join(out, 'reproduction.md'), 'w') as f:
        f.write(markdown(heads))
        left = unfinished(study, out)
        if left:
            f.write('\nNot counted: %d run(s) did not finish (%s); their '
                    'sweeps\' reports show what they measured.\n' % (
                        len(left), ', '.join('%s/%s/%s %s' % (
                            r['study'], r['backend'], r['run'], r['status'])
                            for r in left)))
    with open(os.path.join(out, 'reproduce.json'), 'w') as f:
        json.dump({'study': study['path'], 'made': time.strftime(
            '%Y-%m-%d %H:%M:%S'), 'studies': [s.id for s in
                                              study['studies']]}, f,
                  indent=1)


def unfinished(study, out):
    """The runs of the study's sweeps that did not finish (failed,
    interrupted, or left without a row by a killed sweep), each row with
    its ``study`` and ``backend``: they count in no speed-up, and say
    so."""
    left = []
    for s in study['studies']:
        for b in BACKENDS:
            root = folder(out, s, b)
            path = os.path.join(root, 'runs.csv')
            if not os.path.isdir(root):
                continue
            rows = sweep.read_rows(path, root) if os.path.isfile(path) \
                else []
            left += [dict(r, study=s.id, backend=b)
                     for r in sweep.unfinished(root, rows)
                     if r.get('status') != 'ok']
    return left


def page(out):
    """What the report template needs for a reproduction folder."""
    d = sweep.read_json(os.path.join(out, 'reproduce.json'),
                        {'study': 'str', 'studies': ('list', 'str')},
                        'a reproduction record')
    study = load(d['study'])
    study['studies'] = [s for s in study['studies'] if s.id in d['studies']]
    rows = table(study, out)
    heads = headline(study, rows)
    studies = []
    for s in study['studies']:
        studies.append({
            'id': s.id, 'title': s.title, 'metric': s.metric,
            'arms': s.arms, 'axis': s.axis[0],
            'experiment': os.path.relpath(s.experiment, os.path.dirname(
                study['path'])),
            'sweeps': [(b, os.path.relpath(os.path.join(
                folder(out, s, b), 'report.html'), out))
                for b in BACKENDS if os.path.isfile(os.path.join(
                    folder(out, s, b), 'report.html'))],
            'rows': [r for r in rows if r['study'] == s.id]})
    left = unfinished(study, out)
    return {'title': 'reproduction study', 'heads': heads,
            'study_columns': [(name, label)
                              for name, _, _, label in shown(heads)],
            'studies': studies, 'cell': cell, 'figures': [],
            'left': left,
            'notes': ['INCOMPLETE run %s/%s/%s: %s' % (
                r['study'], r['backend'], r['run'], r['incomplete'])
                for r in left if r.get('incomplete')]}
