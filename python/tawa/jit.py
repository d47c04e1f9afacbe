"""`tawa.jit`: a drop-in for `triton.jit` that compiles with tawa.

    @tawa.jit                      # or @tawa.jit(aref_depth=3, fallback="triton")
    def gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, ...):
        ...                        # an ordinary Triton kernel

    gemm[grid](a_desc, b_desc, c_desc, M, N, K, BM=128, ...)   # grid: tuple or f(meta)

A call binds its arguments as Triton's front end does (the same
specialization Triton makes: constexprs, integers equal to 1, divisibility;
tawa's binder, python/tawa/_binder.py, which spares a new process the import
of Triton's Gluon modules that Triton's binder makes on its first use),
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

A call that finds its specialization in memory packs the arguments straight
into the runtime's argument array and launches (`_Launcher`); a new
specialization looks for its kernel on disk by a key over the kernel's source
(Triton's own cache key of the function and what it calls), the
specialization and the options before it asks Triton for TTIR.
"""
import dataclasses
import hashlib
import json
import os
import re
import shutil
import struct
import tempfile
import threading
import warnings

from . import compiler as _compiler
from .compiler import CompilationError, CompilerOptions, TawaCompilerError

ARCH = "sm_90a"
_CACHE_FORMAT = "tawa-jit-cache/1"
_INDEX_FORMAT = "tawa-jit-index/1"

# Triton's warp-specialization launch options, accepted under tawa's names.
OPTION_ALIASES = {
    "num_buffers_warp_spec": "aref_depth",
    "num_consumer_groups": "consumer_groups",
}
OPTION_NAMES = tuple(f.name for f in dataclasses.fields(CompilerOptions))
_OPTION_KEYS = frozenset(OPTION_NAMES) | frozenset(OPTION_ALIASES)


class TawaFallbackWarning(UserWarning):
    """A kernel tawa cannot compile runs with Triton's own compilation."""


def _env_flag(name):
    value = os.environ.get(name)
    return bool(value) and value.strip().lower() in ("1", "true", "yes", "on")


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


def _grid3(grid):
    """A grid as three dimensions (Triton pads with 1)."""
    if grid.__class__ is tuple:
        n = len(grid)
        if n == 3:
            return grid
        if n == 2:
            return (grid[0], grid[1], 1)
        if n == 1:
            return (grid[0], 1, 1)
    dims = resolve_grid(grid, {})
    return dims + (1,) * (3 - len(dims))


# The runtime's argument array (tawa_runtime.h): one 120-byte tawa_arg per
# launch argument: kind, dtype, rank, reserved (int32), ptr (uint64),
# shape[5], strides[5] (int64), i (int64), f (double). A launch packs the
# grid (3 x uint32, padded to 16 bytes) and the array into one buffer with one
# struct.pack_into; a format's pad bytes ('x') are written as zeros.
_ARG_SIZE = 120
_ARG_TENSOR, _ARG_INT, _ARG_FLOAT = 0, 1, 2
_INT_FORMAT = "i100xq8x"
_UINT64_FORMAT = "i100xQ8x"
_FLOAT_FORMAT = "i108xd"
_GRID_FORMAT = "3I4x"
_GRID_SIZE = 16
# Triton's element type names -> TAWA_DTYPE_*.
DTYPE_CODES = {"fp16": 0, "bf16": 1, "fp32": 2, "fp8e4nv": 3, "fp8e5": 4, "i8": 5, "i32": 6, "i64": 7}
_TENSORDESC = re.compile(r"tensordesc<([^\[>,]+)\[([^\]]*)\]")


def _tensor_format(rank):
    pad = f"{8 * (5 - rank)}x" if rank < 5 else ""
    return f"iii4xQ{rank}q{pad}{rank}q{pad}16x"


def _bad_padding(name, padding):
    raise TypeError(f"argument '{name}': tawa kernels fill out-of-bounds tiles with zeros; "
                    f"padding={padding!r} is not supported yet")


def _not_on_gpu(name, tensor):
    raise TypeError(f"argument '{name}': tensor is on {getattr(tensor, 'device', '?')}, not on a CUDA device")


