#!/usr/bin/env python3
"""Compile the user-style GEMM kernels (test/Interpreter/Inputs/user-style: kernels
written as users write them, not tawa's samples) to CUBINs for the GPU check
(gpu/tools/user_style_check.py), with the shapes test/Interpreter/user-style-gemms.test
runs them at on the CPU. The grid and the buffers each kernel writes are taken from
the differential interpreter's report on those shapes.

    python3 gpu/tools/user_style_manifest.py [--tawac build/bin/tawac] [--out build-kernels/user-style]
"""
import argparse
import json
import os
import re
import shlex
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUTS = os.path.join(REPO, "test", "Interpreter", "Inputs", "user-style")
TEST = os.path.join(REPO, "test", "Interpreter", "user-style-gemms.test")


def shapes_of_test():
    """kernel name -> its `--shape` options, from the lit test's RUN lines."""
    text = open(TEST).read()
    defines = dict(re.findall(r"# DEFINE: %\{(\w+)\} = (.*)", text))
    out = {}
    for line in re.findall(r"# RUN: %\{check\} (.*) \| FileCheck", text):
        line = re.sub(r"%\{(\w+)\}", lambda m: defines.get(m.group(1), m.group(0)), line)
        words = shlex.split(line)
        name = os.path.basename(words[0])[:-len(".ttir")]
        out[name] = words[1:]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tawac", default=os.path.join(REPO, "build", "bin", "tawac"))
    ap.add_argument("--check", default=os.path.join(REPO, "build", "bin", "tawa-check"))
    ap.add_argument("--out", default=os.path.join(REPO, "build-kernels", "user-style"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    entries = []
    for name, shape_opts in shapes_of_test().items():
        ttir = os.path.join(INPUTS, name + ".ttir")
        cubin = os.path.join(args.out, name + ".cubin")
        subprocess.run([args.tawac, ttir, "--emit=cubin", "-o", cubin], check=True)
        report = subprocess.run([args.check, "interp", ttir] + shape_opts, check=True,
                                capture_output=True, text=True).stdout
        grid = [int(g) for g in re.search(r"^grid: (\d+)x(\d+)x(\d+)", report, re.M).groups()]
        writes = re.search(r"^original: .* writes (\w+) ", report, re.M).group(1)
        shapes = {}
        for opt in shape_opts[shape_opts.index("--shape"):]:
            if opt != "--shape":
                key, value = opt.split("=", 1)
                shapes[key] = value
        entries.append({"name": name, "metadata": os.path.relpath(cubin[:-len(".cubin")] + ".json", args.out),
                        "grid": grid, "writes": writes, "shapes": shapes})
        print(f"{name}: grid {grid}, writes {writes}")
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"kernels": entries}, f, indent=1)


if __name__ == "__main__":
    main()
