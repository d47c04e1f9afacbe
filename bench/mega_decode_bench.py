#!/usr/bin/env python3
"""Per-token decode latency of the mega-kernel against its baselines (issue 18).

    python3 bench/mega_decode_bench.py [--models 0.6b,1.7b,8b] [--batches 1,4,16]
        [--contexts 512,4096] [--steps 20] [--json FILE] [--compile] [--hf]
        [--baselines-only [--compile-jobs 3]]

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
Prints a line per case; --json writes every number.

With --baselines-only (and --compile and/or --hf) only those baselines are
timed: no mega-kernel (tawa.mega.compile is not called) and no CUDA-graph
reference; their fields are null in the JSON, which
bench/plot_mega_decode.py takes after a full run's to fill its baseline
cells. The torch.compile children run --compile-jobs at a time, since
compiling is mostly CPU work: each builds its model, compiles and warms up
its step, then times it holding a file lock exclusively, so no two timings
overlap; the others hold the lock shared while they build their weights
and warm up after compiling, so that GPU work waits too (only the one run
that ends a child's compiling call may overlap a timing). A child starts
only while the running ones' estimated memory (1.5 x weights and KV cache,
plus 1 GiB, each) stays within 0.8 of the GPU memory free at the start (the
first always may), the biggest cases first. Transformers eager follows, in
this process, a case at a time. The JSON is rewritten as each number comes,
so a run cut short keeps what it measured; the exit status is 1 if any
case failed (a failed child's stderr tail is printed).
"""
import argparse
import contextlib
import fcntl
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

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


# Calls of the compiled step before it is timed: the first compiles and
# runs it, the next record inductor's CUDA graph and replay it.
COMPILE_WARMUP = 5


@contextlib.contextmanager
def file_lock(path, mode):
    """flock(mode) on `path` for the block; nothing when path is None."""
    if path is None:
        yield
        return
    with open(path, 'a') as f:
        fcntl.flock(f, mode)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def time_compiled_in_process(name, batch, context, steps, lock=None):
    """The reference decode under torch.compile (reduce-overhead), in this
    (fresh) process: with the mega-kernel's step and the reference's own
    captured graph in the same process, inductor's graphs ran the 8B step in
    20.8 ms against 8.4 ms alone, so --compile times it in a child process.
    With a `lock` file (--baselines-only's concurrent children) the timing
    holds it exclusively and the GPU work before it (not the compiling call)
    holds it shared. Returns the step's us and the phases' seconds."""
    t0 = time.perf_counter()
    with file_lock(lock, fcntl.LOCK_SH):
        cfg = dict(MODELS[name])
        ref = ReferenceDecoder(cfg, random_state_dict(cfg, seed=1), batch, context)
        tokens = torch.randint(0, cfg['vocab_size'], (batch,), dtype=torch.int32, device='cuda')
        positions = torch.full((batch,), context - 1, dtype=torch.int32, device='cuda')
        torch.cuda.synchronize()
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
    def step():
        return compiled(tokens, positions, advance=False)

    t1 = time.perf_counter()
    step()  # compiles (mostly CPU work), then runs once
    with file_lock(lock, fcntl.LOCK_SH):
        for _ in range(COMPILE_WARMUP - 1):
            step()
        torch.cuda.synchronize()
    t2 = time.perf_counter()
    with file_lock(lock, fcntl.LOCK_EX):
        t3 = time.perf_counter()
        us = time_steps(step, steps)
    return dict(us=us, setup_s=t1 - t0, compile_s=t2 - t1, wait_s=t3 - t2,
                time_s=time.perf_counter() - t3)


def time_compiled(name, batch, context, steps):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--compile-child',
                          f'{name},{batch},{context},{steps}'],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])['us']


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


# --baselines-only: torch.compile children, several compiling at once.
GIB = 1 << 30
# A child's GPU memory, estimated: this times its weights and KV cache (for
# inductor's buffers and the allocator's slack) plus its CUDA context's.
CHILD_MEMORY_FACTOR = 1.5
CHILD_MEMORY_EXTRA = GIB
# Children start while the estimates of the running ones stay within this
# fraction of the GPU memory free at the start.
CHILD_MEMORY_BUDGET = 0.8


def resident_bytes(shape, batch, context):
    """What the reference decoder holds: every weight (an untied lm_head too)
    and its contiguous KV cache for `batch` rows of `context` positions."""
    weights = 2 * sum(math.prod(s) for s in shape.weight_shapes().values())
    return weights + step_bytes(shape, batch, context)[1]


def child_bytes(shape, batch, context):
    return CHILD_MEMORY_FACTOR * resident_bytes(shape, batch, context) + CHILD_MEMORY_EXTRA


