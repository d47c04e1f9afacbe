"""`tawa.jit`: a drop-in for `triton.jit` that compiles with tawa.

    @tawa.jit                      # or @tawa.jit(aref_depth=3, fallback="triton")
    def gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, ...):
        ...                        # an ordinary Triton kernel

    gemm[grid](a_desc, b_desc, c_desc, M, N, K, BM=128, ...)   # grid: tuple or f(meta)

A call binds its arguments with Triton's own front end (the same
specialization Triton makes: constexprs, integers equal to 1, divisibility),
asks Triton for the kernel's TTIR for the sm_90a target (this needs no GPU),
compiles that with tawa (python/tawa/compiler.py) and launches the CUBIN with
tawa's runtime on PyTorch's current stream. Compiled kernels are kept in
memory (by specialization and options) and on disk (by TTIR, options, the
compiler and the device library, and the GPU architecture).

Options, per kernel (`tawa.jit(...)`) or per call (keyword arguments of the
launch), under tawac's names: aref_depth, mma_depth, consumer_groups,
persistent, pingpong, schedule ("heuristic" | "optimal"), pair_programs,
tile_swizzle, epilogue_overlap, cluster; Triton's warp-specialization names
`num_buffers_warp_spec` (= aref_depth) and `num_consumer_groups` (=
consumer_groups) are accepted as aliases.

Environment: TAWA_CACHE_DIR (cache root; else $XDG_CACHE_HOME/tawa, else
~/.cache/tawa; kernels go under jit/), TAWA_DUMP_DIR (write every stage of
each kernel compiled or loaded there), TAWA_ALWAYS_COMPILE=1 (ignore the disk
cache), TAWA_DISABLE=1 (every tawa.jit kernel runs Triton's own compilation),
TAWA_FALLBACK=triton (every kernel falls back to Triton where tawa cannot
compile it).
"""
import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
import warnings

from . import compiler as _compiler
from .compiler import CompilationError, CompilerOptions, TawaCompilerError

ARCH = "sm_90a"
_CACHE_FORMAT = "tawa-jit-cache/1"

# Triton's warp-specialization launch options, accepted under tawa's names.
OPTION_ALIASES = {
    "num_buffers_warp_spec": "aref_depth",
    "num_consumer_groups": "consumer_groups",
}
OPTION_NAMES = tuple(f.name for f in dataclasses.fields(CompilerOptions))


class TawaFallbackWarning(UserWarning):
    """A kernel tawa cannot compile runs with Triton's own compilation."""


def _env_flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def cache_dir():
    """Where compiled kernels are kept: <cache root>/jit."""
    root = os.environ.get("TAWA_CACHE_DIR")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = os.path.join(xdg, "tawa") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "tawa")
    return os.path.join(root, "jit")


def split_options(kwargs):
    """(tawa options, the rest) from a call's or a decorator's keyword
    arguments. Aliases become tawa's names; an option given twice with
    different values is an error."""
    tawa_options, rest = {}, {}
    given_as = {}
    for key, value in kwargs.items():
        name = OPTION_ALIASES.get(key, key)
        if name not in OPTION_NAMES:
            rest[key] = value
            continue
        if name in tawa_options and tawa_options[name] != value:
            raise ValueError(f"tawa option {name} given twice: {given_as[name]}={tawa_options[name]!r} "
                             f"and {key}={value!r}")
        tawa_options[name] = value
        given_as[name] = key
    return tawa_options, rest


def make_options(*layers):
    """CompilerOptions from dicts of tawa options, later ones winning (the
    kernel's, then the call's); validated."""
    merged = {}
    for layer in layers:
        merged.update(layer)
    return CompilerOptions(**merged).validate()


# ---------------------------------------------------------------------------
# Launch arguments


