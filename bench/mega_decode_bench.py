#!/usr/bin/env python3
"""Per-token decode latency of the mega-kernel against its baselines (issue 18).

    python3 bench/mega_decode_bench.py [--models 0.6b,1.7b,8b] [--batches 1,4,16]
        [--contexts 512,4096] [--steps 20] [--json FILE]

For each model shape (random bf16 weights), batch and context: the rows'
caches hold `context` positions and each timed step appends at position
`context - 1` (so every step reads the same amount; the mega-kernel's paged
cache gives the rows their pages in turns, a page each, as rows that grew
together would hold them), and
- tawa: one mega-kernel launch per step (tawa.mega), median over `steps` of
  CUDA-event time per launch, each launch waited for (the host's launch
  cost included); also the in-kernel time (first CTA start to last CTA
  exit) and `queued`: the time per step with 10 steps launched back to back
  and timed together (median of `steps` such runs), as generate() issues
  them (each step's token is the previous step's argmax on the GPU; the host
  never waits between steps), so the host's launch cost overlaps the
  previous step;
- with --compare-merge: the same step planned with a merge task after
  attention (separate_merge=True), timed alternately with the default plan
  launch by launch on the same weights and cache;
- graph: the PyTorch reference decode (tawa.mega.reference, its contiguous
  cache) captured in a CUDA graph (kernel per operator, no launch overhead);
- floor: bytes of weights read per step (every linear's weights, the
  embedding row excluded) plus the KV cache read, over the measured device
  copy bandwidth (a 2 GiB copy, read + write bytes);
- with --compile: the reference decode under torch.compile (mode
  reduce-overhead, which also replays CUDA graphs; weights and caches
  marked static), timed in a child process of its own;
- with --hf: Hugging Face transformers eager (the model's own KV cache,
  filled by a prefill of `context - 1` tokens in chunks of 512).
Prints a table; --json writes every number.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))

import torch  # noqa: E402

import tawa.mega  # noqa: E402
from tawa.mega.reference import ModelShape, ReferenceDecoder, random_state_dict  # noqa: E402

BASE = dict(model_type='qwen3', num_key_value_heads=8, head_dim=128, vocab_size=151936,
            rope_theta=1e6, rms_norm_eps=1e-6)
MODELS = {
    '0.6b': dict(BASE, hidden_size=1024, num_hidden_layers=28, num_attention_heads=16,
                 intermediate_size=3072, tie_word_embeddings=True),
    '1.7b': dict(BASE, hidden_size=2048, num_hidden_layers=28, num_attention_heads=16,
                 intermediate_size=6144, tie_word_embeddings=True),
    '8b': dict(BASE, hidden_size=4096, num_hidden_layers=36, num_attention_heads=32,
               intermediate_size=12288, tie_word_embeddings=False),
}


def copy_bandwidth():
    n = 1 << 30
    src = torch.empty(n, dtype=torch.bfloat16, device='cuda')
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return 2 * n * 2 / statistics.median(times)


def time_alternating(fns, steps):
    """Per-launch CUDA-event times of `fns`, interleaved launch by launch
    (so drifts of clock and temperature fall on all alike): medians, us."""
    for fn in fns:
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for _ in range(steps):
        for i, fn in enumerate(fns):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times[i].append(a.elapsed_time(b) * 1e3)
    return [statistics.median(t) for t in times]


def time_queued(fn, steps, queue=10):
    """Time per step with `queue` steps launched back to back and timed
    together (median over `steps` runs), us."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(queue):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / queue)
    return statistics.median(times)


def step_bytes(shape, batch, context):
    s = shape
    h, d = s.hidden_size, s.head_dim
    per_layer = h * (s.num_attention_heads + 2 * s.num_key_value_heads) * d \
        + s.num_attention_heads * d * h + 3 * h * s.intermediate_size
    weights = 2 * (s.num_hidden_layers * per_layer + s.vocab_size * h)
    kv = 2 * 2 * s.num_hidden_layers * batch * s.num_key_value_heads * context * d
    return weights, kv


