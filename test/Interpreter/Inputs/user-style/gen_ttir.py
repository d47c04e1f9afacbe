#!/usr/bin/env python3
"""Regenerate this folder's *.ttir from kernels.py (SPECS), the way
examples/gen_ttir.py writes examples/ttir: Triton 3.6's front end only, for
an sm_90 target, no GPU.

    python3 test/Interpreter/Inputs/user-style/gen_ttir.py [NAME ...]
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))
import gen_ttir  # noqa: E402

spec = importlib.util.spec_from_file_location("user_style_kernels", os.path.join(HERE, "kernels.py"))
kernels = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kernels)
gen_ttir.kernels = kernels  # relativize() names locations after kernels.__file__
for name in sys.argv[1:] or list(kernels.SPECS):
    text = gen_ttir.relativize(gen_ttir.ttir_front_end(gen_ttir.make_source(kernels.SPECS[name])))
    with open(os.path.join(HERE, name + ".ttir"), "w") as f:
        f.write(text)
    print(f"{name}: {len(text.splitlines())} lines")
