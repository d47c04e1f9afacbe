#!/usr/bin/env python3
"""Checks tawa.mega.reference.ReferenceDecoder against Hugging Face transformers.

    python3 gpu/mega/test_reference.py [--seed N]

Needs a GPU, PyTorch and transformers. Per model shape (random weights) and
batch (1 and 4): prompts of distinct random lengths 1..40, then 16 decode steps
fed with the Hugging Face model's own greedy tokens (teacher forcing), each
step compared with a cache-free Hugging Face forward over the whole sequence;
then one CUDA-graph step against an eager one, and generate(). Each case
runs with the contiguous cache and with a paged one (pages of 8 positions
taken from a shuffled free list, so that rows' pages interleave in the pool).
Prints one PASS/FAIL line per case and exits 1 on any failure.
"""
import argparse
import os
import random
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'python'))

import torch  # noqa: E402

from tawa.mega.reference import ReferenceDecoder, hf_model, random_state_dict  # noqa: E402

CONFIGS = {
    'qwen3-tiny': dict(
        model_type='qwen3', hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=64, intermediate_size=512, vocab_size=1000,
        tie_word_embeddings=True, rope_theta=1e6, rms_norm_eps=1e-6),
    'llama-tiny': dict(
        model_type='llama', hidden_size=256, num_hidden_layers=2, num_attention_heads=8,
        num_key_value_heads=2, intermediate_size=688, vocab_size=1000,
        tie_word_embeddings=False, rope_theta=500000.0, rms_norm_eps=1e-5),
    'qwen3-0.6b-2layers': dict(
        model_type='qwen3', hidden_size=1024, num_hidden_layers=2, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, intermediate_size=3072, vocab_size=151936,
        tie_word_embeddings=True, rope_theta=1e6, rms_norm_eps=1e-6),
}
BATCHES = (1, 4)
MAX_PROMPT = 40
STEPS = 16
GENERATE = 4
REL_TOL = 2e-2    # max |ref - hf| / max |hf|, per row and step
ARGMAX_GAP = 0.05  # argmax must agree where hf's top-2 gap exceeds this * max |hf|
GRAPH_TOL = 1e-6
PAGE_SIZES = (None, 8)  # contiguous, paged


@torch.no_grad()
def hf_logits(model, seqs):
    """Float32 last-position logits [B, vocab] of a cache-free forward per row."""
    return torch.stack([
        model(input_ids=torch.tensor([seq], device='cuda'), use_cache=False).logits[0, -1].float()
        for seq in seqs])


def row_rel_err(got, want):
    return ((got - want).abs().amax(-1) / want.abs().amax(-1)).max().item()


def check_inv_freq(model, ref):
    """Hugging Face's rotary frequencies must be float32 and equal ours (catches a
    dropped rope_theta or a buffer rounded to bf16)."""
    found = [(n, b) for n, b in model.named_buffers() if n.endswith('inv_freq')]
    if not found:
        return ['no inv_freq buffer in the Hugging Face model']
    return [f'{n}: {b.dtype}, differs from the reference' for n, b in found
            if b.dtype != torch.float32 or not torch.allclose(b, ref._inv_freq, rtol=1e-6)]


