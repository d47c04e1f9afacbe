#!/usr/bin/env python3
"""Summarize Nsight Compute's per-instruction source page of one kernel
(`ncu -i REPORT --page source --csv --print-source sass`, as
gpu/tools/attention_source_profile.sh writes it): where the warps' stall
samples fall, instruction by instruction, and by opcode in the hottest loop
(the instructions with the largest execution count shared by more than 100
of them).

    python3 bench/ncu_source_summary.py KERNEL-sass.csv [--top 25]
"""
import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv)))
    header_at = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    header = rows[header_at]
    col = {c: i for i, c in enumerate(header)}
    data = [r for r in rows[header_at + 1:] if len(r) == len(header)]
    samples = lambda r: float(r[col[SAMPLES]] or 0)
    total = sum(samples(r) for r in data)
    if not total:
        sys.exit(f"{args.csv}: no stall samples")
    stalls = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
    print(f"{len(data)} instructions, {total:.0f} warp stall samples")
    print(f"\nTop {args.top} instructions by samples (share; executions; the three main stall reasons):")
    for r in sorted(data, key=samples, reverse=True)[:args.top]:
        s = samples(r)
        reasons = sorted(((c[6:], float(r[col[c]] or 0)) for c in stalls), key=lambda x: -x[1])[:3]
        print(f"  {s / total * 100:5.2f}%  {r[col['Instructions Executed']]:>9}  "
              f"{r[col['Source']].strip()[:58]:58}  " +
              " ".join(f"{n}:{v / s * 100:.0f}%" for n, v in reasons if v))
    counts = collections.Counter(r[col["Instructions Executed"]] for r in data)
    loop = max((k for k in counts if k not in ("", "0") and counts[k] > 100), key=int, default=None)
    if loop is None:
        return
    by_op, n_op = collections.Counter(), collections.Counter()
    outside = 0.0
    for r in data:
        src = r[col["Source"]].split()
        op = (src[1] if src and src[0].startswith("@") and len(src) > 1 else (src[0] if src else "?")).split(".")[0]
        if r[col["Instructions Executed"]] == loop:
            by_op[op] += samples(r)
            n_op[op] += 1
        else:
            outside += samples(r)
    print(f"\nHottest loop: {sum(n_op.values())} instructions executed {loop} times; "
          f"{outside / total * 100:.1f}% of the samples outside it. By opcode:")
    for op, v in by_op.most_common(14):
        print(f"  {op:10} {v / total * 100:5.1f}%  ({n_op[op]} instructions)")


if __name__ == "__main__":
    main()
