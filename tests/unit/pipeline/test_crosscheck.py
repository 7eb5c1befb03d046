"""Ranking agreement between backends (the pure part of crosscheck), the
pairs of two or three backends (--backends), and one crosscheck of the
simulator against ns-3 on a tiny experiment."""
import os

import pytest

from netsched.pipeline import crosscheck
from netsched.errors import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def test_order_with_a_tie_margin():
    assert crosscheck.order(1.0, 2.0, 0.05) == -1
    assert crosscheck.order(2.0, 1.0, 0.05) == 1
    assert crosscheck.order(1.0, 1.04, 0.05) == 0
    assert crosscheck.order(None, 1.0, 0.05) == 0


def test_ranking_best_first():
    assert crosscheck.ranking({'fair': 3.0, 'sebf': 1.0, 'fifo': 2.0}) == \
        ['sebf', 'fifo', 'fair']


def test_disagreement_only_when_both_backends_are_clear():
    sim = {'fair': 3.0, 'sebf': 1.0, 'fifo': 2.0}
    same = {'fair': 30.0, 'sebf': 10.0, 'fifo': 20.0}
    assert crosscheck.disagreements(sim, same, 0.05) == []
    flipped = {'fair': 3.0, 'sebf': 2.0, 'fifo': 1.0}
    assert crosscheck.disagreements(sim, flipped, 0.05) == [('sebf', 'fifo')]
    tied = {'fair': 3.0, 'sebf': 1.99, 'fifo': 2.0}   # sebf ~ fifo: a tie
    assert crosscheck.disagreements(sim, tied, 0.05) == []


@pytest.mark.parametrize('pols,metric,tie,msg', [
    (['fair'], 'avg_cct_s', 0.05, 'at least two policies'),
    (['fair', 'fair'], 'avg_cct_s', 0.05, 'names a policy twice'),
    (['fair', 'nope'], 'avg_cct_s', 0.05, "unknown policy 'nope'"),
    (['fair', 'sebf'], 'cct', 0.05, "--metric must be one of"),
    (['fair', 'sebf'], 'avg_cct_s', 1.5, r'--tie must be in \[0, 1\)'),
])
def test_bad_arguments_are_named(pols, metric, tie, msg):
    with pytest.raises(ConfigError, match=msg):
        crosscheck.check_args(pols, metric, tie)


def test_cli_reports_bad_policies_without_a_traceback(capsys):
    from netsched import cli
    assert cli.main(['crosscheck', 'experiments/crosscheck.yaml',
                     '--policies', 'fair,nope']) == 2
    err = capsys.readouterr().err
    assert "unknown policy 'nope'" in err and 'Traceback' not in err


def test_table_of_a_report_read_back_from_its_json():
    """A report that disagrees, as report.write reads it back from
    crosscheck.json (pairs become lists), renders its pairs."""
    import json
    rep = {'metric': 'avg_cct_s', 'tie': 0.05,
           'totals': {'sim': {'a': 1.0, 'b': 2.0},
                      'emu': {'a': 2.0, 'b': 1.0}},
           'errors': {'a': {'job jct_s': 0.1, 'coflow cct_s': None},
                      'b': {'job jct_s': None, 'coflow cct_s': 0.2}},
           'ranking': {'sim': ['a', 'b'], 'emu': ['b', 'a']},
           'disagreements': [('a', 'b')], 'agree': False}
    back = json.loads(json.dumps(rep))
    assert back['disagreements'] == [['a', 'b']]
    assert 'the backends DISAGREE on: a vs b' in crosscheck.table(back)


