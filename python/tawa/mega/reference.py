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

    `lengths` is an int32 device tensor [max_batch], the tokens each row's
    cache holds. With page_size None the cache is contiguous: `k_cache[l]`
    and `v_cache[l]` are bf16 [max_batch, num_kv_heads, max_seq, head_dim].
    With a page_size P it is paged as the mega-kernel's (docs/MEGAKERNEL.md,
    "Paged KV cache"): `k_cache[l]` and `v_cache[l]` are pools bf16
    [kv_pages, num_kv_heads, P, head_dim] (kv_pages default: max_batch *
    ceil(max_seq / P)), and `block_table`, int32 [max_batch, ceil(max_seq /
    P)] on the device, maps row b's positions [i P, (i + 1) P) to pool page
    block_table[b, i]. Pages are taken from a free list as rows grow
    (`reserve`) and given back by `release`, `prefill` (for the rows it
    fills) and `reset`. The contiguous cache is the paged one with P =
    max_seq and row b's one page b, never released.
    """

    def __init__(self, cfg, weights, max_batch, max_seq, device='cuda', page_size=None,
                 kv_pages=None):
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
        self.paged = page_size is not None
        if self.paged:
            if page_size < 1:
                raise ValueError(f'page_size {page_size}: pages hold at least one position')
            self.page_size = int(page_size)
            self.pages_per_row = -(-max_seq // self.page_size)
            self.kv_pages = int(kv_pages) if kv_pages is not None else \
                max_batch * self.pages_per_row
            if not 1 <= self.kv_pages <= 1 << 30:
                raise ValueError(f'kv_pages {kv_pages} not in 1..{1 << 30}')
        else:
            if kv_pages is not None:
                raise ValueError('kv_pages needs a page_size (the contiguous cache has one '
                                 'page per row)')
            self.page_size, self.pages_per_row, self.kv_pages = max_seq, 1, max_batch
        cache_shape = (self.kv_pages, s.num_key_value_heads, self.page_size, s.head_dim)
        self.k_cache = [torch.zeros(cache_shape, dtype=_BF16, device=self.device)
                        for _ in range(s.num_hidden_layers)]
        self.v_cache = [torch.zeros(cache_shape, dtype=_BF16, device=self.device)
                        for _ in range(s.num_hidden_layers)]
        self.lengths = torch.zeros(max_batch, dtype=torch.int32, device=self.device)
        # Host-side page bookkeeping: row b's pool pages in logical order, and
        # the free pages (popped from the end: page 0 first).
        if self.paged:
            self._row_pages = [[] for _ in range(max_batch)]
            self._free = list(range(self.kv_pages - 1, -1, -1))
            self.block_table = torch.zeros(max_batch, self.pages_per_row, dtype=torch.int32,
                                           device=self.device)
        else:
            self._row_pages = [[b] for b in range(max_batch)]
            self._free = []
            self.block_table = torch.arange(max_batch, dtype=torch.int32,
                                            device=self.device)[:, None].contiguous()
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
        """Empties every row (and, when paged, gives back every page)."""
        self.lengths.zero_()
        for b in range(self.max_batch):
            self.release(b)

    def free_pages(self):
        """Pool pages not held by any row (0 for the contiguous cache)."""
        return len(self._free)

    def reserve(self, b, length):
        """Makes row b's cache hold positions 0..length-1: takes pages from the
        free list for the ones it lacks (paged; host bookkeeping and a small
        write of the device table, no sync). ValueError when the pool runs out
        or length > max_seq."""
        if not 0 <= length <= self.max_seq:
            raise ValueError(f'row {b}: length {length} not in 0..max_seq = {self.max_seq}')
        if not self.paged:
            return
        pages = self._row_pages[b]
        need = -(-length // self.page_size)
        if need - len(pages) > len(self._free):
            raise ValueError(f'KV cache full: row {b} needs {need - len(pages)} more pages of '
                             f'{self.page_size} positions, {len(self._free)} of '
                             f'{self.kv_pages} are free')
        first = len(pages)
        while len(pages) < need:
            pages.append(self._free.pop())
        if need > first:
            self.block_table[b, first:need] = torch.tensor(pages[first:need], dtype=torch.int32)

    def release(self, b):
        """Gives row b's pages back to the free list (paged; else nothing)."""
        if not self.paged:
            return
        self._free.extend(reversed(self._row_pages[b]))
        self._row_pages[b] = []

    def _row_cache(self, cache, n):
        """Rows 0..n-1 of a layer's cache as [n, kv_heads, max_seq, D] (a
        gather of their pages when paged; rows' unheld pages read page
        block_table's 0 entries, positions the masks hide)."""
        if not self.paged:
            return cache[:n]
        kv, d = cache.shape[1], cache.shape[3]
        pages = cache[self.block_table[:n].long()]  # [n, pages, kv, P, D]
        rows = pages.permute(0, 2, 1, 3, 4).reshape(n, kv, -1, d)
        return rows[:, :, :self.max_seq]

    def _slots(self, rows, pos):
        """(pool page, offset in page) of positions pos of rows `rows`."""
        pos = pos.long()
        return (self.block_table[rows, pos // self.page_size].long(),
                pos % self.page_size)

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

        self.release(b)
        self.reserve(b, t)
        page, off = self._slots(torch.full((t,), b, device=self.device), self._seq[:t])

        def attend(layer, q, k, v):
            kc, vc = self.k_cache[layer], self.v_cache[layer]
            kc[page, :, off] = k[0]
            vc[page, :, off] = v[0]
            return self._attention(q, k.transpose(1, 2), v.transpose(1, 2), causal)

        logits = self._forward(ids, cos[None, :, None], sin[None, :, None], attend)
        self.lengths[b] = t
        return logits[0]

    def prefill(self, ids):
        """ids: B lists of token ids (lengths may differ). Fills cache rows 0..B-1
        (paged: each row's pages are given back and taken anew for its prompt)
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
        < max_seq (unchecked: the check would sync) and, paged, reserved for the
        row (`reserve`). Row b attends to slots 0..positions[b]. Returns float32 logits [B, vocab]; lengths[b] becomes
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

        page, off = self._slots(rows, pos)

        def attend(layer, q, k, v):
            kc, vc = self.k_cache[layer], self.v_cache[layer]
            kc[page, :, off] = k[:, 0]
            vc[page, :, off] = v[:, 0]
            return self._attention(q, self._row_cache(kc, b), self._row_cache(vc, b), masked)

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
        for i in range(n - 1):
            for b, row in enumerate(ids):
                self.reserve(b, len(row) + i + 1)
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
        page0 = self.block_table[:batch, 0].long()
        saved_k = [kc[page0, :, 0].clone() for kc in self.k_cache]
        saved_v = [vc[page0, :, 0].clone() for vc in self.v_cache]
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
            kc[page0, :, 0] = k0
            vc[page0, :, 0] = v0

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
