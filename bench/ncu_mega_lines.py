#!/usr/bin/env python3
"""Where the decode mega-kernel's warps spend a step, by source: joins Nsight
Compute's per-instruction page of the kernel (`ncu -i REPORT --page source
--csv --print-source sass`) with the line table of the same cubin
(`nvdisasm -gi -c`, the library built with -lineinfo), as
gpu/tools/mega_source_profile.sh writes them, and prints

- the warp stall samples and executed warp instructions by task call site
  (the outermost inlined frame in include/tawa/device/mega/tasks/, else the
  runtime file), with each group's main stall reasons;
- the same by innermost source line (the --top largest);
- the stall reasons of all samples and by innermost file;
- the code each task file has, how much of it ran in the profiled step
  (executed at least once) and the 128-byte lines that touched: what the
  step asks of the instruction caches (docs/PERFORMANCE.md, run 265).

Samples are of every warp, idle ones too (polling, at barriers): shares of
the step's warp time, not of its critical path.

    python3 bench/ncu_mega_lines.py KERNEL-sass.csv[.gz] KERNEL.sass[.gz] [--top 40]
"""
import argparse
import collections
import csv
import gzip
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mega_code_size import line_table  # noqa: E402

SAMPLES = 'Warp Stall Sampling (All Samples)'
KERNEL = 'megaKernel'


def open_text(path):
    return gzip.open(path, 'rt') if path.endswith('.gz') else open(path)


def read_profile(path):
    rows = list(csv.reader(open_text(path)))
    at = next((i for i, r in enumerate(rows) if r and r[0] == 'Address'), None)
    if at is None:
        sys.exit(f'{path}: no "Address" header (not an ncu source page CSV)')
    header = rows[at]
    data = [r for r in rows[at + 1:] if len(r) == len(header)]
    if not data:
        sys.exit(f'{path}: no instructions')
    return {c: i for i, c in enumerate(header)}, data


def read_lines(path):
    """Offset -> (instruction, [(file, line), ...] innermost first) of the
    kernel's function in nvdisasm -gi output (mega_code_size.line_table)."""
    table = line_table(open_text(path).read(), KERNEL)
    if not table:
        sys.exit(f'{path}: no {KERNEL} function with line information '
                 '(nvdisasm -gi of a cubin built with -lineinfo)')
    return table


def short(path):
    for root in ('/include/tawa/', '/lib/'):
        if root in path:
            return path.split(root, 1)[1]
    return path.rsplit('/', 1)[-1]


def attribute(csv_path, sass_path):
    """Groups the profile's samples, executed warp instructions and stall
    reasons by task call site, innermost line and innermost file, and the
    code by task file: [instructions, executed, 128-byte lines touched]."""
    col, data = read_profile(csv_path)
    table = read_lines(sass_path)
    stalls = [c for c in col if c.startswith('stall_') and 'Not Issued' not in c]
    base = int(data[0][col['Address']], 16)

    def group():
        return dict(samples=0.0, execs=0, instrs=0, stalls=collections.Counter())

    out = dict(site=collections.defaultdict(group), line=collections.defaultdict(group),
               file=collections.defaultdict(group), total=0.0, mismatched=0,
               instructions=len(data), code=collections.defaultdict(lambda: [0, 0, set()]))
    for r in data:
        offset = int(r[col['Address']], 16) - base
        instr, frames = table.get(offset, ('?', []))
        if instr.split()[:1] != r[col['Source']].split()[:1]:
            out['mismatched'] += 1
        samples = float(r[col[SAMPLES]] or 0)
        execs = int(r[col['Instructions Executed']] or 0)
        out['total'] += samples
        tasks = [f for f in frames if '/tasks/' in f[0]]
        site = (f'{short(tasks[-1][0])}:{tasks[-1][1]}' if tasks else
                f'(runtime) {short(frames[-1][0]) if frames else "?"}')
        inner = f'{short(frames[0][0])}:{frames[0][1]}' if frames else '?'
        for g in (out['site'][site], out['line'][inner], out['file'][inner.rsplit(':', 1)[0]]):
            g['samples'] += samples
            g['execs'] += execs
            g['instrs'] += 1
            for c in stalls:
                v = float(r[col[c]] or 0)
                if v:
                    g['stalls'][c[len('stall_'):]] += v
        code = out['code'][short(tasks[-1][0]) if tasks else '(runtime)']
        code[0] += 1
        if execs:
            code[1] += 1
            code[2].add(offset // 128)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('csv')
    ap.add_argument('sass')
    ap.add_argument('--top', type=int, default=40)
    args = ap.parse_args()
    a = attribute(args.csv, args.sass)
    total = a['total']
    print(f'{a["instructions"]} instructions, {total:.0f} warp stall samples; '
          f'{a["mismatched"]} whose opcode differs from the line table\'s (0: same cubin)')
    if not total:
        sys.exit('no stall samples')

    def show(title, groups, n):
        print(f'\n{title}: share of samples, executed warp instructions, '
              'instructions, main stall reasons')
        for k, g in sorted(groups.items(), key=lambda kv: -kv[1]['samples'])[:n]:
            s = g['samples']
            reasons = ' '.join(f'{c}:{v / s * 100:.0f}%'
                               for c, v in g['stalls'].most_common(3)) if s else ''
            print(f'  {s / total * 100:6.2f}% {g["execs"]:10d} {g["instrs"]:6d}  {k:44s} {reasons}')

    show('By task call site', a['site'], args.top)
    show('By innermost source line', a['line'], args.top)
    show('By innermost file', a['file'], 15)
    every = collections.Counter()
    for g in a['file'].values():
        every.update(g['stalls'])
    print('\nStall reasons of all samples: ' +
          ' '.join(f'{c}:{v / total * 100:.1f}%' for c, v in every.most_common(10)))
    print('\nCode by task file: KB of instructions, KB run in the step, KB of 128-byte lines touched')
    lines = set()
    for k, (n, run, touched) in sorted(a['code'].items(), key=lambda kv: -kv[1][0]):
        print(f'  {k:32s} {n * 16 / 1024:7.1f} {run * 16 / 1024:7.1f} {len(touched) * 128 / 1024:7.1f}')
        lines |= touched
    n = sum(v[0] for v in a['code'].values())
    run = sum(v[1] for v in a['code'].values())
    print(f'  {"all":32s} {n * 16 / 1024:7.1f} {run * 16 / 1024:7.1f} {len(lines) * 128 / 1024:7.1f}')


if __name__ == '__main__':
    main()
