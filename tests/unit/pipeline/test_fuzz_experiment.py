"""Fuzzing the experiment parser (issue 27): valid experiments with one
thing broken, their YAML text garbled, raw bytes, random ``--set``
overrides, and `netsched check` / `netsched run` on them. Every input
gets an Experiment or a ConfigError that names the file (or the
override); nothing is written and no process started on the way.

The ``@example`` lines are the cases the fuzzing found, kept so that
they stay fixed (tests/support/fuzzing.py says how to fuzz longer)."""
import contextlib
import glob
import io
import math
import os

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from netsched import cli
from netsched.errors import ConfigError
from netsched.pipeline import experiment, overrides
from tests.support.fuzzing import (CORPUS, ROOT, children, fuzz, junk, mangled,
                                mutated, nothing_happens, outcome, paths,
                                texts, write)
from tests.support.tiny import TINY

TRACE = os.path.join(CORPUS, 'tiny-trace.txt')
PROFILE = os.path.join(CORPUS, 'tiny-profile.yaml')
# the path the mapping-level tests give, so that errors name it
WHERE = os.path.join(CORPUS, 'fuzzed.yaml')

# small experiments that between them use every key
BASES = [
    dict(yaml.safe_load(TINY)),
    {'name': 'every-key', 'backend': 'sim', 'topology': 'dumbbell,2',
     'link_bps': 4e9, 'scale': 100, 'queues': 'exact', 'class_map': 'share',
     'seed': 3, 'mtu': 1500, 'queue_packets': 50, 'fair_queues': 0,
     'sample_s': 0.05, 'completion_tolerance': 0.01, 'timeout_s': 60,
     'sim_packets': 'dc', 'big_switch': True, 'expect': 'x',
     'description': 'y', 'threshold_floor_windows': 1,
     'policy': {'name': 'aalo', 'first_mb': 5},
     'policy_params': {'aalo': {'multiplier': 4},
                       'geryon': {'classes': 2}},
     'arrivals': {'process': 'poisson', 'rate_per_s': 5},
     'emulator': {'tcp': {'congestion_control': 'cubic',
                          'rto_min_ms': 200, 'initcwnd': 10,
                          'cwnd_clamp': 50},
                  'host_sysctl': {'net.ipv4.tcp_early_retrans': 0},
                  'drain': False},
     'scheduler': {'floor_release': True, 'hold_starved': False},
     'simulator': {'send_jitter_ms': 0.5, 'send_jitter_seed': 2},
     'jobs': [
         {'id': 'p', 'model': 'resnet50', 'pattern': 'ps', 'workers': 2,
          'ps_shards': 1, 'iterations': 1, 'slice_mb': 4,
          'send_order': 'prophet',
          'prophet': {'profile_iterations': 1, 'credit_mb': 2},
          'loss': {'beta0': 1.0, 'beta1': 0.5, 'beta2': 0.1},
          'compute_scale': 0.5, 'compute_jitter': 0.1,
          'placement': ['hl0', 'hl1', 'hr0']},
         {'id': 'b', 'model': PROFILE, 'pattern': 'ps', 'workers': 2,
          'iterations': 1, 'send_order': 'bytescheduler',
          'bytescheduler': {'credit_mb': 1},
          'candidates': [['hl0', 'hr0', 'hr1'], ['hl1', 'hr0', 'hr1']]}]},
    {'topology': 'dumbbell,2', 'backend': 'sim',
     'tuning': [{'id': 't', 'model': 'vgg16', 'pattern': 'ring',
                 'workers': 2, 'configs': 2,
                 'placement': [['hl0', 'hr0'], ['hl1', 'hr1']],
                 'stages': [{'iterations': 1, 'keep': 0.5},
                            {'iterations': 1}]}]},
    {'topology': 'dumbbell,2', 'backend': 'sim', 'big_switch': False,
     'trace': {'path': TRACE, 'limit': 2, 'skip': 1, 'time_scale': 0.5,
               'size_scale': 2, 'racks': 'wrap', 'start_s': 0.1}},
    {'topology': 'hybrid,2,1,1', 'backend': 'sim',
     'circuits': {'scheduler': 'matching', 'period_s': 0.1},
     'jobs': [{'model': 'resnet50', 'pattern': 'ring', 'workers': 2,
               'iterations': 1, 'placement': 'random'}]},
]
# the checked-in experiments too (those whose trace is at hand)
FILES = {}
for _p in sorted(glob.glob(os.path.join(ROOT, 'experiments', '*.yaml'))):
    with open(_p) as _f:
        _d = yaml.safe_load(_f)
    if 'trace' not in _d:
        FILES[_p] = _d
# the three that `netsched check` runs on (a plan in about 10 ms)
SMALL = BASES[:4]


