"""tawa's own argument binder: what Triton's binder returns for a call, made
without Triton's native specializer.

Triton 3.6 binds a call with a generated function
(`triton.runtime.jit.create_function_from_signature`) that calls
`native_specialize_impl` once per argument. The first call of that C function
in a process imports `triton.experimental.gluon.nvidia.hopper` (and with it
Triton's Gluon language: 25-30 ms on the project's CPU machine, most of the
85-90 ms first call measured on the H100 machine) whatever the arguments
are. A kernel whose compiled code is on disk needs nothing else from
Triton's front end that costs as much, so tawa binds calls itself:

    Binder(triton_fn, backend, fallback)(*args, **kwargs)
        -> (bound arguments, specialization, options,   # as Triton's binder
            the classes of the constexpr values)

The same generated function as Triton's (the same parameters, defaults and
annotation rules), with Triton's specialization rules written out again in
Python for the arguments a tawa kernel takes: integers (specialized to
"constexpr" when equal to 1; i32, i64 or u64 by range; "D" when divisible by
16), bools (u1), floats (fp32), tensors and other objects with `data_ptr`
(pointer to the canonical dtype, "*k" when const; "D" when the address is
16-byte aligned), host TensorDescriptors (`tensordesc<DTYPE[BLOCK]>`), None,
constexprs and JIT functions. Anything else -- tuples, Gluon descriptors,
TMA descriptor objects, values Triton refuses -- and any error goes to
Triton's own binder (`fallback()`), which gives its answer or its error.
python/tests/test_binder.py compares both binders on many calls.
"""
import inspect
import sys

_GLUON_HOPPER = "triton.experimental.gluon.nvidia.hopper"
_TENSOR_DESCRIPTOR = "triton.tools.tensor_descriptor"

# The Triton versions whose rules are written out here (and compared with
# Triton's by python/tests/test_binder.py); under any other, every call is
# Triton's binder's.
CHECKED_TRITON_VERSIONS = ("3.6.",)

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_U64_MAX = (1 << 64) - 1


class _Defer(Exception):
    """This argument is for Triton's binder."""


def _defer(*_):
    raise _Defer


class _Specializer:
    """Triton's `specialize_arg` (python/src/specialize.cc, Triton 3.6) for
    the argument kinds above: `spec(arg, is_const, specialize, align)` ->
    (type, key), or _Defer. Exact classes are dispatched through a table
    like Triton's; other objects go through Triton's order of checks."""

    def __init__(self):
        from triton._utils import canonicalize_dtype, canonicalize_ptr_dtype
        from triton.language.core import constexpr
        from triton.runtime.jit import JITFunction
        self.canonicalize_dtype = canonicalize_dtype
        self.canonicalize_ptr_dtype = canonicalize_ptr_dtype
        self.constexpr = constexpr
        self.jit_function = JITFunction
        self.dtypes = {}       # dtype -> "fp16"
        self.ptr_dtypes = {}   # (dtype, is_const) -> "*fp16" / "*kfp16"
        # Triton's table of exact classes (torch.Tensor, TensorDescriptor
        # and the Gluon descriptor join it when first seen: tawa imports
        # neither).
        self.kinds = {
            int: self._int, bool: self._bool, float: self._float, tuple: _defer,
            type(None): self._none, constexpr: self._constexpr, JITFunction: self._jit_function,
        }

    def spec(self, arg, is_const, specialize, align):
        handler = self.kinds.get(type(arg))
        if handler is None:
            handler = self._classify(arg)
        return handler(arg, is_const, specialize, align)

    def _classify(self, arg):
        """Triton's checks after its table, in its order."""
        cls = type(arg)
        # Classes of Triton's table not imported when this specializer was made.
        torch = sys.modules.get("torch")
        if torch is not None and cls is getattr(torch, "Tensor", None):
            self.kinds[cls] = self._tensor
            return self._tensor
        descriptors = sys.modules.get(_TENSOR_DESCRIPTOR)
        descriptor = getattr(descriptors, "TensorDescriptor", None)
        if descriptor is not None and cls is descriptor:
            self.kinds[cls] = self._descriptor
            return self._descriptor
        gluon = sys.modules.get(_GLUON_HOPPER)
        gluon_descriptor = getattr(gluon, "TensorDescriptor", None)
        if gluon_descriptor is not None and isinstance(arg, gluon_descriptor):
            return _defer  # a descriptor with a shared-memory layout: Triton's
        if isinstance(arg, tuple):
            return _defer
        if isinstance(arg, self.constexpr):
            return self._constexpr
        if descriptor is not None and isinstance(arg, descriptor):
            return self._descriptor
        if isinstance(arg, self.jit_function):
            return self._jit_function
        if hasattr(arg, "data_ptr"):
            return self._tensor
        return _defer  # a TMA descriptor object, or a value Triton refuses

    @staticmethod
    def _int(arg, is_const, specialize, align):
        if specialize and arg == 1:
            return ("constexpr", arg)
        if _I32_MIN <= arg <= _I32_MAX:
            ty = "i32"
        elif _I64_MIN <= arg <= _I64_MAX:
            ty = "i64"
        elif 0 <= arg <= _U64_MAX:
            ty = "u64"
        else:
            raise _Defer  # Triton raises its OverflowError
        if not specialize:
            return (ty, None)
        return (ty, "D" if align and not arg & 15 else "")

    @staticmethod
    def _bool(arg, is_const, specialize, align):
        return ("u1", None)

    @staticmethod
    def _float(arg, is_const, specialize, align):
        return ("fp32", None)

    @staticmethod
    def _none(arg, is_const, specialize, align):
        return ("constexpr", None)

    @staticmethod
    def _constexpr(arg, is_const, specialize, align):
        return ("constexpr", arg)

    @staticmethod
    def _jit_function(arg, is_const, specialize, align):
        return ("constexpr", arg.cache_key)

    def _tensor(self, arg, is_const, specialize, align):
        dtype = arg.dtype
        ty = self.ptr_dtypes.get((dtype, is_const))
        if ty is None:
            ty = self.ptr_dtypes[(dtype, is_const)] = self.canonicalize_ptr_dtype(dtype, is_const)
        if not specialize:
            return (ty, None)
        address = arg.data_ptr()
        if address.__class__ is not int or not 0 <= address <= _U64_MAX:
            raise _Defer
        return (ty, "D" if align and not address & 15 else "")

    def _descriptor(self, arg, is_const, specialize, align):
        dtype = arg.base.dtype
        name = self.dtypes.get(dtype)
        if name is None:
            name = self.dtypes[dtype] = str(self.canonicalize_dtype(dtype))
        return (f"tensordesc<{name}{list(arg.block_shape)}>", None)