class _Launcher:
    """The launch of one compiled specialization. Everything that does not
    change between calls is worked out once from Triton's signature: which
    arguments are dropped (constexprs, integers folded into the kernel), how
    each host TensorDescriptor expands (its tensor for the tensor map: dtype
    and rank from the signature, the address from the call; then its shape
    and strides as integers, as Triton expands it), which take an address or
    a number. A call runs generated code that reads the arguments, packs
    them with the grid into one buffer (struct.pack_into) and calls the
    runtime's tawa_kernel_launch_grid through ctypes with plain integers.

    `target` is (launch function, kernel handle, current-stream function):
    the runtime's by default (CompiledKernel.launch_target); tests pass a
    recorder."""

    def __init__(self, name, signature, expected_count, target):
        launch_fn, handle, stream_fn = target
        formats, values, lines, params = ["=", _GRID_FORMAT], ["g0", "g1", "g2"], [], []
        count = 0
        for index, (param, ty) in enumerate(signature.items()):
            v = f"v{index}"
            params.append(v)
            if ty == "constexpr":
                continue
            if not isinstance(ty, str):
                raise TypeError(f"argument '{param}': tuple arguments ({ty}) are not supported by tawa yet")
            if ty.startswith("tensordesc"):
                match = _TENSORDESC.match(ty)
                if not match or match.group(1) not in DTYPE_CODES:
                    raise TypeError(f"argument '{param}': descriptor type {ty} has no tawa equivalent")
                rank = len([d for d in match.group(2).split(",") if d.strip()])
                if not 1 <= rank <= 5:
                    raise TypeError(f"argument '{param}': rank {rank} outside 1..5")
                shape = [f"s{index}_{d}" for d in range(rank)]
                strides = [f"r{index}_{d}" for d in range(rank)]
                lines += [f"if {v}.padding != 'zero': _bad_padding({param!r}, {v}.padding)",
                          f"t{index} = {v}.base",
                          f"if not t{index}.is_cuda: _not_on_gpu({param!r}, t{index})",
                          f"{', '.join(shape)}, = {v}.shape",
                          f"{', '.join(strides)}, = {v}.strides"]
                formats.append(_tensor_format(rank))
                values += [str(_ARG_TENSOR), str(DTYPE_CODES[match.group(1)]), str(rank),
                           f"t{index}.data_ptr()", *shape, *strides]
                for scalar in shape + strides:
                    formats.append(_INT_FORMAT)
                    values += [str(_ARG_INT), scalar]
                count += 1 + 2 * rank
            elif ty.startswith("*"):
                # A tensor's address, or an address given as an integer.
                lines.append(f"p{index} = {v} if {v}.__class__ is int else "
                             f"({v}.data_ptr() if {v}.is_cuda else _not_on_gpu({param!r}, {v}))")
                formats.append(_INT_FORMAT)
                values += [str(_ARG_INT), f"p{index}"]
                count += 1
            elif ty == "i1":
                formats.append(_INT_FORMAT)
                values += [str(_ARG_INT), f"(1 if {v} else 0)"]
                count += 1
            elif ty[0] in "iu" and ty[1:].isdigit():
                formats.append(_UINT64_FORMAT if ty == "u64" else _INT_FORMAT)
                values += [str(_ARG_INT), v]
                count += 1
            elif ty in ("fp16", "bf16", "fp32", "fp64"):
                formats.append(_FLOAT_FORMAT)
                values += [str(_ARG_FLOAT), v]
                count += 1
            else:
                raise TypeError(f"argument '{param}': type {ty} is not supported by tawa's launcher")
        if count != expected_count:
            raise TypeError(f"kernel '{name}' takes {expected_count} launch arguments after expansion, "
                            f"its signature gives {count}")
        layout = struct.Struct("".join(formats))
        assert layout.size == _GRID_SIZE + _ARG_SIZE * count
        words = (layout.size + 7) // 8
        body = "\n    ".join(lines + [
            "g0, g1, g2 = grid",
            "buf = _Buffer()",
            "try:",
            f"    _pack_into(buf, 0, {', '.join(values)})",
            "except _struct_error as error:",
            "    _bad_value(error, grid)",
            "address = _addressof(buf)",
            f"if _launch(_handle, address + {_GRID_SIZE}, {count}, address, _stream()):",
            "    _failed()",
        ])
        source = f"def launch({', '.join(['grid'] + params)}):\n    {body}\n"
        import ctypes
        namespace = {
            "_Buffer": ctypes.c_uint64 * words, "_pack_into": layout.pack_into, "_struct_error": struct.error,
            "_addressof": ctypes.addressof, "_launch": launch_fn, "_handle": handle, "_stream": stream_fn,
            "_bad_padding": _bad_padding, "_not_on_gpu": _not_on_gpu,
            "_bad_value": lambda error, grid: self._bad_value(error, grid), "_failed": self._failed,
        }
        exec(compile(source, f"<tawa launcher for {name}>", "exec"), namespace)
        self.name = name
        self.count = count
        self.layout = layout
        self.source = source
        self.launch = namespace["launch"]

    def _bad_value(self, error, grid):
        if any(not isinstance(d, int) or not 0 <= d < 1 << 32 for d in grid):
            raise ValueError(f"kernel '{self.name}': grid {tuple(grid)!r} must be 1 to 3 integers in 0..2^32-1")
        raise TypeError(f"kernel '{self.name}': an argument does not fit its parameter's type ({error})")

    def _failed(self):
        from .runtime import TawaError, _library
        raise TawaError(_library().tawa_last_error().decode(errors="replace"))


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

    def launch_target(self):
        """What a _Launcher calls: the runtime's launch function taking plain
        integers, this kernel's handle (loaded on first use), and a function
        returning PyTorch's current stream."""
        from . import runtime
        return runtime.raw_launch_function(), self.runtime_kernel().handle, runtime.current_stream_function()

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
_identities = {}  # file stamps -> identity, in this process


