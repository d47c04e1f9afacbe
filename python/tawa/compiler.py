"""ctypes binding of the tawa compiler (include/tawa/Driver/tawa_compiler.h).

    from tawa.compiler import compile_ttir, CompilerOptions
    result = compile_ttir(ttir_text, CompilerOptions(aref_depth=3))
    result.cubin, result.metadata, result.cuda, result.ws_ir

The compiler is libtawa_compiler.so, a plain shared library with a C
interface, so no extension module built for a particular Python is needed.
It is found through $TAWA_COMPILER_LIB, else the copy installed inside this
package (tawa/_lib/), else the newest build*/lib/libtawa_compiler.so under the
repository root. Needs no GPU: PTX and CUBINs come from NVRTC.

ctypes is imported when the library is loaded: a process that finds its
kernels in tawa's disk cache never loads it.
"""
import dataclasses
import os
import re

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_PACKAGE))

# tawa_compiler.h: TAWA_STAGE_*
STAGES = {"check": 0, "ws-ir": 1, "lowered": 2, "cuda": 3, "ptx": 4, "cubin": 5}
# TAWA_OUT_*
_OUT_DIAGNOSTICS, _OUT_WS_IR, _OUT_CUDA, _OUT_METADATA, _OUT_PTX, _OUT_CUBIN, _OUT_PTXAS_LOG, _OUT_IR = range(8)
_SCHEDULES = {"heuristic": 0, "optimal": 1}
_PAIRINGS = {"auto": 0, "off": 1, "x": 2, "y": 3}


class TawaCompilerError(RuntimeError):
    """The compiler library could not be used (not found, bad options)."""


class CompilationError(RuntimeError):
    """tawa could not compile a kernel. `diagnostics` holds the compiler's
    messages, which point at the user's source lines; `location` is the
    (file, line) of the first error, or None."""

    def __init__(self, diagnostics, kernel_name=None):
        self.diagnostics = diagnostics
        self.kernel_name = kernel_name
        self.location = first_error_location(diagnostics)
        head = f"tawa cannot compile kernel '{kernel_name}'" if kernel_name else "tawa cannot compile the kernel"
        super().__init__(f"{head}:\n{diagnostics.rstrip()}")


_ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: ", re.MULTILINE)


def first_error_location(diagnostics):
    """(file, line) of the first 'FILE:LINE:COL: error:' in `diagnostics`."""
    m = _ERROR_LINE.search(diagnostics or "")
    return (m.group("file"), int(m.group("line"))) if m else None


@dataclasses.dataclass(frozen=True)
class CompilerOptions:
    """tawa's knobs under tawac's names (tawac --help); None or the default
    leaves the choice to the compiler."""
    aref_depth: int = 0            # --aref-depth D (0: the most that fit, up to 4)
    mma_depth: int = -1            # --mma-depth P (-1: the compiler's rule)
    consumer_groups: int = 0       # --consumer-groups N (0: the compiler's rule)
    persistent: bool = True        # --persistent
    pingpong: object = None        # --pingpong: True, False, or None (default)
    schedule: str = "heuristic"    # --schedule heuristic|optimal
    pair_programs: str = "auto"    # --pair-programs auto|off|x|y
    tile_swizzle: int = 8          # --tile-swizzle N
    epilogue_overlap: int = -1     # --epilogue-overlap N (-1: default)
    cluster: int = 1               # --cluster 1|2

    def validate(self):
        def check(cond, msg):
            if not cond:
                raise ValueError(msg)
        for name in ("aref_depth", "mma_depth", "consumer_groups", "tile_swizzle", "epilogue_overlap", "cluster"):
            v = getattr(self, name)
            check(isinstance(v, int) and not isinstance(v, bool), f"{name} must be an int, got {v!r}")
        check(self.aref_depth >= 0, f"aref_depth must be >= 0 (0: the compiler's choice), got {self.aref_depth}")
        check(self.mma_depth >= -1, f"mma_depth must be >= 0, or -1 for the compiler's choice, got {self.mma_depth}")
        check(0 <= self.consumer_groups <= 3, f"consumer_groups must be 1 to 3 (0: the compiler's choice), got {self.consumer_groups}")
        check(isinstance(self.persistent, bool), f"persistent must be True or False, got {self.persistent!r}")
        check(self.pingpong in (None, True, False), f"pingpong must be True, False or None, got {self.pingpong!r}")
        check(self.schedule in _SCHEDULES, f"schedule must be one of {sorted(_SCHEDULES)}, got {self.schedule!r}")
        check(self.pair_programs in _PAIRINGS, f"pair_programs must be one of {sorted(_PAIRINGS)}, got {self.pair_programs!r}")
        check(1 <= self.tile_swizzle <= 64, f"tile_swizzle must be 1 to 64, got {self.tile_swizzle}")
        check(-1 <= self.epilogue_overlap <= 8, f"epilogue_overlap must be 0 to 8 (-1: default), got {self.epilogue_overlap}")
        check(self.cluster in (1, 2), f"cluster must be 1 or 2, got {self.cluster}")
        return self

    def as_dict(self):
        return dataclasses.asdict(self)


