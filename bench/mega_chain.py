#!/usr/bin/env python3
"""The attention chain of each decode layer, from a mega-kernel task trace.

    python3 bench/mega_decode_profile.py --model 8b --batch 1 --csv trace.csv
    python3 bench/mega_chain.py trace.csv

Reads the CSV that bench/mega_decode_profile.py writes (task, start_ns,
end_ns, worker, op) and times every layer's chain from the end of its last
QKV tile (t0): when the attention tasks start and end, grouped by sequence
chunk (tile % chunks: an operator's tasks have consecutive ids in tile
order; chunks = attention tasks / merge tasks), when the merges start and
end, and when the O projection's first task starts and its last ends. Prints
the means over the layers (and the largest value) in microseconds: what a
hop, a straggling chunk or the merge costs on the chain between the QKV
and the O projection (docs/MEGAKERNEL.md, run 162). With --by-previous it
also groups the attention tasks by when their worker's previous task ended
(its operator kind and whole microseconds from t0): a worker that ends its
QKV tile late still runs its attention prefetch and its wait after t0
(run 233). With --linears it groups the linear tasks' durations by their
kind, the kind of their worker's previous task and how long the worker was
idle before them (whole microseconds): a tile whose weights streamed in
while its worker idled for microseconds and one that started right after its
worker's previous task take the same time when the tiles do not wait for
their weights (run 236: Qwen3-0.6B at batch 1). With --hops it times every
operator's hop: when each of its tasks started after the operator before it
(by first task id: the decode chain at batch 1) ended, grouped by whether
the worker's previous task belonged to that operator (chained, with how long
before that operator's end it ended, whole µs) or not (other): a chained
worker's wait is polled while its prefetch of the task's weights streams
(run 243). With --ready (traces that have the ready_ns column, from a library
built with -DTAWA_MEGA_TRACE_PHASES=1: linear and attention tasks stamp when
their inputs were in) it splits each operator's
time after the previous operator's last end into the wait for its inputs
(ready - that end) and the task's work after them (end - ready): medians
over the layers of each layer's median and largest task; with the
computed_ns and weight_wait_ns columns, the work into computing (of which
waiting for weights) and the epilogue (a linear's stores, attention's
counter and merge).
"""
import argparse
import collections
import csv
import statistics
import sys


def load(path):
    """The trace's tasks, (start_ns, end_ns, worker, op, id) each, in file order."""
    with open(path) as f:
        return [(int(row['start_ns']), int(row['end_ns']), int(row['worker']), row['op'],
                 int(row['task'])) for row in csv.DictReader(f)]


def by_op(tasks):
    """{op: [(id, start_ns, end_ns)] in id order}."""
    ops = collections.defaultdict(list)
    for s, e, _, op, task in tasks:
        ops[op].append((task, s, e))
    for ts in ops.values():
        ts.sort()
    return ops


def kind_of(op):
    """An operator's kind: 'qkv' of 'l3.qkv'; operators outside the layers
    ('embed', 'lm_head') are their own kind."""
    layer, _, kind = op.partition('.')
    return kind or layer


def previous_tasks(tasks):
    """[(task, the task its worker ran before it, or None)] for every task."""
    by_worker = collections.defaultdict(list)
    for t in tasks:
        by_worker[t[2]].append(t)
    out = []
    for ts in by_worker.values():
        ts.sort()
        out += [(t, ts[i - 1] if i else None) for i, t in enumerate(ts)]
    return out