def checked(exp):
    """What a valid result must hold whatever the input: finite numbers
    where a run computes with them."""
    for v in (exp.link_bps, exp.scale, exp.sample_s,
              exp.completion_tolerance, exp.timeout_s or 0,
              exp.poisson_rate or 0, exp.threshold_floor[1]):
        assert math.isfinite(v), exp
    for j in exp.jobs:
        for v in (j.arrival_s or 0, j.bucket_mb, j.compute_scale,
                  j.slice_mb or 0) + (j.loss or ()):
            assert math.isfinite(v), j
        assert isinstance(j.id, str)
    for v in exp.policy_params.values():
        assert not isinstance(v, float) or math.isfinite(v), exp
    # what reaches a host's sysctl and TCP settings is one word each
    for text in (exp.knobs.congestion_control or '',) + sum(
            exp.knobs.host_sysctl, ()):
        assert text == text.strip() and '\n' not in text, exp.knobs


def parse(doc, path=WHERE, **kw):
    """from_dict, with nothing written or started; the Experiment or the
    ConfigError (which names the file)."""
    with nothing_happens():
        out = outcome(lambda: experiment.from_dict(doc, path, **kw), path)
    if isinstance(out, experiment.Experiment):
        checked(out)
    else:
        assert isinstance(out, ConfigError), out
    return out


@pytest.mark.parametrize('doc', BASES, ids=lambda d: d.get('name', '')
                         or sorted(d)[-1])
def test_the_fuzzers_start_from_valid_experiments(doc):
    # mutations of a valid document test the checks one by one; a base
    # that fails already tests only its own error
    assert isinstance(parse(doc), experiment.Experiment)


def test_every_checked_in_experiment_is_a_start_too():
    assert len(FILES) >= 10
    for path, doc in FILES.items():
        assert isinstance(parse(doc, path), experiment.Experiment), path


@fuzz
@given(doc=mutated(BASES + list(FILES.values())))
# a job id given as a list or mapping became its repr; now it must be text
@example(doc=dict(BASES[0], jobs=[dict(BASES[0]['jobs'][0], id=[1])]))
# scale: .inf passed the >= 1 check; a run divides by it
@example(doc=dict(BASES[0], scale=math.inf))
# arrival_s: .nan passed the >= 0 check (NaN compares false)
@example(doc=dict(BASES[0], jobs=[dict(BASES[0]['jobs'][0],
                                        arrival_s=math.nan)]))
# an integer policy parameter of .inf: OverflowError in int(inf)
@example(doc=dict(BASES[1], policy={'name': 'aalo', 'num_queues': math.inf}))
# a float policy parameter of .inf was taken
@example(doc=dict(BASES[1], policy={'name': 'aalo', 'first_mb': math.inf}))
# a model profile named with a NUL byte: ValueError from open()
@example(doc=dict(BASES[0], jobs=[dict(BASES[0]['jobs'][0],
                                        model='a\x00.json')]))
# unknown policy parameters 0 and '': TypeError (int < str) sorting them
@example(doc=dict(BASES[1], policy_params={'aalo': {'': None, 0: None}}))
# a policy parameter named 0 (and policy_params): TypeError in dict(**params)
@example(doc=dict(BASES[1], policy={'name': 'aalo', 0: None}))
# congestion_control: "cubic\n" passed: the check's $ matched before \n
@example(doc=dict(BASES[1], emulator={'tcp': {'congestion_control':
                                              'cubic\n'}}))
# faults: until: 10**400 passed as a time; OverflowError in float()
@example(doc=dict(BASES[0], faults=[{'link': ['sl', 'sr'], 'at': 1,
                                     'until': 10 ** 400}]))
def test_mutated_experiments_get_a_result_or_a_named_error(doc):
    parse(doc)


@fuzz
@given(doc=mutated(BASES), backend=st.sampled_from([None, 'sim', 'emu']),
       policy=st.one_of(st.none(), st.sampled_from(
           ['fair', 'aalo:first_mb=1', 'geryon:classes=2', 'sebf'])))
def test_mutated_experiments_under_command_line_overrides(doc, backend,
                                                           policy):
    parse(doc, backend=backend, policy=policy)


def load(path, **kw):
    """experiment.load, with nothing written or started."""
    with nothing_happens():
        out = outcome(lambda: experiment.load(path, **kw), path, '--set',
                      '--seed')
    if isinstance(out, experiment.Experiment):
        checked(out)
    return out


def dump(doc):
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


@fuzz
@given(doc=mutated(BASES))
def test_mutated_experiment_files(tmp_path_factory, doc):
    path = write(tmp_path_factory.mktemp('e'), 'e.yaml', dump(doc))
    load(path)


@fuzz
@given(data=st.data())
# nested 5000 deep: RecursionError from the YAML parser
@example(data='[' * 5000)
# a byte that is not UTF-8: UnicodeDecodeError from the YAML reader
@example(data=b'topology: dumbbell,2\nname: \xff\xfe\n')
def test_garbled_experiment_text(tmp_path_factory, data):
    if isinstance(data, (str, bytes)):
        content = data
    else:
        text = dump(data.draw(st.sampled_from(BASES)))
        content = data.draw(st.one_of(
            mangled(text), mangled(text.encode()),
            st.text(max_size=200), st.binary(max_size=200)))
    path = write(tmp_path_factory.mktemp('e'), 'e.yaml', content)
    load(path)


