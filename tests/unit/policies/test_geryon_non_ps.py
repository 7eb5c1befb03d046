"""Geryon and jobs that are not parameter-server (issue 42): left out of
its urgency classes by default (``non_ps: last``), classed per send by
urgency on request (``non_ps: urgency``)."""
import dataclasses

import pytest

from netsched import policies
from netsched.errors import ConfigError
from netsched.policies import JobView
from tests.unit.policies.test_policies_geryon_tx import NAN, snap
from tests.support.tiny import TINY


def mixed(patterns):
    """Job a (coflow 0) and job b (coflow 1) on one link: a's flows at
    urgency 0.1 and 0.9, b's at 0.1, a pending send of each at 0.3;
    ``patterns``: a's and b's."""
    s = snap([(0, 0, 1.0, 0.1, NAN), (0, 0, 1.0, 0.9, NAN),
              (1, 0, 1.0, 0.1, NAN)],
             [(0, 0, 1.0, 0.3, NAN), (1, 0, 1.0, 0.3, NAN)],
             jobs=['a', 'b'])
    return dataclasses.replace(s, jobs={
        j: JobView(j, 0.0, 10, pattern=p) for j, p in zip('ab', patterns)})


def classes(d):
    return d.flow_class.tolist(), d.pending_class.tolist()


def test_a_ring_job_goes_last_by_default():
    # K = 4 on urgency: 0.1 -> 0, 0.9 -> 3, 0.3 -> 1; b is ring: every
    # send of its in Q - 1 = 7, flows and pending sends alike
    d = policies.make('geryon').decide(mixed(['ps', 'ring']))
    assert classes(d) == ([0, 3, 7], [1, 7])


def test_non_ps_urgency_classes_a_ring_job_as_ps_data():
    d = policies.make('geryon', {'non_ps': 'urgency'}).decide(
        mixed(['ps', 'ring']))
    assert classes(d) == ([0, 3, 0], [1, 1])


def test_a_job_of_no_known_pattern_counts_as_ps():
    # a backend that does not send the pattern (None): as before
    d = policies.make('geryon').decide(mixed(['ps', None]))
    assert classes(d) == ([0, 3, 0], [1, 1])
    # and a snapshot without job views at all
    s = dataclasses.replace(mixed(['ps', 'ring']), jobs={})
    assert classes(policies.make('geryon').decide(s)) == ([0, 3, 0], [1, 1])


def test_non_ps_is_one_of_two():
    with pytest.raises(ConfigError, match=r"non_ps must be one of last, "
                       r"urgency, got 'ring'"):
        policies.make('geryon', {'non_ps': 'ring'})
    assert policies.parse_spec('geryon:non_ps=urgency') == (
        'geryon', {'non_ps': 'urgency'})


def test_the_warning_says_what_happens_to_ring_jobs():
    jobs = [{'id': 'r', 'pattern': 'ring', 'group': None}]
    w = policies.make('geryon').warnings(jobs)
    assert w and 'lowest class (non_ps: last)' in w[0]
    w = policies.make('geryon', {'non_ps': 'urgency'}).warnings(jobs)
    assert w and 'classed per send' in w[0]
    assert policies.make('geryon').warnings(
        jobs + [{'id': 'p', 'pattern': 'ps', 'group': None}]) == []


def _run(tmp_path, policy, name):
    from netsched.pipeline import experiment, run
    p = tmp_path / 'tiny.yaml'
    p.write_text(TINY)
    exp = experiment.load(str(p), backend='sim', policy=policy)
    _, summary = run.execute(exp, str(tmp_path / name),
                             say=lambda m: None)
    return summary


def test_on_the_simulator_ring_jobs_under_geryon_run_as_under_fair(
        tmp_path):
    """Two ring jobs: every send in one class, shared per flow, so the
    run is fair sharing's; classed by urgency it is not."""
    fair = _run(tmp_path, 'fair', 'fair')
    last = _run(tmp_path, 'geryon', 'last')
    urg = _run(tmp_path, 'geryon:non_ps=urgency', 'urgency')
    jct = {k: {j: v['jct_s'] for j, v in s['jobs'].items()}
           for k, s in (('fair', fair), ('last', last), ('urgency', urg))}
    assert jct['last'] == pytest.approx(jct['fair'], rel=1e-9)
    assert jct['urgency'] != pytest.approx(jct['fair'], rel=1e-3)


def test_the_simulator_and_the_plan_give_the_job_its_pattern():
    from netsched.workload import taskgraph
    jp = taskgraph.JobPlan.__dataclass_fields__
    assert 'pattern' in jp
    reg = {'iterations': 1, 'bytes_per_iteration': 1.0, 'pattern': 'ring'}
    from netsched.control.demand import _job_meta
    assert _job_meta('h', 'j', reg)['pattern'] == 'ring'
    assert _job_meta('h', 'j', dict(reg, pattern=None))[
        'pattern'] is None
    with pytest.raises(Exception, match='pattern must be a name'):
        _job_meta('h', 'j', dict(reg, pattern=3))