def _descriptor_tensor(desc):
    """The tensor a host TensorDescriptor describes, with the descriptor's
    own shape and strides (a view where they differ from the base's)."""
    base = desc.base
    shape, strides = tuple(int(s) for s in desc.shape), tuple(int(s) for s in desc.strides)
    if tuple(base.shape) == shape and tuple(base.stride()) == strides:
        return base
    return base.as_strided(shape, strides)


def expand_arguments(signature, bound_args):
    """The runtime's argument list for a call: one entry per parameter of the
    TTIR function, in order. Triton's signature (name -> type) says what each
    Python argument became: constexprs (and integers specialized to 1) are
    folded into the kernel and dropped; a host TensorDescriptor is expanded
    as Triton expands it: the tensor (for the kernel's tensor map), then its
    shape, then its strides."""
    out = []
    for name, ty in signature.items():
        value = bound_args[name]
        if ty == "constexpr":
            continue
        if not isinstance(ty, str):
            raise TypeError(f"argument '{name}': tuple arguments ({ty}) are not supported by tawa yet")
        if ty.startswith("tensordesc"):
            if getattr(value, "padding", "zero") != "zero":
                raise TypeError(f"argument '{name}': tawa kernels fill out-of-bounds tiles with zeros; "
                                f"padding={value.padding!r} is not supported yet")
            out.append(_descriptor_tensor(value))
            out.extend(int(s) for s in value.shape)
            out.extend(int(s) for s in value.strides)
        elif ty.startswith("*"):
            out.append(value)  # a tensor (its address) or an integer address
        elif ty == "i1":
            out.append(int(bool(value)))
        elif ty[0] in "iu" and ty[1:].isdigit():
            out.append(int(value))
        elif ty in ("fp16", "bf16", "fp32", "fp64"):
            out.append(float(value))
        else:
            raise TypeError(f"argument '{name}': type {ty} is not supported by tawa's launcher")
    return out


def launch_param_count(metadata):
    """Arguments a launch passes (the runtime fills num_programs itself)."""
    return sum(1 for p in metadata["params"] if p["kind"] != "num_programs")


def resolve_grid(grid, meta):
    """Triton's grid rules: a tuple (or int) of up to 3 ints, or a callable
    of the meta dict (the call's bound arguments) returning one."""
    if callable(grid):
        grid = grid(meta)
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {grid!r}")
    return tuple(int(d) for d in dims)


# ---------------------------------------------------------------------------
# Compiled kernels and the disk cache


_STAGE_FILES = {  # asm key -> file suffix in a cache entry
    "ttir": ".ttir",
    "ws-ir": ".ws-ir.mlir",
    "cuda": ".cu",
    "ptx": ".ptx",
    "cubin": ".cubin",
    "metadata": ".json",
}


class Asm:
    """kernel.asm: every stage of a compiled kernel, by Triton-style keys:
    ttir, ws-ir, cuda, ptx, cubin (bytes) and metadata (JSON text; also
    under "json"). PTX is made on first use (one more NVRTC run) and kept in
    the cache entry."""

    def __init__(self, kernel):
        self._kernel = kernel

    def keys(self):
        return list(_STAGE_FILES)

    def __contains__(self, key):
        return key in _STAGE_FILES or key == "json"

    def __getitem__(self, key):
        if key == "json":
            key = "metadata"
        if key not in _STAGE_FILES:
            raise KeyError(key)
        if key == "ptx":
            self._kernel._ensure_ptx()
        path = self._kernel.path(key)
        with open(path, "rb") as f:
            data = f.read()
        return data if key == "cubin" else data.decode()

    def items(self):
        return [(k, self[k]) for k in self.keys()]