_specializer = None


def specializer():
    global _specializer
    if _specializer is None:
        _specializer = _Specializer()
    return _specializer


class Binder:
    """`binder(*args, **kwargs)` -> (bound arguments, specialization,
    options, constexpr types): Triton's binder's answer for the call, and
    the classes of the constexpr parameters' values. Those tell apart what
    the specialization does not: 1, 1.0 and True are equal (and hash
    alike) in Python but are different constexprs to Triton's front end.
    `deferred` counts the calls that Triton's binder (`fallback()`)
    answered."""

    def __init__(self, triton_fn, backend, fallback):
        sig, kparams = triton_fn.signature, triton_fn.params
        assert len(sig.parameters) == len(kparams)
        self.deferred = 0
        self.params = kparams
        self._fallback = fallback
        # Triton's tensor rule where the backend has no native one is its
        # own method: leave such a backend to Triton; and a Triton whose
        # rules tawa has not checked.
        import triton
        native = getattr(backend, "supports_native_tensor_specialization", False) is True and \
            str(getattr(triton, "__version__", "")).startswith(CHECKED_TRITON_VERSIONS)
        self.own_rules = native
        specialization = []
        for name, kp in zip(sig.parameters.keys(), kparams):
            if kp.is_constexpr:
                specialization.append(f'("constexpr", {name})')
                continue
            specialize = not kp.do_not_specialize
            # specializer().spec(...), inlined.
            ret = (f"(_kind(_type({name})) or _classify({name}))"
                   f"({name}, {bool(kp.is_const)}, {specialize}, {not kp.do_not_specialize_on_alignment})")
            annotation = kp.annotation_type
            if annotation:
                if isinstance(annotation, str):
                    if annotation == "u1" or annotation[:2] in ["fp", "bf"]:
                        specialize = False
                if specialize:
                    specialization.append(f'("{annotation}",) + {ret}[1:]')
                else:
                    specialization.append(f'("{annotation}", None)')
            else:
                specialization.append(ret)
        names = list(sig.parameters.keys())
        constexprs = [name for name, kp in zip(names, kparams) if kp.is_constexpr]
        arg = lambda x: x[0] if x[1].default is inspect.Parameter.empty else f"{x[0]}=default_{x[0]}"  # noqa: E731
        source = (
            f"def dynamic_func({', '.join([arg(p) for p in sig.parameters.items()] + ['**options'])}):\n"
            f"    types = ({''.join(f'_type({n}), ' for n in constexprs)})\n"
            f"    try:\n"
            f"        specialization = [{', '.join(specialization)}]\n"
            f"    except Exception:\n"
            f"        return _triton({''.join(n + ', ' for n in names)}**options) + (types,)\n"
            f"    return {{{', '.join(f'{n!r}: {n}' for n in names)}}}, specialization, options, types\n")
        namespace = {f"default_{name}": param.default for name, param in sig.parameters.items()
                     if param.default is not inspect.Parameter.empty}
        spec = specializer()
        namespace["_type"] = type
        namespace["_kind"] = spec.kinds.get if native else {}.get
        namespace["_classify"] = spec._classify if native else (lambda arg: _defer)
        namespace["_triton"] = self._triton
        exec(compile(source, f"<tawa binder for {triton_fn.__name__}>", "exec"), namespace)
        self.source = source
        self.bind = namespace["dynamic_func"]

    def _triton(self, *args, **kwargs):
        self.deferred += 1
        return self._fallback()(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self.bind(*args, **kwargs)
