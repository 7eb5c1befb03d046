"""--set KEY=VALUE: dotted paths into an experiment, their values, and
the errors that name a bad one before anything runs."""
import os
import subprocess
import sys

import pytest

from netsched.pipeline import experiment
from netsched.errors import ConfigError
from netsched.pipeline import overrides

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
DEMO = os.path.join(ROOT, 'experiments', 'demo.yaml')


def test_parse_reads_paths_indices_and_yaml_values():
    assert overrides.parse('jobs.0.workers=4,8') == (('jobs', 0, 'workers'),
                                                     [4, 8])
    assert overrides.parse('queues=8,exact') == (('queues',), [8, 'exact'])
    assert overrides.parse('link_gbps=2.5') == (('link_gbps',), [2.5])
    # commas inside brackets and quotes do not split
    assert overrides.parse('jobs.1.placement=[h0, h1],packed') == \
        (('jobs', 1, 'placement'), [['h0', 'h1'], 'packed'])
    assert overrides.parse("name='a,b'") == (('name',), ['a,b'])
    assert overrides.parse('big_switch=true') == (('big_switch',), [True])


@pytest.mark.parametrize('text, words', [
    ('link_gbps', 'KEY=VALUE'),
    ('=4', 'KEY=VALUE'),
    ('jobs..workers=4', 'empty component'),
    ('link_gbps=10,', 'empty value'),
    ('link_gbps=[1,', 'not valid YAML'),
])
def test_parse_names_a_malformed_override(text, words):
    with pytest.raises(ConfigError, match=words):
        overrides.parse(text)


def test_apply_sets_nested_keys_and_leaves_the_original_alone():
    d = {'jobs': [{'workers': 2}, {'workers': 3}], 'policy': 'geryon'}
    out = overrides.apply(d, [(('jobs', 1, 'workers'), 8),
                              (('policy_params', 'classes'), 2),
                              (('trace', 'limit'), 5)])
    assert out['jobs'][1]['workers'] == 8
    # a parameter of whichever policy runs
    assert out['policy_params'] == {'geryon': {'classes': 2}}
    assert out['trace'] == {'limit': 5}
    assert d == {'jobs': [{'workers': 2}, {'workers': 3}],
                 'policy': 'geryon'}
    # --policy wins over the file's
    out = overrides.apply(d, [(('policy_params', 'classes'), 4)],
                          policy='geryon:classes=1')
    assert out['policy_params'] == {'geryon': {'classes': 4}}
    # a policy's name as the second part is that policy's parameters
    out = overrides.apply(d, [(('policy_params', 'aalo', 'first_mb'), 4)])
    assert out['policy_params'] == {'aalo': {'first_mb': 4}}


@pytest.mark.parametrize('path, words', [
    (('jobs', 5, 'workers'), 'jobs has 2 item'),
    (('jobs', 'first'), 'jobs is a list'),
    (('policy', 'x'), "policy is 'geryon'"),
    (('jobs', 0, 'workers', 'n'), 'jobs.0.workers is 2'),
])
def test_apply_names_a_path_that_does_not_fit(path, words):
    d = {'jobs': [{'workers': 2}, {'workers': 3}], 'policy': 'geryon'}
    with pytest.raises(ConfigError, match=words):
        overrides.apply(d, [(path, 1)])


def test_load_applies_overrides_and_the_seed():
    e = experiment.load(DEMO, backend='sim', seed=7, sets=[
        (('link_gbps',), 40), (('jobs', 0, 'workers'), 2),
        (('queues',), 'exact')])
    assert (e.seed, e.link_bps, e.jobs[0].workers, e.queues) == \
        (7, 40e9, 2, None)
    assert e.raw['link_gbps'] == 40          # what experiment.yaml records


@pytest.mark.parametrize('sets, words', [
    ([(('lnk_gbps',), 4)], "unknown key 'lnk_gbps'.*--set lnk_gbps=4"),
    ([(('link_gbps',), -1)], 'link_gbps: must be > 0.*--set link_gbps=-1'),
    ([(('policy_params', 'classes'), 2)],
     'policy fair has no parameter .classes.'),
])
def test_load_names_the_override_behind_a_bad_experiment(sets, words):
    with pytest.raises(ConfigError, match=words):
        experiment.load(DEMO, backend='sim', sets=sets)


def _cli(*args):
    return subprocess.run([sys.executable, '-m', 'netsched'] + list(args),
                          capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_check_takes_set_and_seed_and_names_a_bad_key_without_traceback():
    r = _cli('check', DEMO, '--backend', 'sim', '--seed', '3', '--set',
             'jobs.0.workers=2', '--set', 'link_gbps=40')
    assert r.returncode == 0, r.stderr
    assert 'seed 3' in r.stdout and 'links 40 Gbit/s' in r.stdout
    assert '2 workers' in r.stdout
    r = _cli('check', DEMO, '--set', 'jobs.0.wrkers=2')
    assert r.returncode == 2
    assert "unknown key 'wrkers'" in r.stderr and 'Traceback' not in r.stderr
    # several values are a sweep, not a run
    r = _cli('run', DEMO, '--backend', 'sim', '--set', 'link_gbps=10,40')
    assert r.returncode == 2 and 'netsched sweep' in r.stderr
