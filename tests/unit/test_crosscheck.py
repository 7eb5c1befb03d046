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
