"""PyTorch reference decode for Qwen3 and Llama decoder LLMs (issue 18).

The mega-kernel must match `ReferenceDecoder`; gpu/mega/test_reference.py
checks `ReferenceDecoder` against Hugging Face transformers. The numerics
follow Hugging Face's bf16 eager path, except attention: scores, softmax and
the value product run in float32 (Hugging Face rounds the scores to bf16
before the float32 softmax and the probabilities to bf16 before the value
product). The float32 matmuls assume TF32 is off, PyTorch's default.
"""
import dataclasses
import math

import torch
import torch.nn.functional as F

_BF16 = torch.bfloat16


@dataclasses.dataclass(frozen=True)
class ModelShape:
    """The shape of a dense Qwen3 or Llama decoder, from its Hugging Face config."""

    model_type: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    rope_theta: float
    rms_norm_eps: float
    tie_word_embeddings: bool
    qk_norm: bool

    @classmethod
    def from_config(cls, cfg):
        """Reads a Hugging Face config dict; ValueError for what the reference lacks."""
        model_type = cfg.get('model_type')
        if model_type not in ('qwen3', 'llama'):
            raise ValueError(f"model_type {model_type!r}: only 'qwen3' and 'llama' are supported")
        if cfg.get('rope_scaling') is not None:
            raise ValueError(f"rope_scaling {cfg['rope_scaling']!r}: "
                             'only the default RoPE is supported')
        rope_theta = cfg.get('rope_theta', 10000.0)
        # Configs written by transformers 5 keep RoPE in `rope_parameters`.
        rope_parameters = cfg.get('rope_parameters')
        if rope_parameters is not None:
            if rope_parameters.get('rope_type', 'default') != 'default':
                raise ValueError(f'rope_parameters {rope_parameters!r}: '
                                 'only the default RoPE is supported')
            rope_theta = rope_parameters.get('rope_theta', rope_theta)
        for flag in ('attention_bias', 'mlp_bias', 'use_sliding_window'):
            if cfg.get(flag):
                raise ValueError(f"{flag} is set: the reference has no such path")
        if cfg.get('hidden_act', 'silu') != 'silu':
            raise ValueError(f"hidden_act {cfg['hidden_act']!r}: only 'silu' is supported")
        hidden = cfg['hidden_size']
        heads = cfg['num_attention_heads']
        kv_heads = cfg.get('num_key_value_heads') or heads
        if heads % kv_heads != 0:
            raise ValueError(f'num_attention_heads {heads} is not a multiple of '
                             f'num_key_value_heads {kv_heads}')
        return cls(
            model_type=model_type,
            hidden_size=hidden,
            num_hidden_layers=cfg['num_hidden_layers'],
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            head_dim=cfg.get('head_dim') or hidden // heads,
            intermediate_size=cfg['intermediate_size'],
            vocab_size=cfg['vocab_size'],
            rope_theta=float(rope_theta),
            rms_norm_eps=float(cfg.get('rms_norm_eps', 1e-6)),
            tie_word_embeddings=bool(cfg.get('tie_word_embeddings', False)),
            qk_norm=model_type == 'qwen3',
        )

    def weight_shapes(self):
        """Hugging Face weight name -> shape, in checkpoint order."""
        h, d, i, v = self.hidden_size, self.head_dim, self.intermediate_size, self.vocab_size
        q_out = self.num_attention_heads * d
        kv_out = self.num_key_value_heads * d
        shapes = {'model.embed_tokens.weight': (v, h)}
        for layer in range(self.num_hidden_layers):
            p = f'model.layers.{layer}.'
            shapes[p + 'input_layernorm.weight'] = (h,)
            shapes[p + 'self_attn.q_proj.weight'] = (q_out, h)
            shapes[p + 'self_attn.k_proj.weight'] = (kv_out, h)
            shapes[p + 'self_attn.v_proj.weight'] = (kv_out, h)
            shapes[p + 'self_attn.o_proj.weight'] = (h, q_out)
            if self.qk_norm:
                shapes[p + 'self_attn.q_norm.weight'] = (d,)
                shapes[p + 'self_attn.k_norm.weight'] = (d,)
            shapes[p + 'post_attention_layernorm.weight'] = (h,)
            shapes[p + 'mlp.gate_proj.weight'] = (i, h)
            shapes[p + 'mlp.up_proj.weight'] = (i, h)
            shapes[p + 'mlp.down_proj.weight'] = (h, i)
        shapes['model.norm.weight'] = (h,)
        if not self.tie_word_embeddings:
            shapes['lm_head.weight'] = (v, h)
        return shapes


