#!/usr/bin/env python3
"""Table and plot of the decode benchmark (bench/mega_decode_bench.py --json).

    python3 bench/plot_mega_decode.py RUN.json [MORE.json ...] [--png FILE]

Prints a Markdown table of every (model, batch, context) of the first file:
the mega-kernel's time per step (each launch waited for, and with steps
queued as generate() issues them), the baselines (the reference decode in a
CUDA graph; under torch.compile and transformers eager where measured) and
the bandwidth floor, all in microseconds, and tawa's time over the floor.
Later files only fill baseline cells the first one lacks (a run of
--compile --hf at fewer shapes, or of --baselines-only); such cells are
marked with * and the file they came from is named under the table. Rows
without a tawa time (--baselines-only's) only fill cells, in the first
file too. With --png (matplotlib), one panel per context: each time over
the bandwidth floor, log scale, per model and batch.
"""
import argparse
import json
import os
import sys

BASELINES = (('graph_us', 'CUDA graph'), ('compile_us', 'torch.compile'),
             ('hf_us', 'transformers'))


def load(paths):
    """Rows of the first file with a tawa time keyed by (model, batch,
    context), baseline cells filled from its other rows and the other files;
    returns (rows, device, filled) where `filled` maps (key, field) to the
    file it came from."""
    with open(paths[0]) as f:
        first = json.load(f)
    rows = {(r['model'], r['batch'], r['context']): dict(r) for r in first['rows']
            if r.get('tawa_us') is not None}
    filled = {}
    for i, path in enumerate(paths):
        with open(path) as f:
            for r in json.load(f)['rows']:
                key = (r['model'], r['batch'], r['context'])
                # The first file's rows with a tawa time are the table's own.
                if key not in rows or (i == 0 and r.get('tawa_us') is not None):
                    continue
                for field, _ in BASELINES:
                    if rows[key].get(field) is None and r.get(field) is not None:
                        rows[key][field] = r[field]
                        filled[key, field] = os.path.basename(path)
    return rows, first.get('device', '?'), filled


def model_order(name):
    try:
        return float(name.rstrip('b'))
    except ValueError:
        return float('inf')


def table(rows, filled):
    out = ['| model | batch | context | tawa | queued | CUDA graph | torch.compile | transformers '
           '| floor | tawa / floor (queued) |',
           '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |']
    for key in sorted(rows, key=lambda k: (model_order(k[0]), k[2], k[1])):
        r = rows[key]

        def cell(field):
            v = r.get(field)
            if v is None:
                return '—'
            return f'{v:.0f}' + ('*' if (key, field) in filled else '')

        queued = r.get('tawa_queued_us')
        ratio = f'{r["tawa_us"] / r["floor_us"]:.2f}'
        if queued is not None:
            ratio += f' ({queued / r["floor_us"]:.2f})'
        out.append(f'| {key[0]} | {key[1]} | {key[2]} | {r["tawa_us"]:.0f} | '
                   f'{cell("tawa_queued_us")} | {cell("graph_us")} | {cell("compile_us")} | '
                   f'{cell("hf_us")} | {r["floor_us"]:.0f} | {ratio} |')
    sources = sorted(set(filled.values()))
    if sources:
        out.append('')
        out.append('* from ' + ', '.join(sources))
    return '\n'.join(out)


def plot(rows, device, png):
    try:
        import matplotlib
    except ImportError:
        sys.exit('plot_mega_decode: --png needs matplotlib')
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    contexts = sorted({k[2] for k in rows})
    series = [('tawa_us', 'tawa (launch waited for)'), ('tawa_queued_us', 'tawa (steps queued)')] + \
        [(f, name) for f, name in BASELINES]
    fig, axes = plt.subplots(1, len(contexts), figsize=(7 * len(contexts), 4.5), squeeze=False)
    for ax, context in zip(axes[0], contexts):
        keys = sorted((k for k in rows if k[2] == context), key=lambda k: (model_order(k[0]), k[1]))
        width = 0.8 / len(series)
        for i, (field, name) in enumerate(series):
            xs = [j + (i - (len(series) - 1) / 2) * width for j, k in enumerate(keys)
                  if rows[k].get(field) is not None]
            ys = [rows[k][field] / rows[k]['floor_us'] for k in keys
                  if rows[k].get(field) is not None]
            if ys:
                ax.bar(xs, ys, width, label=name)
        ax.axhline(1.0, color='black', linewidth=0.8)
        ax.set_yscale('log')
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f'{k[0]}\nb{k[1]}' for k in keys])
        ax.set_ylabel('time per step / bandwidth floor')
        ax.set_title(f'context {context}')
        ax.grid(axis='y', which='both', alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f'Decode step, one mega-kernel against its baselines ({device})')
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('json', nargs='+', help='bench/mega_decode_bench.py --json files, the run first')
    ap.add_argument('--png', default=None, help='write the plot here (needs matplotlib)')
    args = ap.parse_args()
    try:
        rows, device, filled = load(args.json)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f'plot_mega_decode: cannot read the benchmark JSON: {e!r}')
    if not rows:
        sys.exit(f'plot_mega_decode: {args.json[0]} has no rows with a tawa time (a '
                 '--baselines-only run only fills cells: give it after a full run)')
    print(table(rows, filled))
    if args.png:
        plot(rows, device, args.png)
        print(f'wrote {args.png}')


if __name__ == '__main__':
    main()
