#!/usr/bin/env python3
"""The user-style GEMM kernels (test/Interpreter/Inputs/user-style/kernels.py: written
as users write them, not tawa's samples) on the GPU: each kernel's CUBIN from
gpu/tools/user_style_manifest.py, launched through the runtime on the odd shapes of
test/Interpreter/user-style-gemms.test (M = 144, N = 208, K = 296 or 304, padded row
strides), against Triton compiling the same source on the same inputs. Fresh random
inputs, the written buffer poisoned with NaN for both; the elements Triton leaves NaN
(masked-off padding) must stay NaN in tawa's output, the rest match within the relative
Frobenius error --tol (the two accumulate the K products in different orders).

    python3 gpu/tools/user_style_check.py --manifest build-kernels/user-style/manifest.json

Each kernel runs in a process of its own (a fault leaves a CUDA context unusable). Prints one
line per kernel and "N passed, M failed"; exits 1 on a failure.
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
import workloads  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def load_kernels():
    path = os.path.join(REPO, "test", "Interpreter", "Inputs", "user-style", "kernels.py")
    spec = importlib.util.spec_from_file_location("user_style_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def value(text, scalars):
    """A --shape value: an int, a float, or a product / pair of them and names."""
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d*\.\d+", text):
        return float(text)
    parts = [p.strip() for p in re.split(r"[*,]", text)]
    nums = [scalars[p] if p in scalars else int(p) for p in parts]
    if "," in text:
        return nums
    out = 1
    for n in nums:
        out *= n
    return out


def check(entry, base, mod, tol, gen):
    spec = mod.SPECS[entry["name"]]
    fn = spec["kernel"]
    shapes = entry["shapes"]
    scalars = {}
    for key, text in shapes.items():
        if key in spec["scalars"] and not spec["scalars"][key].startswith("*"):
            scalars[key] = value(text, {})
    tensors = {}
    for key, text in shapes.items():
        if key in spec["scalars"] and spec["scalars"][key].startswith("*"):
            dt = DTYPES[spec["scalars"][key][1:]]
            tensors[key] = (torch.randn(value(text, scalars), device="cuda", generator=gen) * 0.5).to(dt)
        elif key in spec["descriptors"]:
            dt = DTYPES[spec["descriptors"][key][0]]
            tensors[key] = (torch.randn(*value(text, scalars), device="cuda", generator=gen) * 0.5).to(dt)
    out = entry["writes"]
    outs = {}
    for system in ("triton", "tawa"):
        t = dict(tensors)
        t[out] = torch.full_like(tensors[out], float("nan"))
        outs[system] = t
    grid = tuple(entry["grid"])

    # Triton: the source's own launch: tl.constexpr parameters as keywords,
    # arguments the TTIR was specialized on (unit strides) by their value.
    args, kwargs = [], {}
    for param in fn.params:
        name = param.name
        if param.is_constexpr:
            kwargs[name] = spec["constexprs"][name]
        elif name in spec["constexprs"]:
            args.append(spec["constexprs"][name])
        elif name in spec["descriptors"]:
            args.append(TensorDescriptor.from_tensor(outs["triton"][name], spec["descriptors"][name][1]))
        elif name in outs["triton"]:
            args.append(outs["triton"][name])
        else:
            args.append(scalars[name])
    fn[grid](*args, **kwargs)

    # tawa: the CUBIN through the runtime, arguments by the metadata's names.
    kern = workloads.Loaded(os.path.join(base, entry["metadata"]))
    targs = []
    for p in kern.meta["params"]:
        name = p["name"]
        if p["kind"] == "num_programs":
            continue
        m = re.fullmatch(r"(\w+)_([1-4])", name)
        if name in outs["tawa"]:
            targs.append(outs["tawa"][name])
        elif m and m.group(1) in spec["descriptors"]:
            targs.append(workloads.desc_args(outs["tawa"][m.group(1)])[int(m.group(2))])
        else:
            targs.append(scalars[name])
    kern.kernel.prepare(*targs, grid=grid)()
    torch.cuda.synchronize()

    ref, got = outs["triton"][out].float(), outs["tawa"][out].float()
    written = ~torch.isnan(ref)
    same_nan = bool(torch.equal(torch.isnan(got), ~written))
    err = (torch.linalg.norm(got[written] - ref[written]) / torch.linalg.norm(ref[written])).item()
    ok = same_nan and err < tol
    print(f"{'PASS' if ok else 'FAIL'} {entry['name']:36s} grid {grid}  {int(written.sum())} elements written, "
          f"relative error vs Triton {err:.2e}, padding untouched: {same_nan}", flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--tol", type=float, default=2e-2)
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--only", help="check this kernel alone, in this process")
    args = ap.parse_args()
    entries = json.load(open(args.manifest))["kernels"]
    if not args.only:
        # One process per kernel: a kernel that faults leaves the CUDA
        # context unusable, and must not fail the ones after it.
        print(f"seed {args.seed}", flush=True)
        failed = 0
        for entry in entries:
            rc = subprocess.run([sys.executable, os.path.abspath(__file__), "--manifest", args.manifest,
                                 "--tol", str(args.tol), "--seed", str(args.seed), "--only",
                                 entry["name"]]).returncode
            failed += rc != 0
        print(f"{len(entries) - failed} passed, {failed} failed")
        sys.exit(1 if failed else 0)
    base = os.path.dirname(os.path.abspath(args.manifest))
    mod = load_kernels()
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    passed = failed = 0
    for entry in [e for e in entries if e["name"] == args.only]:
        try:
            ok = check(entry, base, mod, args.tol, gen)
        except Exception as e:  # a launch that fails is a failure, reported
            print(f"FAIL {entry['name']}: {type(e).__name__}: {e}", flush=True)
            ok = False
        passed += ok
        failed += not ok
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
