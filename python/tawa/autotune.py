"""`tawa.autotune`: like `triton.autotune`, over user configs and tawa's knobs.

    @tawa.autotune(configs=[tawa.Config({"BM": 128, "BN": 256, "BK": 64}, aref_depth=4),
                            tawa.Config({"BM": 128, "BN": 128, "BK": 64}, pingpong=True)],
                   key=["M", "N", "K"])
    @tawa.jit
    def gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr): ...

    gemm[grid](a_desc, b_desc, c_desc, M, N, K)    # the config's values fill BM, BN, BK

The first call for a key (the values of the `key` arguments; for tensors and
descriptors their shapes and dtype) compiles every config, times each launch
with `triton.testing.do_bench`, keeps the fastest and launches it; later calls
with that key launch the kept config directly. Choices are also kept on disk,
under the cache root's autotune/ (TAWA_CACHE_DIR), keyed by the kernel's
source, the configs, the compiler, and the GPU's name, so a new process does
not time again. A config tawa cannot compile is skipped (and named if every
config fails).
"""
import hashlib
import json
import os
import threading

from .compiler import CompilationError
from .jit import JITFunction, cache_dir, compiler_identity, split_options


class Config:
    """Meta-parameter values (`kwargs`: the kernel's constexprs) and options
    (tawa's knobs under tawa's or Triton's WS names, and Triton's options
    such as num_warps). `pre_hook(nargs)`, as in Triton, runs before each
    compile and launch of this config with the call's arguments and the
    config's values by name: host descriptors' block shapes follow the
    config's tiles there (`nargs["a_desc"].block_shape = [nargs["BM"], ...]`)."""

    def __init__(self, kwargs, pre_hook=None, **options):
        self.kwargs = dict(kwargs)
        self.pre_hook = pre_hook
        tawa_options, triton_options = split_options(options)
        self.options = tawa_options
        self.triton_options = triton_options

    def all_kwargs(self):
        return {**self.kwargs, **self.options, **self.triton_options}

    def describe(self):
        return json.dumps({"kwargs": self.kwargs, "options": self.options, "triton": self.triton_options},
                          sort_keys=True, default=str)

    def __repr__(self):
        return f"tawa.Config({self.describe()})"


def _key_part(value):
    """What of an argument the key sees: shapes and dtype of tensors and
    descriptors, the value of anything else."""
    if hasattr(value, "block_shape") and hasattr(value, "base"):  # a TensorDescriptor
        return ("desc", tuple(int(s) for s in value.shape), str(value.base.dtype), tuple(value.block_shape))
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return ("tensor", tuple(int(s) for s in value.shape), str(value.dtype))
    return value


def _default_bench(fn):
    import triton.testing
    return triton.testing.do_bench(fn)


def _device_name():
    try:
        import torch
        if torch.cuda.is_available():
            return torch.cuda.get_device_name()
    except ImportError:
        pass
    return "no-gpu"


class Autotuner:
    def __init__(self, kernel, configs, key, bench=None):
        if not isinstance(kernel, JITFunction):
            raise TypeError("tawa.autotune decorates a tawa.jit kernel: put @tawa.jit below it")
        if not configs:
            raise ValueError("tawa.autotune needs at least one Config")
        self.kernel = kernel
        self.configs = list(configs)
        self.key = list(key)
        self.bench = bench or _default_bench
        self.best = {}  # key -> Config
        self.timings = {}  # key -> [(Config, ms or None, reason)]
        self.stats = {"tunings": 0, "disk_hits": 0}
        self.benched_configs = []
        self._lock = threading.Lock()
        self.__name__ = kernel.__name__

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def _bound(self, args, kwargs):
        names = self.kernel.triton_fn.arg_names
        bound = dict(zip(names, args))
        bound.update(kwargs)
        return bound

    def _tuning_key(self, bound):
        missing = [k for k in self.key if k not in bound]
        if missing:
            raise KeyError(f"autotune key {missing} not among the call's arguments of {self.__name__}")
        return tuple(_key_part(bound[k]) for k in self.key)

    def _disk_path(self):
        ident = hashlib.sha256(json.dumps({
            "kernel": self.kernel.triton_fn.cache_key,
            "configs": [c.describe() for c in self.configs],
            "compiler": compiler_identity(),
            "device": _device_name(),
        }, sort_keys=True).encode()).hexdigest()
        root = os.path.dirname(cache_dir())  # the cache root: jit/ and autotune/ side by side
        return os.path.join(root, "autotune", f"{self.__name__}-{ident[:32]}.json")

    def _load_choice(self, key):
        try:
            with open(self._disk_path()) as f:
                table = json.load(f)
        except (OSError, ValueError):
            return None
        index = table.get(repr(key))
        return self.configs[index] if isinstance(index, int) and 0 <= index < len(self.configs) else None

    def _store_choice(self, key, config):
        path = self._disk_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path) as f:
                table = json.load(f)
        except (OSError, ValueError):
            table = {}
        table[repr(key)] = self.configs.index(config)
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(table, f, indent=1, sort_keys=True)
        os.replace(tmp, path)

    def _prepare(self, config, args, kwargs):
        if config.pre_hook is not None:
            config.pre_hook({**self._bound(args, kwargs), **config.kwargs})

    def _tune(self, args, kwargs, grid):
        results = []
        for config in self.configs:
            call = {**kwargs, **config.all_kwargs()}
            self._prepare(config, args, kwargs)
            try:
                self.kernel.warmup(*args, grid=grid, **call)
            except CompilationError as error:
                results.append((config, None, str(error).splitlines()[1] if "\n" in str(error) else str(error)))
                continue
            ms = self.bench(lambda call=call: self.kernel.run(*args, grid=grid, warmup=False, **call))
            self.benched_configs.append(config)
            results.append((config, float(ms), ""))
        timed = [r for r in results if r[1] is not None]
        if not timed:
            reasons = "\n".join(f"  {c!r}: {why}" for c, _, why in results)
            raise CompilationError(f"no config of {self.__name__} compiles:\n{reasons}", self.__name__)
        return min(timed, key=lambda r: r[1])[0], results

    def run(self, *args, grid, **kwargs):
        key = self._tuning_key(self._bound(args, kwargs))
        with self._lock:
            config = self.best.get(key)
        if config is None:
            config = self._load_choice(key)
            if config is not None:
                self.stats["disk_hits"] += 1
            else:
                self.stats["tunings"] += 1
                config, results = self._tune(args, kwargs, grid)
                self.timings[key] = results
                self._store_choice(key, config)
            with self._lock:
                self.best[key] = config
        self._prepare(config, args, kwargs)
        return self.kernel.run(*args, grid=grid, warmup=False, **{**kwargs, **config.all_kwargs()})

    def best_config(self, *args, **kwargs):
        """The kept config for these arguments' key, or None."""
        return self.best.get(self._tuning_key(self._bound(args, kwargs)))


def autotune(configs, key, bench=None):
    """Decorator over a tawa.jit kernel; `bench(fn) -> milliseconds` replaces
    triton.testing.do_bench (for tests)."""
    def decorate(kernel):
        return Autotuner(kernel, configs, key, bench=bench)
    return decorate
