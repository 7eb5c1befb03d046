"""Model profiles: real layer shapes, published parameter counts."""
import json
import os

import pytest

from netsched.workload import models
from netsched.errors import ConfigError

PUBLISHED = {'resnet50': 25_557_032, 'vgg16': 138_357_544,
             'bert-base': 110_000_000, 'gpt2': 124_439_808}


@pytest.mark.parametrize('name', models.BUNDLED)
def test_parameter_count_within_one_percent_of_published(name):
    m = models.get(name)
    assert abs(m.params - PUBLISHED[name]) <= 0.01 * PUBLISHED[name]


def test_exact_counts_of_the_reference_implementations():
    assert models.get('resnet50').params == 25_557_032      # torchvision
    assert models.get('vgg16').params == 138_357_544        # torchvision
    assert models.get('bert-base').params == 109_482_240    # bert-base-uncased
    assert models.get('gpt2').params == 124_439_808         # HF gpt2


@pytest.mark.parametrize('name', models.BUNDLED)
def test_bundled_files_are_what_the_builder_makes(name):
    with open(os.path.join(models.MODELS_DIR, name + '.json')) as f:
        assert json.load(f) == models.build(name)


def test_compute_times_follow_flops_at_the_stated_throughput():
    m = models.get('resnet50')
    # ResNet-50: ~4.1 GMAC per 224x224 image, 32 images, 15 TFLOP/s
    assert m.forward_ms == pytest.approx(2 * 4.09e9 * 32 / 15e12 * 1e3,
                                         rel=0.02)
    assert m.backward_ms == pytest.approx(2 * m.forward_ms)
    fc = [layer for layer in m.layers if layer.name == 'fc'][0]
    assert fc.bytes == (2048 * 1000 + 1000) * 4
    big = max(m.layers, key=lambda layer: layer.bytes)
    assert big.bytes == 3 * 3 * 512 * 512 * 4           # layer4 3x3 convs


def test_user_profile_yaml(tmp_path):
    p = tmp_path / 'tiny.yaml'
    p.write_text('name: tiny\nlayers:\n'
                 '  - {name: a, forward_ms: 1, backward_ms: 2,'
                 ' tensors: [{name: w, bytes: 1000}]}\n'
                 '  - {name: b, forward_ms: 1, backward_ms: 2,'
                 ' tensors: [{params: 10}]}\n')
    m = models.load_file(str(p))
    assert m.bytes == 1040 and [t.bytes for _, t in m.tensors()] == [1000, 40]


@pytest.mark.parametrize('layer,msg', [
    ({'forward_ms': 1, 'backward_ms': 1,
      'tensors': [{'name': 'w', 'bytes': -5}]},
     r'layers\[0\].tensors\[0\]: bytes must be a non-negative integer'),
    ({'forward_ms': -1, 'backward_ms': 1, 'tensors': [{'bytes': 5}]},
     r'layers\[0\]: forward_ms must be a non-negative number'),
    ({'backward_ms': 1, 'tensors': [{'bytes': 5}]},
     r"layers\[0\]: missing key 'forward_ms'"),
    ({'forward_ms': 1, 'backward_ms': 1,
      'tensors': [{'bytes': 5, 'params': 2}]},
     'exactly one of bytes, params'),
])
def test_bad_profiles_name_the_field(tmp_path, layer, msg):
    with pytest.raises(ConfigError, match=msg):
        models.from_dict({'name': 'x', 'layers': [layer]}, 'x.yaml')


def test_unknown_model_is_named():
    with pytest.raises(ConfigError, match="unknown model 'resnet5'"):
        models.get('resnet5')
