"""The decode mega-kernel from Python (docs/MEGAKERNEL.md, "Running a model").

    import tawa.mega
    model = tawa.mega.compile(config, weights, max_batch=4, max_seq=4096)
    tokens = model.generate([[1, 2, 3]], 64)

`compile` plans nothing yet: a decode step is planned, bound and lowered per
batch size on first use (a tGraph per batch size, as MPK does) through the
C API of include/tawa/runtime/tawa_mega.h. That library is built with nvcc
and g++ from the tawa sources on first use and cached (tawa.mega.build); the
planner is plain C++, so no MLIR is needed on the GPU machine. Prefill runs the
PyTorch reference (kernel per operator) and fills the KV cache that the
mega-kernel then reads and appends to. The cache is paged (page_size
positions a page, 64 by default; docs/MEGAKERNEL.md, "Paged KV cache"): rows
take pages from one pool per layer as they grow.
"""
import collections
import ctypes
import json
import os

import torch

from .build import MegaError, build_library, model_specialization_flags
from .reference import ModelShape, ReferenceDecoder

# One task of a step's trace (MegaStep.trace; tawa_mega.h, tawa_mega_trace).
TraceRecord = collections.namedtuple(
    'TraceRecord', 'start_ns end_ns worker op ready_ns computed_ns weight_wait_ns')
TRACE_VALUES = 6  # per task from tawa_mega_trace (TAWA_MEGA_TRACE_VALUES)

_TYPES = {0: torch.bfloat16, 1: torch.float32, 2: torch.int32}
_KINDS = {0: 'weight', 1: 'input', 2: 'activation', 3: 'state', 4: 'output', 5: 'staged',
          6: 'scratch', 7: 'constant', 8: 'polled'}
_TRACE, _SEPARATE_MERGE = 1, 2  # tawa_mega_create flags (tawa_mega.h)
_libs = {}  # nvcc flags (a tuple) -> the loaded library


def _library(flags=()):
    """The library built with `flags` (build.specialization_flags; () is the
    build with every kernel variant), loaded once per process. Each is its own
    copy of the C API, with its own last error."""
    flags = tuple(flags)
    lib = _libs.get(flags)
    if lib is None:
        lib = ctypes.CDLL(build_library(flags=flags))
        c = ctypes
        lib.tawa_mega_last_error.restype = c.c_char_p
        lib.tawa_mega_create.argtypes = [c.c_char_p, c.c_int, c.c_int, c.c_int, c.c_int,
                                         c.c_int, c.c_int, c.POINTER(c.c_void_p)]
        lib.tawa_mega_destroy.argtypes = [c.c_void_p]
        lib.tawa_mega_num_buffers.argtypes = [c.c_void_p]
        lib.tawa_mega_buffer_name.argtypes = [c.c_void_p, c.c_int]
        lib.tawa_mega_buffer_name.restype = c.c_char_p
        lib.tawa_mega_buffer_info.argtypes = [c.c_void_p, c.c_int, c.POINTER(c.c_int),
                                              c.POINTER(c.c_int), c.POINTER(c.c_int),
                                              c.POINTER(c.c_int64)]
        lib.tawa_mega_buffer_source.argtypes = [c.c_void_p, c.c_int]
        lib.tawa_mega_buffer_source.restype = c.c_char_p
        lib.tawa_mega_buffer_scale.argtypes = [c.c_void_p, c.c_int]
        lib.tawa_mega_buffer_scale.restype = c.c_char_p
        lib.tawa_mega_pack_weight.argtypes = [c.c_void_p, c.c_void_p, c.c_void_p, c.c_int64,
                                              c.c_int32, c.c_void_p]
        lib.tawa_mega_bind.argtypes = [c.c_void_p, c.c_int, c.c_void_p]
        lib.tawa_mega_step.argtypes = [c.c_void_p, c.c_void_p, c.c_double]
        lib.tawa_mega_check.argtypes = [c.c_void_p]
        lib.tawa_mega_summary.argtypes = [c.c_void_p]
        lib.tawa_mega_summary.restype = c.c_char_p
        lib.tawa_mega_last_step_ns.argtypes = [c.c_void_p]
        lib.tawa_mega_last_step_ns.restype = c.c_uint64
        lib.tawa_mega_num_tasks.argtypes = [c.c_void_p]
        lib.tawa_mega_task_ops.argtypes = [c.c_void_p, c.POINTER(c.c_int32)]
        lib.tawa_mega_num_ops.argtypes = [c.c_void_p]
        lib.tawa_mega_op_name.argtypes = [c.c_void_p, c.c_int]
        lib.tawa_mega_op_name.restype = c.c_char_p
        lib.tawa_mega_trace.argtypes = [c.c_void_p, c.POINTER(c.c_uint64)]
        lib.tawa_mega_num_ctas.argtypes = [c.c_void_p]
        lib.tawa_mega_worker_sms.argtypes = [c.c_void_p, c.POINTER(c.c_uint32), c.c_int]
        _libs[flags] = lib
    return lib


