#!/usr/bin/env python3
"""Checks gpu/reference/ref_gemm.json (tawa-kernel-metadata/1) against the
constants the kernel was compiled with (ref_gemm_constants prints them).
    check_metadata.py REF_GEMM_JSON REF_GEMM_CONSTANTS_BINARY"""
import json
import subprocess
import sys


def main():
    meta = json.load(open(sys.argv[1]))
    k = json.loads(subprocess.check_output([sys.argv[2]], text=True))
    errors = []

    def expect(what, got, want):
        if got != want:
            errors.append("%s: metadata has %r, kernel has %r" % (what, got, want))

    expect("format", meta["format"], "tawa-kernel-metadata/1")
    expect("kernel", meta["kernel"], "tawa_ref_gemm_f16")
    expect("block", meta["block"], k["block"])
    expect("cluster", meta["cluster"], [1, 1, 1])
    expect("dynamic_smem_bytes", meta["dynamic_smem_bytes"], k["dynamic_smem_bytes"])
    expect("grid.kind", meta["grid"]["kind"], "persistent")
    expect("grid.x", meta["grid"]["x"],
           [{"param": "M", "size": k["tile"][0]}, {"param": "N", "size": k["tile"][1]}])
    params = meta["params"]
    expect("param names", [p["name"] for p in params], ["a", "b", "c", "M", "N", "K"])
    for p, box in zip(params[:3], ("box_a", "box_b", "box_c")):
        expect(p["name"] + ".kind", p["kind"], "tensormap")
        expect(p["name"] + ".dtype", p["dtype"], "f16")
        expect(p["name"] + ".box", p["box"], k[box])
        expect(p["name"] + ".swizzle", p["swizzle"], "128B")
    for p in params[3:]:
        expect(p["name"] + ".kind", p["kind"], "i32")
    if meta["dynamic_smem_bytes"] > 227 * 1024:
        errors.append("dynamic_smem_bytes over the 227 KB limit")
    for e in errors:
        print("FAIL " + e)
    if not errors:
        print("PASS ref_gemm.json matches the kernel")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
