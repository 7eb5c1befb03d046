"""DL model profiles: per-tensor gradient sizes, per-layer compute times.

A profile is data (``workloads/models/<name>.json``; a user's own may be
YAML or JSON in the same format). This module builds the four bundled
profiles from the architectures' real layer shapes, loads and checks any
profile, and writes the bundled ones (``python -m netsched.models``).

Compute model (stated in every profile under ``compute``): the forward
time of a layer is its forward FLOPs for one worker's batch divided by an
effective GPU throughput; the backward time is ``backward_ratio`` times
the forward time (2: gradients with respect to inputs and to weights).
A convolution or matrix product counts 2 FLOPs per multiply-add;
normalisation, activation, pooling and embedding lookups count 0.
Gradients are fp32 (4 bytes per parameter), one tensor per parameter
array, as a data-parallel framework sees them.

Profile format::

    name: resnet50
    published_params: 25557032        # optional: checked within 1%
    compute: {...}                    # free-form description, optional
    layers:                           # forward order
      - name: conv1
        forward_ms: 1.2
        backward_ms: 2.4
        tensors:
          - {name: conv1.weight, bytes: 37632}   # or params: 9408
"""
import json
import os
import sys
from dataclasses import dataclass

from .. import ROOT
from . import llm
from ..errors import ConfigError, YamlAliasError, read_text, yaml_loader

BYTES_PER_PARAM = 4
MODELS_DIR = os.path.join(ROOT, 'workloads', 'models')
BUNDLED = ('resnet50', 'vgg16', 'bert-base', 'gpt2')
# with the large language models of workload.llm
ALL_BUNDLED = BUNDLED + llm.NAMES
# a layer's optional keys for model parallelism (Layer)
LAYER_EXTRAS = ('activation_bytes', 'tp_allreduces', 'experts', 'top_k')


@dataclass(frozen=True)
class Tensor:
    name: str
    bytes: int


@dataclass(frozen=True)
class Layer:
    name: str
    forward_ms: float
    backward_ms: float
    tensors: tuple
    # for tensor, pipeline and expert parallelism (workload.parallelism):
    # the bytes of the layer's output for the profile's batch, the
    # all-reduces of it a tensor-parallel layer makes in each pass, and
    # a mixture-of-experts layer's experts and experts per token
    activation_bytes: int = 0
    tp_allreduces: int = 0
    experts: int = 0
    top_k: int = 0

    @property
    def bytes(self):
        return sum(t.bytes for t in self.tensors)


@dataclass(frozen=True)
class Model:
    name: str
    layers: tuple
    published_params: int = None

    @property
    def bytes(self):
        return sum(layer.bytes for layer in self.layers)

    @property
    def params(self):
        return self.bytes // BYTES_PER_PARAM

    @property
    def forward_ms(self):
        return sum(layer.forward_ms for layer in self.layers)

    @property
    def backward_ms(self):
        return sum(layer.backward_ms for layer in self.layers)

    def tensors(self):
        """(layer index, Tensor) in forward order."""
        return [(i, t) for i, layer in enumerate(self.layers)
                for t in layer.tensors]


# ---------------------------------------------------------------- building

class _Arch:
    """Collects layers with parameter arrays and forward FLOPs."""

    def __init__(self, batch):
        self.batch = batch          # samples per worker; flops are per sample
        self.layers = []

    def layer(self, name, flops, **arrays):
        self.layers.append((name, flops * self.batch, [('%s.%s' % (name, k), v)
                                          for k, v in arrays.items() if v]))

    def conv(self, name, cin, cout, k, hout, bias=False, bn=False):
        flops = 2 * k * k * cin * cout * hout * hout
        self.layer(name, flops, weight=k * k * cin * cout,
                   bias=cout if bias else 0)
        if bn:
            self.layer(name + '.bn', 0, weight=cout, bias=cout)

    def linear(self, name, fin, fout, tokens=1, bias=True):
        self.layer(name, 2 * fin * fout * tokens, weight=fin * fout,
                   bias=fout if bias else 0)

    def norm(self, name, d):
        self.layer(name, 0, weight=d, bias=d)