def time_steps(fn, steps):
    """Median CUDA-event time of one waited-for call of `fn`, us."""
    return time_queued(fn, steps, queue=1)


def time_compiled_in_process(name, batch, context, steps):
    """The reference decode under torch.compile (reduce-overhead), in this
    (fresh) process: with the mega-kernel's step and the reference's own
    captured graph in the same process, inductor's graphs ran the 8B step in
    20.8 ms against 8.4 ms alone, so --compile times it in a child process."""
    cfg = dict(MODELS[name])
    ref = ReferenceDecoder(cfg, random_state_dict(cfg, seed=1), batch, context)
    tokens = torch.randint(0, cfg['vocab_size'], (batch,), dtype=torch.int32, device='cuda')
    positions = torch.full((batch,), context - 1, dtype=torch.int32, device='cuda')
    # Weights and caches keep their addresses: marked static, inductor's CUDA
    # graphs neither copy the weights into graph-owned buffers on every call
    # nor skip graphs because the caches are written in place.
    static = [ref.embed, ref.norm, ref.lm_head] + ref.k_cache + ref.v_cache
    for layer in ref._layers:
        static += [t for t in layer.values() if isinstance(t, torch.Tensor)]
    for t in static:
        torch._dynamo.mark_static_address(t)
    compiled = torch.compile(ref.decode, mode='reduce-overhead', dynamic=False)
    # The step is timed with explicit positions, so `lengths` is not needed.
    return time_steps(lambda: compiled(tokens, positions, advance=False), steps)


def time_compiled(name, batch, context, steps):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--compile-child',
                          f'{name},{batch},{context},{steps}'],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


@torch.no_grad()
def time_hf(cfg, weights, batch, context, steps):
    """transformers eager: one token per row per step on the model's own cache."""
    from tawa.mega.reference import hf_model
    model = hf_model(cfg, weights)
    vocab = cfg['vocab_size']
    ids = torch.randint(0, vocab, (batch, context - 1), device='cuda')
    cache = None
    for start in range(0, context - 1, 512):
        out = model(input_ids=ids[:, start:start + 512], past_key_values=cache, use_cache=True)
        cache = out.past_key_values
    tok = out.logits[:, -1].argmax(-1, keepdim=True)
    state = {'cache': cache}

    def step():
        o = model(input_ids=tok, past_key_values=state['cache'], use_cache=True)
        state['cache'] = o.past_key_values

    us = time_steps(step, steps)
    del model, cache, state
    torch.cuda.empty_cache()
    return us


