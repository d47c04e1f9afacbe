#!/usr/bin/env python3
"""Machine code of the decode mega-kernel per task (docs/MEGAKERNEL.md).

    python3 bench/mega_code_size.py [--group G --head-dim D | --all-variants]
                                    [--buckets N] [--json FILE]

Compiles lib/Mega/Runtime/MegaDecoder.cu for sm_90a with -lineinfo (the
build tawa.mega.compile makes for a model of G q heads per KV head and head
dimension D, by default Qwen3-8B's 4 and 128; or the build with every
variant; $TAWA_MEGA_NVCC_FLAGS adds flags, as for build_library),
disassembles megaKernel with its inline chains (nvdisasm -gi) and adds up
the instruction bytes by the task-functor call each instruction was
inlined from (DecodeTasks in include/tawa/device/mega/decode_tasks.cuh: the
linear and attention tasks, their prefetches, ...; the rest is the runtime),
then by source region within them. A task runs once a layer on a worker, so
its code is fetched cold: this says how much there is. CPU only; needs nvcc
and nvdisasm (from $NVDISASM, CUDA's bin, or the one Triton ships).
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'python'))

from tawa.mega.build import _nvcc, specialization_flags  # noqa: E402

KERNEL = os.path.join('lib', 'Mega', 'Runtime', 'MegaDecoder.cu')
FUNCTOR = os.path.join(ROOT, 'include', 'tawa', 'device', 'mega', 'decode_tasks.cuh')
# The calls in DecodeTasks whose inlined code is a task's (name, call text).
CALLS = (('linear task', 'linearTask('), ('linear prefetch', 'linearPrefetch('),
         ('attention task', 'decodeAttentionTask('),
         ('attention prefetch', 'decodeAttentionPrefetch('),
         ('merge task', 'attentionMergeTask('), ('embedding task', 'embeddingTask('),
         ('argmax task', 'argmaxTask('), ('JIT staging', 'stage(d, slot)'))
INSTRUCTION_TEXT = re.compile(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')
LOCATION = re.compile(r'File "([^"]+)", line (\d+)')


def nvdisasm():
    cands = [os.environ.get('NVDISASM'), shutil.which('nvdisasm'),
             os.path.join(os.path.dirname(os.path.realpath(_nvcc())), 'nvdisasm')]
    try:
        import triton  # its wheel carries the CUDA binary tools
        cands += glob.glob(os.path.join(os.path.dirname(triton.__file__), 'backends', 'nvidia',
                                        'bin', 'nvdisasm'))
    except ImportError:
        pass
    for c in cands:
        if c and os.path.isfile(c):
            return c
    return None


def call_lines():
    """Line number in decode_tasks.cuh -> the task whose call sits there."""
    lines = {}
    with open(FUNCTOR) as f:
        for n, text in enumerate(f, 1):
            for name, call in CALLS:
                if call in text and 'void ' not in text:
                    lines[n] = name
    missing = {name for name, _ in CALLS} - set(lines.values())
    if missing:
        sys.exit(f'mega_code_size: no call of {", ".join(sorted(missing))} in {FUNCTOR}')
    return lines


def disassemble(flags):
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, 'mega.cubin')
        subprocess.run([_nvcc(), '-gencode=arch=compute_90a,code=sm_90a', '-std=c++17', '-O3',
                        '-lineinfo', '-I', os.path.join(ROOT, 'include'), *flags, '-cubin',
                        os.path.join(ROOT, KERNEL), '-o', cubin], check=True)
        tool = nvdisasm()
        if tool is None:
            sys.exit('mega_code_size: nvdisasm not found (set NVDISASM)')
        return subprocess.run([tool, '-gi', '-c', cubin], check=True, capture_output=True,
                              text=True).stdout


def line_table(sass, kernel='megaKernel'):
    """{offset: (instruction, [(path, line), ...])} of the kernel's function in
    nvdisasm -gi output: each instruction with the inline chain it carries,
    innermost frame first (an instruction after no chain keeps the last one).
    Empty when the function is not there."""
    table, chain, frames, inside = {}, [], [], False
    for line in sass.split('\n'):
        if inside and table and line.startswith('//----'):
            break  # the next section
        if line.startswith('.text.'):
            if inside and table:
                break
            inside = kernel in line
            continue
        if not inside:
            continue
        if line.lstrip().startswith('//## File'):
            # One inline level a line: its own location, then where it was
            # inlined (the next line's location).
            chain.append(LOCATION.search(line).groups())
            continue
        m = INSTRUCTION_TEXT.match(line)
        if m:
            if chain:
                frames, chain = [(f, int(n)) for f, n in chain], []
            table[int(m.group(1), 16)] = (m.group(2), frames)
    return table


def attribute(sass, calls, bucket=25):
    """(bytes per task, bytes per (task, leaf file, line bucket)) of megaKernel."""
    tasks, regions = collections.Counter(), collections.Counter()
    for _, frames in line_table(sass).values():
        names = [(os.path.basename(f), n) for f, n in frames]
        task = next((calls[n] for f, n in names if f == 'decode_tasks.cuh' and n in calls),
                    'runtime')
        tasks[task] += 16
        if names:
            regions[task, names[0][0], names[0][1] // bucket * bucket] += 16
    return tasks, regions


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--group', type=int, default=4, help='q heads per KV head (default 4)')
    ap.add_argument('--head-dim', type=int, default=128)
    ap.add_argument('--all-variants', action='store_true',
                    help='the build with every attention variant (specialize=False)')
    ap.add_argument('--buckets', type=int, default=20, help='source regions to list')
    ap.add_argument('--json', default=None)
    args = ap.parse_args()
    flags = [] if args.all_variants else specialization_flags(args.group, args.head_dim)
    # As build_library: the variant's extra nvcc flags (e.g. -DTAWA_MEGA_WARPS=8).
    flags += os.environ.get('TAWA_MEGA_NVCC_FLAGS', '').split()
    tasks, regions = attribute(disassemble(flags), call_lines())
    total = sum(tasks.values())
    print(f'megaKernel, {" ".join(flags) or "every variant"}: {total / 1024:.1f} KB')
    for name, size in tasks.most_common():
        print(f'  {name:20s} {size / 1024:7.1f} KB')
    print('largest source regions (innermost file, 25 lines):')
    for (name, f, b), size in regions.most_common(args.buckets):
        print(f'  {name:20s} {f:22s} {b:4d}-{b + 24:<4d} {size / 1024:6.1f} KB')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(flags=flags, total=total, tasks=dict(tasks)), f, indent=1)


if __name__ == '__main__':
    main()
