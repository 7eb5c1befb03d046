"""A name a user gives becomes a file name only once made safe (issue
40, "Contained"): an experiment's ``name:`` in the default run folder,
a policy as named, a sweep's axis values, a study's id. Hostile names
(a path out of results/, an absolute path, a NUL byte, 5,000
characters) stay one name inside results/ and give no traceback."""
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from netsched.pipeline import run, sweep
from netsched.pipeline.paths import MAX_NAME, is_component, safe_name
from tests.support.tiny import TINY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

HOSTILE = ['../../../x', '/etc/passwd', '/tmp', 'a\0b', 'a' * 5000, '.',
           '..', '', '...', '.hidden', '-rf', 'a/../../b', 'x\n\ty',
           'caf\u00e9 \u2603', '\ud800', '~', '$(touch pwned)', 'C:\\x',
           '_' * 300, '.' * 300]


@pytest.mark.parametrize('name', HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_name_becomes_one_safe_component(name):
    s = safe_name(name)
    assert s and s not in ('.', '..') and not s.startswith('.')
    assert '/' not in s and '\\' not in s and '\0' not in s
    assert s.isprintable() and s.isascii() and len(s) <= MAX_NAME
    assert is_component(s)
    assert safe_name(s) == s                 # made once, kept
    # joined to a folder, it stays a child of it
    assert os.path.dirname(os.path.normpath(os.path.join('results', s))) \
        == 'results'


def test_a_safe_name_is_kept_and_long_ones_stay_apart():
    for name in ('tiny', 'demo-sim-fair', 'link_gbps=10', 'a.b+c=d'):
        assert safe_name(name) == name
    assert safe_name('geryon:classes=1') == 'geryon_classes=1'
    a, b = safe_name('a' * 5000), safe_name('a' * 4999 + 'b')
    assert a != b and len(a) == len(b) == MAX_NAME


def test_is_component_refuses_what_would_leave_a_folder():
    for bad in ('', '.', '..', 'a/b', '/x', 'a\0b', 'x' * 256, None, 3):
        assert not is_component(bad), bad
    for ok in ('sim-fair-s1', 'sim-fair-link_gbps=10~ab12cd-s1', '~'):
        assert is_component(ok)


@pytest.mark.parametrize('name', ['../../../x', '/etc', 'a\0b', 'n' * 5000])
def test_default_out_is_one_folder_in_results(name):
    exp = SimpleNamespace(name=name, backend='sim', policy='geryon',
                          policy_label='geryon:classes=1/../../..')
    out = run.default_out(exp)
    assert os.path.dirname(out) == 'results'
    assert is_component(os.path.basename(out))
    assert len(os.path.basename(out)) < 255


def test_run_keys_are_bounded_and_one_component():
    key = sweep.run_key('sim', 'fair', [('name', 'x' * 5000),
                                       ('jobs.0.placement', '../../..')], 1)
    assert is_component(key) and len(key) <= sweep.KEY_MAX
    # the keys of ordinary sweeps are as they were
    assert sweep.run_key('sim', 'geryon:classes=1',
                         [('link_gbps', 10)], 2) == \
        'sim-geryon_classes=1-link_gbps=10-s2'
    a = sweep.run_key('sim', 'fair', [('k', 'x' * 500)], 1)
    b = sweep.run_key('sim', 'fair', [('k', 'x' * 499 + 'y')], 1)
    assert a != b


@pytest.mark.parametrize('name', ['../../../x', 'ABSOLUTE', 'a\\0b',
                                  'n' * 5000],
                         ids=['dotdot', 'absolute', 'nul', 'long'])
def test_run_without_out_stays_in_results(tmp_path, name):
    """netsched run without --out, a hostile name: the run folder is one
    folder inside ./results, the run finishes, nothing is written
    outside results/."""
    deep = tmp_path / 'a' / 'b' / 'c'
    deep.mkdir(parents=True)
    name = name.replace('ABSOLUTE', str(tmp_path / 'abs'))
    # YAML's double-quoted string: \0 is a NUL byte
    (deep / 'e.yaml').write_text(TINY.replace('name: tiny',
                                              'name: "%s"' % name))
    r = subprocess.run([sys.executable, '-m', 'netsched', 'run', 'e.yaml'],
                       capture_output=True, text=True, cwd=str(deep),
                       timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert 'Traceback' not in r.stderr
    made = os.listdir(deep / 'results')
    assert len(made) == 1 and is_component(made[0])
    assert os.path.isfile(deep / 'results' / made[0] / 'summary.json')
    # nothing beside it anywhere above
    assert sorted(os.listdir(deep)) == ['e.yaml', 'results']
    assert os.listdir(tmp_path) == ['a']
    assert os.listdir(tmp_path / 'a') == ['b']



@pytest.mark.parametrize('name', HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_name_is_drawn_printable_and_short(name):
    """A figure's title names the experiment: a NUL byte drawn as text
    gave a matplotlib warning of a missing glyph, and 5,000 characters
    took seconds to lay out."""
    from netsched.pipeline import plots
    head = plots.headline({'experiment': name, 'backend': 'sim',
                           'policy': 'fair'})
    assert head.isprintable()
    assert len(head) <= plots.TITLE_CHARS + len(' (sim, policy fair)')
    assert head.endswith(' (sim, policy fair)')