class CompiledKernel:
    """A tawa kernel in a cache entry: its files, metadata and options, and
    (on first launch) the runtime's loaded kernel."""

    def __init__(self, name, key, directory, options, source):
        self.name = name
        self.key = key
        self.directory = directory
        self.options = options
        self.source = source  # "compiled" or "disk"
        with open(self.path("metadata")) as f:
            self.metadata = json.load(f)
        self.asm = Asm(self)
        self._runtime_kernel = None
        self._lock = threading.Lock()

    def path(self, stage):
        return os.path.join(self.directory, self.name + _STAGE_FILES[stage])

    def _ensure_ptx(self):
        if os.path.exists(self.path("ptx")):
            return
        with open(self.path("ttir")) as f:
            ttir = f.read()
        result = _compiler.compile_or_raise(ttir, self.options, stage="ptx", kernel_name=self.name,
                                            buffer_name=self.name + ".ttir")
        _write_atomically(self.path("ptx"), result.ptx.encode())

    def runtime_kernel(self):
        """The kernel loaded by tawa's runtime (needs a GPU)."""
        with self._lock:
            if self._runtime_kernel is None:
                from .runtime import Kernel
                self._runtime_kernel = Kernel(self.path("metadata"))
            return self._runtime_kernel

    def launch(self, grid, args, stream=None):
        expected = launch_param_count(self.metadata)
        if len(args) != expected:
            raise TypeError(f"kernel '{self.name}' takes {expected} launch arguments after expansion, got "
                            f"{len(args)}")
        self.runtime_kernel()(*args, grid=grid, stream=stream)

    def __getitem__(self, grid):
        """Launches with already-expanded runtime arguments (for callers that
        keep the handle)."""
        return lambda *args, stream=None: self.launch(resolve_grid(grid, {}), list(args), stream)


