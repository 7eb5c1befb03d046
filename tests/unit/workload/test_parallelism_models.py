"""The large language model profiles (workload.llm): parameter counts
against their sources, the layers model parallelism reads, the files."""
import json

import pytest

from netsched.workload import llm, models


@pytest.mark.parametrize('name', llm.NAMES)
def test_llm_profiles(name):
    m = models.get(name)
    published = llm.SHAPES[name][-1]
    # Llama-2 and Mixtral: their released checkpoints' exact counts;
    # GPT-3: the paper's rounded ones
    assert abs(m.params - published) <= 0.015 * published
    blocks = llm.SHAPES[name][1]
    assert sum(x.tp_allreduces for x in m.layers) == 2 * blocks
    if name == 'mixtral-8x7b':
        assert m.params == 46_702_792_704
        assert sum(1 for x in m.layers if x.experts == 8) == blocks
    if name.startswith('llama2'):
        assert m.params == published
    if name == 'gpt3-1.3b':           # 24 (12 d^2 + 13 d) + (V + 2048) d + 2d
        assert m.params == 24 * (12 * 2048 ** 2 + 13 * 2048) \
            + (50257 + 2048) * 2048 + 2 * 2048


def test_llm_files_are_what_the_builder_makes():
    for name in llm.NAMES:
        with open('%s/%s.json' % (models.MODELS_DIR, name)) as f:
            assert json.load(f) == models.build(name)