def bench_model(name, cfg, batches, contexts, steps, bw, rows, with_compile=False,
                with_hf=False, page_size=64, compare_merge=False):
    shape = ModelShape.from_config(cfg)
    weights = random_state_dict(cfg, seed=1)
    for context in contexts:
        model = tawa.mega.compile(cfg, weights, max_batch=max(batches), max_seq=context,
                                  page_size=page_size)
        model.reserve(context)
        ref = ReferenceDecoder(cfg, weights, max(batches), context)
        for batch in batches:
            t0 = time.perf_counter()
            k = model.step_kernel(batch)
            plan_s = time.perf_counter() - t0
            tokens = torch.randint(0, shape.vocab_size, (batch,), dtype=torch.int32,
                                   device='cuda')
            positions = torch.full((batch,), context - 1, dtype=torch.int32, device='cuda')
            k['tokens'].view(-1).copy_(tokens)
            k['positions'].copy_(positions)
            merge_us = None
            if compare_merge:
                km = model.step_kernel(batch, separate_merge=True)
                km['tokens'].view(-1).copy_(tokens)
                km['positions'].copy_(positions)
                mega_us, merge_us = time_alternating([k.launch, km.launch], steps)
                km.check()
            else:
                mega_us = time_steps(lambda: k.launch(), steps)
            k.check()
            kernel_us = k.last_step_ns() / 1e3
            queued_us = time_queued(k.launch, steps)
            k.check()
            graphed = ref.graphed_decode(batch)
            graph_us = time_steps(lambda: graphed(tokens, positions), steps)
            compile_us = (time_compiled(name, batch, context, steps)
                          if with_compile else None)
            hf_us = None  # timed below, once the mega model's memory is freed
            wbytes, kvbytes = step_bytes(shape, batch, context)
            floor_us = (wbytes + kvbytes) / bw * 1e6
            row = dict(model=name, batch=batch, context=context,
                       page_size=model.reference.page_size if page_size else None,
                       tawa_us=mega_us,
                       tawa_kernel_us=kernel_us, tawa_queued_us=queued_us,
                       tawa_separate_merge_us=merge_us, graph_us=graph_us, floor_us=floor_us,
                       weight_bytes=wbytes, kv_bytes=kvbytes, plan_s=plan_s,
                       plan=k.summary, compile_us=compile_us, hf_us=hf_us)
            rows.append(row)
            print(f'{name:5s} b{batch:<3d} ctx {context:5d}{"" if page_size else " contiguous"}: '
                  f'tawa {mega_us:8.1f} us '
                  f'(in-kernel {kernel_us:8.1f}, queued {queued_us:8.1f}) | graph '
                  f'{graph_us:8.1f} us | floor {floor_us:7.1f} us | tawa/floor '
                  f'{mega_us / floor_us:5.2f} (queued {queued_us / floor_us:5.2f}) | '
                  f'graph/tawa {graph_us / mega_us:5.2f} | plan {plan_s:.1f} s'
                  + (f' | separate merge {merge_us:8.1f} us ({merge_us / mega_us:5.3f}x)'
                     if merge_us else '')
                  + (f' | compile {compile_us:8.1f} us' if compile_us else ''), flush=True)
            del graphed
        del model, ref
        torch.cuda.empty_cache()
        # transformers eager after the mega model (its packed weights and two
        # KV caches) is freed: the model's own copy of the weights and cache
        # would not fit beside them at 8B, batch 16, context 4096.
        if with_hf:
            for row in rows:
                if row['model'] == name and row['context'] == context and row['hf_us'] is None:
                    row['hf_us'] = time_hf(cfg, weights, row['batch'], context, steps)
                    print(f'{name:5s} b{row["batch"]:<3d} ctx {context:5d}: hf '
                          f'{row["hf_us"]:9.1f} us (tawa {row["tawa_us"]:8.1f} us)', flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--models', default='0.6b,1.7b,8b')
    ap.add_argument('--batches', default='1,4,16')
    ap.add_argument('--contexts', default='512,4096')
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--json', default=None)
    ap.add_argument('--compile', action='store_true',
                    help='also time the reference under torch.compile (slow to compile)')
    ap.add_argument('--hf', action='store_true', help='also time transformers eager')
    ap.add_argument('--compare-merge', action='store_true',
                    help='also time the plan with a merge task after attention, alternating '
                         'launch by launch with the default plan')
    ap.add_argument('--page-size', default='64',
                    help="the mega-kernel's KV page size, or 'none' for a contiguous cache "
                         '(one page of the context per row)')
    ap.add_argument('--compile-child', default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compile_child:  # time_compiled's child: print the step's us
        name, batch, context, steps = args.compile_child.split(',')
        print(time_compiled_in_process(name, int(batch), int(context), int(steps)))
        return
    bw = copy_bandwidth()
    print(f'{torch.cuda.get_device_name()}: copy bandwidth {bw / 1e12:.2f} TB/s', flush=True)
    rows = []
    for name in args.models.split(','):
        bench_model(name, MODELS[name], [int(b) for b in args.batches.split(',')],
                    [int(c) for c in args.contexts.split(',')], args.steps, bw, rows,
                    args.compile, args.hf,
                    None if args.page_size == 'none' else int(args.page_size),
                    args.compare_merge)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(device=torch.cuda.get_device_name(), copy_bandwidth=bw,
                           date=time.strftime('%Y-%m-%d'), rows=rows), f, indent=1)


if __name__ == '__main__':
    main()