def _write_atomically(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


_identity_lock = threading.Lock()
_compiler_identity = None


def compiler_identity():
    """What, besides the TTIR and the options, decides a compiled kernel:
    the compiler's version and library bytes (a rebuilt compiler must not
    reuse old entries), the device library headers that NVRTC compiles the
    generated code against, and the target architecture."""
    global _compiler_identity
    with _identity_lock:
        if _compiler_identity is None:
            h = hashlib.sha256()
            h.update(_compiler.compiler_version().encode())
            with open(_compiler.library_path(), "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            device_dir = os.path.join(_compiler.device_include_dir(), "tawa", "device")
            for root, dirs, files in os.walk(device_dir):
                dirs.sort()
                for name in sorted(files):
                    path = os.path.join(root, name)
                    h.update(os.path.relpath(path, device_dir).encode() + b"\0")
                    with open(path, "rb") as f:
                        h.update(f.read())
            h.update(ARCH.encode())
            _compiler_identity = h.hexdigest()
        return _compiler_identity


def cache_key(ttir, options):
    payload = json.dumps({"format": _CACHE_FORMAT, "ttir": ttir, "options": options.as_dict(),
                          "compiler": compiler_identity()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _safe_name(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)[:100] or "kernel"


def _entry_complete(directory, name):
    cubin = os.path.join(directory, name + ".cubin")
    try:
        with open(cubin, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return False
    except OSError:
        return False
    return os.path.exists(os.path.join(directory, name + ".json"))


def compile_to_cache(name, ttir, options, stats=None):
    """The CompiledKernel for this TTIR and these options: from the disk
    cache, or compiled (raising CompilationError) and stored there."""
    name = _safe_name(name)
    key = cache_key(ttir, options)
    directory = os.path.join(cache_dir(), key[:2], key)
    if not _env_flag("TAWA_ALWAYS_COMPILE") and _entry_complete(directory, name):
        if stats is not None:
            stats["disk_hits"] += 1
        return _dumped(CompiledKernel(name, key, directory, options, "disk"))

    result = _compiler.compile_or_raise(ttir, options, stage="cubin", want_ws_ir=True, kernel_name=name,
                                        buffer_name=name + ".ttir", cubin_name=name + ".cubin")
    if stats is not None:
        stats["compiles"] += 1
    if result.diagnostics.strip():
        warnings.warn(f"tawa: {result.diagnostics.strip()}", stacklevel=3)
    files = {
        ".ttir": ttir.encode(),
        ".ws-ir.mlir": result.ws_ir.encode(),
        ".cu": result.cuda.encode(),
        ".cubin": result.cubin,
        ".ptxas.log": result.ptxas_log.encode(),
        ".json": result.metadata.encode(),  # last: it marks the entry complete
    }
    parent = os.path.dirname(directory)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
    try:
        for suffix, data in files.items():
            with open(os.path.join(staging, name + suffix), "wb") as f:
                f.write(data)
        if os.path.isdir(directory):
            shutil.rmtree(directory)  # incomplete, or TAWA_ALWAYS_COMPILE
        os.rename(staging, directory)
    except OSError:
        # Another process renamed its entry first: theirs is as good.
        shutil.rmtree(staging, ignore_errors=True)
        if not _entry_complete(directory, name):
            raise
    return _dumped(CompiledKernel(name, key, directory, options, "compiled"))


def _dumped(kernel):
    """Copies every stage of `kernel` under $TAWA_DUMP_DIR, if it is set."""
    dump_root = os.environ.get("TAWA_DUMP_DIR")
    if not dump_root:
        return kernel
    target = os.path.join(dump_root, f"{kernel.name}-{kernel.key[:16]}")
    os.makedirs(target, exist_ok=True)
    kernel._ensure_ptx()
    for stage in _STAGE_FILES:
        shutil.copyfile(kernel.path(stage), os.path.join(target, os.path.basename(kernel.path(stage))))
    with open(os.path.join(target, kernel.name + ".options.json"), "w") as f:
        json.dump(kernel.options.as_dict(), f, indent=1, sort_keys=True)
    return kernel


# ---------------------------------------------------------------------------
# Triton's front end


class _TritonFrontEnd:
    """Triton's binder and TTIR stage for one kernel, for the sm_90a target
    (no GPU needed: Triton's driver is never asked for the current one)."""

    def __init__(self, triton_fn):
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend
        from triton.runtime.jit import create_function_from_signature
        self.fn = triton_fn
        self.target = GPUTarget("cuda", 90, 32)
        self.backend = make_backend(self.target)
        self.binder = create_function_from_signature(triton_fn.signature, triton_fn.params, self.backend)

    def bind(self, args, kwargs):
        """(bound args: name -> value, specialization, Triton options)."""
        return self.binder(*args, **kwargs)

    def ttir(self, kwargs, bound_args, specialization, options):
        """The TTIR text Triton prints for this specialization
        (kernel.asm['ttir']), and Triton's signature of it."""
        from triton._C.libtriton import ir
        from triton.backends.compiler import Language
        from triton.compiler.compiler import ASTSource
        options, signature, constexprs, attrs = self.fn._pack_args(self.backend, kwargs, bound_args,
                                                                   specialization, options)
        src = ASTSource(self.fn, signature, constexprs, attrs)
        context = ir.context()
        ir.load_dialects(context)
        self.backend.load_dialects(context)
        module = src.make_ir(self.target, options, self.backend.get_codegen_implementation(options),
                             self.backend.get_module_map(), context)
        stages = {}
        self.backend.add_stages(stages, options, Language.TRITON)
        module = stages["ttir"](module, {})
        return str(module), signature


class JITFunction:
    """What `tawa.jit` returns: `kernel[grid](*args, **kwargs)` like Triton's."""

    def __init__(self, fn, options=None, fallback=None, **triton_jit_kwargs):
        import triton
        from triton.runtime.jit import JITFunction as TritonJITFunction
        if isinstance(fn, JITFunction):
            fn = fn.triton_fn
        self.triton_fn = fn if isinstance(fn, TritonJITFunction) else triton.jit(fn, **triton_jit_kwargs)
        self.__name__ = self.triton_fn.__name__
        self.__doc__ = getattr(self.triton_fn.fn, "__doc__", None)
        self.options = dict(options or {})
        make_options(self.options)  # fail at decoration on a bad option
        if fallback not in (None, "triton"):
            raise ValueError(f"fallback must be None or 'triton', got {fallback!r}")
        self.fallback = fallback
        self._front_end = None
        self._kernels = {}  # in-memory cache: specialization key -> CompiledKernel or "triton"
        self._lock = threading.Lock()
        self._warned_fallback = False
        self.last_kernel = None
        self.stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0, "fallbacks": 0, "ttir": 0}

    def __repr__(self):
        return f"tawa.jit({self.triton_fn!r})"

    @property
    def fn(self):
        return self.triton_fn.fn

    @property
    def asm(self):
        """The stages of the kernel compiled by the last call."""
        if self.last_kernel is None:
            raise RuntimeError(f"{self.__name__} has not been compiled yet: call it or its warmup first")
        return self.last_kernel.asm

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles for these arguments without launching (needs no GPU)."""
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def _fallback_mode(self):
        return self.fallback or ("triton" if os.environ.get("TAWA_FALLBACK", "").lower() == "triton" else None)

    def _run_triton(self, args, kwargs, grid, warmup):
        return self.triton_fn.run(*args, grid=grid, warmup=warmup, **kwargs)

    def _front(self):
        if self._front_end is None:
            self._front_end = _TritonFrontEnd(self.triton_fn)
        return self._front_end

    def run(self, *args, grid, warmup, **kwargs):
        call_options, triton_kwargs = split_options(kwargs)
        if _env_flag("TAWA_DISABLE"):
            return self._run_triton(args, triton_kwargs, grid, warmup)
        options = make_options(self.options, call_options)
        front = self._front()
        bound_args, specialization, triton_options = front.bind(args, triton_kwargs)
        key = (str(specialization), str(triton_options), tuple(sorted(options.as_dict().items())))

        with self._lock:
            entry = self._kernels.get(key)
        if entry is None:
            try:
                self.stats["ttir"] += 1
                ttir, signature = front.ttir(triton_kwargs, bound_args, specialization, triton_options)
                entry = (compile_to_cache(self.__name__, ttir, options, self.stats), signature)
            except (CompilationError, TawaCompilerError) as error:
                if self._fallback_mode() != "triton":
                    raise
                self._say_fallback(error)
                entry = "triton"
            with self._lock:
                self._kernels[key] = entry
        else:
            self.stats["memory_hits"] += 1

        if entry == "triton":
            self.stats["fallbacks"] += 1
            return self._run_triton(args, triton_kwargs, grid, warmup)
        kernel, signature = entry
        self.last_kernel = kernel
        if not warmup:
            if grid is None:
                raise ValueError(f"{self.__name__}: a launch needs a grid: kernel[grid](...)")
            kernel.launch(resolve_grid(grid, bound_args), expand_arguments(signature, bound_args))
        return kernel

    def _say_fallback(self, error):
        if self._warned_fallback:
            return
        self._warned_fallback = True
        first = str(error).strip().splitlines()
        reason = first[1] if len(first) > 1 else (first[0] if first else "")
        warnings.warn(f"tawa: kernel '{self.__name__}' runs with Triton's own compilation (fallback='triton'): "
                      f"{reason}", TawaFallbackWarning, stacklevel=4)


def jit(fn=None, *, fallback=None, **kwargs):
    """`@tawa.jit` or `@tawa.jit(option=value, ..., fallback="triton")`; also
    wraps a function already decorated with `triton.jit`. Keyword arguments
    that are not tawa options go to `triton.jit` (do_not_specialize, debug,
    ...)."""
    tawa_options, triton_jit_kwargs = split_options(kwargs)

    def decorate(f):
        return JITFunction(f, options=tawa_options, fallback=fallback, **triton_jit_kwargs)

    return decorate(fn) if fn is not None else decorate
