#!/usr/bin/env python3
"""Where a decode mega-kernel step spends its time, from the runtime's trace.

    python3 bench/mega_decode_profile.py [--model 8b] [--batch 1] [--context 512]
        [--png FILE] [--csv FILE] [--steps N] [--no-trace]

Runs a few steps of the model shape (random weights) with the task trace on
and prints, per operator kind summed over the layers: the time from its
first task's start to its last task's end (span), the gap between the end of
the previous operator and its first start, the mean and largest task time,
and for linears the weight bandwidth of a task (bytes / task time). --png
draws the per-SM timeline of the last step (one row per worker, a colour per
operator kind); --csv writes every task.
"""
import argparse
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


import tawa.mega  # noqa: E402
from tawa.mega.reference import ModelShape, random_state_dict  # noqa: E402
from mega_decode_bench import MODELS  # noqa: E402
from mega_chain import kind_of  # noqa: E402


def linear_bytes(shape, kind, tiles):
    s = shape
    h, d, i = s.hidden_size, s.head_dim, s.intermediate_size
    total = {'qkv': h * (s.num_attention_heads + 2 * s.num_key_value_heads) * d,
             'o_proj': s.num_attention_heads * d * h, 'gate_up': 2 * h * i, 'down': i * h,
             'lm_head': s.vocab_size * h}.get(kind)
    return None if total is None else 2 * total / tiles


def summarize(trace, shape):
    by_op = collections.OrderedDict()
    for start, end, worker, op, *_ in trace:
        if op is not None:
            by_op.setdefault(op, []).append((start, end, worker))
    t0 = min(r.start_ns for r in trace)
    t1 = max(r.end_ns for r in trace)
    rows = collections.OrderedDict()
    prev_end = t0
    for op, tasks in by_op.items():
        first = min(s for s, _, _ in tasks)
        last = max(e for _, e, _ in tasks)
        durs = [e - s for s, e, _ in tasks]
        k = kind_of(op)
        r = rows.setdefault(k, dict(ops=0, tasks=0, span=0, gap=0, durs=[]))
        r['ops'] += 1
        r['tasks'] += len(tasks)
        r['span'] += last - first
        r['gap'] += max(0, first - prev_end)
        r['durs'] += durs
        prev_end = last
    print(f'step {(t1 - t0) / 1e3:.1f} us; per operator kind, summed over layers:')
    print(f'{"kind":14s} {"ops":>4s} {"tasks/op":>8s} {"span us":>9s} {"gap us":>8s} '
          f'{"mean task":>9s} {"max task":>9s} {"GB/s/task":>9s}')
    for k, r in rows.items():
        per_op = r['tasks'] // r['ops']
        mean = statistics.mean(r['durs']) / 1e3
        b = linear_bytes(shape, k, per_op)
        bw = f'{b / (mean * 1e3):9.1f}' if b else f'{"":9s}'
        print(f'{k:14s} {r["ops"]:4d} {per_op:8d} {r["span"] / 1e3:9.1f} {r["gap"] / 1e3:8.1f} '
              f'{mean:9.2f} {max(r["durs"]) / 1e3:9.2f} {bw}')
    return t0


def draw(trace, t0, path, title):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    kinds = sorted({kind_of(r.op) for r in trace if r.op})
    colors = {k: plt.cm.tab20(i % 20) for i, k in enumerate(kinds)}
    fig, ax = plt.subplots(figsize=(16, 8))
    for start, end, worker, op, *_ in trace:
        if op is None:
            continue
        ax.barh(worker, (end - start) / 1e3, left=(start - t0) / 1e3, height=0.8,
                color=colors[kind_of(op)], linewidth=0)
    ax.set_xlabel('us since the step started')
    ax.set_ylabel('worker CTA')
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[k]) for k in kinds]
    ax.legend(handles, kinds, loc='upper right', fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--model', default='8b', choices=sorted(MODELS))
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--context', type=int, default=512)
    ap.add_argument('--layers', type=int, default=None, help='fewer layers than the model')
    ap.add_argument('--png', default=None)
    ap.add_argument('--csv', default=None)
    ap.add_argument('--separate-merge', action='store_true',
                    help='the plan with a merge task after attention')
    ap.add_argument('--steps', type=int, default=4, help='steps launched (default 4)')
    ap.add_argument('--no-trace', action='store_true',
                    help='launch the steps without the trace and print only the plan '
                         '(for Nsight Compute: gpu/tools/mega_source_profile.sh)')
    args = ap.parse_args()
    cfg = dict(MODELS[args.model])
    if args.layers:
        cfg['num_hidden_layers'] = args.layers
    shape = ModelShape.from_config(cfg)
    weights = random_state_dict(cfg, seed=1)
    model = tawa.mega.compile(cfg, weights, max_batch=args.batch, max_seq=args.context,
                              trace=not args.no_trace, separate_merge=args.separate_merge)
    model.reserve(args.context)  # every row's pages, taken in turns
    k = model.step_kernel(args.batch)
    k['positions'].fill_(args.context - 1)
    for _ in range(args.steps):
        k.launch()
    k.check()
    print(f'{args.model} batch {args.batch} context {args.context}: {k.summary}')
    if args.no_trace:
        return
    trace = k.trace()
    t0 = summarize(trace, shape)
    if args.png:
        draw(trace, t0, args.png, f'{args.model} b{args.batch} ctx {args.context}')
    if args.csv:
        with open(args.csv, 'w') as f:
            f.write('task,start_ns,end_ns,worker,op,ready_ns,computed_ns,weight_wait_ns\n')
            for i, r in enumerate(trace):
                f.write(f'{i},{r.start_ns},{r.end_ns},{r.worker},{r.op or ""},{r.ready_ns},'
                        f'{r.computed_ns},{r.weight_wait_ns}\n')


if __name__ == '__main__':
    main()
