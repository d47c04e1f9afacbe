#!/usr/bin/env python3
"""Compile every GEMM-family kernel tawa supports with tawac, under every
configuration the GPU checks run, into one folder the GPU machine can use.

The GPU machine has CUDA but no MLIR, so tawac runs here (ahead of time) and
the GPU suite loads the CUBINs and metadata it wrote through the runtime.

    gpu/compiled/make_kernels.py --tawac build/bin/tawac --out build-kernels

Writes OUT/<kernel>/<config>.{cubin,json}, OUT/tasks/<task>.{cu,json} (the
mega-kernel tasks of gpu/mega/compiled_tasks.txt) and OUT/manifest.json:
    {"tawac": ..., "commit": ..., "kernels": [
       {"id": "shared/gemm_fp16/D2P1", "kernel": "shared/gemm_fp16",
        "workload": "gemm", "config": "D2P1", "options": [...],
        "metadata": "shared/gemm_fp16/D2P1.json", "error": null}, ...]}
A configuration tawac rejects is recorded with its error, so the GPU checker
reports it as a failure instead of silently testing less.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared", "ttir"))
EXAMPLES = os.path.join(REPO, "examples", "ttir")

# kernel id -> (TTIR file, workload: how the GPU checker launches it; see
# gpu/compiled/workloads.py, which mirrors the Triton launch code of
# ../shared/ttir/triton_kernels.py and examples/kernels.py).
KERNELS = {
    "shared/gemm_fp16": (os.path.join(SHARED, "gemm_fp16.ttir"), "gemm"),
    "shared/gemm_bf16": (os.path.join(SHARED, "gemm_bf16.ttir"), "gemm"),
    "shared/gemm_fp16_128x128": (os.path.join(SHARED, "gemm_fp16_128x128.ttir"), "gemm"),
    "shared/gemm_fp8": (os.path.join(SHARED, "gemm_fp8.ttir"), "gemm"),
    "shared/gemm_bias_relu": (os.path.join(SHARED, "gemm_bias_relu.ttir"), "bias_relu"),
    "shared/gemm_batched": (os.path.join(SHARED, "gemm_batched.ttir"), "batched"),
    "shared/gemm_persistent": (os.path.join(SHARED, "gemm_persistent.ttir"), "persistent"),
    "shared/gemm_grouped": (os.path.join(SHARED, "gemm_grouped.ttir"), "grouped"),
    "examples/gemm_fp16": (os.path.join(EXAMPLES, "gemm_fp16.ttir"), "gemm"),
    "examples/gemm_bf16": (os.path.join(EXAMPLES, "gemm_bf16.ttir"), "gemm"),
    "examples/gemm_fp16_128x128": (os.path.join(EXAMPLES, "gemm_fp16_128x128.ttir"), "gemm"),
    "examples/gemm_fp8": (os.path.join(EXAMPLES, "gemm_fp8.ttir"), "gemm"),
    # Tiles addressed by tensors of pointers (-tawa-pointer-tile-descriptors).
    "examples/gemm_ptr_fp16": (os.path.join(EXAMPLES, "gemm_ptr_fp16.ttir"), "pointer_gemm_128x256"),
    "examples/gemm_ptr_fp16_128x128": (os.path.join(EXAMPLES, "gemm_ptr_fp16_128x128.ttir"), "pointer_gemm_128x128"),
    "examples/gemm_ptr_fp16_a_colmajor": (os.path.join(EXAMPLES, "gemm_ptr_fp16_a_colmajor.ttir"),
                                          "pointer_gemm_a_colmajor_128x128"),
    "examples/gemm_blockptr_fp16": (os.path.join(EXAMPLES, "gemm_blockptr_fp16.ttir"), "pointer_gemm_128x256"),
    # A per-row scale and SiLU in the epilogue.
    "examples/gemm_scale_silu_fp16": (os.path.join(EXAMPLES, "gemm_scale_silu_fp16.ttir"), "scale_silu"),
    "examples/gemm_scale_silu_fp16_128x128": (os.path.join(EXAMPLES, "gemm_scale_silu_fp16_128x128.ttir"),
                                              "scale_silu"),
    # Narrow N blocks (wgmma n32 / n16 / n8; one store box of 64-, 32- or 16-byte rows).
    "examples/gemm_fp16_128x32": (os.path.join(EXAMPLES, "gemm_fp16_128x32.ttir"), "gemm"),
    "examples/gemm_bf16_128x16": (os.path.join(EXAMPLES, "gemm_bf16_128x16.ttir"), "gemm"),
    "examples/gemm_fp16_128x8": (os.path.join(EXAMPLES, "gemm_fp16_128x8.ttir"), "gemm"),
    "examples/gemm_fp8_128x32": (os.path.join(EXAMPLES, "gemm_fp8_128x32.ttir"), "gemm"),
    "examples/gemm_ptr_fp16_128x32": (os.path.join(EXAMPLES, "gemm_ptr_fp16_128x32.ttir"), "pointer_gemm_128x32"),
    "examples/gemm_ptr_fp16_128x64": (os.path.join(EXAMPLES, "gemm_ptr_fp16_128x64.ttir"), "pointer_gemm_128x64"),
    "examples/gemm_ptr_fp16_64x128": (os.path.join(EXAMPLES, "gemm_ptr_fp16_64x128.ttir"), "pointer_gemm_64x128"),
    "examples/gemm_kn_bf16_128x16": (os.path.join(EXAMPLES, "gemm_kn_bf16_128x16.ttir"), "gemm_kn"),
    # fp8 with B stored K x N: B's tile transposed in shared memory, a 64-byte extent on one side.
    "examples/gemm_kn_fp8_bn64": (os.path.join(EXAMPLES, "gemm_kn_fp8_bn64.ttir"), "gemm_kn"),
    "examples/gemm_kn_fp8_bk64": (os.path.join(EXAMPLES, "gemm_kn_fp8_bk64.ttir"), "gemm_kn"),
    # The descriptor GEMM written persistent (its own tile loop), 128 x 128.
    "examples/gemm_persistent_fp16_128x128": (os.path.join(EXAMPLES, "gemm_persistent_fp16_128x128.ttir"),
                                              "persistent"),
    # D = alpha A B^T + beta C: C read by descriptor in the epilogue.
    "examples/gemm_axpby_bf16": (os.path.join(EXAMPLES, "gemm_axpby_bf16.ttir"), "axpby"),
    "examples/gemm_axpby_bf16_128x128": (os.path.join(EXAMPLES, "gemm_axpby_bf16_128x128.ttir"), "axpby"),
}

# The pointer-tile kernels build the defaults and a few variants, not the
# whole sweep of the descriptor GEMMs they share their code paths with.
POINTER_CONFIGS = {"default", "D3P1", "D4P1", "NP", "OPT", "PP", "NOPP", "NOPAIR"}

# Kernels whose K blocks have rows of 64 or 32 bytes (TMA's and wgmma's 64-
# and 32-byte swizzles), under the default and a few configurations that
# change how their tiles are loaded and read: cooperative groups instead of
# ping-pong, one group, 2-CTA clusters (half-height multicast boxes), a
# shallower ring, the optimal schedule. Apart from KERNELS because
# test/Target/gemm-cuda-golden.test pins the code of exactly the
# kernel_jobs() list, recorded before these existed.
NARROW_K = {
    "examples/gemm_fp16_bk32": (os.path.join(EXAMPLES, "gemm_fp16_bk32.ttir"), "gemm"),
    "examples/gemm_bf16_bk16": (os.path.join(EXAMPLES, "gemm_bf16_bk16.ttir"), "gemm"),
    "examples/gemm_fp8_bk32": (os.path.join(EXAMPLES, "gemm_fp8_bk32.ttir"), "gemm"),
    "examples/gemm_kn_fp16_bk32": (os.path.join(EXAMPLES, "gemm_kn_fp16_bk32.ttir"), "gemm_kn"),
}
NARROW_K_CONFIGS = [("default", []), ("NOPP", ["--pingpong=false"]),
                    ("G1NP", ["--consumer-groups=1", "--persistent=false"]),
                    ("NOPPC2", ["--pingpong=false", "--cluster=2"]),
                    ("D2P1", ["--aref-depth=2", "--mma-depth=1"]),
                    ("OPT", ["--schedule=optimal"]),
                    ("NOPAIR", ["--pair-programs=off"])]


def narrow_k_jobs(sweep):
    """(kernel id, TTIR, workload, config name, tawac options) of NARROW_K."""
    return [(kid, ttir, workload, name, options)
            for kid, (ttir, workload) in NARROW_K.items()
            for name, options in (NARROW_K_CONFIGS if sweep else NARROW_K_CONFIGS[:1])]


def configs(sweep):
    """(name, tawac options): the compiler's defaults, then every ring depth
    D in 1..4 with every MMA lag P in 0..2 below it, the consumer-group
    counts, one program per CTA instead of persistence (NP), and the
    baseline of the ablation (G1NP: one consumer group, not persistent)."""
    out = [("default", [])]
    if sweep:
        for d in range(1, 5):
            for p in range(0, 3):
                if p < d:
                    out.append((f"D{d}P{p}", [f"--aref-depth={d}", f"--mma-depth={p}"]))
        out.append(("G1", ["--consumer-groups=1"]))
        out.append(("G2", ["--consumer-groups=2"]))
        out.append(("NP", ["--persistent=false"]))
        out.append(("OPT", ["--schedule=optimal"]))
        # 2-CTA clusters with TMA multicast (not ping-pong: NOPPC2 where
        # ping-pong is the default).
        out.append(("C2", ["--cluster=2"]))
        out.append(("NOPPC2", ["--pingpong=false", "--cluster=2"]))
        out.append(("G1NP", ["--consumer-groups=1", "--persistent=false"]))
        out.append(("PP", ["--pingpong"]))
        out.append(("NOPP", ["--pingpong=false"]))
        out.append(("PPD2P1", ["--pingpong", "--aref-depth=2", "--mma-depth=1"]))
        # Deeper rings, where 32 KiB slots leave room for them.
        out.append(("D6P1", ["--aref-depth=6", "--mma-depth=1"]))
        out.append(("D6P2", ["--aref-depth=6", "--mma-depth=2"]))
        out.append(("PPD6P1", ["--pingpong", "--aref-depth=6", "--mma-depth=1"]))
        # Programs of adjacent x in pairs sharing their B tiles; and no
        # pairing at all (the default pairs along y where the two products
        # fuse into one wgmma: 128 x 128 tiles of the batched and bias
        # samples).
        out.append(("PAIR", ["--pair-programs"]))
        out.append(("NOPAIR", ["--pair-programs=off"]))
        # The kernel's own tile walk in its own (row-major) order.
        out.append(("NOSW", ["--tile-swizzle=1"]))
        # The epilogue stored at once after the K loop (EO0) and with all
        # four of a 128 x 256 tile's boxes left for the next tile's K loop
        # (EO4), against the default that leaves two.
        out.append(("EO0", ["--epilogue-overlap=0"]))
        out.append(("EO4", ["--epilogue-overlap=4"]))
        # The optimal schedule realized literally: its lag of 1 as the MMA
        # depth (one version of the loop), so the deferred epilogue takes every
        # box the registers hold (OPT itself builds the default's CUBIN for
        # these kernels: docs/SCHEDULER.md).
        out.append(("OPTP1", ["--schedule=optimal", "--mma-depth=1"]))
    return out


def compile_one(tawac, out, kid, ttir, workload, name, options):
    rel = f"{kid}/{name}"
    os.makedirs(os.path.join(out, kid), exist_ok=True)
    cubin = os.path.join(out, rel + ".cubin")
    cmd = [tawac, ttir, "--emit=cubin", "-o", cubin] + options
    r = subprocess.run(cmd, capture_output=True, text=True)
    entry = {"id": rel, "kernel": kid, "workload": workload, "config": name,
             "options": options, "metadata": rel + ".json", "error": None,
             "warnings": r.stderr.strip() if r.returncode == 0 else ""}
    if r.returncode != 0:
        entry["error"] = r.stderr.strip() or f"tawac exited with {r.returncode}"
    return entry


# Attention kernels (gpu/compiled/attention.py checks and times them): kernel
# id -> (TTIR file, workload: attention, attention_causal, or attention_lse,
# non-causal and also storing the rows' logsumexp by pointer). Written to
# OUT/attention.json, not the GEMM manifest.
ATTENTION = {
    "shared/attn_fp16": (os.path.join(SHARED, "attn_fp16.ttir"), "attention"),
    "shared/attn_fp16_causal": (os.path.join(SHARED, "attn_fp16_causal.ttir"), "attention_causal"),
    "shared/attn_bf16_bn64": (os.path.join(SHARED, "attn_bf16_bn64.ttir"), "attention"),
    "shared/attn_fp8": (os.path.join(SHARED, "attn_fp8.ttir"), "attention"),
    "examples/attn_fwd_fp16": (os.path.join(EXAMPLES, "attn_fwd_fp16.ttir"), "attention"),
    "examples/attn_fwd_fp16_causal": (os.path.join(EXAMPLES, "attn_fwd_fp16_causal.ttir"), "attention_causal"),
    "examples/attn_fwd_fp16_d64": (os.path.join(EXAMPLES, "attn_fwd_fp16_d64.ttir"), "attention"),
    "examples/attn_fwd_bf16_64x64_causal": (os.path.join(EXAMPLES, "attn_fwd_bf16_64x64_causal.ttir"),
                                            "attention_causal"),
    "examples/attn_fwd_lse_fp16": (os.path.join(EXAMPLES, "attn_fwd_lse_fp16.ttir"), "attention_lse"),
    "examples/attn_fwd_fp16_causal_split": (os.path.join(EXAMPLES, "attn_fwd_fp16_causal_split.ttir"),
                                            "attention_causal"),
    "examples/attn_fwd_fp16_kt_exp": (os.path.join(EXAMPLES, "attn_fwd_fp16_kt_exp.ttir"), "attention_kt"),
}
# The default, the optimal schedule, and the ablation: no warp-group
# ping-pong (NOTURN), no coarse-grained pipeline either (NOCOARSE), the wait
# for P.V not pinned after the softmax (NOPIN), the row max taken of the
# scaled scores (NOSMAX), 128 query rows on two consumer groups where the
# default widens them to 192 on three (NOWIDEN).
ATTENTION_CONFIGS = [("default", []), ("OPT", ["--schedule=optimal"]),
                     ("NOTURN", ["--issue-turns=false"]),
                     ("NOCOARSE", ["--coarse-pipeline=false"]),
                     ("NOPIN", ["--softmax-overlap=false"]),
                     ("NOSMAX", ["--scaled-row-max=false"]),
                     ("NOWIDEN", ["--widen-rows=false"])]
# Non-causal kernels: also the grouped program walk (8 query blocks of each
# head at a time) instead of a head's query blocks together.
NONCAUSAL_CONFIGS = [("GROUPED", ["--stream-order=false"])]
# Causal kernels: also the program walk in its grouped order, not heaviest
# query blocks first, the masked loop split in two (the unmasked prefix,
# the band) rather than its mask guarded, and the masked loop left whole.
CAUSAL_CONFIGS = [("NOHF", ["--heavy-first=false"]), ("SPLIT", ["--masked-loop-mode=split"]),
                  ("NOSPLIT", ["--split-masked-loops=false"])]


def attention_jobs():
    return [(kid, ttir, workload, name, options)
            for kid, (ttir, workload) in ATTENTION.items()
            for name, options in ATTENTION_CONFIGS
            + (CAUSAL_CONFIGS if workload == "attention_causal" else NONCAUSAL_CONFIGS)]


def kernel_jobs(sweep):
    """(kernel id, TTIR, workload, config name, tawac options) for every
    kernel and configuration this script builds (and that the GPU suite and
    test/Target/gemm-cuda-golden.test check)."""
    jobs = []
    for kid, (ttir, workload) in KERNELS.items():
        for name, options in configs(sweep):
            narrow_n = any(kid.endswith(t) for t in ("128x32", "128x16", "128x8"))
            if ("gemm_ptr" in kid or "gemm_blockptr" in kid or "scale_silu" in kid or "axpby" in kid
                    or narrow_n) and name not in POINTER_CONFIGS:
                continue
            # A 128 x 256 tile of C (64 KiB) beside a ring of 4 slots of A
            # and B (48 KiB each) exceeds shared memory: tawac refuses D4.
            if kid == "examples/gemm_axpby_bf16" and name == "D4P1":
                continue
            # One consumer group cannot hold a 128 x 256 accumulator in
            # registers; the G1 variant is only built where it fits.
            if name in ("G1", "G1NP") and "128x128" not in kid:
                continue
            # Ping-pong gives each consumer group a whole tile: 128 x 128
            # accumulators fit its registers, 128 x 256 ones do not.
            small_tiles = any(t in kid for t in ("128x128", "colmajor", "batched", "grouped", "bias_relu",
                                                 "128x64", "64x128", "128x32", "128x16", "128x8", "kn_fp8"))
            if (name.startswith("PP") or name.startswith("D6") or name.startswith("NOPP")) and not small_tiles:
                continue
            # Paired by default, the batched and bias samples' slots hold
            # three 16 KiB tiles: six of them do not fit (PPD6P1, not
            # paired, does).
            if name in ("D6P1", "D6P2") and any(t in kid for t in ("batched", "bias_relu")):
                continue
            # Clusters need the compiler's persistence and no ping-pong.
            if name == "C2" and (small_tiles or "persistent" in kid):
                continue
            if name == "NOPPC2" and ("grouped" in kid or "persistent" in kid):
                continue
            # Pairing along x shares a tile only where its coordinates do not
            # depend on program_id(0) (the batched and bias samples; the
            # others map one program id to both tile coordinates). The
            # default pairs along y the batched and bias samples and the
            # 128 x 128 tiles of a 1-D grid's tile map; NOPAIR is the kernel
            # unpaired (ping-pong).
            if name == "PAIR" and not any(t in kid for t in ("batched", "bias_relu")):
                continue
            if name == "NOPAIR" and not any(t in kid for t in ("batched", "bias_relu", "128x128", "128x64", "64x128")):
                continue
            # Only the samples that walk their own tiles have an order to keep.
            if name == "NOSW" and not any(t in kid for t in ("grouped", "persistent")):
                continue
            # The deferred epilogue applies to cooperative 128 x 256 tiles
            # (ping-pong kernels overlap epilogues across their two groups).
            if name in ("EO0", "EO4", "OPTP1") and small_tiles:
                continue
            jobs.append((kid, ttir, workload, name, options))
    return jobs


# Kernels compiled as mega-kernel tasks (tawac --mega-task; docs/MEGAKERNEL.md,
# "Compiled tasks"), listed in gpu/mega/compiled_tasks.txt: gpu/CMakeLists.txt
# builds test_mega_compiled_tasks from OUT/tasks where tawac is not built.
MEGA_TASKS_LIST = os.path.join(REPO, "gpu", "mega", "compiled_tasks.txt")


def mega_tasks():
    """(name, TTIR path, tawac options) of each line of MEGA_TASKS_LIST."""
    tasks = []
    with open(MEGA_TASKS_LIST) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, ttir, depth = line.split()
                tasks.append((name, os.path.join(EXAMPLES, ttir + ".ttir"),
                              [f"--aref-depth={depth}"]))
    return tasks


def compile_tasks(tawac, out):
    """Writes OUT/tasks/<name>.{cu,json}; exits on any tawac error."""
    os.makedirs(os.path.join(out, "tasks"), exist_ok=True)
    for name, ttir, options in mega_tasks():
        cmd = [tawac, ttir, "--emit=cuda", "--mega-task", f"--task-name={name}", *options,
               "-o", os.path.join(out, "tasks", name + ".cu")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"make_kernels: {' '.join(cmd)} failed:\n{r.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tawac", default=os.path.join(REPO, "build", "bin", "tawac"))
    ap.add_argument("--out", default=os.path.join(REPO, "build-kernels"))
    ap.add_argument("--no-sweep", action="store_true", help="defaults only")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--attention-only", action="store_true",
                    help="rebuild the attention kernels (attention.json) and leave the GEMM ones")
    args = ap.parse_args()

    compile_tasks(args.tawac, args.out)
    sweep = not args.no_sweep
    jobs = [] if args.attention_only else kernel_jobs(sweep) + narrow_k_jobs(sweep)
    with ThreadPoolExecutor(args.jobs) as pool:
        entries = list(pool.map(lambda j: compile_one(args.tawac, args.out, *j), jobs))
        attention = list(pool.map(lambda j: compile_one(args.tawac, args.out, *j),
                                  attention_jobs()))

    # The Triton source of the shared samples, for benchmarks that compile
    # the same kernels with Triton on the GPU machine (../shared does not
    # travel there).
    os.makedirs(os.path.join(args.out, "sources"), exist_ok=True)
    shutil.copy(os.path.join(SHARED, "triton_kernels.py"), os.path.join(args.out, "sources"))

    version = subprocess.run([args.tawac, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    manifest = {"tawac": version, "commit": commit + ("+dirty" if dirty else ""), "kernels": entries}
    if not args.attention_only:
        with open(os.path.join(args.out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
    with open(os.path.join(args.out, "attention.json"), "w") as f:
        json.dump(dict(manifest, kernels=attention), f, indent=1)
    for e in attention:
        if e["error"]:
            print(f"make_kernels: attention {e['id']} rejected: {e['error'].splitlines()[0]}")
    bad = [e for e in entries if e["error"]]
    # ptxas's "potential performance loss" (e.g. C7515: wgmma serialized)
    # does not fail a build, but a kernel with one is not worth timing.
    slow = [e["id"] for e in entries if "performance loss" in (e["warnings"] or "")]
    for kid in slow:
        print(f"make_kernels: warning: ptxas reports a potential performance loss in {kid}")
    print(f"make_kernels: {len(entries) - len(bad)} compiled, {len(bad)} rejected -> {args.out}")
    for e in bad:
        print(f"  {e['id']}: {e['error'].splitlines()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