def run_children(cases, jobs, budget, command, started, finished, poll_s=0.2):
    """Runs command(case) -> (argv, env) for each (case, bytes) of `cases`,
    at most `jobs` at a time. A case starts while the running ones' bytes
    and its own stay within `budget` (or when none runs): the first such in
    `cases`' order, so the queue's head goes first whenever memory frees and
    later cases only fill what is left. Reports started(case, running bytes)
    and finished(case, returncode, stdout, stderr, seconds)."""
    pending = list(cases)
    running = {}  # Popen -> (case, bytes, start time, stdout path, stderr path)
    with tempfile.TemporaryDirectory(prefix='mega-bench-children-') as tmp:
        try:
            while pending or running:
                for item in list(pending):
                    case, nbytes = item
                    used = sum(r[1] for r in running.values())
                    if len(running) >= jobs:
                        break
                    if running and used + nbytes > budget:
                        continue
                    pending.remove(item)
                    argv, env = command(case)
                    out_path = os.path.join(tmp, f'{len(cases) - len(pending)}.out')
                    err_path = out_path[:-3] + 'err'
                    # Files, not pipes: a child's logging must not fill a pipe
                    # and stall it while this loop waits for others.
                    with open(out_path, 'w') as out, open(err_path, 'w') as err:
                        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err,
                                                stdin=subprocess.DEVNULL)
                    running[proc] = (case, nbytes, time.perf_counter(), out_path, err_path)
                    started(case, used + nbytes)
                time.sleep(poll_s)
                for proc in [p for p in running if p.poll() is not None]:
                    case, _, t0, out_path, err_path = running.pop(proc)
                    with open(out_path) as out, open(err_path) as err:
                        finished(case, proc.returncode, out.read(), err.read(),
                                 time.perf_counter() - t0)
        finally:
            for proc in running:  # only when interrupted
                proc.kill()
                proc.wait()


def case_label(name, batch, context):
    return f'{name:5s} b{batch:<3d} ctx {context:5d}'


def tail(text, lines=25):
    return '\n'.join('    ' + line for line in text.rstrip().splitlines()[-lines:])


def write_json(path, bw, rows):
    """Rewrites `path` whole (through a temporary file: never half written)."""
    with open(path + '.tmp', 'w') as f:
        json.dump(dict(device=torch.cuda.get_device_name(), copy_bandwidth=bw,
                       date=time.strftime('%Y-%m-%d'), rows=rows), f, indent=1)
    os.replace(path + '.tmp', path)