_OPTION_FIELDS = ("stage", "aref_depth", "mma_depth", "consumer_groups", "persistent", "pingpong", "schedule",
                  "pair_programs", "tile_swizzle", "epilogue_overlap", "cluster", "want_ws_ir")
_Options = None  # tawa_compiler_options as a ctypes.Structure, made with the library's binding


def library_path():
    """Where the compiler library is taken from (see the module's doc)."""
    env = os.environ.get("TAWA_COMPILER_LIB")
    if env:
        return env
    packaged = os.path.join(_PACKAGE, "_lib", "libtawa_compiler.so")
    if os.path.exists(packaged):
        return packaged
    import glob
    candidates = glob.glob(os.path.join(_REPO, "build*", "lib", "libtawa_compiler.so"))
    if not candidates:
        raise TawaCompilerError(
            "libtawa_compiler.so not found: build it (cmake -B build-x -DTAWA_ENABLE_COMPILER=ON; "
            "ninja -C build-x tawa_compiler), install the tawa package, or set TAWA_COMPILER_LIB")
    return max(candidates, key=os.path.getmtime)


def _packaged_include_dir():
    """The device library shipped inside an installed package, if any."""
    d = os.path.join(_PACKAGE, "_include")
    return d if os.path.isdir(os.path.join(d, "tawa", "device")) else None


def device_include_dir():
    """The include directory NVRTC compiles generated kernels against (the
    runtime's rule: $TAWA_INCLUDE_DIR, else the packaged copy, else the
    source tree's)."""
    return os.environ.get("TAWA_INCLUDE_DIR") or _packaged_include_dir() or os.path.join(_REPO, "include")


_lib = None


def _library():
    global _lib, _Options
    if _lib is not None:
        return _lib
    import ctypes
    if _Options is None:
        _Options = type("_Options", (ctypes.Structure,), {"_fields_": [(n, ctypes.c_int32) for n in _OPTION_FIELDS]})
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise TawaCompilerError(f"cannot load the tawa compiler {path}: {e}") from None
    P = ctypes.c_void_p
    sigs = {
        "tawa_compiler_c_api_version": ([], ctypes.c_int),
        "tawa_compiler_version": ([], ctypes.c_char_p),
        "tawa_compiler_last_error": ([], ctypes.c_char_p),
        "tawa_compiler_options_init": ([ctypes.POINTER(_Options)], None),
        "tawa_compiler_compile": ([ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.POINTER(_Options), ctypes.POINTER(P)], ctypes.c_int),
        "tawa_compiler_result_ok": ([P], ctypes.c_int),
        "tawa_compiler_result_output": ([P, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)], ctypes.c_void_p),
        "tawa_compiler_result_free": ([P], None),
    }
    for name, (argtypes, restype) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
    if lib.tawa_compiler_c_api_version() != 1:
        raise TawaCompilerError(f"{path}: C API version {lib.tawa_compiler_c_api_version()}, binding expects 1")
    # A packaged compiler compiles against the packaged device library.
    packaged = _packaged_include_dir()
    if packaged and not os.environ.get("TAWA_INCLUDE_DIR"):
        os.environ["TAWA_INCLUDE_DIR"] = packaged
    _lib = lib
    return lib


