"""Large language model profiles: GPT-3 1.3B, 13B and 175B, Llama-2 7B
and 70B, Mixtral-8x7B, built from their published layer shapes
(docs/llm-workloads.md cites each source's table).

Each transformer block is two profile layers, its attention and its
feed-forward part, because tensor parallelism all-reduces each one's
output once per pass (Megatron-LM: ``tp_allreduces: 1`` on each); a
Mixtral block's feed-forward part is its router (with its norm) and
its experts (``experts: 8, top_k: 2``), a layer of experts' weights
only, which expert parallelism shards. Every layer states its output's
bytes (``activation_bytes``: batch x sequence x hidden x 2, bf16), what
pipeline stages send each other and tensor parallelism all-reduces.

Compute as in the other profiles (workload.models): forward FLOPs of
the profile's batch (one data-parallel replica's mini-batch) over an
effective GPU rate, backward twice forward; gradients fp32 (4 bytes a
parameter) like the other profiles. Attention counts 4 x seq x hidden
FLOPs a token (scores and weighted sum), GQA's smaller K and V
projections their own sizes.
"""

# name -> (family, layers, hidden, heads, kv heads, ffn, vocab, seq,
#          experts, top_k, positions (learned) or 0, published params)
SHAPES = {
    'gpt3-1.3b': ('gpt3', 24, 2048, 24, 24, 8192, 50257, 2048, 0, 0,
                  2048, 1_300_000_000),
    'gpt3-13b': ('gpt3', 40, 5120, 40, 40, 20480, 50257, 2048, 0, 0,
                 2048, 13_000_000_000),
    'gpt3-175b': ('gpt3', 96, 12288, 96, 96, 49152, 50257, 2048, 0, 0,
                  2048, 175_000_000_000),
    'llama2-7b': ('llama', 32, 4096, 32, 32, 11008, 32000, 4096, 0, 0,
                  0, 6_738_415_616),
    'llama2-70b': ('llama', 80, 8192, 64, 8, 28672, 32000, 4096, 0, 0,
                   0, 68_976_648_192),
    'mixtral-8x7b': ('llama', 32, 4096, 32, 8, 14336, 32000, 4096, 8, 2,
                     0, 46_702_792_704),
}
NAMES = tuple(SHAPES)
SOURCES = {
    'gpt3': 'Brown et al. 2020, Language Models are Few-Shot Learners, '
            'Table 2.1',
    'llama2-7b': 'Touvron et al. 2023, Llama 2, Table 1; LLaMA (Touvron '
                 'et al. 2023), Table 2; meta-llama/Llama-2-7b-hf '
                 'config.json',
    'llama2-70b': 'Touvron et al. 2023, Llama 2, Table 1; meta-llama/'
                  'Llama-2-70b-hf config.json',
    'mixtral-8x7b': 'Jiang et al. 2024, Mixtral of Experts, Table 1',
}
BATCH = 8                       # sequences per data-parallel replica
GPU_TFLOPS = 150.0              # an A100's bf16 peak (312) at about half
BACKWARD_RATIO = 2.0
ACTIVATION_BYTES = 2            # bf16


def _layers(name):
    """(name, forward FLOPs, [(tensor, params)], extra keys) in
    forward order."""
    (family, L, d, heads, kv, ff, vocab, seq, experts, top_k, positions,
     _) = SHAPES[name]
    tokens = BATCH * seq
    act = tokens * d * ACTIVATION_BYTES
    kv_dim = d * kv // heads
    gpt = family == 'gpt3'
    out = []
    emb = [('embed.token', vocab * d)]
    if positions:
        emb.append(('embed.position', positions * d))
    out.append(('embed', 0, emb, {'activation_bytes': act}))
    for i in range(L):
        p = 'h%d' % i
        attn = [(p + '.ln1.weight', d)] + ([(p + '.ln1.bias', d)] if gpt
                                           else [])
        attn += [(p + '.attn.q', d * d), (p + '.attn.k', d * kv_dim),
                 (p + '.attn.v', d * kv_dim), (p + '.attn.out', d * d)]
        if gpt:
            attn += [(p + '.attn.qkv.bias', d + 2 * kv_dim),
                     (p + '.attn.out.bias', d)]
        flops = 2 * tokens * (2 * d * d + 2 * d * kv_dim) \
            + 4 * seq * d * tokens
        out.append((p + '.attn', flops, attn,
                    {'activation_bytes': act, 'tp_allreduces': 1}))
        if experts:
            out.append((p + '.router', 2 * tokens * d * experts,
                        [(p + '.ln2.weight', d),
                         (p + '.router', d * experts)],
                        {'activation_bytes': act}))
            out.append((p + '.experts', 2 * tokens * top_k * 3 * d * ff,
                        [(p + '.experts.%d.w%d' % (e, w), d * ff)
                         for e in range(experts) for w in (1, 2, 3)],
                        {'activation_bytes': act, 'tp_allreduces': 1,
                         'experts': experts, 'top_k': top_k}))
            continue
        if gpt:
            mlp = [(p + '.ln2.weight', d), (p + '.ln2.bias', d),
                   (p + '.mlp.fc1', d * ff), (p + '.mlp.fc1.bias', ff),
                   (p + '.mlp.fc2', ff * d), (p + '.mlp.fc2.bias', d)]
            flops = 2 * tokens * 2 * d * ff
        else:                                   # SwiGLU: three matrices
            mlp = [(p + '.ln2.weight', d), (p + '.mlp.w1', d * ff),
                   (p + '.mlp.w2', ff * d), (p + '.mlp.w3', d * ff)]
            flops = 2 * tokens * 3 * d * ff
        out.append((p + '.mlp', flops, mlp,
                    {'activation_bytes': act, 'tp_allreduces': 1}))
    final = [('norm.weight', d)] + ([('norm.bias', d)] if gpt else [])
    # GPT-3 ties its output projection to the token embedding (as
    # GPT-2); Llama's is a matrix of its own
    head = [] if gpt else [('lm_head', vocab * d)]
    out.append(('head', 2 * tokens * d * vocab, final + head,
                {'activation_bytes': tokens * vocab * ACTIVATION_BYTES}))
    return out


def build(name):
    """The profile ``name`` as a plain dict (the file format)."""
    per_ms = GPU_TFLOPS * 1e12 / 1e3
    family, *_, published = SHAPES[name]
    layers = []
    for lname, flops, arrays, extra in _layers(name):
        fwd = round(flops / per_ms, 6)
        layers.append(dict({
            'name': lname, 'forward_ms': fwd,
            'backward_ms': round(BACKWARD_RATIO * fwd, 6),
            'tensors': [{'name': t, 'params': n} for t, n in arrays]},
            **extra))
    (_, L, d, heads, kv, ff, vocab, seq, experts, top_k, _, _) = SHAPES[name]
    compute = {'batch': BATCH, 'sequence': seq, 'layers': L, 'hidden': d,
               'heads': heads, 'kv_heads': kv, 'ffn': ff, 'vocab': vocab,
               'source': SOURCES.get(name, SOURCES.get(family)),
               'gpu_tflops': GPU_TFLOPS, 'backward_ratio': BACKWARD_RATIO,
               'model': 'forward_ms = forward FLOPs of one batch / '
                        'gpu_tflops; backward_ms = backward_ratio * '
                        'forward_ms; 2 FLOPs per multiply-add; fp32 '
                        'gradients; bf16 activations'}
    if experts:
        compute.update(experts=experts, top_k=top_k)
    return {'name': name, 'published_params': published,
            'compute': compute, 'layers': layers}
