"""tawa's binder (python/tawa/_binder.py) against Triton's own: for every
call, the bound arguments, the specialization (types, divisibility by 16,
integers folded to constexpr, descriptor types, constexprs) and the options
must be what Triton's binder returns -- the same values of the same types --
or, for arguments tawa leaves to Triton, Triton's answer or Triton's error.
The specialization decides which kernel is compiled and which cache entry is
found: a binder that disagreed would load another specialization's kernel."""
import enum
import collections
import random
import sys
import types

import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.runtime.jit import create_function_from_signature
from triton.tools.tensor_descriptor import TensorDescriptor

import tawa
from tawa._binder import Binder

from conftest import FakeDtype, FakeTensor, float16

BACKEND = make_backend(GPUTarget("cuda", 90, 32))

DTYPES = [FakeDtype(name, size, floating) for name, size, floating in [
    ("float16", 2, True), ("bfloat16", 2, True), ("float32", 4, True), ("float64", 8, True),
    ("float8_e4m3fn", 1, True), ("float8_e5m2", 1, True), ("int8", 1, False), ("int16", 2, False),
    ("int32", 4, False), ("int64", 8, False), ("uint8", 1, False), ("bool", 1, False)]]

INTS = [0, 1, -1, 2, 15, 16, 17, -15, -16, -17, 32, 48, 1 << 20, (1 << 20) + 1,
        (1 << 31) - 16, (1 << 31) - 1, 1 << 31, (1 << 31) + 16, -(1 << 31), -(1 << 31) - 1, -(1 << 31) - 16,
        1 << 32, (1 << 63) - 16, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, (1 << 63) + 16,
        (1 << 64) - 16, (1 << 64) - 1, -(1 << 63), -(1 << 63) + 1, -(1 << 63) + 16]
# Triton raises OverflowError for these (tawa leaves them to it).
TOO_BIG = [1 << 64, (1 << 64) + 16, -(1 << 63) - 1, -(1 << 63) - 16, -(1 << 64), 1 << 100]
FLOATS = [0.0, 1.0, -2.5, 16.0, float("inf"), float("nan")]
ADDRESSES = [0, 8, 16, 24, 32, 1 << 20, (1 << 20) + 2, (1 << 20) + 16, (1 << 40) + 4, (1 << 64) - 16]
BLOCKS = [[128, 64], [64, 128], [256, 64], (128, 64), [16], [1, 64], [2, 16, 32], [8, 8, 8, 8, 8], [64, 64]]


def tensor(rng):
    dtype = rng.choice(DTYPES)
    return FakeTensor((64, 64), dtype, rng.choice(ADDRESSES))


def descriptor(rng):
    dtype = rng.choice([d for d in DTYPES if d.name != "bool"])
    block = rng.choice(BLOCKS)
    shape = [64] * len(block)
    base = FakeTensor(shape, dtype, 1 << 20)
    padding = rng.choice(["zero", "nan"]) if dtype.is_floating_point else "zero"
    return TensorDescriptor(base, shape, base.stride(), block, padding)


def helper(x):
    return x


HELPER = triton.jit(helper)


def simple_value(rng):
    """An argument of a kind tawa's binder answers itself."""
    kind = rng.randrange(9)
    if kind <= 2:
        return rng.choice(INTS)
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return rng.choice(FLOATS)
    if kind == 5:
        return tensor(rng)
    if kind == 6:
        return descriptor(rng)
    if kind == 7:
        return rng.choice([None, tl.constexpr(5), tl.constexpr(1), tl.constexpr("s")])
    return HELPER


def norm(x):
    """A value with every type spelled out (True == 1 == 1.0 in Python;
    the binders must not differ even there); objects by identity."""
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(norm(v) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, norm(v)) for k, v in x.items()))
    if x is None or isinstance(x, (bool, int, float, str)):
        return (type(x).__name__, repr(x))
    return ("object", id(x))


def outcome(binder, args, kwargs):
    try:
        result = binder(*args, **kwargs)
    except Exception as error:  # noqa: BLE001  (the error is the answer)
        return ("error", type(error), str(error))
    if isinstance(binder, Binder):  # tawa's: and the constexprs' classes
        params, specialization, options, types = result
        assert types == tuple(type(params[p.name]) for p in binder.params if p.is_constexpr)
    else:
        params, specialization, options = result
    return ("ok", norm(params), norm(list(specialization)), norm(options))


