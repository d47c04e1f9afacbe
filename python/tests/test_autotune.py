"""tawa.autotune without a GPU: every config compiled, the launches timed by
a stand-in for do_bench that reads which kernel ran, the fastest kept in
memory and on disk, configs tawa cannot compile skipped."""
import ctypes
import os

import pytest
from triton.tools.tensor_descriptor import TensorDescriptor

import tawa
from tawa.jit import CompiledKernel

from conftest import FakeTensor
from test_jit import gemm_body


def set_blocks(nargs):
    """Triton's idiom: host descriptors take the config's tiles."""
    nargs["a_desc"].block_shape = [nargs["BM"], nargs["BK"]]
    nargs["b_desc"].block_shape = [nargs["BN"], nargs["BK"]]
    nargs["c_desc"].block_shape = [nargs["BM"], nargs["BN"]]


def arguments(m, n, k):
    D = TensorDescriptor.from_tensor
    a = D(FakeTensor((m, k), address=1 << 20), [128, 64])
    b = D(FakeTensor((n, k), address=2 << 20), [128, 64])
    c = D(FakeTensor((m, n), address=3 << 20), [128, 128])
    return a, b, c, m, n, k


class FakeGpu:
    """Stands in for the runtime kernel (records launches) and for do_bench
    (runs the launch, returns the time this test gives the kernel that ran,
    told apart by its B tile rows and aref depth)."""

    def __init__(self, times):
        self.times = times
        self.launches = []
        self.tuner = None

    def __call__(self, handle, args_address, count, grid_address, stream):
        self.launches.append((count, tuple((ctypes.c_uint32 * 3).from_address(grid_address))))
        return 0

    def bench(self, fn):
        fn()
        meta = self.tuner.kernel.last_kernel.metadata
        return self.times[(meta["params"][5]["_block"][0], meta["_tawa"]["aref_depth"])]


WIDE = tawa.Config({"BM": 128, "BN": 256, "BK": 64}, pre_hook=set_blocks, aref_depth=3)
NARROW = tawa.Config({"BM": 128, "BN": 128, "BK": 64}, pre_hook=set_blocks, num_buffers_warp_spec=2)
TOO_SHORT = tawa.Config({"BM": 32, "BN": 128, "BK": 64}, pre_hook=set_blocks)  # wgmma needs 64 rows
CONFIGS = [WIDE, NARROW, TOO_SHORT]


@pytest.fixture
def gpu(monkeypatch):
    fake = FakeGpu({(256, 3): 2.0, (128, 2): 1.5})
    monkeypatch.setattr(CompiledKernel, "launch_target", lambda self: (fake, 1, lambda: 0))
    return fake


def tuned(gpu, configs=CONFIGS):
    tuner = tawa.autotune(configs, key=["M", "N", "K"], bench=lambda fn: gpu.bench(fn))(tawa.jit(gemm_body))
    gpu.tuner = tuner
    return tuner


def grid(meta):
    return ((meta["M"] + meta["BM"] - 1) // meta["BM"], (meta["N"] + meta["BN"] - 1) // meta["BN"])


def test_fastest_compilable_config_is_kept_and_launched(gpu):
    tuner = tuned(gpu)
    args = arguments(512, 512, 512)
    compiled = tuner[grid](*args)
    assert tuner.best_config(*args) is NARROW
    assert compiled.metadata["_tawa"]["aref_depth"] == 2  # the alias reached the compiler
    assert tuner.benched_configs == [WIDE, NARROW]
    (key, results), = tuner.timings.items()
    assert [(c, ms) for c, ms, _ in results] == [(WIDE, 2.0), (NARROW, 1.5), (TOO_SHORT, None)]
    assert "wgmma cannot cover" in results[2][2]
    # Two timed launches, then the call's own launch with NARROW's tiles.
    assert len(gpu.launches) == 3 and gpu.launches[-1][1] == (4, 4, 1)
    assert args[1].block_shape == [128, 64]


def test_same_key_launches_without_tuning_other_key_tunes(gpu):
    tuner = tuned(gpu)
    tuner[grid](*arguments(512, 512, 512))
    tuner[grid](*arguments(512, 512, 512))
    assert tuner.stats["tunings"] == 1 and len(tuner.benched_configs) == 2 and len(gpu.launches) == 4
    tuner[grid](*arguments(1024, 512, 512))
    assert tuner.stats["tunings"] == 2 and len(tuner.benched_configs) == 4


def test_choice_is_kept_on_disk(gpu):
    tuned(gpu)[grid](*arguments(512, 512, 512))
    again = tuned(gpu)
    compiled = again[grid](*arguments(512, 512, 512))
    assert again.stats == {"tunings": 0, "disk_hits": 1} and again.benched_configs == []
    assert compiled.metadata["_tawa"]["aref_depth"] == 2
    assert os.listdir(os.path.join(os.environ["TAWA_CACHE_DIR"], "autotune"))


def test_no_config_compiles(gpu):
    tuner = tuned(gpu, [TOO_SHORT])
    with pytest.raises(tawa.CompilationError, match="no config of gemm_body compiles"):
        tuner[grid](*arguments(512, 512, 512))


def test_autotune_needs_a_tawa_kernel_and_configs():
    with pytest.raises(TypeError, match="tawa.jit"):
        tawa.autotune(CONFIGS, key=["M"])(gemm_body)
    with pytest.raises(ValueError, match="at least one"):
        tawa.autotune([], key=["M"])(tawa.jit(gemm_body))