def bench_baselines(models, batches, contexts, steps, bw, json_path, with_compile, with_hf,
                    jobs):
    """--baselines-only: torch.compile (children, `jobs` compiling at once) and
    transformers eager (here, after them) at every case; returns the number
    of cases that failed."""
    rows = {}
    for name in models:
        shape = ModelShape.from_config(MODELS[name])
        for context in contexts:
            for batch in batches:
                wbytes, kvbytes = step_bytes(shape, batch, context)
                rows[name, batch, context] = dict(
                    model=name, batch=batch, context=context, page_size=None, tawa_us=None,
                    tawa_kernel_us=None, tawa_queued_us=None, tawa_separate_merge_us=None,
                    graph_us=None, floor_us=(wbytes + kvbytes) / bw * 1e6, weight_bytes=wbytes,
                    kv_bytes=kvbytes, plan_s=None, plan=None, compile_us=None, hf_us=None)

    def save():
        if json_path:
            write_json(json_path, bw, list(rows.values()))

    def report(key, column, us):
        floor = rows[key]['floor_us']
        return (f'{case_label(*key)}: {column} {us:9.1f} us | floor {floor:7.1f} us | '
                f'{column}/floor {us / floor:5.2f}')

    save()
    failed = 0
    if with_compile:
        free = torch.cuda.mem_get_info()[0]
        budget = CHILD_MEMORY_BUDGET * free
        # Biggest first: they take longest, and a waiting big case is not
        # passed by smaller ones forever (see run_children).
        cases = sorted(((key, child_bytes(ModelShape.from_config(MODELS[key[0]]), *key[1:]))
                        for key in rows), key=lambda c: -c[1])
        print(f'torch.compile: {len(cases)} children, {jobs} at a time within '
              f'{budget / GIB:.1f} GiB ({CHILD_MEMORY_BUDGET} of {free / GIB:.1f} GiB free)',
              flush=True)
        lock = tempfile.NamedTemporaryFile(prefix='mega-bench-timing-', suffix='.lock')
        env = dict(os.environ)
        # Inductor's compile workers default to one per core in each child:
        # share the cores, so that the one timing keeps a core for its launches.
        cores = len(os.sched_getaffinity(0))
        env.setdefault('TORCHINDUCTOR_COMPILE_THREADS', str(max(1, (cores - 1) // jobs)))

        def command(key):
            name, batch, context = key
            return [sys.executable, os.path.abspath(__file__), '--compile-child',
                    f'{name},{batch},{context},{steps}', '--compile-lock', lock.name], env

        def started(key, used):
            print(f'{case_label(*key)}: torch.compile child started (running ~{used / GIB:.1f} '
                  f'GiB)', flush=True)

        def finished(key, rc, out, err, seconds):
            nonlocal failed
            try:
                result = json.loads(out.strip().splitlines()[-1])
                us = float(result['us'])
            except (ValueError, IndexError, KeyError, TypeError):
                failed += 1
                print(f'{case_label(*key)}: torch.compile child FAILED (exit {rc}, {seconds:.0f} '
                      f's); its stderr ends:\n{tail(err)}', flush=True)
                return
            rows[key]['compile_us'] = us
            save()
            # A time printed counts even if the child then died in its teardown.
            print(report(key, 'compile', us)
                  + f' | child {seconds:.0f} s (set-up {result["setup_s"]:.0f}, compile and '
                  f'warm-up {result["compile_s"]:.0f}, lock wait {result["wait_s"]:.1f}, timing '
                  f'{result["time_s"]:.1f})' + (f' | exit {rc}' if rc else ''), flush=True)

        with lock:
            run_children(cases, jobs, budget, command, started, finished)
    if with_hf:
        for name in models:
            cfg = MODELS[name]
            weights = random_state_dict(cfg, seed=1)
            for key in [k for k in rows if k[0] == name]:
                try:
                    us = time_hf(cfg, weights, key[1], key[2], steps)
                except Exception as e:  # noqa: BLE001 (OOM or transformers: keep the others)
                    failed += 1
                    print(f'{case_label(*key)}: hf FAILED: '
                          f'{traceback.format_exception_only(e)[-1].strip()}', flush=True)
                    continue
                finally:
                    torch.cuda.empty_cache()
                rows[key]['hf_us'] = us
                save()
                print(report(key, 'hf', us), flush=True)
            del weights
            torch.cuda.empty_cache()

    def cell(v):
        return f'{v:9.1f} us' if v is not None else f'{"-":>9s}   '

    print('summary:')
    for key, row in rows.items():
        print(f'{case_label(*key)}: '
              + (f'compile {cell(row["compile_us"])} | ' if with_compile else '')
              + (f'hf {cell(row["hf_us"])} | ' if with_hf else '')
              + f'floor {row["floor_us"]:7.1f} us', flush=True)
    if failed:
        print(f'{failed} case(s) failed', flush=True)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--models', default='0.6b,1.7b,8b')
    ap.add_argument('--batches', default='1,4,16')
    ap.add_argument('--contexts', default='512,4096')
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--json', default=None,
                    help='write every number here (with --baselines-only, as each one comes)')
    ap.add_argument('--compile', action='store_true',
                    help='also time the reference under torch.compile, in a child process per '
                         'case (slow to compile)')
    ap.add_argument('--hf', action='store_true', help='also time transformers eager')
    ap.add_argument('--baselines-only', action='store_true',
                    help='time only --compile and/or --hf (one of them needed): no mega-kernel, '
                         'no CUDA-graph reference; the torch.compile children compile '
                         'concurrently and time one at a time, transformers follows')
    ap.add_argument('--compile-jobs', type=int, default=3,
                    help='with --baselines-only: torch.compile children compiling at once, '
                         'fewer where GPU memory is short (default 3)')
    ap.add_argument('--compare-merge', action='store_true',
                    help='also time the plan with a merge task after attention, alternating '
                         'launch by launch with the default plan')
    ap.add_argument('--page-size', default='64',
                    help="the mega-kernel's KV page size, or 'none' for a contiguous cache "
                         '(one page of the context per row)')
    ap.add_argument('--compile-child', default=None, help=argparse.SUPPRESS)
    ap.add_argument('--compile-lock', default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compile_child:  # time_compiled's child: print the step's us and phases
        name, batch, context, steps = args.compile_child.split(',')
        print(json.dumps(time_compiled_in_process(name, int(batch), int(context), int(steps),
                                                  args.compile_lock)))
        return
    if args.baselines_only and not (args.compile or args.hf):
        ap.error('--baselines-only times --compile and/or --hf: give at least one')
    if args.baselines_only and args.compare_merge:
        ap.error('--compare-merge times the mega-kernel, which --baselines-only skips')
    if args.compile_jobs < 1:
        ap.error(f'--compile-jobs {args.compile_jobs}: at least 1')
    models = args.models.split(',')
    for name in models:
        if name not in MODELS:
            ap.error(f'--models: {name!r} is not one of {", ".join(MODELS)}')
    batches = [int(b) for b in args.batches.split(',')]
    contexts = [int(c) for c in args.contexts.split(',')]
    bw = copy_bandwidth()
    print(f'{torch.cuda.get_device_name()}: copy bandwidth {bw / 1e12:.2f} TB/s', flush=True)
    if args.baselines_only:
        # The copy's 4 GiB back to the driver, for the children.
        torch.cuda.empty_cache()
        # On `timeout`'s SIGTERM, unwind: run_children kills its children.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        sys.exit(1 if bench_baselines(models, batches, contexts, args.steps, bw, args.json,
                                      args.compile, args.hf, args.compile_jobs) else 0)
    rows = []
    for name in models:
        bench_model(name, MODELS[name], batches, contexts, args.steps, bw, rows,
                    args.compile, args.hf,
                    None if args.page_size == 'none' else int(args.page_size),
                    args.compare_merge)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(device=torch.cuda.get_device_name(), copy_bandwidth=bw,
                           date=time.strftime('%Y-%m-%d'), rows=rows), f, indent=1)


if __name__ == '__main__':
    main()