def binders(fn):
    triton_binder = create_function_from_signature(fn.signature, fn.params, BACKEND)
    return Binder(fn, BACKEND, lambda: triton_binder), triton_binder


def check(fn, calls):
    """Each call bound by both; returns how many tawa left to Triton."""
    ours, theirs = binders(fn)
    for args, kwargs in calls:
        expected = outcome(theirs, args, kwargs)
        got = outcome(ours, args, kwargs)
        assert got == expected, f"{fn.__name__}{args!r} {kwargs!r}"
    return ours.deferred


@triton.jit
def gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pass


@triton.jit
def pointers(x_ptr, y_ptr, n, scale, flag, BLOCK: tl.constexpr):
    pass


@triton.jit
def annotated(p: tl.const, q: "*fp16", n: tl.int32, m: "i64", f: tl.float32, b: "u1", h: "bf16", u: tl.uint64,
              d, BLOCK: tl.constexpr = 64, e=16, g=None):
    pass


@triton.jit(do_not_specialize=["n", "x_ptr"], do_not_specialize_on_alignment=["y_ptr", "m"])
def unspecialized(x_ptr, y_ptr, n, m, k, BLOCK: tl.constexpr):
    pass


KERNELS = [gemm, pointers, annotated, unspecialized]


def test_every_kind_of_argument_alone():
    """Each value of each kind in each position of each kernel."""
    rng = random.Random(1)
    values = (INTS + [True, False] + FLOATS + [tensor(rng) for _ in range(40)] +
              [descriptor(rng) for _ in range(40)] + [None, tl.constexpr(3), HELPER])
    for fn in KERNELS:
        n = len(fn.params)
        base = [simple_value(rng) for _ in range(n)]
        calls = []
        for position in range(n):
            for value in values:
                args = list(base)
                args[position] = value
                calls.append((tuple(args), {}))
        assert check(fn, calls) == 0, fn.__name__


def test_random_calls_agree_with_triton():
    rng = random.Random(20261126)
    for fn in KERNELS:
        n = len(fn.params)
        calls = []
        for _ in range(400):
            args = [simple_value(rng) for _ in range(n)]
            # Some by keyword, some left to their defaults.
            split = rng.randrange(n + 1)
            kwargs = {fn.arg_names[i]: args[i] for i in range(split, n)}
            for p in fn.params[split:]:
                if p.has_default and rng.random() < 0.5:
                    del kwargs[p.name]
            if rng.random() < 0.3:
                kwargs["num_warps"] = rng.choice([4, 8])  # Triton's options pass through
            calls.append((tuple(args[:split]), kwargs))
        assert check(fn, calls) == 0, fn.__name__


def test_gemm_calls_as_tawa_makes_them():
    """GEMM calls as the GPU suite makes them: descriptors over fp16 and
    bf16 storage with rows padded to 16 bytes, sizes with and without
    16 | size, 1 folded, an address off 16 bytes for the sizes' sake."""
    from test_jit import BLOCKS as TILES
    calls = []
    for dtype in (float16, DTYPES[1]):
        for m, n, k in [(512, 512, 512), (1000, 744, 520), (129, 257, 136), (1, 16, 17), (77, 40, 24)]:
            pad = lambda cols: -(-cols // 8) * 8  # noqa: E731
            a = FakeTensor((m, k), dtype, 1 << 20, strides=(pad(k), 1))
            b = FakeTensor((n, k), dtype, 2 << 20, strides=(pad(k), 1))
            c = FakeTensor((m, n), dtype, 3 << 20, strides=(pad(n) + 8, 1))
            descs = (TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [256, 64]),
                     TensorDescriptor.from_tensor(c, [128, 256]))
            calls.append((descs + (m, n, k), dict(TILES)))
            calls.append((descs + (m, n, k), dict(TILES, num_warps=8)))
    assert check(gemm, calls) == 0


class Small(enum.IntEnum):
    ONE = 1


Pair = collections.namedtuple("Pair", "a b")


class NoDtype:
    def data_ptr(self):
        return 16


class OddAddress(FakeTensor):
    def data_ptr(self):
        return -16