def _resnet50():
    a = _Arch(32)
    a.conv('conv1', 3, 64, 7, 112, bn=True)
    cin, size = 64, 56
    for stage, (width, blocks) in enumerate(zip((64, 128, 256, 512),
                                                (3, 4, 6, 3)), 1):
        for b in range(blocks):
            p = 'layer%d.%d' % (stage, b)
            out = 4 * width
            # torchvision's v1.5 block: the 1x1 conv1 runs at the input
            # resolution, the 3x3 conv2 strides
            a.conv(p + '.conv1', cin, width, 1, size, bn=True)
            if b == 0 and stage > 1:
                size //= 2
            a.conv(p + '.conv2', width, width, 3, size, bn=True)
            a.conv(p + '.conv3', width, out, 1, size, bn=True)
            if b == 0:
                a.conv(p + '.downsample', cin, out, 1, size, bn=True)
            cin = out
    a.linear('fc', 2048, 1000)
    return a, 25557032, {'batch': a.batch, 'input': '3x224x224',
                         'source': 'He et al. 2016; torchvision resnet50'}


def _vgg16():
    a = _Arch(32)
    cin, size, n = 3, 224, 0
    for block in ((64, 64), (128, 128), (256,) * 3, (512,) * 3, (512,) * 3):
        for cout in block:
            n += 1
            a.conv('conv%d' % n, cin, cout, 3, size, bias=True)
            cin = cout
        size //= 2
    a.linear('fc6', 512 * 7 * 7, 4096)
    a.linear('fc7', 4096, 4096)
    a.linear('fc8', 4096, 1000)
    return a, 138357544, {'batch': a.batch, 'input': '3x224x224',
                          'source': 'Simonyan & Zisserman 2015; '
                                    'torchvision vgg16'}


def _transformer(a, prefix, d, ff, layers, seq, fused_qkv):
    tokens = seq
    for i in range(layers):
        p = '%s.%d' % (prefix, i)
        if fused_qkv:
            a.linear(p + '.attn.qkv', d, 3 * d, tokens)
        else:
            for m in ('query', 'key', 'value'):
                a.linear(p + '.attn.' + m, d, d, tokens)
        # scores Q.K^T and the weighted sum over V: 2 * 2 * seq * d per token
        a.layer(p + '.attn.scores', 4 * seq * d * tokens)
        a.linear(p + '.attn.out', d, d, tokens)
        a.norm(p + '.ln1', d)
        a.linear(p + '.mlp.fc1', d, ff, tokens)
        a.linear(p + '.mlp.fc2', ff, d, tokens)
        a.norm(p + '.ln2', d)


def _bert_base():
    a = _Arch(32)
    seq, d = 128, 768
    a.layer('embeddings', 0, word=30522 * d, position=512 * d,
            token_type=2 * d)
    a.norm('embeddings.ln', d)
    _transformer(a, 'encoder', d, 4 * d, 12, seq, fused_qkv=False)
    a.linear('pooler', d, d)
    return a, 110000000, {'batch': a.batch, 'sequence': seq,
                          'source': 'Devlin et al. 2019 (110M); '
                                    'bert-base-uncased'}


def _gpt2():
    a = _Arch(8)
    seq, d = 1024, 768
    a.layer('embeddings', 0, token=50257 * d, position=1024 * d)
    # GPT-2 normalises before each sub-block; the parameter arrays are the
    # same, only their order differs, which does not change sizes
    _transformer(a, 'h', d, 4 * d, 12, seq, fused_qkv=True)
    a.norm('ln_f', d)
    # the output projection is tied to the token embedding (no parameters)
    a.layer('lm_head', 2 * d * 50257 * seq)
    return a, 124439808, {'batch': a.batch, 'sequence': seq,
                          'source': 'Radford et al. 2019; '
                                    'Hugging Face gpt2 (124M)'}


_BUILDERS = {'resnet50': _resnet50, 'vgg16': _vgg16,
             'bert-base': _bert_base, 'gpt2': _gpt2}


def build(name, gpu_tflops=15.0, backward_ratio=2.0):
    """The bundled profile ``name`` as a plain dict (the file format)."""
    if name in llm.NAMES:             # built at their own GPU rate
        return llm.build(name)
    arch, published, info = _BUILDERS[name]()
    per_ms = gpu_tflops * 1e12 / 1e3
    layers = []
    for lname, flops, arrays in arch.layers:
        fwd = round(flops / per_ms, 6)
        layers.append({
            'name': lname, 'forward_ms': fwd,
            'backward_ms': round(backward_ratio * fwd, 6),
            'tensors': [{'name': t, 'params': n} for t, n in arrays]})
    compute = dict(info, gpu_tflops=gpu_tflops, backward_ratio=backward_ratio,
                   model='forward_ms = forward FLOPs of one batch / '
                         'gpu_tflops; backward_ms = backward_ratio * '
                         'forward_ms; 2 FLOPs per multiply-add; fp32 '
                         'gradients')
    return {'name': name, 'published_params': published, 'compute': compute,
            'layers': layers}


# ---------------------------------------------------------------- loading