def compiler_version():
    return _library().tawa_compiler_version().decode()


@dataclasses.dataclass
class CompileResult:
    ok: bool
    diagnostics: str
    ws_ir: str = ""
    ir: str = ""          # the IR of a stage up to "lowered"
    cuda: str = ""
    metadata: str = ""    # tawa-kernel-metadata/1 JSON
    ptx: str = ""
    cubin: bytes = b""
    ptxas_log: str = ""


def compile_ttir(ttir, options=None, stage="cubin", want_ws_ir=False, buffer_name="<ttir>",
                 cubin_name="kernel.cubin"):
    """Runs tawa's pipeline on `ttir` up to `stage` (a key of STAGES). Returns
    a CompileResult whether or not it succeeded; see compile_or_raise."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {list(STAGES)}, got {stage!r}")
    options = (options or CompilerOptions()).validate()
    lib = _library()
    import ctypes
    c = _Options()
    lib.tawa_compiler_options_init(ctypes.byref(c))
    c.stage = STAGES[stage]
    c.aref_depth = options.aref_depth
    c.mma_depth = options.mma_depth
    c.consumer_groups = options.consumer_groups
    c.persistent = int(options.persistent)
    c.pingpong = -1 if options.pingpong is None else int(options.pingpong)
    c.schedule = _SCHEDULES[options.schedule]
    c.pair_programs = _PAIRINGS[options.pair_programs]
    c.tile_swizzle = options.tile_swizzle
    c.epilogue_overlap = options.epilogue_overlap
    c.cluster = options.cluster
    c.want_ws_ir = int(want_ws_ir)
    text = ttir.encode() if isinstance(ttir, str) else bytes(ttir)
    handle = ctypes.c_void_p()
    if lib.tawa_compiler_compile(text, len(text), buffer_name.encode(), cubin_name.encode(),
                                 ctypes.byref(c), ctypes.byref(handle)) != 0:
        raise TawaCompilerError(lib.tawa_compiler_last_error().decode(errors="replace"))
    try:
        def output(which):
            size = ctypes.c_size_t()
            ptr = lib.tawa_compiler_result_output(handle, which, ctypes.byref(size))
            return ctypes.string_at(ptr, size.value) if ptr else b""

        def text_of(which):
            return output(which).decode(errors="replace")
        return CompileResult(
            ok=bool(lib.tawa_compiler_result_ok(handle)),
            diagnostics=text_of(_OUT_DIAGNOSTICS),
            ws_ir=text_of(_OUT_WS_IR),
            ir=text_of(_OUT_IR),
            cuda=text_of(_OUT_CUDA),
            metadata=text_of(_OUT_METADATA),
            ptx=text_of(_OUT_PTX),
            cubin=output(_OUT_CUBIN),
            ptxas_log=text_of(_OUT_PTXAS_LOG),
        )
    finally:
        lib.tawa_compiler_result_free(handle)


def compile_or_raise(ttir, options=None, stage="cubin", want_ws_ir=False, kernel_name=None, **kwargs):
    """compile_ttir, raising CompilationError (with the diagnostics, at the
    user's lines) when the kernel cannot be compiled."""
    result = compile_ttir(ttir, options, stage=stage, want_ws_ir=want_ws_ir, **kwargs)
    if not result.ok:
        raise CompilationError(result.diagnostics, kernel_name)
    return result