def test_what_tawa_leaves_to_triton():
    """Tuples, Gluon descriptors, objects Triton refuses, integers too large:
    Triton's binder answers (or raises), through tawa's."""
    rng = random.Random(7)
    from triton.experimental.gluon.language import NVMMASharedLayout
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as GluonDescriptor
    base = FakeTensor((64, 64), float16, 1 << 20)
    gluon = GluonDescriptor.from_tensor(base, [64, 64], NVMMASharedLayout(128, 16))
    odd = [(1, 2), (), Pair(1, tensor(rng)), (descriptor(rng), 16), gluon, object(), Small.ONE, NoDtype(),
           OddAddress((4,), float16), FakeTensor((4,), FakeDtype("complex64", 8)), "text", 2j] + TOO_BIG
    for fn in KERNELS:
        n = len(fn.params)
        calls = []
        for value in odd:
            for position in range(n):
                args = [simple_value(rng) for _ in range(n)]
                args[position] = value
                calls.append((tuple(args), {}))
        deferred = check(fn, calls)
        assert 0 < deferred <= len(calls)
    # Binding errors are Python's, as for Triton's generated function.
    ours, theirs = binders(pointers)
    assert outcome(ours, (1,), {}) == outcome(theirs, (1,), {})
    assert outcome(ours, (1, 2, 3, 4, 5, 6, 7), {}) == outcome(theirs, (1, 2, 3, 4, 5, 6, 7), {})


def test_exact_torch_tensor_class(monkeypatch):
    """torch.Tensor is in Triton's table of exact classes; tawa dispatches it
    the same way once torch is imported (a stand-in module here)."""
    torch = types.ModuleType("torch")

    class Tensor(FakeTensor):
        pass

    torch.Tensor = Tensor
    monkeypatch.setitem(sys.modules, "torch", torch)
    rng = random.Random(3)
    calls = [((Tensor((8,), rng.choice(DTYPES), rng.choice(ADDRESSES)), FakeTensor((8,), float16, 16), n, 0.5,
               True), {"BLOCK": 64}) for n in INTS for _ in range(2)]
    assert check(pointers, calls) == 0
    from tawa._binder import specializer
    assert specializer().kinds.get(Tensor) is not None


def test_a_backend_without_native_tensor_rules_goes_to_triton():
    class Backend:
        supports_native_tensor_specialization = False

    triton_binder = create_function_from_signature(pointers.signature, pointers.params, BACKEND)
    ours = Binder(pointers, Backend(), lambda: triton_binder)
    assert ours(FakeTensor((8,)), FakeTensor((8,)), 16, 1.0, True, BLOCK=64)[1] == \
        triton_binder(FakeTensor((8,)), FakeTensor((8,)), 16, 1.0, True, BLOCK=64)[1]
    assert ours.deferred == 1


def test_another_triton_version_binds_with_triton(monkeypatch):
    """tawa's rules are Triton 3.6's; under a Triton it has not been checked
    against every call goes to Triton's binder."""
    from tawa import _binder
    assert triton.__version__.startswith(_binder.CHECKED_TRITON_VERSIONS)  # this run checks this version
    monkeypatch.setattr(triton, "__version__", "3.7.0")
    ours, theirs = binders(pointers)
    assert not ours.own_rules
    args = (FakeTensor((8,)), FakeTensor((8,)), 16, 1.0, True)
    assert outcome(ours, args, {"BLOCK": 64}) == outcome(theirs, args, {"BLOCK": 64})
    assert ours.deferred == 1


def test_tawa_jit_binds_with_its_own_binder():
    """tawa.jit's calls go through tawa's binder; a tuple would go to
    Triton's."""
    from test_jit import BLOCKS as TILES, gemm_args, gemm_body
    kernel = tawa.jit(gemm_body)
    kernel.warmup(*gemm_args(), **TILES)
    kernel.warmup(*gemm_args(m=1000), **TILES)
    assert kernel.binder.deferred == 0
    ours, theirs = kernel.binder, kernel._front_end.binder
    args = gemm_args()
    assert outcome(ours, args, TILES) == outcome(theirs, args, TILES)
    with_tuple = args[:5] + ((16, 32),)
    assert outcome(ours, with_tuple, TILES) == outcome(theirs, with_tuple, TILES)
    assert kernel.binder.deferred == 1
