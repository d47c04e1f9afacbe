"""ctypes binding of the tawa host runtime (include/tawa/runtime/tawa_runtime.h).

    from tawa.runtime import Kernel
    k = Kernel("build/gpu/ref_gemm.json")
    k(a, b, c, M, N, K)                 # tensors become CUtensorMaps
    plan = k.prepare(a, b, c, M, N, K)  # encode once ...
    plan()                              # ... launch many times

The shared library is found through $TAWA_RUNTIME_LIB, else the copy an
installed package holds (tawa/_lib/), else the newest
build*/lib/Runtime/libtawa_runtime.so under the repository root. Launches go
on PyTorch's current stream unless a stream is given.
"""
import ctypes
import glob
import os

import torch

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TENSOR, INT, FLOAT = 0, 1, 2

# Codes of tawa_runtime.h (TAWA_DTYPE_*), which equal tawa::runtime::DType.
DTYPE_CODES = {
    torch.float16: 0,
    torch.bfloat16: 1,
    torch.float32: 2,
    torch.float8_e4m3fn: 3,
    torch.float8_e5m2: 4,
    torch.int8: 5,
    torch.int32: 6,
    torch.int64: 7,
}


class TawaError(RuntimeError):
    """A failure reported by the runtime, with its message."""


class _Arg(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("ptr", ctypes.c_uint64),
        ("shape", ctypes.c_int64 * 5),
        ("strides", ctypes.c_int64 * 5),
        ("i", ctypes.c_int64),
        ("f", ctypes.c_double),
    ]


def _find_library():
    env = os.environ.get("TAWA_RUNTIME_LIB")
    if env:
        return env
    packaged = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", "libtawa_runtime.so")
    if os.path.exists(packaged):  # an installed package (pyproject.toml)
        return packaged
    candidates = glob.glob(os.path.join(_REPO, "build*", "lib", "Runtime", "libtawa_runtime.so"))
    if not candidates:
        raise TawaError(
            "libtawa_runtime.so not found: build the runtime (cmake -B build-x; "
            "ninja -C build-x tawa_runtime_shared) or set TAWA_RUNTIME_LIB")
    return max(candidates, key=os.path.getmtime)


_lib = None


def _library():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(_find_library())
    P = ctypes.c_void_p
    sigs = {
        "tawa_c_api_version": ([], ctypes.c_int),
        "tawa_runtime_version": ([], ctypes.c_char_p),
        "tawa_last_error": ([], ctypes.c_char_p),
        "tawa_driver_available": ([], ctypes.c_int),
        "tawa_device_sm_count": ([ctypes.POINTER(ctypes.c_int)], ctypes.c_int),
        "tawa_kernel_load": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(P)], ctypes.c_int),
        "tawa_kernel_free": ([P], None),
        "tawa_kernel_num_params": ([P], ctypes.c_int),
        "tawa_kernel_launch_dims": ([P, ctypes.POINTER(_Arg), ctypes.c_int,
                                     ctypes.c_uint32 * 3, ctypes.c_uint32 * 3,
                                     ctypes.POINTER(ctypes.c_uint64)], ctypes.c_int),
        "tawa_kernel_launch": ([P, ctypes.POINTER(_Arg), ctypes.c_int, P], ctypes.c_int),
        "tawa_kernel_launch_grid": ([P, ctypes.POINTER(_Arg), ctypes.c_int, ctypes.c_uint32 * 3, P],
                                    ctypes.c_int),
        "tawa_kernel_prepare": ([P, ctypes.POINTER(_Arg), ctypes.c_int, ctypes.POINTER(P)], ctypes.c_int),
        "tawa_kernel_prepare_grid": ([P, ctypes.POINTER(_Arg), ctypes.c_int, ctypes.c_uint32 * 3,
                                      ctypes.POINTER(P)], ctypes.c_int),
        "tawa_plan_launch": ([P, P], ctypes.c_int),
        "tawa_plan_free": ([P], None),
        "tawa_compile_cuda": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                               ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)], ctypes.c_int),
    }
    for name, (argtypes, restype) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
    if lib.tawa_c_api_version() != 1:
        raise TawaError(f"libtawa_runtime C API version {lib.tawa_c_api_version()}, binding expects 1")
    _lib = lib
    return lib


def _check(rc):
    if rc != 0:
        raise TawaError(_library().tawa_last_error().decode(errors="replace"))


def _convert(args):
    """Python values -> tawa_arg array (tensors keep their own storage)."""
    arr = (_Arg * max(len(args), 1))()
    for i, a in enumerate(args):
        out = arr[i]
        if isinstance(a, torch.Tensor):
            if not a.is_cuda:
                raise TawaError(f"argument {i}: tensor is on {a.device}, not on a CUDA device")
            if a.dtype not in DTYPE_CODES:
                raise TawaError(f"argument {i}: dtype {a.dtype} has no tawa equivalent")
            if a.dim() < 1 or a.dim() > 5:
                raise TawaError(f"argument {i}: rank {a.dim()} outside 1..5")
            out.kind = TENSOR
            out.dtype = DTYPE_CODES[a.dtype]
            out.rank = a.dim()
            out.ptr = a.data_ptr()
            for d in range(a.dim()):
                out.shape[d] = a.shape[d]
                out.strides[d] = a.stride(d)
        elif isinstance(a, bool):
            raise TawaError(f"argument {i}: bool is not a kernel argument type")
        elif isinstance(a, int):
            out.kind = INT
            out.i = a
        elif isinstance(a, float):
            out.kind = FLOAT
            out.f = a
        else:
            raise TawaError(f"argument {i}: unsupported type {type(a).__name__}")
    return arr