def _device_library_files():
    device_dir = os.path.join(_compiler.device_include_dir(), "tawa", "device")
    out = []
    for root, dirs, files in os.walk(device_dir):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            out.append((os.path.relpath(path, device_dir), path))
    return out


def compiler_identity():
    """What, besides the TTIR and the options, decides a compiled kernel:
    the compiler's version and library bytes (a rebuilt compiler must not
    reuse old entries), the device library headers that NVRTC compiles the
    generated code against, and the target architecture.

    Hashing the library's bytes takes tens of milliseconds, so a process
    first looks for the identity it computed before from files with the
    same paths, sizes, modification times and inodes
    (<cache>/jit/identity/)."""
    with _identity_lock:
        library = os.path.abspath(_compiler.library_path())
        if not os.path.isfile(library):
            raise TawaCompilerError(f"cannot load the tawa compiler {library}: no such file")
        files = [("", library)] + _device_library_files()
        stamp = hashlib.sha256(_CACHE_FORMAT.encode())
        for rel, path in files:
            st = os.stat(path)
            stamp.update(f"{rel}\0{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0".encode())
        stamp.update(ARCH.encode())
        stamp = stamp.hexdigest()
        memo = os.path.join(cache_dir(), "identity", stamp)
        identity = _identities.get(stamp)
        if identity is None:
            try:
                with open(memo) as f:
                    text = f.read().strip()
                if re.fullmatch(r"[0-9a-f]{64}", text):
                    identity = text
            except OSError:
                pass
        if identity is None:
            h = hashlib.sha256()
            h.update(_compiler.compiler_version().encode())
            with open(library, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            for rel, path in files[1:]:
                h.update(rel.encode() + b"\0")
                with open(path, "rb") as f:
                    h.update(f.read())
            h.update(ARCH.encode())
            identity = h.hexdigest()
        # Every cache directory used gets the memo, so that a new process
        # using it need not hash the library.
        if not os.path.exists(memo):
            try:
                os.makedirs(os.path.dirname(memo), exist_ok=True)
                _write_atomically(memo, identity.encode())
            except OSError:
                pass  # a read-only cache: computed again next time
        _identities[stamp] = identity
        return identity


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


def _index_path(source_key):
    return os.path.join(cache_dir(), "index", source_key[:2], source_key + ".json")


def lookup_source_index(name, source_key, options):
    """The CompiledKernel a source key was compiled to before, if its entry
    is still complete; else None."""
    name = _safe_name(name)
    try:
        with open(_index_path(source_key)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    key = record.get("key", "") if isinstance(record, dict) else ""
    if record.get("format") != _INDEX_FORMAT or record.get("name") != name or \
            not re.fullmatch(r"[0-9a-f]{64}", key):
        return None
    directory = os.path.join(cache_dir(), key[:2], key)
    if not _entry_complete(directory, name):
        return None
    return _dumped(CompiledKernel(name, key, directory, options, "disk"))


def record_source_index(source_key, kernel):
    """Remembers which cache entry a source key compiles to."""
    path = _index_path(source_key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _write_atomically(path, json.dumps({"format": _INDEX_FORMAT, "name": kernel.name,
                                            "key": kernel.key}).encode())
    except OSError:
        pass  # the index only saves time


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

    def pack(self, kwargs, bound_args, specialization, options):
        """Triton's (options, signature, constexprs, attributes) for a bound
        call (no IR is made)."""
        return self.fn._pack_args(self.backend, kwargs, bound_args, specialization, options)

    def source_key(self, packed, tawa_options):
        """A key over everything the TTIR comes from, known before any IR is
        made: Triton's version and cache-invalidating environment, Triton's
        key of the kernel's source and of every function it calls (its
        cache_key), the file it is in (the TTIR's locations name it), the
        signature, constexprs, attributes and Triton's options; and tawa's
        options and compiler. It finds a kernel compiled before without
        running the front end (what Triton's own cache does)."""
        import triton
        from triton._C.libtriton import get_cache_invalidating_env_vars
        options, signature, constexprs, attrs = packed
        get_key = lambda x: x.cache_key if hasattr(x, "cache_key") else repr(x)  # noqa: E731
        payload = json.dumps({
            "format": _INDEX_FORMAT,
            "triton": triton.__version__,
            "env": sorted(get_cache_invalidating_env_vars().items()),
            "target": [self.target.backend, self.target.arch, self.target.warp_size],
            "fn": self.fn.cache_key,
            "file": self.fn.fn.__code__.co_filename,
            "signature": [[k, repr(v)] for k, v in signature.items()],
            "constexprs": [[repr(k), get_key(v)] for k, v in sorted(constexprs.items())],
            "attrs": repr(sorted(attrs.items())),
            "triton_options": options.hash() if hasattr(options, "hash") else repr(sorted(vars(options).items())),
            "options": tawa_options.as_dict(),
            "compiler": compiler_identity(),
        }, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def ttir(self, packed):
        """The TTIR text Triton prints for this specialization
        (kernel.asm['ttir'])."""
        from triton._C.libtriton import ir
        from triton.backends.compiler import Language
        from triton.compiler.compiler import ASTSource
        options, signature, constexprs, attrs = packed
        src = ASTSource(self.fn, signature, constexprs, attrs)
        context = ir.context()
        ir.load_dialects(context)
        self.backend.load_dialects(context)
        module = src.make_ir(self.target, options, self.backend.get_codegen_implementation(options),
                             self.backend.get_module_map(), context)
        stages = {}
        self.backend.add_stages(stages, options, Language.TRITON)
        module = stages["ttir"](module, {})
        return str(module)


class _Specialization:
    """What the in-memory cache holds for one specialization and set of
    options: the compiled kernel, Triton's signature of it, and (from the
    first launch) its launcher."""

    __slots__ = ("kernel", "signature", "launch")

    def __init__(self, kernel, signature):
        self.kernel = kernel
        self.signature = signature
        self.launch = None

    def make_launch(self):
        launcher = _Launcher(self.kernel.name, self.signature, launch_param_count(self.kernel.metadata),
                             self.kernel.launch_target())
        self.launch = launcher.launch
        return self.launch


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
        self.binder = None  # tawa's (_binder.Binder), made on the first call
        self._binder = None
        # In-memory cache: (specialization, the classes of the constexpr
        # values (1, 1.0 and True are equal in Python, not to Triton),
        # Triton's options, options token) -> _Specialization, or "triton"
        # where the kernel falls back.
        self._kernels = {}
        self._lock = threading.Lock()
        # Options: each distinct CompilerOptions gets a small integer token
        # for the in-memory key; a call's options are validated once.
        self._option_tokens = {}
        self._call_option_memo = {}
        self._default_options = self._token(make_options(self.options))
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
            from ._binder import Binder
            front = _TritonFrontEnd(self.triton_fn)
            # tawa's binder gives Triton's binder's answer without its
            # native specializer (whose first use imports Triton's Gluon
            # modules); it hands what it does not know to Triton's.
            self.binder = Binder(self.triton_fn, front.backend, lambda: front.binder)
            self._binder = self.binder.bind
            self._front_end = front
        return self._front_end

    def _token(self, options):
        return (self._option_tokens.setdefault(options, len(self._option_tokens)), options)

    def _call_options(self, call_options):
        """(token, CompilerOptions) for a call's tawa options over the
        kernel's."""
        try:
            memo_key = tuple(sorted(call_options.items()))
            found = self._call_option_memo.get(memo_key)
        except TypeError:  # an unhashable value: validate() will say what is wrong
            memo_key = found = None
        if found is None:
            found = self._token(make_options(self.options, call_options))
            if memo_key is not None:
                self._call_option_memo[memo_key] = found
        return found

    def run(self, *args, grid, warmup, **kwargs):
        if kwargs and not _OPTION_KEYS.isdisjoint(kwargs):
            call_options, kwargs = split_options(kwargs)
        else:
            call_options = None
        if _env_flag("TAWA_DISABLE"):
            return self._run_triton(args, kwargs, grid, warmup)
        token, options = self._call_options(call_options) if call_options else self._default_options
        binder = self._binder
        if binder is None:
            self._front()
            binder = self._binder
        bound_args, specialization, triton_options, constexpr_types = binder(*args, **kwargs)
        key = (tuple(specialization), constexpr_types, str(triton_options) if triton_options else "", token)
        entry = self._kernels.get(key)
        if entry is None:
            entry = self._compile(key, kwargs, bound_args, specialization, triton_options, options)
        else:
            self.stats["memory_hits"] += 1
        if entry.__class__ is not _Specialization:
            self.stats["fallbacks"] += 1
            return self._run_triton(args, kwargs, grid, warmup)
        kernel = entry.kernel
        self.last_kernel = kernel
        if warmup:
            return kernel
        if grid is None:
            raise ValueError(f"{self.__name__}: a launch needs a grid: kernel[grid](...)")
        if callable(grid):
            grid = grid(bound_args)
        (entry.launch or entry.make_launch())(_grid3(grid), *bound_args.values())
        return kernel

    def _compile(self, key, triton_kwargs, bound_args, specialization, triton_options, options):
        """The in-memory entry for a specialization not seen before: from the
        disk by its source key, else from Triton's TTIR compiled by tawa (or
        "triton" where tawa cannot compile it and the kernel falls back)."""
        front = self._front()
        with self._lock:
            entry = self._kernels.get(key)
            if entry is not None:
                return entry
            try:
                packed = front.pack(triton_kwargs, bound_args, specialization, triton_options)
                kernel, source_key = None, None
                if not _env_flag("TAWA_ALWAYS_COMPILE"):
                    source_key = front.source_key(packed, options)
                    kernel = lookup_source_index(self.__name__, source_key, options)
                    if kernel is not None:
                        self.stats["disk_hits"] += 1
                if kernel is None:
                    self.stats["ttir"] += 1
                    kernel = compile_to_cache(self.__name__, front.ttir(packed), options, self.stats)
                    record_source_index(source_key or front.source_key(packed, options), kernel)
                entry = _Specialization(kernel, packed[1])
            except (CompilationError, TawaCompilerError) as error:
                if self._fallback_mode() != "triton":
                    raise
                self._say_fallback(error)
                entry = "triton"
            self._kernels[key] = entry
        return entry

    def _say_fallback(self, error):
        if self._warned_fallback:
            return
        self._warned_fallback = True
        first = str(error).strip().splitlines()
        reason = first[1] if len(first) > 1 else (first[0] if first else "")
        warnings.warn(f"tawa: kernel '{self.__name__}' runs with Triton's own compilation (fallback='triton'): "
                      f"{reason}", TawaFallbackWarning, stacklevel=5)


def jit(fn=None, *, fallback=None, **kwargs):
    """`@tawa.jit` or `@tawa.jit(option=value, ..., fallback="triton")`; also
    wraps a function already decorated with `triton.jit`. Keyword arguments
    that are not tawa options go to `triton.jit` (do_not_specialize, debug,
    ...)."""
    tawa_options, triton_jit_kwargs = split_options(kwargs)

    def decorate(f):
        return JITFunction(f, options=tawa_options, fallback=fallback, **triton_jit_kwargs)

    return decorate(fn) if fn is not None else decorate
