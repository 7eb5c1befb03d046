"""YAML anchors and aliases are refused in what users write (issue 40,
"Bounded by default"): experiment files, model profiles, study files,
--set values and measuring knobs from the environment. `expect: *bomb`
(nine nested lists of nine aliases) used to run 60 s and take 2.4 GB;
now it is one line naming the file and the line, at once."""
import os
import resource
import time
from types import SimpleNamespace

import pytest
import yaml

from netsched import cli
from netsched.errors import ConfigError, YamlAliasError, yaml_loader
from netsched.pipeline import knobs, metrics, overrides, reproduce, run
from netsched.workload import models
from tests.support.tiny import TINY

BOMB = '''
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
bomb: &bomb [*h, *h, *h, *h, *h, *h, *h, *h, *h]
'''


def one_line(err, *words):
    assert 'Traceback' not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('netsched: error: '), err
    assert len(lines[0]) < 300
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize('key', ['expect', 'topology', 'placement'])
def test_the_alias_bomb_is_refused_at_once(tmp_path, capsys, key):
    p = tmp_path / 'bomb.yaml'
    p.write_text(TINY + BOMB + '%s: *bomb\n' % key)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    for cmd in ('check', 'run'):
        assert cli.main([cmd, str(p), '--out', str(tmp_path / 'out')]
                        if cmd == 'run' else [cmd, str(p)]) == 2
        one_line(capsys.readouterr().err, '%s:13:' % p,
                 'YAML anchors and aliases are not accepted (&a)')
    assert time.monotonic() - t0 < 5
    # well under the 2.4 GB it took (KB)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 200e3
    assert not os.path.exists(tmp_path / 'out')     # nothing half-started


@pytest.mark.parametrize('text, token, line', [
    ('topology: &t dumbbell,2\n', '&t', 2),
    ('defaults: &d {iterations: 1}\njobs:\n  - <<: *d\n', '&d', 2),
    ('x: !!python/object:os.system echo\n', None, None)])
def test_any_anchor_is_named_with_its_line(tmp_path, capsys, text, token,
                                           line):
    p = tmp_path / 'e.yaml'
    p.write_text('name: e\n' + text)
    assert cli.main(['check', str(p)]) == 2
    err = capsys.readouterr().err
    if token is None:                 # not an alias: YAML's own refusal
        assert 'Traceback' not in err and 'not valid YAML' in err
        return
    one_line(err, '%s:%d:' % (p, line), '(%s)' % token)


def test_a_model_profile_with_an_alias_is_refused(tmp_path, capsys):
    (tmp_path / 'm.yaml').write_text(
        'name: m\nlayer: &l {name: l0, forward_ms: 1, backward_ms: 1, '
        'tensors: [1000]}\nlayers: [*l, *l]\n')
    with pytest.raises(ConfigError, match=r'model profile .*m\.yaml:2: YAML '
                       r'anchors and aliases are not accepted \(&l\)'):
        models.load_file(str(tmp_path / 'm.yaml'))
    (tmp_path / 'e.yaml').write_text(TINY.replace('model: resnet50',
                                                  'model: m.yaml'))
    assert cli.main(['check', str(tmp_path / 'e.yaml')]) == 2
    one_line(capsys.readouterr().err, 'jobs[0]: model: model profile',
             'm.yaml:2:')


def test_a_study_file_with_an_alias_is_refused(tmp_path):
    p = tmp_path / 'study.yaml'
    p.write_text('seeds: &s 1-2\nemulator_seeds: *s\nstudies: []\n')
    with pytest.raises(YamlAliasError, match=r'study\.yaml:1: .*\(&s\)'):
        reproduce.load(str(p))


def test_set_values_take_no_alias(tmp_path, capsys):
    with pytest.raises(ConfigError, match=r'--set jobs\.0\.placement=&x '
                       r'\[hl0, hr0\]: YAML anchors and aliases are not '
                       r'accepted \(&x\)'):
        overrides.parse('jobs.0.placement=&x [hl0, hr0]')
    p = tmp_path / 'e.yaml'
    p.write_text(TINY)
    assert cli.main(['check', str(p), '--set', 'scale=*x']) == 2
    one_line(capsys.readouterr().err, '(*x)')


def test_a_knob_from_the_environment_is_text_with_an_alias():
    assert knobs._scalar('NETSCHED_RTO_MIN_MS', '&a 5') == '&a 5'
    assert knobs._scalar('NETSCHED_RTO_MIN_MS', '5') == 5


def test_a_damaged_run_folders_experiment_is_not_expanded(tmp_path):
    """A run folder's experiment.yaml (read for a run without a recorded
    meta) holding the bomb: left aside, the folder's name used."""
    (tmp_path / 'experiment.yaml').write_text('name: x\n' + BOMB +
                                              'seed: *bomb\n')
    meta = metrics.meta_guess(str(tmp_path), {})
    assert meta['experiment'] == os.path.basename(str(tmp_path))
    assert meta['seed'] is None


def test_a_run_writes_its_experiment_without_anchors(tmp_path):
    """A value met twice in the experiment as run is written out twice:
    the run's experiment.yaml reads back as users' YAML is read."""
    shared = ['hl0', 'hr0']
    exp = SimpleNamespace(raw={'name': 'x', 'a': shared, 'b': shared},
                          backend='sim', policy='fair', policy_params={},
                          trace=None, jobs=())
    run.prepare(exp, str(tmp_path))
    text = (tmp_path / 'experiment.yaml').read_text()
    assert '&' not in text and '*' not in text
    assert yaml.load(text, Loader=yaml_loader())['b'] == shared


def test_plain_yaml_loads_as_before():
    text = 'a: [1, {b: 2.5}]\nc: "d & e *f"\n'
    assert yaml.load(text, Loader=yaml_loader()) == yaml.safe_load(text)
