#!/usr/bin/env python3
"""Which tasks end an operator of the decode mega-kernel, and why.

    TAWA_MEGA_NVCC_FLAGS=-DTAWA_MEGA_TRACE_PHASES=1 \\
        python3 bench/mega_stragglers.py [--model 0.6b] [--batch 1] [--context 512]
        [--steps 8] [--csv-dir DIR]

At batch 1 every operator waits for the whole output of the one before, so
each operator ends with its slowest task. This runs `steps` traced steps and,
for every operator of every step (operators in chain order, by first task
id), measures each task against the operator's median task:

- per operator kind, the medians over layers and steps of the spread (last
  end minus median end) and of how much later than the median task the last
  task had its inputs in, how much longer it computed and how much longer its
  epilogue took (the phases need a library built with
  -DTAWA_MEGA_TRACE_PHASES=1; without them only the ends are compared);
- per worker CTA (and the SM it ran on, tawa_mega_worker_sms), how late its
  tasks end on average, split over even and odd steps: a straggler that is
  the same worker in every step shows as a large correlation between the
  two halves; and how often a worker ends an operator last.

With --csv-dir, each step's trace is written as stepN.csv (the columns of
bench/mega_decode_profile.py --csv plus sm).
"""
import argparse
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


from mega_chain import kind_of  # noqa: E402  (no torch there)


def operators(trace):
    """[(op, [(task, record)])] in chain order (by first task id)."""
    ops = collections.OrderedDict()
    for i, r in enumerate(trace):
        if r.op is not None:
            ops.setdefault(r.op, []).append((i, r))
    return sorted(ops.items(), key=lambda kv: kv[1][0][0])


def correlation(xs, ys):
    if len(xs) < 3:
        return float('nan')
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float('nan')


