"""Experiment files: every bad key or value is named, before anything
runs; `netsched check` answers without root."""
import os
import subprocess
import sys
import time

import pytest
import yaml

from netsched.pipeline import experiment
from netsched.errors import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def base(**job):
    j = dict(id='j', model='resnet50', pattern='ring', workers=4,
             iterations=3)
    j.update(job)
    return {'topology': 'fattree,4', 'jobs': [j]}


@pytest.mark.parametrize('job,msg', [
    (dict(model='resnet5'), r"jobs\[0\]: model: unknown model 'resnet5'"),
    (dict(workers=1), r'jobs\[0\]: workers: ring all-reduce needs at least '
                      r'2 workers, got 1'),
    (dict(workers=-3), r'jobs\[0\]: workers: must be >= 1, got -3'),
    (dict(iterations=0), r'jobs\[0\]: iterations: must be >= 1'),
    (dict(placement=['h0_0_0', 'h9_9_9', 'h0_1_0', 'h0_1_1']),
     r"jobs\[0\]: placement: host 'h9_9_9' does not exist"),
    (dict(placement=['h0_0_0']), r'placement: lists 1 hosts; this job '
                                 r'needs 4'),
    (dict(pattern='tree'), r'pattern: must be one of ring, ps'),
    (dict(bucket_mb=-1), r'bucket_mb: must be > 0, got -1'),
    (dict(colour='red'), r"jobs\[0\]: unknown key 'colour'"),
    (dict(workers=20), r'workers: the job needs 20 hosts; the topology '
                       r'has 16'),
])
def test_bad_jobs_name_the_field(job, msg):
    with pytest.raises(ConfigError, match=msg):
        experiment.from_dict(base(**job), 'e.yaml')


@pytest.mark.parametrize('top,msg', [
    ({'topology': 'fattree,5'}, r'topology: fat_tree: k must be an even'),
    ({'scale': 0}, r'scale: must be >= 1'),
    ({'queues': 9}, r'queues: the emulator has at most 8'),
    ({'queues': 'exact'}, r"queues: 'exact'"),
    ({'policy': 'bogus'}, r"policy: unknown policy 'bogus'"),
    ({'backend': 'ns2'}, r'backend: must be one of emu, sim, ns3'),
    ({'link_gbps': -1}, r'link_gbps: must be > 0'),
    ({'jobs': []}, r'no jobs, tuning groups or trace'),
    ({'trace': {'path': 'nowhere.txt'}}, r'trace: path: no such file'),
    ({'policy_params': {'bogus': {}}},
     r"policy_params: bogus: unknown policy 'bogus'"),
    ({'policy_params': {'aalo': {'first_gb': 1}}},
     r'policy_params: aalo.*first_gb'),
    ({'policy_params': {'aalo': 4}}, r'policy_params: aalo: must be a '
                                     r'mapping'),
])
def test_bad_top_level_keys_are_named(top, msg):
    d = base()
    d.update(top)
    with pytest.raises(ConfigError, match=msg):
        experiment.from_dict(d, 'e.yaml')


def test_ps_needs_hosts_for_servers_and_only_ps_has_shards():
    with pytest.raises(ConfigError, match=r'ps_shards: only a ps job'):
        experiment.from_dict(base(ps_shards=2), 'e.yaml')
    e = experiment.from_dict(base(pattern='ps', ps_shards=2), 'e.yaml')
    assert e.jobs[0].ps_shards == 2


def test_negative_sizes_in_a_user_profile_are_named(tmp_path):
    (tmp_path / 'm.yaml').write_text(
        'name: m\nlayers:\n  - {forward_ms: 1, backward_ms: 1, '
        'tensors: [{bytes: -1}]}\n')
    d = base(model='m.yaml')
    p = tmp_path / 'e.yaml'
    p.write_text(yaml.safe_dump(d))
    with pytest.raises(ConfigError, match=r'bytes must be a non-negative'):
        experiment.load(str(p))


def test_cli_overrides():
    e = experiment.from_dict(base(), 'e.yaml', backend='sim', policy='varys')
    assert (e.backend, e.policy) == ('sim', 'varys')


def test_tuning_group_checked():
    d = {'topology': 'fattree,4', 'tuning': [dict(
        id='g', model='resnet50', pattern='ring', workers=2, configs=4,
        stages=[{'iterations': 2, 'keep': 1.5}, {'iterations': 2}])]}
    with pytest.raises(ConfigError, match=r'stages\[0\]: keep: must be <= 1'):
        experiment.from_dict(d, 'e.yaml')


@pytest.mark.parametrize('name', sorted(
    f for f in os.listdir(os.path.join(ROOT, 'experiments'))
    if f.endswith('.yaml')))
def test_shipped_experiments_check_quickly_without_root(name):
    if name == 'fb-trace.yaml' and os.environ.get('CI', '').lower() != \
            'true':
        try:            # tests/conftest.py sets NETSCHED_TRACE
            experiment.find_trace('FB2010-1Hr-150-0.txt', ROOT)
        except ConfigError:
            pytest.skip('no Facebook trace (NETSCHED_TRACE; CI has it)')
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, '-m', 'netsched', 'check',
                        os.path.join(ROOT, 'experiments', name)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert ': ok' in r.stdout
    assert time.monotonic() - t0 < 10


