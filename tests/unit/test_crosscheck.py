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
