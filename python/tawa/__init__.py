"""tawa: warp-specialized kernels for Hopper.

`tawa.jit` compiles ordinary Triton kernels with tawa (docs/PYTHON.md);
`tawa.compiler` is the compiler's ctypes binding; `tawa.runtime` loads and
launches compiled kernels on PyTorch tensors. Importing tawa imports neither
Triton nor PyTorch: `tawa.jit` needs Triton when it decorates, launches need
PyTorch.
"""
from .compiler import CompilationError, CompilerOptions, TawaCompilerError  # noqa: F401
# The decorator replaces the submodule of the same name as an attribute of the
# package; `from tawa.jit import ...` still reaches the module.
from .jit import JITFunction, TawaFallbackWarning, jit  # noqa: F401
from .autotune import Autotuner, Config, autotune  # noqa: F401