def _num(where, d, key, integer=False, required=True):
    if key not in d:
        if required:
            raise ConfigError('%s: missing key %r' % (where, key))
        return None
    v = d[key]
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    # NaN passes v < 0; a time of inf (or an int past float's range,
    # OverflowError in float()) is no profile
    if not ok or isinstance(v, bool) or not 0 <= v <= sys.float_info.max:
        raise ConfigError('%s: %s must be a non-negative %s, got %r'
                          % (where, key, 'integer' if integer else 'number',
                             v))
    return v


def from_dict(d, where='model profile'):
    """Check a profile dict and return a Model; errors name the field."""
    if not isinstance(d, dict):
        raise ConfigError('%s: must be a mapping' % where)
    name = d.get('name')
    if not isinstance(name, str) or not name:
        raise ConfigError('%s: name must be a non-empty string' % where)
    layers = d.get('layers')
    if not isinstance(layers, list) or not layers:
        raise ConfigError('%s: layers must be a non-empty list' % where)
    out = []
    for i, ld in enumerate(layers):
        lw = '%s: layers[%d]' % (where, i)
        if not isinstance(ld, dict):
            raise ConfigError('%s: must be a mapping' % lw)
        lname = ld.get('name', 'layer%d' % i)
        tensors = []
        if not isinstance(ld.get('tensors') or [], list):
            raise ConfigError('%s: tensors must be a list, got %r'
                              % (lw, ld['tensors']))
        for j, td in enumerate(ld.get('tensors') or []):
            tw = '%s.tensors[%d]' % (lw, j)
            if not isinstance(td, dict):
                raise ConfigError('%s: must be a mapping' % tw)
            if ('bytes' in td) == ('params' in td):
                raise ConfigError('%s: give exactly one of bytes, params' % tw)
            n = _num(tw, td, 'bytes' if 'bytes' in td else 'params',
                     integer=True)
            nbytes = n if 'bytes' in td else n * BYTES_PER_PARAM
            tensors.append(Tensor(str(td.get('name', '%s.%d' % (lname, j))),
                                  nbytes))
        extra = {k: _num(lw, ld, k, integer=True, required=False) or 0
                 for k in LAYER_EXTRAS}
        out.append(Layer(str(lname), float(_num(lw, ld, 'forward_ms')),
                         float(_num(lw, ld, 'backward_ms')), tuple(tensors),
                         **extra))
    published = _num(where, d, 'published_params', integer=True,
                     required=False)
    m = Model(name, tuple(out), published)
    if m.bytes <= 0:
        raise ConfigError('%s: the model has no gradient bytes' % where)
    return m


def load_file(path):
    """A profile from a YAML or JSON file."""
    import io
    import yaml
    f = io.StringIO(read_text(path, 'model profile '))
    f.name = path                 # what YAML's error marks call the file
    try:                          # no aliases (errors.yaml_loader)
        d = yaml.load(f, Loader=yaml_loader())
    except YamlAliasError as e:
        raise ConfigError('model profile %s' % e) from None
    except yaml.YAMLError as e:
        raise ConfigError('model profile %s: not YAML/JSON: %s' % (path, e))
    except RecursionError:        # the parser recurses once per level
        raise ConfigError('model profile %s: not YAML/JSON: nested too '
                          'deeply' % path) from None
    return from_dict(d, path)


_cache = {}


def get(name, base_dir=None):
    """A bundled model by name, or a profile file by path."""
    if name in ALL_BUNDLED:
        path = os.path.join(MODELS_DIR, name + '.json')
    elif name.endswith(('.json', '.yaml', '.yml')):
        path = os.path.abspath(os.path.join(base_dir or os.getcwd(), name))
    else:
        raise ConfigError('unknown model %r: use one of %s or a profile file '
                          '(.json/.yaml)' % (name, ', '.join(ALL_BUNDLED)))
    if path not in _cache:            # keyed by file: relative names differ
        _cache[path] = load_file(path)
    return _cache[path]


def write_bundled(directory=MODELS_DIR):
    os.makedirs(directory, exist_ok=True)
    for name in ALL_BUNDLED:
        with open(os.path.join(directory, name + '.json'), 'w') as f:
            json.dump(build(name), f, indent=1)
            f.write('\n')


if __name__ == '__main__':
    write_bundled()
    for n in ALL_BUNDLED:
        m = get(n)
        print('%-10s %4d layers %4d tensors %12d params (published %d) '
              'fwd %.1f ms bwd %.1f ms'
              % (n, len(m.layers), len(m.tensors()), m.params,
                 m.published_params, m.forward_ms, m.backward_ms))