def analyse(steps, sms):
    """steps: [trace] (records with start_ns, end_ns, worker, op, ready_ns,
    computed_ns, weight_wait_ns); sms: [[sm by CTA]] of the same steps.
    Prints the report; returns its numbers: {'spread': {kind: median µs},
    'blame': {kind: {phase: median µs}}, 'correlation': r, 'ranked':
    [workers, latest first], 'last': Counter((kind, worker))}."""
    spread = collections.defaultdict(list)   # kind -> [last end - median end]
    blame = collections.defaultdict(lambda: collections.defaultdict(list))
    late = collections.defaultdict(lambda: ([], []))  # worker -> (even, odd) lateness
    last_count = collections.Counter()
    worker_sm = collections.defaultdict(set)
    phases = False
    for si, trace in enumerate(steps):
        for w, sm in enumerate(sms[si]):
            worker_sm[w].add(sm)
        prev_last = None
        for op, tasks in operators(trace):
            kind = kind_of(op)
            ends = [r.end_ns for _, r in tasks]
            med_end = statistics.median(ends)
            last_task = max(tasks, key=lambda t: t[1].end_ns)[1]
            if kind not in ('embed', 'argmax', 'lm_head') and len(tasks) > 1:
                spread[kind].append((last_task.end_ns - med_end) / 1e3)
                for _, r in tasks:
                    late[r.worker][si % 2].append((r.end_ns - med_end) / 1e3)
                last_count[(kind, last_task.worker)] += 1
                have = all(r.ready_ns and r.computed_ns for _, r in tasks)
                if have:
                    phases = True
                    med = lambda f: statistics.median(f(r) for _, r in tasks)  # noqa: E731
                    b = blame[kind]
                    b['start'].append((last_task.start_ns - med(lambda r: r.start_ns)) / 1e3)
                    b['ready'].append((last_task.ready_ns - med(lambda r: r.ready_ns)) / 1e3)
                    b['compute'].append(((last_task.computed_ns - last_task.ready_ns) -
                                         med(lambda r: r.computed_ns - r.ready_ns)) / 1e3)
                    b['epilogue'].append(((last_task.end_ns - last_task.computed_ns) -
                                          med(lambda r: r.end_ns - r.computed_ns)) / 1e3)
                    b['weights'].append((last_task.weight_wait_ns -
                                         med(lambda r: r.weight_wait_ns)) / 1e3)
                    if prev_last is not None:
                        b['ready after prev'].append(
                            (med(lambda r: r.ready_ns) - prev_last) / 1e3)
            prev_last = max(ends)
    print('per operator kind, medians over layers and steps (µs):')
    cols = ['start', 'ready', 'compute', 'epilogue', 'weights']
    head = f'{"kind":10s} {"ops":>5s} {"spread":>7s}'
    if phases:
        head += ' | last task vs median: ' + ' '.join(f'{c:>8s}' for c in cols) + \
            ' | median ready after prev'
    print(head)
    for kind, xs in spread.items():
        line = f'{kind:10s} {len(xs):5d} {statistics.median(xs):7.2f}'
        if phases and blame[kind]:
            b = blame[kind]
            line += ' | ' + ' ' * 22 + ' '.join(f'{statistics.median(b[c]):8.2f}' for c in cols)
            if b['ready after prev']:
                line += f' | {statistics.median(b["ready after prev"]):.2f}'
        print(line)
    workers = sorted(w for w in late if late[w][0] and late[w][1])
    even = [statistics.mean(late[w][0]) for w in workers]
    odd = [statistics.mean(late[w][1]) for w in workers]
    print(f'\nworkers: {len(workers)}; correlation of a worker\'s mean lateness between even '
          f'and odd steps: {correlation(even, odd):.2f} (near 1: the same workers straggle)')
    ranked = sorted(workers, key=lambda w: -(statistics.mean(late[w][0] + late[w][1])))
    print('latest workers (mean end after the median task of their operators, µs; SMs):')
    for w in ranked[:12]:
        m = statistics.mean(late[w][0] + late[w][1])
        print(f'  worker {w:3d} sm {",".join(map(str, sorted(worker_sm[w]))):>7s}  {m:6.2f}  '
              f'(even {statistics.mean(late[w][0]):.2f}, odd {statistics.mean(late[w][1]):.2f})')
    print('earliest workers:')
    for w in ranked[-4:]:
        m = statistics.mean(late[w][0] + late[w][1])
        print(f'  worker {w:3d} sm {",".join(map(str, sorted(worker_sm[w]))):>7s}  {m:6.2f}')
    by_kind = collections.defaultdict(list)
    for (kind, w), n in last_count.items():
        by_kind[kind].append((n, w))
    print('workers that end an operator last most often (count of its ops):')
    for kind, xs in by_kind.items():
        xs.sort(reverse=True)
        total = sum(n for n, _ in xs)
        print(f'  {kind:10s} {total:4d} ops: ' +
              ', '.join(f'w{w} (sm {",".join(map(str, sorted(worker_sm[w])))}) {n}'
                        for n, w in xs[:5]))
    return {'spread': {k: statistics.median(x) for k, x in spread.items()},
            'blame': {k: {c: statistics.median(v) for c, v in b.items()}
                      for k, b in blame.items()},
            'correlation': correlation(even, odd), 'ranked': ranked, 'last': last_count}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--model', default='0.6b', help='0.6b, 1.7b or 8b (bench/mega_decode_bench.py)')
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--context', type=int, default=512)
    ap.add_argument('--steps', type=int, default=8, help='traced steps (default 8)')
    ap.add_argument('--csv-dir', default=None, help='write each step\'s trace there')
    args = ap.parse_args()
    import tawa.mega
    from tawa.mega.reference import random_state_dict
    from mega_decode_bench import MODELS
    if args.model not in MODELS:
        ap.error(f'--model {args.model}: one of {", ".join(sorted(MODELS))}')
    cfg = dict(MODELS[args.model])
    weights = random_state_dict(cfg, seed=1)
    model = tawa.mega.compile(cfg, weights, max_batch=args.batch, max_seq=args.context,
                              trace=True)
    model.reserve(args.context)
    k = model.step_kernel(args.batch)
    k['positions'].fill_(args.context - 1)
    for _ in range(2):  # warm-up
        k.launch()
    k.check()
    steps, sms = [], []
    for si in range(args.steps):
        k.launch()
        k.check()
        steps.append(k.trace())
        sms.append(k.worker_sms())
        if args.csv_dir:
            os.makedirs(args.csv_dir, exist_ok=True)
            with open(os.path.join(args.csv_dir, f'step{si}.csv'), 'w') as f:
                f.write('task,start_ns,end_ns,worker,op,ready_ns,computed_ns,weight_wait_ns,sm\n')
                for i, r in enumerate(steps[-1]):
                    f.write(f'{i},{r.start_ns},{r.end_ns},{r.worker},{r.op or ""},{r.ready_ns},'
                            f'{r.computed_ns},{r.weight_wait_ns},{sms[-1][r.worker]}\n')
    print(f'{args.model} batch {args.batch} context {args.context}: {k.summary}; '
          f'{args.steps} traced steps')
    analyse(steps, sms)


if __name__ == '__main__':
    main()