def test_the_emulators_own_measures_and_the_parts_of_a_disagreement(
        tmp_path):
    """What the emulator's run recorded of itself (run.json's backend_info,
    the summary's longest gap) and, for the policies of a disagreeing
    pair, each stage on both backends: a failed crosscheck names where
    its difference came from."""
    import json
    out = tmp_path / 'emu-a'
    out.mkdir()
    (out / 'run.json').write_text(json.dumps({'backend_info': {
        'tcp_retransmits': 126,
        'tcp_timeouts_by_host': {'hl0': 2, 'hr3': 5},
        'tcp_rto_recovery_s_by_connection': {'hl0#0': 0.55, 'hr3#7': 1.28},
        'queue_drops_by_interface': {'s1-eth2': 1},
        'ovs_drops_by_port': {'s1-eth1': 2},
        'socket_drops_by_port': {},
        'controller': {'decisions': 184, 'applied_ms_max': 53.7}}}))
    emu = {'longest_gap': {'gap_s': 0.436, 'in_flight': 1},
           'stages': {'x/s0': {'sct_s': 3.75}, 'x/s1': {'sct_s': 0.53}},
           'fidelity': {'verdict': 'degraded',
                        'causes': ['tcp: 7 retransmission timeouts']}}
    sim = {'stages': {'x/s0': {'sct_s': 3.0}, 'x/s1': {'sct_s': 0.5}}}
    h = crosscheck.emulator_health(str(out), emu)
    # 2 + 5 timeouts; 1 tc drop + 2 OVS drops; the worst connection hr3#7
    assert h == {'tcp_retransmits': 126, 'tcp_timeouts': 7,
                 'rto_recovery_worst': ['hr3#7', 1.28], 'drops': 3,
                 'longest_gap_s': 0.436, 'longest_gap_in_flight': 1,
                 'decisions': 184, 'applied_ms_max': 53.7,
                 'verdict': 'degraded',
                 'causes': ['tcp: 7 retransmission timeouts']}
    # a run that wrote no run.json (it failed early) has nothing to say
    assert crosscheck.emulator_health(str(tmp_path / 'none'), {})[
        'tcp_timeouts'] == 0
    rep = {'metric': 'avg_sct_s', 'tie': 0.05,
           'totals': {'sim': {'a': 1.0, 'b': 2.0},
                      'emu': {'a': 2.0, 'b': 1.0}},
           'errors': {p: {'job jct_s': 0.1, 'coflow cct_s': 0.1}
                      for p in 'ab'},
           'ranking': {'sim': ['a', 'b'], 'emu': ['b', 'a']},
           'disagreements': [('a', 'b')], 'agree': False,
           'emulator': {'a': h},
           'parts': {'a': crosscheck.parts(sim, emu),
                     'b': crosscheck.parts({'jobs': {'j': {'jct_s': 1.0}}},
                                           {'jobs': {}})}}
    t = crosscheck.table(json.loads(json.dumps(rep)))
    assert ('emu a: 7 TCP timeouts (126 retransmits; hr3#7 1.28 s in '
            'timeout recovery), 3 drops, longest stall 0.436 s with 1 in '
            'flight, 184 decisions (slowest applied in 53.7 ms)') in t
    # the run's own verdict, named with its cause
    assert 'emu a: fidelity DEGRADED: tcp: 7 retransmission timeouts' in t
    assert 'a sim/emu: x/s0 3.000/3.750, x/s1 0.500/0.530' in t
    # a job the emulator did not finish shows as such
    assert 'b sim/emu: j 1.000/-' in t


# --- --backends: two or three of sim, ns3, emu (issue 38) -----------------

@pytest.mark.parametrize('text,want', [
    ('sim,emu', ('sim', 'emu')),
    ('sim,ns3', ('sim', 'ns3')),
    ('emu,sim', ('sim', 'emu')),             # run and paired in one order
    ('emu, ns3,sim', ('sim', 'ns3', 'emu')),
])
def test_backends_are_parsed_into_their_running_order(text, want):
    assert crosscheck.parse_backends(text) == want
    assert crosscheck.backend_pairs(want) == [
        (a, b) for i, a in enumerate(want) for b in want[i + 1:]]


@pytest.mark.parametrize('text,msg', [
    ('sim', "--backends needs at least two of sim, ns3, emu, got 'sim'"),
    ('', "--backends needs at least two"),
    ('sim,sim', "--backends names a backend twice: 'sim,sim'"),
    ('sim,ns3,sim', 'names a backend twice'),
    ('sim,ns-3', "--backends: unknown backend 'ns-3' in 'sim,ns-3' "
                 r"\(known: sim, ns3, emu\)"),
])
def test_a_bad_backend_list_is_named(text, msg):
    with pytest.raises(ConfigError, match=msg):
        crosscheck.parse_backends(text)


