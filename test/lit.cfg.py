# -*- Python -*-
# lit configuration for tawa's FileCheck tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "tawa"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".ttir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tawa_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tawa_src", config.tawa_src_root))
config.substitutions.append(("%shared_ttir", config.shared_ttir_dir))
config.substitutions.append(("%examples_ttir",
                             os.path.join(config.tawa_src_root, "examples", "ttir")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.tawa_tools_dir, config.llvm_tools_dir]
tools = ["tawa-opt", "tawac", "tawa-sched", "tawa-check", "tawa-fuzz-replay", "tawa-mega"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