def check_batch(model, ref, cfg, batch, rng):
    """Returns (failures, summary) for one batch size."""
    failures = []
    vocab = cfg['vocab_size']
    prompts = [[rng.randrange(vocab) for _ in range(n)]
               for n in rng.sample(range(1, MAX_PROMPT + 1), batch)]
    ref.reset()
    got = ref.prefill(prompts)
    first_tokens = got.argmax(-1).tolist()
    seqs = [list(p) for p in prompts]
    worst, agree = 0.0, 0
    for step in range(STEPS + 1):
        want = hf_logits(model, seqs)
        rel = row_rel_err(got, want)
        worst = max(worst, rel)
        if rel > REL_TOL:
            failures.append(f'step {step}: relative error {rel:.3g}')
        top2 = want.topk(2, dim=-1).values
        same = got.argmax(-1) == want.argmax(-1)
        clear = top2[:, 0] - top2[:, 1] > ARGMAX_GAP * want.abs().amax(-1)
        agree += int(same.sum())
        if bool((clear & ~same).any()):
            failures.append(f'step {step}: argmax differs where the top-2 gap is clear')
        tok = want.argmax(-1)
        if step < STEPS:
            for b, seq in enumerate(seqs):
                ref.reserve(b, len(seq) + 1)
            got = ref.decode(tok)
        for seq, t in zip(seqs, tok.tolist()):
            seq.append(t)

    # One more step, eager then graphed at the same positions: both write the
    # same k/v, so the logits must agree, and match Hugging Face.
    for b, seq in enumerate(seqs):
        ref.reserve(b, len(seq) + 1)
    step_fn = ref.graphed_decode(batch)
    pos = ref.lengths[:batch].clone()
    eager = ref.decode(tok, pos).clone()
    graphed = step_fn(tok, pos).clone()
    graph_diff = (graphed - eager).abs().max().item() / eager.abs().max().item()
    if graph_diff > GRAPH_TOL:
        failures.append(f'graphed decode differs from decode by {graph_diff:.3g}')
    if not torch.equal(ref.lengths[:batch], pos + 1):
        failures.append('graphed decode did not advance lengths')
    graph_rel = row_rel_err(graphed, hf_logits(model, seqs))
    if graph_rel > REL_TOL:
        failures.append(f'graphed step: relative error {graph_rel:.3g} against Hugging Face')

    ref.reset()
    generated = ref.generate(prompts, GENERATE)
    if ([len(r) for r in generated] != [GENERATE] * batch
            or any(not 0 <= t < vocab for r in generated for t in r)
            or [r[0] for r in generated] != first_tokens):
        failures.append(f'generate returned {generated}')

    total = batch * (STEPS + 1)
    summary = (f'prompt lengths {[len(p) for p in prompts]}, worst relative error {worst:.3g}, '
               f'argmax agrees {agree}/{total}, graph diff {graph_diff:.3g}')
    return failures, summary


def run_config(name, cfg, seed, page_size):
    """Yields (passed, line) per batch size."""
    start = time.time()
    name = f'{name} page_size={page_size}'
    try:
        weights = random_state_dict(cfg, seed=seed)
        model = hf_model(cfg, weights)
        ref = ReferenceDecoder(cfg, weights, max_batch=max(BATCHES),
                               max_seq=MAX_PROMPT + STEPS + 2, page_size=page_size)
        random.Random(seed).shuffle(ref._free)  # rows' pages scattered over the pool
        setup_failures = check_inv_freq(model, ref)
    except Exception:
        traceback.print_exc()
        yield False, f'FAIL {name} seed={seed}: setup raised (traceback above)'
        return
    rng = random.Random(seed)
    for batch in BATCHES:
        try:
            failures, summary = check_batch(model, ref, cfg, batch, rng)
        except Exception:
            traceback.print_exc()
            failures, summary = ['raised (traceback above)'], ''
        failures = setup_failures + failures
        verdict = 'FAIL' if failures else 'PASS'
        detail = '; '.join([summary] + failures[:5])
        yield not failures, (f'{verdict} {name} batch={batch} seed={seed} '
                             f'({time.time() - start:.1f}s): {detail}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seed', type=int, help='base seed (default: from the clock)')
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print('FAIL no CUDA device')
        return 1
    import transformers
    seed = args.seed if args.seed is not None else time.time_ns() % 2**31
    print(f'torch {torch.__version__}, transformers {transformers.__version__}, '
          f'{torch.cuda.get_device_name()}, base seed {seed}')
    failed = 0
    for i, (name, cfg) in enumerate(CONFIGS.items()):
        for page_size in PAGE_SIZES:
            for passed, line in run_config(name, cfg, seed + i, page_size):
                print(line, flush=True)
                failed += not passed
    print(f'{failed} case(s) failed' if failed else 'all cases passed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
