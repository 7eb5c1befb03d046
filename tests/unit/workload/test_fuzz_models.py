"""Fuzzing the model-profile parser (issue 27): the bundled and the
synthetic profiles with one thing broken, their text garbled, raw bytes,
and a broken profile named by an experiment's job. Every input gets a
Model or a ConfigError naming the file (and, through an experiment, the
job's key). ``@example`` lines: the cases the fuzzing found."""
import json
import math
import os

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from netsched.errors import ConfigError
from netsched.pipeline import experiment
from netsched.workload import models
from tests.support.fuzzing import (CORPUS, ROOT, fuzz, mangled, mutated,
                                nothing_happens, outcome, write)

PROFILE = os.path.join(CORPUS, 'tiny-profile.yaml')


def _read(path):
    with open(path) as f:
        return yaml.safe_load(f)


BASES = [_read(PROFILE), _read(os.path.join(ROOT, 'workloads', 'models',
                                            'resnet50.json')),
         _read(os.path.join(ROOT, 'workloads', 'models', 'synthetic',
                            'cassini-40.yaml'))]


def checked(m):
    """What a valid profile must hold: gradient bytes, finite times."""
    assert m.bytes > 0 and isinstance(m.name, str)
    for layer in m.layers:
        assert math.isfinite(layer.forward_ms) and layer.forward_ms >= 0
        assert math.isfinite(layer.backward_ms) and layer.backward_ms >= 0
        for t in layer.tensors:
            assert isinstance(t.bytes, int) and t.bytes >= 0


def parse(doc, where='fuzzed.yaml'):
    with nothing_happens():
        out = outcome(lambda: models.from_dict(doc, where), where)
    if isinstance(out, models.Model):
        checked(out)
    else:
        assert isinstance(out, ConfigError)
    return out


def test_the_fuzzers_start_from_valid_profiles():
    for doc in BASES:
        assert isinstance(parse(doc), models.Model)


@fuzz
@given(doc=mutated(BASES))
# forward_ms: .nan passed the >= 0 check
@example(doc=dict(BASES[0], layers=[dict(BASES[0]['layers'][0],
                                         forward_ms=math.nan)]))
# forward_ms: 10**400 (an int): OverflowError in float()
@example(doc=dict(BASES[0], layers=[dict(BASES[0]['layers'][0],
                                         forward_ms=10 ** 400)]))
# tensors: 5 (not a list): TypeError, int is not iterable
@example(doc=dict(BASES[0], layers=[dict(BASES[0]['layers'][0],
                                         tensors=5)]))
def test_mutated_profiles(doc):
    parse(doc)


def load_file(path):
    with nothing_happens():
        out = outcome(lambda: models.load_file(path), path)
    if isinstance(out, models.Model):
        checked(out)
    return out


@fuzz
@given(data=st.data())
# a byte that is not UTF-8: UnicodeDecodeError from the YAML reader
@example(data=b'name: tiny\nlayers: \xff\n')
# nested 5000 deep: RecursionError from the YAML parser
@example(data='{"layers": ' + '[' * 5000)
def test_garbled_profile_files(tmp_path_factory, data):
    if isinstance(data, (str, bytes)):
        content, name = data, 'p.json'
    else:
        doc = data.draw(st.sampled_from([BASES[0], BASES[2]]))
        name = data.draw(st.sampled_from(['p.yaml', 'p.json']))
        text = json.dumps(doc) if name == 'p.json' else yaml.safe_dump(doc)
        content = data.draw(st.one_of(
            mangled(text), mangled(text.encode()), st.text(max_size=200),
            st.binary(max_size=200)))
    load_file(write(tmp_path_factory.mktemp('m'), name, content))


@fuzz
@given(doc=mutated([BASES[0]]), name=st.sampled_from(
    ['p.yaml', 'p.json', 'p.yml', 'missing.json', 'p']))
# a profile path with a NUL byte: ValueError from open()
@example(doc=BASES[0], name='p\x00.json')
def test_a_broken_profile_named_by_an_experiment(tmp_path_factory, doc,
                                                  name):
    folder = tmp_path_factory.mktemp('m')
    if name != 'missing.json' and '\x00' not in name:
        write(folder, name, yaml.safe_dump(doc))
    where = os.path.join(str(folder), 'e.yaml')
    exp = {'topology': 'dumbbell,2', 'backend': 'sim',
           'jobs': [{'id': 'j', 'model': name, 'pattern': 'ring',
                     'workers': 2, 'iterations': 1}]}
    try:
        with nothing_happens():
            out = outcome(lambda: experiment.from_dict(exp, where),
                          '%s: jobs[0]: model: ' % where)
    finally:                # the loader keeps profiles by path
        models._cache.pop(os.path.join(str(folder), name), None)
    if not isinstance(out, ConfigError):
        assert isinstance(out, experiment.Experiment)
