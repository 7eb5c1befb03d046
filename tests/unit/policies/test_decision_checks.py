"""A Decision is checked where it leaves a policy from outside the
package: a wrong shape, type or range is one line naming the policy and
the field; an exception in its decide() names the policy and the line
of its own code; its yes/no and one-of parameters are checked as it is
made (``maybe`` is not a yes/no)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from netsched.errors import ConfigError
from netsched.policies import Decision, Policy, registry
from netsched.policies.base import Snapshot, check_decision
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _snap(C=2, F=3, P=1, queues=4):
    return Snapshot(
        t=0.0, queues=queues, link_capacity=np.full(2, 1e9),
        path_links=np.array([[0, 1]]), flow_path=np.zeros(F, np.int64),
        flow_coflow=np.arange(F) % C, flow_remaining=np.ones(F),
        flow_sent=np.zeros(F), flow_rate=np.zeros(F),
        coflow_id=tuple('c%d' % i for i in range(C)),
        coflow_arrival=np.zeros(C), coflow_sent=np.zeros(C),
        pending_path=np.zeros(P, np.int64),
        pending_coflow=np.zeros(P, np.int64), pending_bytes=np.ones(P))


@pytest.mark.parametrize('decision, message', [
    (None, r'^policy p: decide\(\) returned NoneType None, not a '
     r'netsched.policies.Decision$'),
    ({'coflow_rank': [0, 1]}, r'returned dict'),
    (Decision(coflow_rank=np.array([0, 1, 2])),
     r'^policy p: Decision.coflow_rank: want shape \(2,\), one per coflow, '
     r'got \(3,\)$'),
    (Decision(coflow_rank=np.array([0, -1])),
     r'coflow_rank: want whole numbers >= 0, got -1 at index 1'),
    (Decision(coflow_rank=np.array([0.5, 1.0])),
     r'coflow_rank: want whole numbers >= 0, got 0.5 at index 0'),
    (Decision(coflow_rank=['a', 'b']),
     r'coflow_rank: want an array of numbers, got list'),
    (Decision(coflow_order=np.array([0.0, np.nan])),
     r'coflow_order: want finite numbers, got nan at index 1'),
    (Decision(flow_rate=np.array([1e9, -1.0, np.nan])),
     r'flow_rate: want bit/s >= 0 or NaN, got -1.0 at index 1'),
    (Decision(flow_rate=np.ones(2)), r'flow_rate: want shape \(3,\), one '
     r'per active flow'),
    (Decision(flow_class=np.array([0, 4, -1])),
     r'flow_class: want whole numbers >= -1 <= 3, got 4 at index 1'),
    (Decision(pending_class=np.array([0, 0])),
     r'pending_class: want shape \(1,\), one per pending send'),
    (Decision(recheck_at='soon'), r'recheck_at: want None or a time in s'),
    (Decision(recheck_at=float('inf')), r'recheck_at'),
    (Decision(job_shift={'j': (0, 0, 0, 0)}),
     r"job_shift\['j'\]: want .*period_s > 0"),
    (Decision(job_shift=[1]), r'job_shift: want \{job'),
])
def test_a_bad_decision_is_one_line_naming_the_field(decision, message):
    with pytest.raises(ConfigError, match=message) as e:
        check_decision(decision, _snap(), 'p')
    assert '\n' not in str(e.value)


def test_good_decisions_pass_as_they_are():
    snap = _snap()
    for d in (Decision(), Decision(coflow_rank=np.array([1, 0]),
                                   coflow_order=[0.5, 2],
                                   flow_rate=np.array([np.nan, 0, 5e8]),
                                   flow_class=[-1, 3, 0],
                                   pending_class=np.array([2]),
                                   recheck_at=np.float64(1.5),
                                   job_shift={'j': (0, 0.1, 0.01, 1),
                                              'k': None})):
        assert check_decision(d, snap, 'p') is d
    # the full order: classes up to the emulator's 8
    check_decision(Decision(flow_class=[7, 0, 0]), _snap(queues=None), 'p')
    empty = _snap(C=0, F=0, P=0)
    check_decision(Decision(coflow_rank=np.zeros(0, int)), empty, 'p')


class Yes(Policy):
    params = {'flag': True, 'mode': 'fast', 'n': 2}
    choices = {'mode': ('fast', 'slow')}

    def decide(self, snap):
        return Decision(coflow_rank=np.zeros(len(snap.coflow_id), int))


class Broken(Policy):
    def decide(self, snap):
        return [][0]


@pytest.fixture
def here(monkeypatch):
    """This module importable by module path."""
    monkeypatch.setitem(sys.modules, 'decision_checks_mod',
                        sys.modules[__name__])
    return 'decision_checks_mod'


@pytest.mark.parametrize('value, want', [
    (True, True), ('false', False), ('yes', True), (0, False), ('1', True)])
def test_yes_no_parameters_are_made_bools(here, value, want):
    p = registry.make(here + ':Yes', {'flag': value}, where='--policy')
    assert p.flag is want


@pytest.mark.parametrize('params, message', [
    ({'flag': 'maybe'}, r"^--policy decision_checks_mod:Yes: flag must be "
     r"true or false, got 'maybe'$"),
    ({'flag': 2}, r'flag must be true or false, got 2'),
    ({'mode': 'Slow'}, r"mode must be one of fast, slow, got 'Slow'; did "
     r"you mean 'slow'\?"),
    ({'mode': 'medium'}, r"mode must be one of fast, slow, got 'medium'$"),
])
def test_bad_yes_no_and_one_of_values_are_named(here, params, message):
    with pytest.raises(ConfigError, match=message):
        registry.make(here + ':Yes', params, where='--policy')


def test_outside_decisions_are_checked_built_ins_are_not(here):
    outside = registry.make(here + ':Yes')
    assert isinstance(outside.decide, registry.CheckedDecide)
    assert outside.decide(_snap()).coflow_rank.tolist() == [0, 0]
    assert not isinstance(registry.make('sebf').decide,
                          registry.CheckedDecide)
    broken = registry.make(here + ':Broken')
    with pytest.raises(ConfigError, match=r'^policy decision_checks_mod:'
                       r'Broken: decide\(\) raised IndexError: list index '
                       r'out of range \(.*test_decision_checks.py, line '
                       r'\d+\)$'):
        broken.decide(_snap())


def test_a_run_with_a_bad_decision_says_so_in_one_line(tmp_path):
    (tmp_path / 'tiny.yaml').write_text(TINY)
    (tmp_path / 'shortrank.py').write_text(textwrap.dedent('''
        import numpy as np
        from netsched.policies import Decision, Policy

        class ShortRank(Policy):
            def decide(self, snap):
                return Decision(coflow_rank=np.zeros(
                    len(snap.coflow_id) + 1, int))
        '''))
    r = subprocess.run(
        [sys.executable, '-m', 'netsched', 'run', str(tmp_path / 'tiny.yaml'),
         '--backend', 'sim', '--policy', 'shortrank:ShortRank',
         '--out', str(tmp_path / 'run')], capture_output=True, text=True,
        cwd=ROOT, timeout=300,
        env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert r.returncode == 2
    assert 'Traceback' not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        'netsched: error: policy shortrank:ShortRank: Decision.coflow_rank: '
        'want shape (1,), one per coflow, got (2,)')