def random_state_dict(cfg, seed=0, device='cuda', dtype=_BF16):
    """Random weights under the Hugging Face names, deterministic in `seed`.

    Linear weights are scaled by 1/sqrt(in_features) so activations stay O(1);
    norm weights are 1 + 0.1*normal so that a skipped norm weight shows.
    """
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    weights = {}
    for name, shape in ModelShape.from_config(cfg).weight_shapes().items():
        w = torch.randn(shape, generator=gen, device=device, dtype=dtype)
        if name.endswith('norm.weight'):
            w.mul_(0.1).add_(1.0)
        elif name != 'model.embed_tokens.weight':
            w.mul_(1.0 / math.sqrt(shape[1]))
        weights[name] = w
    return weights


def _rms_norm(x, weight, eps):
    h = x.float()
    var = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(var + eps)
    return weight * h.to(x.dtype)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class ReferenceDecoder:
    """Greedy decode with per-row KV caches, in plain PyTorch.

    `k_cache[l]` and `v_cache[l]` are bf16 [max_batch, num_kv_heads, max_seq,
    head_dim]; `lengths` is an int32 device tensor [max_batch], the tokens
    each row's cache holds.
    """

    def __init__(self, cfg, weights, max_batch, max_seq, device='cuda'):
        self.shape = s = ModelShape.from_config(cfg)
        # Resolve 'cuda' to 'cuda:N' so it compares equal to tensors' devices.
        self.device = torch.empty(0, device=device).device
        self.max_batch = max_batch
        self.max_seq = max_seq
        self._check_weights(weights)
        self.embed = weights['model.embed_tokens.weight']
        self.norm = weights['model.norm.weight']
        self.lm_head = self.embed if s.tie_word_embeddings else weights['lm_head.weight']
        self._layers = []
        for layer in range(s.num_hidden_layers):
            p = f'model.layers.{layer}.'
            names = ['input_layernorm', 'self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj',
                     'self_attn.o_proj', 'post_attention_layernorm', 'mlp.gate_proj', 'mlp.up_proj',
                     'mlp.down_proj']
            if s.qk_norm:
                names += ['self_attn.q_norm', 'self_attn.k_norm']
            self._layers.append({n.split('.')[-1]: weights[p + n + '.weight'] for n in names})
        cache_shape = (max_batch, s.num_key_value_heads, max_seq, s.head_dim)
        self.k_cache = [torch.zeros(cache_shape, dtype=_BF16, device=self.device)
                        for _ in range(s.num_hidden_layers)]
        self.v_cache = [torch.zeros(cache_shape, dtype=_BF16, device=self.device)
                        for _ in range(s.num_hidden_layers)]
        self.lengths = torch.zeros(max_batch, dtype=torch.int32, device=self.device)
        d = s.head_dim
        self._inv_freq = 1.0 / (s.rope_theta ** (
            torch.arange(0, d, 2, dtype=torch.int64, device=self.device).float() / d))
        self._rows = torch.arange(max_batch, device=self.device)
        self._seq = torch.arange(max_seq, device=self.device)
        self._scale = d ** -0.5

    def _check_weights(self, weights):
        expected = self.shape.weight_shapes()
        missing = [n for n in expected if n not in weights]
        # A tied checkpoint may still carry lm_head.weight; it goes unused.
        unexpected = [n for n in weights if n not in expected and n != 'lm_head.weight']
        if missing or unexpected:
            raise ValueError(f'weights: missing {missing}, unexpected {unexpected}')
        for name, shape in expected.items():
            w = weights[name]
            if tuple(w.shape) != shape or w.dtype != _BF16 or w.device != self.device:
                raise ValueError(f'{name}: {tuple(w.shape)} {w.dtype} on {w.device}, '
                                 f'expected {shape} {_BF16} on {self.device}')

    def reset(self):
        self.lengths.zero_()

    def _rope(self, pos):
        """cos and sin, bf16 [*pos.shape, head_dim], as Hugging Face's default RoPE."""
        freqs = pos.float()[..., None] * self._inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(_BF16), emb.sin().to(_BF16)

    def _attention(self, q, k, v, masked):
        """q [N, T, heads, D]; k, v [N, kv_heads, S, D]; masked bool broadcastable
        to [N, T, S], true where a key is hidden. Returns bf16 [N, T, heads*D]."""
        s = self.shape
        n, t = q.shape[:2]
        group = s.num_attention_heads // s.num_key_value_heads
        # Query head h reads kv head h // group, as Hugging Face's repeat_kv.
        qf = q.float().view(n, t, s.num_key_value_heads, group, s.head_dim)
        qf = qf.permute(0, 2, 3, 1, 4)
        scores = torch.matmul(qf, k.float().unsqueeze(2).transpose(-1, -2)) * self._scale
        scores = scores.masked_fill(masked[:, None, None], float('-inf'))
        out = torch.matmul(torch.softmax(scores, dim=-1), v.float().unsqueeze(2))
        return out.permute(0, 3, 1, 2, 4).reshape(n, t, -1).to(_BF16)

    def _forward(self, ids, cos, sin, attend):
        """ids [N, T]; cos, sin [N, T, 1, D]; attend(layer, q, k, v) stores k, v
        and returns the attention output. Returns float32 logits of the last position."""
        s = self.shape
        eps = s.rms_norm_eps
        x = F.embedding(ids, self.embed)
        n, t = ids.shape
        for layer, w in enumerate(self._layers):
            h = _rms_norm(x, w['input_layernorm'], eps)
            q = F.linear(h, w['q_proj']).view(n, t, s.num_attention_heads, s.head_dim)
            k = F.linear(h, w['k_proj']).view(n, t, s.num_key_value_heads, s.head_dim)
            v = F.linear(h, w['v_proj']).view(n, t, s.num_key_value_heads, s.head_dim)
            if s.qk_norm:
                q = _rms_norm(q, w['q_norm'], eps)
                k = _rms_norm(k, w['k_norm'], eps)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
            x = x + F.linear(attend(layer, q, k, v), w['o_proj'])
            h = _rms_norm(x, w['post_attention_layernorm'], eps)
            x = x + F.linear(F.silu(F.linear(h, w['gate_proj'])) * F.linear(h, w['up_proj']),
                             w['down_proj'])
        h = _rms_norm(x[:, -1], self.norm, eps)
        return F.linear(h, self.lm_head).float()

    def _prefill_row(self, b, row):
        t = len(row)
        ids = torch.tensor([row], dtype=torch.long, device=self.device)
        cos, sin = self._rope(self._seq[:t])
        causal = torch.ones(t, t, dtype=torch.bool, device=self.device).triu(1)[None]

        def attend(layer, q, k, v):
            kc, vc = self.k_cache[layer], self.v_cache[layer]
            kc[b, :, :t] = k[0].transpose(0, 1)
            vc[b, :, :t] = v[0].transpose(0, 1)
            return self._attention(q, kc[b:b + 1, :, :t], vc[b:b + 1, :, :t], causal)

        logits = self._forward(ids, cos[None, :, None], sin[None, :, None], attend)
        self.lengths[b] = t
        return logits[0]

    def prefill(self, ids):
        """ids: B lists of token ids (lengths may differ). Fills cache rows 0..B-1
        and returns float32 logits [B, vocab] of each row's last position."""
        if not 1 <= len(ids) <= self.max_batch:
            raise ValueError(f'batch {len(ids)} not in 1..{self.max_batch}')
        for row in ids:
            if not 1 <= len(row) <= self.max_seq:
                raise ValueError(f'prompt length {len(row)} not in 1..{self.max_seq}')
        return torch.stack([self._prefill_row(b, row) for b, row in enumerate(ids)])

    def decode(self, tokens, positions=None, advance=True):
        """One step for rows 0..B-1: tokens int [B] on the device; positions int32
        [B] (default: `lengths`), the cache slot of each new token, which must be
        < max_seq (unchecked: the check would sync). Row b attends to slots
        0..positions[b]. Returns float32 logits [B, vocab]; lengths[b] becomes
        positions[b] + 1 (unless advance is False: torch.compile's CUDA graphs
        skip a function that writes a tensor it was not given). Capturable in a
        CUDA graph: no host sync, static shapes.
        """
        b = tokens.shape[0]
        if b > self.max_batch:
            raise ValueError(f'batch {b} > max_batch {self.max_batch}')
        if positions is None:
            positions = self.lengths[:b]
        pos = positions.to(device=self.device, dtype=torch.long)
        rows = self._rows[:b]
        cos, sin = self._rope(pos)
        # Mask the whole max_seq so that shapes do not depend on positions.
        masked = (self._seq[None, :] > pos[:, None])[:, None]

        def attend(layer, q, k, v):
            kc, vc = self.k_cache[layer], self.v_cache[layer]
            kc[rows, :, pos] = k[:, 0]
            vc[rows, :, pos] = v[:, 0]
            return self._attention(q, kc[:b], vc[:b], masked)

        logits = self._forward(tokens.to(device=self.device, dtype=torch.long)[:, None],
                               cos[:, None, None], sin[:, None, None], attend)
        if advance:
            self.lengths[:b] = (pos + 1).to(torch.int32)
        return logits

    def generate(self, ids, n):
        """Prefill, then n >= 1 greedy tokens per row (the last is not fed back)."""
        if n < 1:
            raise ValueError(f'n = {n}: generate at least one token')
        tok = self.prefill(ids).argmax(-1)
        out = [tok]
        for _ in range(n - 1):
            tok = self.decode(tok).argmax(-1)
            out.append(tok)
        return torch.stack(out, dim=1).tolist()

    def graphed_decode(self, batch):
        """A CUDA-graph replay of `decode` for rows 0..batch-1.

        Returns step(tokens, positions) -> logits: it copies its inputs into
        static buffers, replays and returns the static logits tensor, which the
        next call overwrites. The graph advances `lengths` as `decode` does.
        """
        if not 1 <= batch <= self.max_batch:
            raise ValueError(f'batch {batch} not in 1..{self.max_batch}')
        tokens = torch.zeros(batch, dtype=torch.long, device=self.device)
        positions = torch.zeros(batch, dtype=torch.int32, device=self.device)
        # Warm-up runs write cache slot 0 of these rows and lengths: keep them.
        saved_lengths = self.lengths.clone()
        saved_k = [kc[:batch, :, 0].clone() for kc in self.k_cache]
        saved_v = [vc[:batch, :, 0].clone() for vc in self.v_cache]
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(3):
                self.decode(tokens, positions)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = self.decode(tokens, positions)
        self.lengths.copy_(saved_lengths)
        for kc, vc, k0, v0 in zip(self.k_cache, self.v_cache, saved_k, saved_v):
            kc[:batch, :, 0] = k0
            vc[:batch, :, 0] = v0

        def step(new_tokens, new_positions):
            tokens.copy_(new_tokens)
            positions.copy_(new_positions)
            graph.replay()
            return logits

        return step