def test_cli_says_a_bad_backend_list_in_one_line(capsys, tmp_path):
    from netsched import cli
    assert cli.build_parser().parse_args(
        ['crosscheck', 'x.yaml']).backends == 'sim,emu'
    out = tmp_path / 'cc'
    assert cli.main(['crosscheck', 'experiments/crosscheck.yaml',
                     '--backends', 'sim,bogus', '--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert err == ("netsched: error: --backends: unknown backend 'bogus' in "
                   "'sim,bogus' (known: sim, ns3, emu)\n")
    assert not out.exists()


class _Stop(Exception):
    pass


@pytest.mark.parametrize('backends,euid,checks', [
    ('sim,ns3', 1000, []),                   # no root, no OVS asked
    ('sim,emu', 0, ['ovs']),
    ('sim,ns3,emu', 0, ['ovs']),
    ('sim,emu', 1000, ['root']),
])
def test_the_emulators_check_only_when_it_runs(monkeypatch, tmp_path,
                                              backends, euid, checks):
    """What --backends needs is checked once the experiment has loaded,
    before the first run: root and Open vSwitch only with emu."""
    from netsched import cli
    from netsched.emulator import ovs
    from netsched.errors import NetschedError
    from netsched.ns3 import loader
    seen = []
    monkeypatch.setattr(cli.runs.os, 'geteuid', lambda: euid)
    monkeypatch.setattr(ovs, 'require_running', lambda: seen.append('ovs'))
    monkeypatch.setattr(loader, 'available', lambda: True)

    def fake(path, pols, out, metric, tie, backends=None, ready=None,
             **kw):
        seen.append(tuple(backends))
        ready()
        raise _Stop()
    monkeypatch.setattr(crosscheck, 'crosscheck', fake)
    a = cli.build_parser().parse_args([
        'crosscheck', 'experiments/crosscheck.yaml', '--backends', backends,
        '--out', str(tmp_path / 'cc')])
    if checks == ['root']:
        with pytest.raises(NetschedError, match='the emulator needs root'):
            cli.runs.cmd_crosscheck(a)
        checks = []
    else:
        with pytest.raises(_Stop):
            cli.runs.cmd_crosscheck(a)
    assert seen == [crosscheck.parse_backends(backends)] + checks


def test_ns3_missing_is_said_before_any_run(monkeypatch, tmp_path):
    from netsched import cli
    from netsched.errors import NetschedError
    from netsched.ns3 import loader
    monkeypatch.setattr(loader, 'available', lambda: False)
    monkeypatch.setattr(crosscheck, 'crosscheck',
                        lambda *a, ready=None, **kw: ready())
    a = cli.build_parser().parse_args([
        'crosscheck', 'experiments/crosscheck.yaml', '--backends', 'sim,ns3',
        '--out', str(tmp_path / 'cc')])
    with pytest.raises(NetschedError, match='needs the ns3 package'):
        cli.runs.cmd_crosscheck(a)


def summary(jobs, coflows):
    """A hand-made summary: JCTs and CCTs by id; its avg_cct_s their
    mean."""
    return {'experiment': 'hand', 'stages': {},
            'jobs': {j: {'jct_s': t} for j, t in jobs.items()},
            'coflows': {c: {'cct_s': t} for c, t in coflows.items()},
            'totals': {'avg_cct_s': sum(coflows.values()) / len(coflows)
                       if coflows else None}}


# Two jobs (a, b) of one coflow each (c1, c2), fair and sebf, on three
# backends. Worked by hand:
#   sim  fair: a 1.0, b 3.0; c1 1.0, c2 3.0 -> avg CCT 2.0
#        sebf: a 0.5, b 3.0; c1 0.5, c2 3.0 -> 1.75 (sebf first)
#   ns3  fair: a 1.1, b 3.0; c1 1.1, c2 3.3 -> 2.2
#        sebf: a 0.6, b 3.0; c1 0.6, c2 3.0 -> 1.8  (sebf first)
#   emu  fair: a 1.0, b 2.0; c1 1.0, c2 2.0 -> 1.5
#        sebf: a 1.5, b 3.0; c1 1.5, c2 3.0 -> 2.25 (fair first)
HAND = {
    ('sim', 'fair'): summary({'a': 1.0, 'b': 3.0}, {'c1': 1.0, 'c2': 3.0}),
    ('sim', 'sebf'): summary({'a': 0.5, 'b': 3.0}, {'c1': 0.5, 'c2': 3.0}),
    ('ns3', 'fair'): summary({'a': 1.1, 'b': 3.0}, {'c1': 1.1, 'c2': 3.3}),
    ('ns3', 'sebf'): summary({'a': 0.6, 'b': 3.0}, {'c1': 0.6, 'c2': 3.0}),
    ('emu', 'fair'): summary({'a': 1.0, 'b': 2.0}, {'c1': 1.0, 'c2': 2.0}),
    ('emu', 'sebf'): summary({'a': 1.5, 'b': 3.0}, {'c1': 1.5, 'c2': 3.0}),
}
# the second backend's mean |relative error| against the first's, per
# policy: (jobs, coflows)
HAND_ERRORS = {
    # fair: jobs 0.1/1.0 and 0 -> 0.05; coflows 0.1 and 0.3/3.0 -> 0.1
    # sebf: jobs 0.1/0.5 and 0 -> 0.1;  coflows the same -> 0.1
    'sim-ns3': {'fair': (0.05, 0.1), 'sebf': (0.1, 0.1)},
    # fair: 0 and 1/3 -> 1/6 both; sebf: 1.0/0.5 = 2 and 0 -> 1.0 both
    'sim-emu': {'fair': (1 / 6, 1 / 6), 'sebf': (1.0, 1.0)},
    # fair: jobs 0.1/1.1 = 1/11 and 1/3 -> 7/33; coflows 1/11 and
    #       1.3/3.3 = 13/33 -> 8/33; sebf: 0.9/0.6 = 1.5 and 0 -> 0.75
    'ns3-emu': {'fair': (7 / 33, 8 / 33), 'sebf': (0.75, 0.75)},
}


def test_every_pair_of_three_backends_on_hand_made_summaries():
    rep = crosscheck.build(('emu', 'sim', 'ns3'), ['fair', 'sebf'], HAND,
                           tie=0.05, sim_packets='none')
    assert rep['backends'] == ['sim', 'ns3', 'emu']
    assert rep['totals'] == {
        'sim': {'fair': 2.0, 'sebf': 1.75},
        'ns3': {'fair': pytest.approx(2.2), 'sebf': pytest.approx(1.8)},
        'emu': {'fair': 1.5, 'sebf': 2.25}}
    assert rep['ranking'] == {'sim': ['sebf', 'fair'],
                              'ns3': ['sebf', 'fair'],
                              'emu': ['fair', 'sebf']}
    assert list(rep['pairs']) == ['sim-ns3', 'sim-emu', 'ns3-emu']
    for name, want in HAND_ERRORS.items():
        pr = rep['pairs'][name]
        assert pr['backends'] == name.split('-')
        for p, (jobs, coflows) in want.items():
            assert pr['errors'][p] == {'job jct_s': pytest.approx(jobs),
                                       'coflow cct_s': pytest.approx(coflows)}
    # the simulator and ns-3 both put sebf first; the emulator fair
    assert rep['pairs']['sim-ns3']['disagreements'] == []
    assert rep['pairs']['sim-ns3']['agree'] is True
    for name in ('sim-emu', 'ns3-emu'):
        assert rep['pairs'][name]['disagreements'] == [('fair', 'sebf')]
        assert rep['pairs'][name]['agree'] is False
    # the two pairs' one disagreement, said once
    assert rep['disagreements'] == [('fair', 'sebf')]
    assert rep['agree'] is False
    assert rep['pairs']['ns3-emu']['parts']['sebf'] == {
        'a': [0.6, 1.5], 'b': [3.0, 3.0]}
    t = crosscheck.table(rep)
    assert 'sim-ns3: the same ranking' in t
    assert 'sim-emu: DISAGREE on fair vs sebf' in t
    assert 'ns3-emu: DISAGREE on fair vs sebf' in t
    assert t.endswith('the backends DISAGREE on: fair vs sebf')
    # the errors block: a row per policy, a column per pair
    fair, = [ln for ln in t.splitlines()
             if ln.startswith('fair ') and ' / ' in ln]
    assert fair.split()[1:] == ['5.0%', '/', '10.0%', '16.7%', '/', '16.7%',
                                '21.2%', '/', '24.2%']
    assert 'ns3 ranking (best first): sebf < fair' in t
    assert 'fair ns3/emu: a 1.100/1.000, b 3.000/2.000' in t


def test_disagreements_of_each_pair_and_their_union():
    """Three policies: ns-3 swaps a and b against the simulator, the
    emulator b and c; against each other they differ on both."""
    tot = {'sim': {'a': 1.0, 'b': 2.0, 'c': 3.0},
           'ns3': {'a': 2.0, 'b': 1.0, 'c': 3.0},
           'emu': {'a': 1.0, 'b': 3.0, 'c': 2.0}}
    assert crosscheck.disagreements(tot['sim'], tot['ns3'], 0.05) == \
        [('a', 'b')]
    assert crosscheck.disagreements(tot['sim'], tot['emu'], 0.05) == \
        [('b', 'c')]
    assert crosscheck.disagreements(tot['ns3'], tot['emu'], 0.05) == \
        [('a', 'b'), ('b', 'c')]
    sums = {(b, p): {'jobs': {}, 'coflows': {}, 'totals': {'avg_cct_s': v}}
            for b, vals in tot.items() for p, v in vals.items()}
    rep = crosscheck.build(('sim', 'ns3', 'emu'), ['a', 'b', 'c'], sums)
    assert rep['disagreements'] == [('a', 'b'), ('b', 'c')]
    # no job nor coflow in both runs: no error to give
    assert rep['pairs']['sim-ns3']['errors']['a'] == {
        'job jct_s': None, 'coflow cct_s': None}


def test_the_json_of_two_and_of_three_backends():
    """crosscheck.json: every report has backends, pairs, disagreements
    and agree; with two backends also the one pair's errors and parts at
    the top, as before --backends; sim_packets where the simulator ran,
    emulator where the emulator did."""
    import json

    def shape(backends, **kw):
        pols = ['fair', 'sebf']
        rep = crosscheck.build(backends, pols,
                               {k: v for k, v in HAND.items()
                                if k[0] in backends}, **kw)
        return json.loads(json.dumps(rep))
    # a run that wrote no run.json: nothing measured
    health = {p: crosscheck.emulator_health('/nonexistent', {})
              for p in ('fair', 'sebf')}
    two = shape(('sim', 'emu'), sim_packets='none', emulator=health)
    assert set(two) == {'metric', 'tie', 'backends', 'totals', 'ranking',
                        'pairs', 'disagreements', 'agree', 'errors',
                        'parts', 'sim_packets', 'emulator'}
    assert two['backends'] == ['sim', 'emu'] and list(two['pairs']) == \
        ['sim-emu']
    pr = two['pairs']['sim-emu']
    assert set(pr) == {'backends', 'errors', 'disagreements', 'agree',
                       'parts'}
    assert two['errors'] == pr['errors'] and two['parts'] == pr['parts']
    assert two['disagreements'] == pr['disagreements'] == [['fair', 'sebf']]
    assert two['errors']['sebf'] == {'job jct_s': 1.0, 'coflow cct_s': 1.0}
    # what readers of an older crosscheck.json see is the same report
    old = {k: v for k, v in two.items() if k not in ('backends', 'pairs')}
    assert crosscheck.backends_of(old) == ['sim', 'emu']
    assert crosscheck.pairs_of(old) == two['pairs']
    assert crosscheck.table(old) == crosscheck.table(two)
    sn = shape(('sim', 'ns3'), sim_packets='none', emulator=health)
    assert 'emulator' not in sn and list(sn['pairs']) == ['sim-ns3']
    assert sn['agree'] is True and sn['disagreements'] == []
    assert sn['totals']['ns3']['fair'] == pytest.approx(2.2)
    three = shape(('sim', 'ns3', 'emu'), sim_packets='dc', emulator=health)
    assert set(three) == {'metric', 'tie', 'backends', 'totals', 'ranking',
                          'pairs', 'disagreements', 'agree', 'sim_packets',
                          'emulator'}
    assert list(three['pairs']) == ['sim-ns3', 'sim-emu', 'ns3-emu']
    assert set(three['ranking']) == set(three['totals']) == \
        {'sim', 'ns3', 'emu'}
    assert 'simulator packets: dc' in crosscheck.table(three)
    assert 'sim_packets' not in shape(('ns3', 'emu'))


def test_a_report_page_of_three_backends(tmp_path):
    """report.html of a crosscheck folder with three backends: every
    pair's errors and verdict; the figures show every pair."""
    import json
    from netsched.pipeline import crosscheck_plots, report
    rep = crosscheck.build(('sim', 'ns3', 'emu'), ['fair', 'sebf'], HAND)
    (tmp_path / 'crosscheck.json').write_text(json.dumps(rep))
    html = open(report.write(str(tmp_path))).read()
    assert '<h2>Every pair of backends</h2>' in html
    for name in ('sim-ns3', 'sim-emu', 'ns3-emu'):
        assert '<th>%s jobs</th><th>%s coflows</th>' % (name, name) in html
    assert '<td>21.2%</td><td>24.2%</td>' in html        # fair, ns3-emu
    assert 'they disagree on fair vs sebf' in html
    assert 'sim-ns3: the same ranking' in html            # the text table
    figs = {n: fig for n, _, fig in crosscheck_plots.crosscheck_figures(
        json.loads(json.dumps(rep)), HAND)}
    assert list(figs) == ['crosscheck_totals', 'crosscheck_scatter',
                          'crosscheck_errors']
    assert figs['crosscheck_totals'].get_suptitle().startswith(
        'hand (crosscheck, simulator, ns-3 and emulator)')
    ax = figs['crosscheck_totals'].axes[0]
    assert sorted(p.get_height() for p in ax.patches) == pytest.approx(
        sorted([2.0, 1.75, 2.2, 1.8, 1.5, 2.25]))
    # a row of jobs and coflows per pair
    assert len([a for a in figs['crosscheck_scatter'].axes
                if a.get_visible()]) == 6
    jobs, coflows = figs['crosscheck_errors'].axes
    assert [round(p.get_height(), 1) for p in jobs.patches] == \
        [5.0, 10.0, 16.7, 100.0, 21.2, 75.0]
    # an older report of two backends keeps its heading
    (tmp_path / 'crosscheck.json').write_text(json.dumps(
        crosscheck.build(('sim', 'emu'), ['fair', 'sebf'], HAND)))
    assert '<h2>Emulator against simulator</h2>' in open(
        report.write(str(tmp_path))).read()


def need_ns3():
    """Skip without the ns3 package, except under CI (CI=true), where a
    missing backend is a failure (as tests/unit/ns3/test_ns3.py)."""
    from netsched.ns3 import loader
    if loader.available():
        return
    if os.environ.get('CI', '').lower() == 'true':
        pytest.fail('CI: the ns3 package is missing (make setup installs '
                    'it); the ns-3 crosscheck cannot run')
    pytest.skip('ns-3 is not installed (make setup installs it)')


TINY_CC = """
name: tiny-cc
backend: sim
topology: dumbbell,2
link_gbps: 10
jobs:
  - {id: small, model: resnet50, pattern: ring, workers: 2, iterations: 2,
     compute_scale: 0, placement: [hl0, hr0]}
  - {id: large, model: vgg16, pattern: ring, workers: 2, iterations: 1,
     compute_scale: 0, placement: [hl1, hr1]}
"""


@pytest.mark.slow            # about 20 s: ns-3 loads for seconds per process
def test_crosscheck_of_the_simulator_and_ns3(tmp_path):
    """`netsched crosscheck --backends sim,ns3` on two ring jobs over a
    dumbbell: four runs in their folders, crosscheck.json with the one
    pair, no emulator (no root asked), a report page."""
    import json
    import subprocess
    import sys
    need_ns3()
    exp = tmp_path / 'tiny.yaml'
    exp.write_text(TINY_CC)
    out = tmp_path / 'cc'
    r = subprocess.run([sys.executable, '-m', 'netsched', 'crosscheck',
                        str(exp), '--backends', 'sim,ns3', '--policies',
                        'fair,sebf', '--out', str(out)],
                       capture_output=True, text=True, timeout=600,
                       cwd=ROOT)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    for d in ('sim-fair', 'sim-sebf', 'ns3-fair', 'ns3-sebf'):
        assert (out / d / 'summary.json').is_file(), d
    assert not any(out.glob('emu-*'))
    rep = json.loads((out / 'crosscheck.json').read_text())
    assert rep['backends'] == ['sim', 'ns3']
    assert list(rep['pairs']) == ['sim-ns3'] and 'emulator' not in rep
    assert json.loads((out / 'ns3-sebf' / 'summary.json').read_text())[
        'backend'] == 'ns3'
    pr = rep['pairs']['sim-ns3']
    assert set(pr['errors']) == {'fair', 'sebf'}
    for e in pr['errors'].values():      # one model of the same fabric
        assert 0 <= e['job jct_s'] < 0.25 and 0 <= e['coflow cct_s'] < 0.25
    assert r.returncode == (0 if rep['agree'] else 1)
    assert 'ns3 avg_cct_s' in r.stdout
    assert 'ns3 ranking (best first): ' in r.stdout
    assert (out / 'report.html').is_file()