# --set KEY=VALUE: a key that walks into the document (or just past it)
# and a value in YAML's flow form, or random text for either
@st.composite
def override(draw, doc):
    if draw(st.integers(0, 4)) == 0:
        return draw(texts)
    path = list(draw(st.sampled_from(list(paths(doc))[1:])))
    edit = draw(st.sampled_from(['as is', 'as is', 'deeper', 'index',
                                 'empty', 'junk']))
    if edit == 'deeper':
        path.append(draw(st.sampled_from(['x', 0, 99])))
    elif edit == 'index':
        path[-1] = draw(st.sampled_from([0, 1, 7, 10 ** 30]))
    elif edit == 'empty':
        path.insert(draw(st.integers(0, len(path))), '')
    elif edit == 'junk':
        path[-1] = draw(st.text(max_size=6))
    key = '.'.join(str(p) for p in path)
    value = draw(st.one_of(
        texts, junk.map(lambda v: overrides.value_text(v)
                        if not isinstance(v, bytes) else 'x')))
    return '%s=%s' % (key, value)


@st.composite
def experiment_with_overrides(draw, bases=BASES):
    doc = draw(st.sampled_from(bases))
    sets = draw(st.lists(override(doc), min_size=1, max_size=3))
    seed = draw(st.one_of(st.none(), st.integers(-5, 10 ** 20)))
    return doc, sets, seed


def apply_sets(path, sets, seed, backend=None):
    """The --set texts as `netsched run` reads them, then the file."""
    with nothing_happens():
        parsed = outcome(lambda: overrides.single(sets), '--set')
    if isinstance(parsed, ConfigError):
        return parsed
    return load(path, sets=parsed, seed=seed, backend=backend)


@fuzz
@given(case=experiment_with_overrides())
# a key path component '²': isdigit() but ValueError in int()
@example(case=(BASES[0], ['jobs.\u00b2.id=x'], None))
# a value nested 5000 deep: RecursionError from the YAML parser
@example(case=(BASES[0], ['name=' + '[' * 5000], None))
def test_set_overrides(tmp_path_factory, case):
    doc, sets, seed = case
    path = write(tmp_path_factory.mktemp('e'), 'e.yaml', dump(doc))
    apply_sets(path, sets, seed)


@fuzz
@given(text=st.one_of(texts, st.text()))
def test_set_parser_alone(text):
    with nothing_happens():
        out = outcome(lambda: overrides.parse(text), '--set')
    if not isinstance(out, ConfigError):
        keys, values = out
        assert keys and values


def netsched(*argv):
    """`netsched ARGV` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(argv))
        except SystemExit as e:         # argparse's own usage errors
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


@fuzz
@given(case=st.one_of(
    experiment_with_overrides(SMALL),
    st.tuples(mutated(SMALL), st.just([]), st.none())))
# iterations: 2**63 passed the parser; numpy raised ValueError on the plan
@example(case=(dict(BASES[0], jobs=[dict(BASES[0]['jobs'][0],
                                         iterations=2 ** 63)]), [], None))
def test_check_says_ok_or_names_the_error(tmp_path_factory, case):
    doc, sets, seed = case
    if any('\x00' in s for s in sets):
        return                      # a command line cannot hold one
    path = write(tmp_path_factory.mktemp('e'), 'e.yaml', dump(doc))
    args = ['check', path, '--backend', 'sim'] + \
        ['--set=%s' % s for s in sets] + \
        (['--seed', str(seed)] if seed is not None else [])
    rc, out, err = netsched(*args)
    assert 'Traceback' not in out + err
    if rc == 0:
        assert out.startswith('%s: ok' % path)
    else:
        assert rc == 2, (rc, err)
        assert err.startswith(('netsched: error: ', 'usage: ')), err


@fuzz
@given(case=experiment_with_overrides(SMALL))
def test_run_refuses_a_bad_experiment_before_anything(tmp_path_factory,
                                                      case):
    doc, sets, seed = case
    folder = tmp_path_factory.mktemp('e')
    path = write(folder, 'e.yaml', dump(doc))
    if not isinstance(apply_sets(path, sets, seed, 'sim'), ConfigError) or \
            any('\x00' in s for s in sets):
        return             # a valid one would run: not here
    out = os.path.join(str(folder), 'out')
    before = children()
    with nothing_happens():
        rc, _, err = netsched(
            'run', path, '--backend', 'sim', '--out', out,
            *['--set=%s' % s for s in sets],
            *(['--seed', str(seed)] if seed is not None else []))
    assert rc == 2 and err.startswith('netsched: error: '), err
    assert not os.path.exists(out)
    assert children() == before