def chain(ops, chunks=None):
    """Rows (name, [(start, end, duration) per layer]) in µs from each layer's t0.
    `chunks`: attention tasks per (row, KV head); by default the attention
    tasks per merge task, and one row for all attention tasks in a plan
    without merge tasks (the last chunk merges: the trace does not say how
    many chunks there are)."""
    layers = sorted((op.split('.', 1)[0] for op in ops if op.endswith('.attention')),
                    key=lambda name: int(name[1:]))
    if not layers:
        raise SystemExit('mega_chain: the trace has no attention operators (lN.attention)')
    rows = collections.OrderedDict()
    for layer in layers:
        qkv, att = ops.get(layer + '.qkv'), ops[layer + '.attention']
        merge, o = ops.get(layer + '.attn_merge', []), ops.get(layer + '.o_proj')
        if not qkv or not o:
            raise SystemExit(f'mega_chain: layer {layer} lacks its qkv or o_proj operator')
        n = chunks or (len(att) // len(merge) if merge else None)
        t0 = max(e for _, _, e in qkv)

        def us(ns):
            return (ns - t0) / 1e3

        for i, (_, s, e) in enumerate(att):
            name = f'attention chunk {i % n}' if n else 'attention'
            rows.setdefault(name, []).append((us(s), us(e), (e - s) / 1e3))
        for _, s, e in merge:
            rows.setdefault('merge', []).append((us(s), us(e), (e - s) / 1e3))
        rows.setdefault('o_proj first start', []).append((us(min(s for _, s, _ in o)),) * 2 + (0.0,))
        rows.setdefault('o_proj last end', []).append((us(max(e for _, _, e in o)),) * 2 + (0.0,))
    return len(layers), rows


def by_previous(tasks):
    """{(previous task's kind, floor(its end - t0 in µs)): [attention start - t0
    in µs]}, over every layer; kind 'none' (bucket 0) for a worker's first task."""
    t0 = {}
    for s, e, _, op, _ in tasks:
        layer, _, kind = op.partition('.')
        if kind == 'qkv':
            t0[layer] = max(t0.get(layer, e), e)
    groups = collections.defaultdict(list)
    for (s, e, w, op, _), prev in previous_tasks(tasks):
        layer, _, kind = op.partition('.')
        if kind != 'attention' or layer not in t0:
            continue
        key = (kind_of(prev[3]), (prev[1] - t0[layer]) // 1000) if prev else ('none', 0)
        groups[key].append((s - t0[layer]) / 1e3)
    return groups


LINEAR_KINDS = ('qkv', 'o_proj', 'gate_up', 'down', 'lm_head')


def linears(tasks):
    """{(kind, previous task's kind, floor(idle µs before it)): [duration µs]}
    for the linear tasks; previous kind 'none' (idle 0) for a worker's first."""
    groups = collections.defaultdict(list)
    for (s, e, _, op, _), prev in previous_tasks(tasks):
        kind = kind_of(op)
        if kind not in LINEAR_KINDS:
            continue
        key = (kind, kind_of(prev[3]), (s - prev[1]) // 1000) if prev else (kind, 'none', 0)
        groups[key].append((e - s) / 1e3)
    return groups


def hops(tasks):
    """{(kind, 'chained' or 'other', floor(slack µs) or -1): [start - the
    previous operator's last end, µs]} for every operator but the first, the
    operators ordered by first task id; chained: the worker's previous task
    belongs to the previous operator, slack the µs from its end to that
    operator's last end."""
    first, last_end = {}, {}
    for s, e, _, op, task in tasks:
        first[op] = min(first.get(op, task), task)
        last_end[op] = max(last_end.get(op, e), e)
    order = sorted(first, key=first.get)
    producer = {op: order[i - 1] for i, op in enumerate(order) if i}
    groups = collections.defaultdict(list)
    for (s, e, _, op, _), prev in previous_tasks(tasks):
        if op not in producer:
            continue
        fire = last_end[producer[op]]
        if prev and prev[3] == producer[op]:
            key = (kind_of(op), 'chained', (fire - prev[1]) // 1000)
        else:
            key = (kind_of(op), 'other', -1)
        groups[key].append((s - fire) / 1e3)
    return groups


def ready_split(path):
    """{kind: {'start': [...], 'ready': [...], 'ready_max': [...], 'work': [...], 'work_max':
    [...], 'end': [...], 'last': [...], and with computed_ns 'compute',
    'epilogue', 'weight_wait': [...]}}, one value a layer (µs after the
    previous operator's last end: the median task's start (after its
    worker's wait for the event), ready and end, the
    latest ready and the last end; the median and largest end - ready; the
    median computed - ready, end - computed and weight wait), for operators
    whose tasks all stamped ready_ns; the operators ordered by first task
    id."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rows or 'ready_ns' not in rows[0]:
        raise SystemExit(f'{path}: no ready_ns column (a trace from before the ready stamp)')
    phases = 'computed_ns' in rows[0]
    ops = collections.defaultdict(list)
    first = {}
    for r in rows:
        op, task = r['op'], int(r['task'])
        if not op:
            continue
        ops[op].append((int(r['start_ns']), int(r['end_ns']), int(r['ready_ns']),
                        int(r['computed_ns']) if phases else 0,
                        int(r['weight_wait_ns']) if phases else 0))
        first[op] = min(first.get(op, task), task)
    if not any(t[2] for ts in ops.values() for t in ts):
        raise SystemExit(f'{path}: no task stamped ready_ns (a library built without '
                         '-DTAWA_MEGA_TRACE_PHASES=1)')
    order = sorted(first, key=first.get)
    out = collections.defaultdict(lambda: collections.defaultdict(list))
    for prev, op in zip(order, order[1:]):
        ts = ops[op]
        if any(t[2] == 0 for t in ts):
            continue
        fire = max(t[1] for t in ops[prev])
        us = lambda ns: ns / 1e3  # noqa: E731
        v = out[kind_of(op)]
        v['start'].append(us(statistics.median(t[0] - fire for t in ts)))
        v['ready'].append(us(statistics.median(t[2] - fire for t in ts)))
        v['ready_max'].append(us(max(t[2] for t in ts) - fire))
        v['work'].append(us(statistics.median(t[1] - t[2] for t in ts)))
        v['work_max'].append(us(max(t[1] - t[2] for t in ts)))
        v['end'].append(us(statistics.median(t[1] - fire for t in ts)))
        v['last'].append(us(max(t[1] for t in ts) - fire))
        if phases and all(t[3] for t in ts):
            v['compute'].append(us(statistics.median(t[3] - t[2] for t in ts)))
            v['weight_wait'].append(us(statistics.median(t[4] for t in ts)))
            v['epilogue'].append(us(statistics.median(t[1] - t[3] for t in ts)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('csv', help='the trace CSV of bench/mega_decode_profile.py --csv')
    ap.add_argument('--chunks', type=int, default=None,
                    help='attention tasks per (row, KV head) (default: per merge task, or one '
                         'row for all attention tasks when the plan has no merge task)')
    ap.add_argument('--by-previous', action='store_true',
                    help="also group the attention tasks' starts by when their worker's "
                         'previous task ended')
    ap.add_argument('--linears', action='store_true',
                    help="also group the linear tasks' durations by the kind of their worker's "
                         'previous task and how long the worker idled before them')
    ap.add_argument('--hops', action='store_true',
                    help="also time the tasks' starts after the previous operator's end, by "
                         "whether their worker ran that operator's task before")
    ap.add_argument('--ready', action='store_true',
                    help="also split each operator's time after the previous one's last end "
                         'into the wait for its inputs and its work after them')
    args = ap.parse_args()
    if args.chunks is not None and args.chunks < 1:
        ap.error('--chunks must be at least 1')
    tasks = load(args.csv)
    n, rows = chain(by_op(tasks), args.chunks)
    print(f'{n} layers; µs from the end of the layer\'s last QKV tile, mean (max)')
    print(f'{"":20s} {"start":>15s} {"end":>15s} {"task":>15s}')
    for name, values in rows.items():
        cols = []
        for k in range(3):
            xs = [v[k] for v in values]
            cols.append(f'{statistics.mean(xs):7.2f} ({max(xs):6.2f})')
        print(f'{name:20s} ' + ' '.join(cols))
    if args.by_previous:
        print('attention start by when the worker\'s previous task ended (µs from t0, '
              'whole µs): tasks, start mean (min)')
        for (kind, at), starts in sorted(by_previous(tasks).items()):
            print(f'  {kind:14s} {at:5d} {len(starts):6d} {statistics.mean(starts):7.2f} '
                  f'({min(starts):6.2f})')

    if args.linears:
        print('linear tasks by the previous task of their worker and its idle time before '
              'them (whole µs): tasks, duration mean (min)')
        for (kind, prev, idle), durations in sorted(linears(tasks).items()):
            print(f'  {kind:8s} after {prev:12s} idle {idle:3d} {len(durations):6d} '
                  f'{statistics.mean(durations):7.2f} ({min(durations):6.2f})')

    if args.hops:
        print("hops: tasks' starts after the previous operator's last end (µs), chained "
              "by slack (whole µs) or other: tasks, mean (min, max)")
        for (kind, how, slack), starts in sorted(hops(tasks).items()):
            at = f'slack {slack:3d}' if how == 'chained' else ' ' * 9
            print(f'  {kind:12s} {how:7s} {at} {len(starts):6d} {statistics.mean(starts):7.2f} '
                  f'({min(starts):6.2f}, {max(starts):6.2f})')

    if args.ready:
        print("ready: µs after the previous operator's last end, median over the layers of "
              "the layer's median task (start: after its wait for the event; and of its latest "
              "ready / last end / largest work); "
              "work = compute (of it waiting for weights) + epilogue")
        print(f'  {"":12s} {"start":>7s} {"ready":>7s} {"(max)":>7s} {"work":>7s} {"(max)":>7s} '
              f'{"compute":>7s} {"wwait":>7s} {"epilog":>7s} {"end":>7s} {"(last)":>7s}')
        for kind, v in ready_split(args.csv).items():
            med = {k: statistics.median(xs) for k, xs in v.items()}
            part = ''.join(f' {med[k]:7.2f}' if k in med else f' {"-":>7s}'
                           for k in ('compute', 'weight_wait', 'epilogue'))
            print(f'  {kind:12s} {med["start"]:7.2f} {med["ready"]:7.2f} {med["ready_max"]:7.2f} '
                  f'{med["work"]:7.2f} {med["work_max"]:7.2f}{part} {med["end"]:7.2f} '
                  f'{med["last"]:7.2f}')

if __name__ == '__main__':
    sys.exit(main())
