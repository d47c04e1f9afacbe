#!/usr/bin/env python3
"""Regenerate examples/ttir/<name>.ttir from the kernels in examples/kernels.py.

Needs Triton 3.6.0 (``pip install triton==3.6.0``); needs neither a GPU nor PyTorch. Each kernel is
specialized with ``triton.compiler.ASTSource`` exactly as a launch with host TensorDescriptor
arguments would specialize it (``tensordesc<fp16[128, 64]>`` signature entries, constexprs,
``tt.divisibility = 16`` on the integer sizes), and only the front end of ``triton.compile`` runs:
the AST is lowered to TTIR and the backend's ``ttir`` stage (``make_ttir``: inliner, canonicalizer,
combine, CSE, ...) is applied for an sm_90 target. The later stages (TTGIR, LLVM, PTX, ptxas) are
not run, so nothing here touches a GPU, a driver or the Triton cache. The text written is
``str(module)`` -- what ``CompiledKernel.asm['ttir']`` holds -- with the absolute paths in
``loc(...)`` made relative (``kernels.py``, ``triton/language/...``).

    python3 examples/gen_ttir.py                 # writes examples/ttir/*.ttir
    python3 examples/gen_ttir.py --out DIR       # somewhere else
    python3 examples/gen_ttir.py --check         # compare with the files on disk, exit 1 on any difference
    python3 examples/gen_ttir.py --full-compile  # also run triton.compile end to end (needs ptxas, which
                                                 # the triton wheel bundles) and assert its asm['ttir']
                                                 # equals ours
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.compiler.compiler import make_backend  # noqa: E402
from triton._C.libtriton import ir  # noqa: E402

import kernels  # noqa: E402

TRITON_VERSION = "3.6.0"
TARGET = GPUTarget("cuda", 90, 32)


def make_source(spec):
    """The ASTSource a launch with host TensorDescriptors of the given block shapes would build."""
    fn = spec["kernel"]
    signature, attrs = {}, {}
    for name in fn.arg_names:
        if name in spec["descriptors"]:
            dtype, block = spec["descriptors"][name]
            signature[name] = f"tensordesc<{dtype}[{', '.join(str(b) for b in block)}]>"
        elif name in spec["scalars"]:
            signature[name] = spec["scalars"][name]
        elif name in spec["constexprs"]:
            signature[name] = "constexpr"
        else:
            raise ValueError(f"{fn.__name__}: argument {name} has no type in the example table")
        if name in spec["divisible_by_16"]:
            attrs[(fn.arg_names.index(name), )] = [["tt.divisibility", 16]]
    return ASTSource(fn, signature=signature, constexprs=dict(spec["constexprs"]), attrs=attrs)


def relativize(text):
    """Make the file names in loc(...) relative: kernels.py and triton/language/..."""
    kernels_dir = os.path.dirname(os.path.abspath(kernels.__file__))
    triton_parent = os.path.dirname(os.path.dirname(os.path.abspath(triton.__file__)))
    text = text.replace(f'"{kernels_dir}{os.sep}', '"')
    text = text.replace(f'"{triton_parent}{os.sep}', '"')
    return text


def ttir_front_end(src):
    """AST -> TTIR: the part of triton.compile up to and including the 'ttir' stage."""
    backend = make_backend(TARGET)
    options = backend.parse_options(dict())
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    codegen_fns = backend.get_codegen_implementation(options)
    module_map = backend.get_module_map()
    module = src.make_ir(TARGET, options, codegen_fns, module_map, context)
    stages = dict()
    backend.add_stages(stages, options, src.language)
    metadata = {}
    module = stages["ttir"](module, metadata)
    return str(module)


def ttir_full_compile(src):
    """The same text through the public triton.compile (all stages, fresh cache)."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        triton.knobs.cache.dir = cache
        return triton.compile(src, target=TARGET).asm["ttir"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "ttir"), help="output directory (default: examples/ttir)")
    ap.add_argument("--check", action="store_true", help="compare with existing files instead of writing")
    ap.add_argument("--full-compile", action="store_true", help="cross-check against triton.compile(...).asm['ttir']")
    ap.add_argument("names", nargs="*", help="subset of examples (default: all)")
    args = ap.parse_args()

    if triton.__version__ != TRITON_VERSION:
        sys.exit(f"gen_ttir.py: Triton {TRITON_VERSION} is required, found {triton.__version__}")
    names = args.names or list(kernels.EXAMPLES)
    unknown = [n for n in names if n not in kernels.EXAMPLES]
    if unknown:
        sys.exit(f"gen_ttir.py: unknown example(s) {unknown}; known: {list(kernels.EXAMPLES)}")

    os.makedirs(args.out, exist_ok=True)
    failed = False
    for name in names:
        spec = kernels.EXAMPLES[name]
        text = relativize(ttir_front_end(make_source(spec)))
        if args.full_compile:
            full = relativize(ttir_full_compile(make_source(spec)))
            if full != text:
                print(f"{name}: triton.compile asm['ttir'] DIFFERS from the front-end-only text")
                failed = True
        path = os.path.join(args.out, name + ".ttir")
        if args.check:
            old = open(path).read() if os.path.exists(path) else None
            if old != text:
                print(f"{name}: {path} is out of date")
                failed = True
            continue
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {os.path.relpath(path)} ({len(text.splitlines())} lines)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