def hf_model(cfg, weights):
    """The Hugging Face model (eager attention, bf16, cuda) holding `weights`."""
    import transformers

    shape = ModelShape.from_config(cfg)
    if shape.model_type == 'qwen3':
        config_cls, model_cls = transformers.Qwen3Config, transformers.Qwen3ForCausalLM
    else:
        config_cls, model_cls = transformers.LlamaConfig, transformers.LlamaForCausalLM
    config = config_cls(**{k: v for k, v in cfg.items() if k != 'model_type'})
    config._attn_implementation = 'eager'
    # Build in bf16 on the GPU as from_pretrained does: a float32 model moved
    # with .to(bf16) would also round the rotary inv_freq buffer to bf16.
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(_BF16)
    try:
        with torch.device('cuda'):
            model = model_cls(config)
    finally:
        torch.set_default_dtype(default_dtype)
    if model.config._attn_implementation != 'eager':
        raise RuntimeError(f'attention is {model.config._attn_implementation!r}, not eager')
    missing, unexpected = model.load_state_dict(weights, strict=False)
    allowed_missing = {'lm_head.weight'} if shape.tie_word_embeddings else set()
    if set(missing) - allowed_missing or unexpected:
        raise RuntimeError(f'load_state_dict: missing {missing}, unexpected {unexpected}')
    if shape.tie_word_embeddings and not torch.equal(model.get_output_embeddings().weight,
                                                     weights['model.embed_tokens.weight']):
        raise RuntimeError('tied lm_head does not hold the embedding')
    return model.eval()
