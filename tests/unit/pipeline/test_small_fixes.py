"""Issue 41's small fixes: a "did you mean" for a mistyped experiment
key, policy or policy parameter; compare on a sweep folder; a duplicated
axis value; sweep --dry-run and --no-figures; --policies label=spec;
report --style paper; the progress line's metric. Each is checked
without running a simulation where it can be."""
import os
import subprocess
import sys

import pytest

from netsched import policies
from netsched.errors import ConfigError
from netsched.pipeline import experiment
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _netsched(*args):
    return subprocess.run([sys.executable, '-m', 'netsched'] + list(args),
                          capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_a_typo_gets_a_did_you_mean(tiny):
    with pytest.raises(ConfigError, match=r"unknown key 'link_gbsp' "
                       r"\(known: .*\); did you mean 'link_gbps'\?"):
        experiment.load(tiny, sets=[(('link_gbsp',), 10)])
    with pytest.raises(ConfigError, match=r"unknown policy 'sebff' "
                       r"\(known: .*\); did you mean 'sebf'\?"):
        policies.make('sebff')
    with pytest.raises(ConfigError, match=r"has no parameter 'first_m' "
                       r"\(it has: .*\); did you mean 'first_mb'\?"):
        policies.make('aalo', {'first_m': 3})
    # nothing close: no guess
    with pytest.raises(ConfigError) as e:
        policies.make('zzzzzz')
    assert 'did you mean' not in str(e.value)


def test_compare_on_a_sweep_folder_says_what_it_takes(tmp_path, capsys):
    from netsched import cli
    sw = tmp_path / 'sw'
    for d in ('sim-fair-s1', 'sim-sebf-s1'):
        (sw / d).mkdir(parents=True)
        (sw / d / 'summary.json').write_text('{}')
    (sw / 'sweep.json').write_text('{}')
    assert cli.main(['compare', str(sw), str(sw / 'sim-fair-s1')]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'a sweep folder; compare takes two run ' \
        'folders' in err
    assert 'netsched report %s' % sw in err
    assert 'netsched compare %s %s' % (sw / 'sim-fair-s1',
                                       sw / 'sim-sebf-s1') in err
    (tmp_path / 'cc').mkdir()
    (tmp_path / 'cc' / 'crosscheck.json').write_text('{}')
    assert cli.main(['compare', str(sw / 'sim-fair-s1'),
                     str(tmp_path / 'cc')]) == 2
    assert 'a crosscheck folder, not a run' in capsys.readouterr().err


def test_a_value_given_twice_on_an_axis_is_named(tiny):
    from netsched.pipeline import sweep
    for values, said in (([10, 40, 10], "--set link_gbps: the value 10 is "
                          "given twice$"),
                         ([10, 10.0], r"the value 10.0 is given twice "
                          r"\(as 10\)$")):
        with pytest.raises(ConfigError, match=said):
            sweep.plan(tiny, ['fair'], [1], [('link_gbps', values)],
                       ['sim'])
    # a flag's true is not the number 1
    with pytest.raises(ConfigError, match='twice'):
        sweep.plan(tiny, ['fair'], [1], [('big_switch', [True, True])],
                   ['sim'])


def test_the_progress_line_shows_the_studys_metric():
    import io
    from netsched.pipeline.progress import SweepProgress
    row = {'status': 'ok', 'wall_s': 1.0, 'avg_jct_s': 2.5,
           'avg_cct_s': 0.125, 'avg_sct_s': 0.75}
    for metric, said in (('avg_cct_s', 'avg_cct_s 0.125'),
                         (None, 'avg_jct_s 2.5')):
        out = io.StringIO()
        p = SweepProgress(out, bar=False, label='s/sim', metric=metric)
        p.start(2, 0)
        p.update('sim-fair-s1', row)
        line = out.getvalue().splitlines()[-1]
        assert said in line and line.count('avg_') == 1
    # without JCTs, the page's order: SCT before CCT
    out = io.StringIO()
    p = SweepProgress(out, bar=False)
    p.start(1, 0)
    p.update('k', dict(row, avg_jct_s=None))
    assert 'avg_sct_s 0.75' in out.getvalue()


def test_run_force_clears_the_exported_timeline(tmp_path):
    from netsched.pipeline import run
    for name in ('summary.json', 'trace.perfetto.json', 'notes.txt'):
        (tmp_path / name).write_text('{}')
    removed = run.clear(str(tmp_path))
    assert sorted(os.path.basename(p) for p in removed) == [
        'summary.json', 'trace.perfetto.json']
    assert os.listdir(tmp_path) == ['notes.txt']


def test_policy_labels(tiny):
    from netsched.pipeline import sweep
    assert sweep.labelled('aalo:first_mb=40') == ('aalo:first_mb=40',) * 2
    assert sweep.labelled('pkg.mod:Cls:k=1') == ('pkg.mod:Cls:k=1',) * 2
    assert sweep.labelled('mine=aalo:first_mb=40') == ('mine',
                                                       'aalo:first_mb=40')
    for bad, said in (('a/b=fair', 'want LABEL=POLICY'),
                      ('mine=', 'want LABEL=POLICY'),
                      ('x=fair,y=fair', 'x and y run the same policy fair'),
                      ('fair,fair', 'names fair twice')):
        with pytest.raises(ConfigError, match=said):
            sweep.labels(bad.split(','))
    named = sweep.labels(['base=fair', 'mine=sebf'])
    assert sweep.baseline_of(named) == 'base'
    assert sweep.baseline_of(named, 'sebf') == 'mine'
    with pytest.raises(ConfigError, match='not among --policies base,mine'):
        sweep.baseline_of(named, 'aalo')


def test_sweep_dry_run_no_figures_and_labels(tiny, tmp_path, capsys):
    """One sweep of two labelled policies without figures, dry-run before
    and after."""
    import csv
    import json
    from netsched import cli
    out = str(tmp_path / 'sw')
    args = ['sweep', tiny, '--policies', 'base=fair,mine=aalo:first_mb=40',
            '--out', out]
    assert cli.main(args + ['--dry-run']) == 0
    assert capsys.readouterr().out.splitlines() == [
        'dry run: 2 runs, 2 to run, 0 done already (skipped); nothing run, '
        'nothing written',
        '  run  %s' % os.path.join(out, 'sim-base-s1'),
        '  run  %s' % os.path.join(out, 'sim-mine-s1')]
    assert not os.path.exists(out)
    # a bad run is still named by a dry run
    assert cli.main(args + ['--dry-run', '--set', 'link_gbps=0']) == 2
    assert '--set link_gbps=0' in capsys.readouterr().err
    assert cli.main(args + ['--no-figures']) == 0
    # without figures: the runs' pages and the sweep's have none
    for run in ('sim-base-s1', 'sim-mine-s1'):
        run = os.path.join(out, run)
        assert not [f for f in os.listdir(run) if f.endswith('.png')]
        with open(os.path.join(run, 'report.html')) as f:
            assert '<img' not in f.read()
    with open(os.path.join(out, 'report.html')) as f:
        assert '<img' not in f.read()
    # the labels: in sweep.json, every table, ratios.csv
    with open(os.path.join(out, 'sweep.json')) as f:
        d = json.load(f)
    assert d['policies'] == ['base', 'mine'] and d['baseline'] == 'base'
    assert d['labels'] == {'base': 'fair', 'mine': 'aalo:first_mb=40'}
    for name in ('runs.csv', 'tables/runs.csv', 'means.csv'):
        with open(os.path.join(out, name), newline='') as f:
            assert {r['policy'] for r in csv.DictReader(f)} == \
                {'base', 'mine'}, name
    with open(os.path.join(out, 'ratios.csv'), newline='') as f:
        assert {(r['policy'], r['baseline']) for r in
                csv.DictReader(f)} == {('mine', 'base')}
    # the run itself ran the spec
    with open(os.path.join(out, 'sim-mine-s1', 'summary.json')) as f:
        s = json.load(f)
    assert s['policy'] == 'aalo' and s['policy_params']['first_mb'] == 40
    # a dry run again: both done; with one policy more, that one to run
    capsys.readouterr()
    listed = sorted(os.listdir(out))
    args[3] += ',sebf'
    assert cli.main(args + ['--dry-run']) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        '  skip %s' % os.path.join(out, 'sim-base-s1'),
        '  skip %s' % os.path.join(out, 'sim-mine-s1'),
        '  run  %s' % os.path.join(out, 'sim-sebf-s1')]
    assert sorted(os.listdir(out)) == listed


def test_paper_style_sizes_for_a_column_and_embeds_truetype(tmp_path):
    from netsched.pipeline import plots
    with plots.style('paper'):
        fig = plots.figure(5, 4)
        wide = plots.figure(14, 4)
        ax = fig.add_subplot()
        ax.plot([1, 2], [1, 2])
        ax.set_xlabel('link rate (Gbit/s)')
        path = plots.save(fig, str(tmp_path), 'f', 'pdf')
    assert tuple(fig.get_size_inches()) == pytest.approx((3.3, 2.64))
    assert wide.get_size_inches()[0] == pytest.approx(7.0)
    assert plots.figure(5, 4).get_size_inches()[0] == 5     # outside: as was
    with open(path, 'rb') as f:
        pdf = f.read()
    # TrueType embedded (pdf.fonttype 42), no Type 3 font, and a serif face
    assert b'/FontFile2' in pdf and b'/Type3' not in pdf
    assert b'Serif' in pdf or b'Roman' in pdf or b'Termes' in pdf
    with pytest.raises(ConfigError, match='--style must be one of'):
        with plots.style('poster'):
            pass


def test_report_style_paper_from_the_command_line(tmp_path, capsys):
    from netsched import cli
    (tmp_path / 'exp.yaml').write_text(TINY)
    run = str(tmp_path / 'run')
    assert cli.main(['run', str(tmp_path / 'exp.yaml'), '--out', run,
                     '--no-figures']) == 0
    assert cli.main(['report', run, '--style', 'paper', '--format',
                     'pdf']) == 0
    pdfs = os.listdir(os.path.join(run, 'figures'))
    assert 'jct.pdf' in pdfs
    with open(os.path.join(run, 'figures', 'jct.pdf'), 'rb') as f:
        pdf = f.read()
    assert b'/FontFile2' in pdf and b'/Type3' not in pdf
    with pytest.raises(SystemExit):
        cli.main(['report', run, '--style', 'poster'])


def test_make_hero_is_the_quick_starts_sweep_on_the_simulator(capsys):
    """The README's figure comes from `make hero`: its sweep runs on the
    simulator only, and is checked here by a dry run of the same
    command."""
    import shlex
    from netsched import cli
    # under `make test` a sub-make would print the directory it enters
    r = subprocess.run(['make', '--no-print-directory', '-n', 'hero'],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.replace('\\\n', ' ').splitlines()
    sweep_line = next(ln for ln in lines if ' sweep ' in ln)
    argv = shlex.split(sweep_line)[1:]
    assert argv[argv.index('--backend') + 1] == 'sim'
    assert lines[-1].split()[-1] == 'docs/img/fair-vs-sebf-cdf.png'
    with open(os.path.join(ROOT, 'README.md')) as f:
        assert 'docs/img/fair-vs-sebf-cdf.png' in f.read()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert cli.main(argv + ['--dry-run']) == 0
    finally:
        os.chdir(cwd)
    assert 'dry run: 6 runs' in capsys.readouterr().out
