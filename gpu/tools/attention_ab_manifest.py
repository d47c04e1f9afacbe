#!/usr/bin/env python3
"""Write an attention manifest for gpu/tools/attention_ab_run.sh: a subset of
make_kernels.py's attention.json (the chosen kernels under the chosen
configurations) plus variants built another way, each a CUBIN taken as a new
configuration of its kernel.

    python3 gpu/tools/attention_ab_manifest.py build-kernels/attention-ab.json \\
        --kernel shared/attn_fp16 --kernel examples/attn_fwd_fp16_d64 \\
        --config NOPIN \\
        --variant examples/attn_fwd_fp16_d64:NVCC=/tmp/d64.cubin \\
        --variant examples/attn_fwd_fp16_d64:SS=/tmp/d64_ss.cubin:231424

A variant KERNEL:NAME=FILE[:SMEM] copies FILE to KERNEL/NAME.cubin beside the
kernel's default and writes KERNEL/NAME.json, the default's launch metadata
naming that CUBIN (SMEM, if given, replaces its dynamic shared-memory bytes:
a hand edit that adds a buffer). The kernel's default is always included, as
the baseline every ratio of the A/B run is taken against. The manifest is
written next to attention.json, whose directory it must be in.
"""
import argparse
import json
import os
import shutil
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the manifest to write, in attention.json's directory")
    ap.add_argument("--source", help="the full manifest (default: attention.json beside OUT)")
    ap.add_argument("--kernel", action="append", default=[], help="kernel id (repeatable)")
    ap.add_argument("--config", action="append", default=[],
                    help="a configuration of make_kernels.py to include besides default (repeatable)")
    ap.add_argument("--variant", action="append", default=[], metavar="KERNEL:NAME=FILE[:SMEM]",
                    help="a CUBIN built another way, as configuration NAME of KERNEL (repeatable)")
    args = ap.parse_args(argv)

    base = os.path.dirname(os.path.abspath(args.out))
    source = args.source or os.path.join(base, "attention.json")
    if os.path.dirname(os.path.abspath(source)) != base:
        sys.exit(f"attention_ab_manifest: {args.out} must be in the directory of {source}")
    full = json.load(open(source))
    by_id = {e["id"]: e for e in full["kernels"]}

    variants = {}
    for v in args.variant:
        kernel, sep, rest = v.partition(":")
        name, eq, spec = rest.partition("=")
        if not (sep and eq and kernel and name and spec):
            sys.exit(f"attention_ab_manifest: --variant {v!r} is not KERNEL:NAME=FILE[:SMEM]")
        path, _, smem = spec.partition(":")
        if not os.path.isfile(path):
            sys.exit(f"attention_ab_manifest: {path}: no such CUBIN")
        if smem and not smem.isdigit():
            sys.exit(f"attention_ab_manifest: --variant {v!r}: SMEM must be a byte count")
        variants.setdefault(kernel, []).append((name, path, int(smem) if smem else None))

    kernels = list(dict.fromkeys(args.kernel + list(variants)))
    if not kernels:
        sys.exit("attention_ab_manifest: name at least one --kernel or --variant")
    entries = []
    for kernel in kernels:
        default = by_id.get(f"{kernel}/default")
        if default is None:
            sys.exit(f"attention_ab_manifest: {kernel}/default is not in {source}")
        if default["error"]:
            sys.exit(f"attention_ab_manifest: {kernel}/default did not compile: {default['error']}")
        entries.append(default)
        for config in args.config:
            entry = by_id.get(f"{kernel}/{config}")
            if entry is None:
                sys.exit(f"attention_ab_manifest: {kernel}/{config} is not in {source}")
            entries.append(entry)
        meta_path = os.path.join(base, default["metadata"])
        meta = json.load(open(meta_path))
        for name, path, smem in variants.get(kernel, []):
            if f"{kernel}/{name}" in by_id:
                sys.exit(f"attention_ab_manifest: {kernel}/{name} is a configuration of "
                         f"make_kernels.py; name the variant otherwise")
            folder = os.path.dirname(meta_path)
            shutil.copyfile(path, os.path.join(folder, name + ".cubin"))
            variant_meta = dict(meta, cubin=name + ".cubin")
            if smem is not None:
                variant_meta["dynamic_smem_bytes"] = smem
            with open(os.path.join(folder, name + ".json"), "w") as f:
                json.dump(variant_meta, f, indent=1)
            entries.append(dict(default, id=f"{kernel}/{name}", config=name,
                                options=[f"(built another way: {os.path.basename(path)})"],
                                metadata=os.path.join(os.path.dirname(default["metadata"]),
                                                      name + ".json")))
    with open(args.out, "w") as f:
        json.dump({"tawac": full.get("tawac"), "commit": full.get("commit"),
                   "kernels": entries}, f, indent=1)
    print(f"attention_ab_manifest: {len(entries)} entries -> {args.out}")


if __name__ == "__main__":
    main()