def test_check_reports_a_bad_file_without_traceback(tmp_path):
    p = tmp_path / 'bad.yaml'
    p.write_text(yaml.safe_dump(base(workers=1)))
    r = subprocess.run([sys.executable, '-m', 'netsched', 'check', str(p)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    assert 'Traceback' not in r.stderr
    assert 'workers' in r.stderr and 'bad.yaml' in r.stderr


def test_completion_tolerance_is_checked(tmp_path):
    d = {'topology': 'bigswitch,2', 'backend': 'sim', 'big_switch': True,
         'completion_tolerance': 0.5,
         'jobs': [dict(id='j', model='resnet50', pattern='ring', workers=2)]}
    with pytest.raises(ConfigError, match=r'completion_tolerance: must be '
                                          r'<= 0.1, got 0.5'):
        experiment.from_dict(d, str(tmp_path / 'e.yaml'))


def test_policy_params_apply_to_whichever_policy_runs():
    d = base()
    d['policy_params'] = {'aalo': {'first_mb': 40}}
    d['threshold_floor_windows'] = 0     # the parameters as given
    assert experiment.from_dict(d, 'e.yaml', policy='aalo').policy_params \
        == {'first_mb': 40}
    assert experiment.from_dict(d, 'e.yaml', policy='sebf').policy_params \
        == {}
    # the policy key's own parameters win
    d['policy'] = {'name': 'aalo', 'first_mb': 20}
    assert experiment.from_dict(d, 'e.yaml').policy_params == {
        'first_mb': 20}


def test_a_policy_named_with_parameters(tmp_path):
    from netsched.pipeline import crosscheck
    p = tmp_path / 'e.yaml'
    p.write_text(yaml.safe_dump(dict(base(), policy='aalo', policy_params={
        'aalo': {'first_mb': 40}, 'varys': {}}, threshold_floor_windows=0)))
    e = experiment.load(str(p), policy='aalo:multiplier=4')
    assert (e.policy, e.policy_params, e.policy_label) == (
        'aalo', {'first_mb': 40, 'multiplier': 4}, 'aalo:multiplier=4')
    e = experiment.load(str(p), policy='aalo')
    assert (e.policy_params, e.policy_label) == ({'first_mb': 40}, 'aalo')
    e = experiment.load(str(p), policy='fifo')
    assert (e.policy, e.policy_params) == ('fifo', {})
    with pytest.raises(ConfigError, match=r"takes parameters as key=value "
                       r"after the name, got 'classes'"):
        experiment.load(str(p), policy='aalo:classes')
    with pytest.raises(ConfigError, match=r"policy aalo has no parameter "
                       r"'colour'"):
        experiment.load(str(p), policy='aalo:colour=red')
    with pytest.raises(ConfigError, match=r'--policies: aalo:first_mb=-1: '
                       r'first_mb: must be a positive number'):
        crosscheck.check_args(['fair', 'aalo:first_mb=-1'], 'avg_cct_s', 0.05)
    crosscheck.check_args(['aalo', 'aalo:first_mb=1'], 'avg_cct_s', 0.05)


def test_tuning_configurations_placed_by_hand():
    d = {'topology': 'dumbbell,4', 'tuning': [
        {'id': 'g', 'model': 'resnet50', 'pattern': 'ring', 'workers': 2,
         'configs': 2, 'placement': [['hl0', 'hr0'], ['hl1', 'hr1']],
         'stages': [{'iterations': 2, 'keep': 0.5}, {'iterations': 1}]}]}
    from netsched.workload import taskgraph
    plan = taskgraph.build(experiment.from_dict(d, 'e.yaml'))
    assert plan.jobs['g.c0'].workers == ('hl0', 'hr0')
    assert plan.jobs['g.c1'].workers == ('hl1', 'hr1')
    assert plan.jobs['g.c0'].stage_ends == (2, 3)
    bad = dict(d['tuning'][0], placement=[['hl0', 'hr0']])
    with pytest.raises(ConfigError, match=r'placement: lists 1 host lists '
                       r'for 2 configurations'):
        experiment.from_dict(dict(d, tuning=[bad]), 'e.yaml')
    bad = dict(d['tuning'][0], placement=[['hl0', 'hr0'], ['hl1']])
    with pytest.raises(ConfigError, match=r'placement: \[1\] lists 1 hosts; '
                       r'a configuration needs 2'):
        experiment.from_dict(dict(d, tuning=[bad]), 'e.yaml')
    bad = dict(d['tuning'][0], placement=[['hl0', 'hr0'], ['hl1', 'hx']])
    with pytest.raises(ConfigError, match=r"placement\[1\]: placement: host "
                       r"'hx' does not exist"):
        experiment.from_dict(dict(d, tuning=[bad]), 'e.yaml')