def _any_library():
    """A loaded library (they share the packing kernel), else the full build."""
    return next(iter(_libs.values())) if _libs else _library()


def _check(rc, lib):
    if rc != 0:
        raise MegaError(lib.tawa_mega_last_error().decode())


def pack_weight(weight, scale=None):
    """The staged layout of a bf16 CUDA weight [N, K] (include/tawa/Mega/
    TaskParams.h), each column c times scale[c] (a bf16 [K] tensor, the
    RMSNorm weight the linear folds in) and rounded to bf16: what a linear
    task streams, one bulk copy a stage. Returns a new [N rounded up to 16,
    K rounded up to 32] tensor."""
    if weight.dim() != 2 or weight.dtype != torch.bfloat16 or not weight.is_cuda:
        raise MegaError(f'pack_weight: expected a 2-D bf16 CUDA tensor, got {weight.dtype} '
                        f'{tuple(weight.shape)} on {weight.device}')
    weight = weight.contiguous()
    n, k = weight.shape
    if scale is not None:
        if tuple(scale.shape) != (k,) or scale.dtype != torch.bfloat16 or \
                scale.device != weight.device:
            raise MegaError(f'pack_weight: the scale must be a bf16 [{k}] tensor on '
                            f'{weight.device}, got {scale.dtype} {tuple(scale.shape)} on '
                            f'{scale.device}')
        scale = scale.contiguous()
    out = torch.empty(((n + 15) // 16 * 16, (k + 31) // 32 * 32), dtype=torch.bfloat16,
                      device=weight.device)
    stream = torch.cuda.current_stream(weight.device)
    lib = _any_library()
    _check(lib.tawa_mega_pack_weight(
        ctypes.c_void_p(weight.data_ptr()),
        ctypes.c_void_p(scale.data_ptr() if scale is not None else None),
        ctypes.c_void_p(out.data_ptr()), n, k, ctypes.c_void_p(stream.cuda_stream)), lib)
    return out


class StepKernel:
    """One planned decode step for a fixed batch: its buffers and its launch.
    `flags`: the nvcc flags of the library it runs on (build.specialization_flags;
    () the build with every kernel variant)."""

    def __init__(self, config_json, batch, max_seq, page_size, kv_pages, scheduler_ctas,
                 trace=False, separate_merge=False, flags=()):
        lib = self._lib = _library(flags)
        handle = ctypes.c_void_p()
        _check(lib.tawa_mega_create(config_json.encode(), batch, max_seq, page_size, kv_pages,
                                    scheduler_ctas,
                                    (_TRACE if trace else 0) |
                                    (_SEPARATE_MERGE if separate_merge else 0),
                                    ctypes.byref(handle)), lib)
        self._handle = handle
        self.batch = batch
        self.summary = lib.tawa_mega_summary(handle).decode()
        self.buffers = {}  # name -> (index, dtype, kind, shape)
        self.sources = {}  # staged weight -> (the weight it packs, its column scale or None)
        t, k, nd = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        shape = (ctypes.c_int64 * 8)()
        for i in range(lib.tawa_mega_num_buffers(handle)):
            _check(lib.tawa_mega_buffer_info(handle, i, ctypes.byref(t), ctypes.byref(k),
                                             ctypes.byref(nd), shape), lib)
            name = lib.tawa_mega_buffer_name(handle, i).decode()
            self.buffers[name] = (i, _TYPES[t.value], _KINDS[k.value],
                                  tuple(shape[j] for j in range(nd.value)))
            if _KINDS[k.value] == 'staged':
                scale = lib.tawa_mega_buffer_scale(handle, i)
                self.sources[name] = (lib.tawa_mega_buffer_source(handle, i).decode(),
                                      scale.decode() if scale else None)
        self._bound = {}

    def __del__(self):
        if getattr(self, '_handle', None):
            self._lib.tawa_mega_destroy(self._handle)

    def bind(self, name, tensor, prefix_rows=False):
        """Binds `tensor` to buffer `name`. With prefix_rows, a tensor with more
        rows in dimension 0 than the buffer binds its first rows (a cache
        shared across batch sizes)."""
        index, dtype, _, shape = self.buffers[name]
        ok_shape = tuple(tensor.shape) == shape or (
            prefix_rows and tuple(tensor.shape[1:]) == shape[1:] and tensor.shape[0] >= shape[0])
        if not ok_shape or tensor.dtype != dtype or not tensor.is_cuda or \
                not tensor.is_contiguous():
            raise MegaError(f'buffer {name}: expected a contiguous {dtype} CUDA tensor of shape '
                            f'{shape}, got {tensor.dtype} {tuple(tensor.shape)} on '
                            f'{tensor.device}{"" if tensor.is_contiguous() else " (not contiguous)"}')
        _check(self._lib.tawa_mega_bind(self._handle, index,
                                        ctypes.c_void_p(tensor.data_ptr())), self._lib)
        self._bound[name] = tensor  # keeps the memory alive

    def __getitem__(self, name):
        return self._bound[name]

    def launch(self, stream=None, watchdog_ms=2000.0):
        stream = stream or torch.cuda.current_stream()
        _check(self._lib.tawa_mega_step(self._handle, ctypes.c_void_p(stream.cuda_stream),
                                        watchdog_ms), self._lib)

    def check(self):
        """Raises MegaError if the last step timed out or over-arrived (syncs)."""
        torch.cuda.synchronize()
        _check(self._lib.tawa_mega_check(self._handle), self._lib)

    def last_step_ns(self):
        torch.cuda.synchronize()
        return self._lib.tawa_mega_last_step_ns(self._handle)

    def worker_sms(self):
        """The SM (%smid) each CTA of the last step ran on, by CTA: a trace
        record's worker is its CTA."""
        torch.cuda.synchronize()
        lib = self._lib
        n = lib.tawa_mega_num_ctas(self._handle)
        sms = (ctypes.c_uint32 * n)()
        _check(lib.tawa_mega_worker_sms(self._handle, sms, n), lib)
        return list(sms)

    def trace(self):
        """The last step's timeline (needs trace=True): a list of TraceRecord
        (start_ns, end_ns, worker, op name or None for an empty task,
        ready_ns, computed_ns, weight_wait_ns), by task id. ready_ns and
        computed_ns: when the task's inputs were in and when it had computed
        its results (linear and attention tasks; else 0); weight_wait_ns: how
        long its warp 0 waited for weights (linears). The last three are 0
        unless the library was built with -DTAWA_MEGA_TRACE_PHASES=1
        (TAWA_MEGA_NVCC_FLAGS)."""
        torch.cuda.synchronize()
        lib = self._lib
        n = lib.tawa_mega_num_tasks(self._handle)
        ops = (ctypes.c_int32 * n)()
        v = TRACE_VALUES
        records = (ctypes.c_uint64 * (v * n))()
        _check(lib.tawa_mega_task_ops(self._handle, ops), lib)
        _check(lib.tawa_mega_trace(self._handle, records), lib)
        names = [lib.tawa_mega_op_name(self._handle, i).decode()
                 for i in range(lib.tawa_mega_num_ops(self._handle))]
        return [TraceRecord(records[v * i], records[v * i + 1], records[v * i + 2],
                            names[ops[i]] if ops[i] >= 0 else None, records[v * i + 3],
                            records[v * i + 4], records[v * i + 5])
                for i in range(n)]


class MegaModel:
    """A decoder LLM whose decode steps run as one persistent kernel each."""

    def __init__(self, config, weights, max_batch, max_seq, page_size=64, kv_pages=None,
                 scheduler_ctas=4, trace=False, separate_merge=False, specialize=True):
        self.config = dict(config)
        self.shape = ModelShape.from_config(self.config)
        # The reference validates the weights, runs prefill and owns the KV
        # cache (a pool of pages per layer) and the block table, which every
        # batch size's step binds (the table's first rows).
        # Pages are a power of two (the kernel shifts and masks); a page
        # longer than the next power of two >= max_seq would only waste memory.
        whole = 1 << (max_seq - 1).bit_length()
        if page_size is None:
            if kv_pages is not None:
                raise MegaError('kv_pages needs a page_size (page_size=None is one page of '
                                'max_seq per row)')
            page_size, kv_pages = whole, max_batch
        if page_size < 1 or page_size & (page_size - 1):
            raise MegaError(f'page_size {page_size}: pages must be a power of two')
        try:
            self.reference = ReferenceDecoder(self.config, weights, max_batch, max_seq,
                                              page_size=min(page_size, whole),
                                              kv_pages=kv_pages)
        except ValueError as e:
            raise MegaError(str(e)) from None
        self.weights = weights
        self.max_batch = max_batch
        self.max_seq = max_seq
        self.scheduler_ctas = scheduler_ctas
        self.trace = trace
        self.separate_merge = separate_merge
        # The kernel compiled for this model's attention only
        # (build.specialization_flags), or with every variant.
        self.flags = (tuple(model_specialization_flags(self.shape))
                      if specialize else ())
        self._steps = {}
        self._staged = {}  # staged weight name -> its packed copy
        self._host_lengths = [0] * max_batch

    def step_kernel(self, batch, separate_merge=None):
        """The planned step for `batch` rows (planned and bound on first use).
        separate_merge: None for the model's plan, or True / False for that
        plan of the split attention's merge (both bind the same weights and
        cache, so benchmarks compare them side by side)."""
        if not 1 <= batch <= self.max_batch:
            raise MegaError(f'batch {batch} not in 1..{self.max_batch}')
        if separate_merge is None:
            separate_merge = self.separate_merge
        key = (batch, bool(separate_merge))
        if key in self._steps:
            return self._steps[key]
        ref = self.reference
        k = StepKernel(json.dumps(self.config), batch, self.max_seq, ref.page_size,
                       ref.kv_pages, self.scheduler_ctas, self.trace, separate_merge,
                       self.flags)
        for name, (_, dtype, kind, shape) in k.buffers.items():
            if kind == 'weight':
                k.bind(name, self.weights[name])
            elif kind == 'staged':
                # One packed copy per weight, shared by every batch size.
                if name not in self._staged:
                    source, scale = k.sources[name]
                    self._staged[name] = pack_weight(
                        self.weights[source], self.weights[scale] if scale else None)
                k.bind(name, self._staged[name])
            elif kind == 'state':
                layer, which = name[1:].split('.', 1)
                cache = (ref.k_cache if which == 'k_cache' else ref.v_cache)[int(layer)]
                k.bind(name, cache)
            elif kind in ('scratch', 'constant', 'polled'):
                # The runtime's own: zeroed before every step, the RoPE
                # table, the bf16 activations (poisoned before every step).
                pass
            elif name == 'block_table':
                k.bind(name, ref.block_table, prefix_rows=True)
            elif name == 'tokens':
                k.bind(name, torch.zeros(shape, dtype=dtype, device=ref.device))
            else:
                k.bind(name, torch.empty(shape, dtype=dtype, device=ref.device))
        self._steps[key] = k
        return k

    def reserve(self, length, rows=None):
        """Makes each of `rows` (default: all max_batch rows) hold cache
        positions 0..length-1 without prefilling them (benchmarks time steps
        at a position over whatever the cache holds): the rows take their
        missing pages in turns, a page each, as rows that grew together hold
        them. MegaError when the pool runs out."""
        ref = self.reference
        rows = range(self.max_batch) if rows is None else rows
        try:
            for n in range(ref.page_size, length + ref.page_size, ref.page_size):
                for b in rows:
                    ref.reserve(b, min(n, length))
        except ValueError as e:
            raise MegaError(str(e)) from None

    def prefill(self, ids):
        """Runs the prompts with the PyTorch reference (kernel per operator),
        filling the KV cache; returns float32 logits [B, vocab]."""
        logits = self.reference.prefill(ids)
        for b, row in enumerate(ids):
            self._host_lengths[b] = len(row)
        return logits

    def _launch(self, k, tokens, positions, watchdog_ms):
        b = k.batch
        k['tokens'].view(-1).copy_(tokens.view(-1))
        if positions is None:
            if max(self._host_lengths[:b]) >= self.max_seq:
                raise MegaError(f'a row would pass max_seq = {self.max_seq}')
            positions = self.reference.lengths[:b]
            host = [n + 1 for n in self._host_lengths[:b]]
        else:
            host = [int(p) + 1 for p in positions.tolist()]
            if max(host) > self.max_seq or min(host) < 1:
                raise MegaError(f'positions must be in 0..{self.max_seq - 1}')
        # Each row's pages up to its new position (a table write when a row
        # enters a new page; no sync).
        try:
            for row, n in enumerate(host):
                self.reference.reserve(row, n)
        except ValueError as e:
            raise MegaError(str(e)) from None
        k['positions'].copy_(positions)
        k.launch(watchdog_ms=watchdog_ms)
        self.reference.lengths[:b] = k['positions'] + 1
        self._host_lengths[:b] = host

    def decode(self, tokens, positions=None, watchdog_ms=2000.0):
        """One step for rows 0..B-1 (B = len(tokens)) as one mega-kernel launch:
        each row's token goes at its position (default: the row's length) in the
        cache. Returns float32 logits [B, vocab] (a copy)."""
        tokens = torch.as_tensor(tokens, device=self.reference.device).to(torch.int32)
        k = self.step_kernel(tokens.shape[0])
        self._launch(k, tokens, positions, watchdog_ms)
        return k['logits'].clone()

    def generate(self, ids, n, watchdog_ms=2000.0):
        """Prefill, then n >= 1 greedy tokens per row; the decode steps feed the
        kernel's own argmax back on the device (one host sync at the end)."""
        if n < 1:
            raise MegaError(f'n = {n}: generate at least one token')
        tok = self.prefill(ids).argmax(-1).to(torch.int32)
        k = self.step_kernel(len(ids))
        out = [tok]
        for _ in range(n - 1):
            self._launch(k, out[-1], None, watchdog_ms)
            out.append(k['next_tokens'].view(-1).clone())
        k.check()
        return torch.stack(out, dim=1).tolist()


def compile(config, weights, max_batch=1, max_seq=4096, page_size=64, kv_pages=None,
            scheduler_ctas=4, trace=False, separate_merge=False, specialize=True):
    """A MegaModel for `config` (a Hugging Face config dict or the path of a
    config.json) and `weights` (a state dict of bf16 CUDA tensors with Hugging
    Face names, or the path of a .safetensors file).

    The KV cache is paged: each layer's keys and values live in a pool of
    `kv_pages` pages (default: max_batch * ceil(max_seq / page_size), every
    row at max_seq) of `page_size` positions (a power of two, default 64;
    pages beyond max_seq are cut to the next power of two >= max_seq); a row
    takes pages as it grows, and gives them back when `prefill` refills it.
    page_size=None: one page of max_seq (rounded up to a power of two) per
    row, each row's cache contiguous. Where attention splits a row's
    sequence into chunks, the last chunk of each KV head to end merges them;
    separate_merge=True merges them in tasks of their own after attention
    (the earlier plan, kept to compare). The kernel is built (once, cached)
    with only the attention variant of this model, which runs faster than the
    build with every variant (specialize=False)."""
    if isinstance(config, (str, os.PathLike)):
        with open(config) as f:
            config = json.load(f)
    if isinstance(weights, (str, os.PathLike)):
        from safetensors.torch import load_file
        weights = load_file(str(weights), device='cuda')
    return MegaModel(config, weights, max_batch, max_seq, page_size, kv_pages, scheduler_ctas,
                     trace, separate_merge, specialize)
