"""Ranking agreement between backends (the pure part of crosscheck)."""
import pytest

from netsched.pipeline import crosscheck
from netsched.errors import ConfigError


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
           'stages': {'x/s0': {'sct_s': 3.75}, 'x/s1': {'sct_s': 0.53}}}
    sim = {'stages': {'x/s0': {'sct_s': 3.0}, 'x/s1': {'sct_s': 0.5}}}
    h = crosscheck.emulator_health(str(out), emu)
    # 2 + 5 timeouts; 1 tc drop + 2 OVS drops; the worst connection hr3#7
    assert h == {'tcp_retransmits': 126, 'tcp_timeouts': 7,
                 'rto_recovery_worst': ['hr3#7', 1.28], 'drops': 3,
                 'longest_gap_s': 0.436, 'longest_gap_in_flight': 1,
                 'decisions': 184, 'applied_ms_max': 53.7}
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
    assert 'a sim/emu: x/s0 3.000/3.750, x/s1 0.500/0.530' in t
    # a job the emulator did not finish shows as such
    assert 'b sim/emu: j 1.000/-' in t