def _stream_handle(stream):
    if stream is None:
        stream = torch.cuda.current_stream()
    if isinstance(stream, torch.cuda.Stream):
        return ctypes.c_void_p(stream.cuda_stream)
    return ctypes.c_void_p(int(stream))


_raw_launch = None


def raw_launch_function():
    """tawa_kernel_launch_grid taking plain integers (kernel handle, address
    of the tawa_arg array, its length, address of the grid, stream), for a
    caller that packs the argument array itself (tawa.jit's launcher). A
    function object of its own, so these argument types do not replace the
    ones Kernel uses."""
    global _raw_launch
    if _raw_launch is None:
        fn = _library()["tawa_kernel_launch_grid"]
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        fn.restype = ctypes.c_int
        _raw_launch = fn
    return _raw_launch


def current_stream_function():
    """A function returning the handle of PyTorch's current stream on the
    current device (what Triton's launcher asks PyTorch for)."""
    try:
        from torch._C import _cuda_getCurrentRawStream, _cuda_getDevice
    except ImportError:  # an older PyTorch
        return lambda: torch.cuda.current_stream().cuda_stream
    return lambda: _cuda_getCurrentRawStream(_cuda_getDevice())


def runtime_version():
    return _library().tawa_runtime_version().decode()


def driver_available():
    return bool(_library().tawa_driver_available())


def _init_torch_cuda():
    """Let PyTorch create and make current its (primary) context before the
    runtime touches the driver, so the runtime adopts PyTorch's context
    instead of creating the binding first."""
    torch.cuda.init()
    torch.cuda.synchronize()


def sm_count():
    _init_torch_cuda()
    n = ctypes.c_int()
    _check(_library().tawa_device_sm_count(ctypes.byref(n)))
    return n.value


def compile_cuda(source, name="kernel.cu", options=()):
    """NVRTC-compile `source` for sm_90a through the cache; returns
    (cubin_path, cache_hit)."""
    lib = _library()
    opts = (ctypes.c_char_p * (len(options) + 1))(*[o.encode() for o in options], None)
    buf = ctypes.create_string_buffer(4096)
    hit = ctypes.c_int()
    _check(lib.tawa_compile_cuda(source.encode(), name.encode(), opts, buf, len(buf), ctypes.byref(hit)))
    return buf.value.decode(), bool(hit.value)


def _grid_dims(grid):
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    if not 1 <= len(dims) <= 3 or any(not isinstance(d, int) or d < 0 for d in dims):
        raise ValueError(f"grid must be 1 to 3 non-negative ints, got {grid!r}")
    return dims + (1,) * (3 - len(dims))


class Plan:
    """A prepared launch; calling it launches. Holds the argument tensors so
    their memory outlives the plan."""

    def __init__(self, kernel, args, grid=None):
        self._lib = _library()
        self._kernel = kernel  # keeps the module loaded
        self._args = args
        handle = ctypes.c_void_p()
        arr = _convert(args)
        if grid is None:
            _check(self._lib.tawa_kernel_prepare(kernel._handle, arr, len(args), ctypes.byref(handle)))
        else:
            _check(self._lib.tawa_kernel_prepare_grid(kernel._handle, arr, len(args),
                                                      (ctypes.c_uint32 * 3)(*_grid_dims(grid)),
                                                      ctypes.byref(handle)))
        self._handle = handle

    def __call__(self, stream=None):
        _check(self._lib.tawa_plan_launch(self._handle, _stream_handle(stream)))

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.tawa_plan_free(self._handle)
            self._handle = None


class Kernel:
    def __init__(self, metadata_path, cubin=None):
        _init_torch_cuda()  # load into PyTorch's (primary) context
        self._lib = _library()
        handle = ctypes.c_void_p()
        _check(self._lib.tawa_kernel_load(os.fsencode(metadata_path),
                                          os.fsencode(cubin) if cubin else None,
                                          ctypes.byref(handle)))
        self._handle = handle
        self.metadata_path = metadata_path

    @property
    def handle(self):
        """The runtime's tawa_kernel pointer, as an integer."""
        return self._handle.value

    @property
    def num_params(self):
        return self._lib.tawa_kernel_num_params(self._handle)

    def launch_dims(self, *args):
        """(grid, block, tiles) for these arguments."""
        grid = (ctypes.c_uint32 * 3)()
        block = (ctypes.c_uint32 * 3)()
        tiles = ctypes.c_uint64()
        _check(self._lib.tawa_kernel_launch_dims(self._handle, _convert(args), len(args),
                                                 grid, block, ctypes.byref(tiles)))
        return tuple(grid), tuple(block), tiles.value

    def __call__(self, *args, stream=None, grid=None):
        """Launches; `grid` (an int or a tuple of up to 3 ints) replaces the
        metadata's grid formula and is required for an "explicit" grid."""
        if grid is None:
            _check(self._lib.tawa_kernel_launch(self._handle, _convert(args), len(args),
                                                _stream_handle(stream)))
            return
        _check(self._lib.tawa_kernel_launch_grid(self._handle, _convert(args), len(args),
                                                 (ctypes.c_uint32 * 3)(*_grid_dims(grid)),
                                                 _stream_handle(stream)))

    launch = __call__

    def prepare(self, *args, grid=None):
        """A Plan for these arguments; `grid` as for a launch."""
        return Plan(self, args, grid)

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.tawa_kernel_free(self._handle)
            self._handle = None
