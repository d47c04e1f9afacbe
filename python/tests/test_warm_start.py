"""A kernel's first call in a new process, its kernel on disk
(python/tests/warm_start.py's child processes): found by its source key
without Triton's front end, without Triton's Gluon modules (whose import was
most of that call) and without loading the compiler library -- and each
specialization finds its own entry, never another's."""
import os

import pytest

import warm_start

TESTS = os.path.dirname(os.path.abspath(__file__))
# The directory holding this tree's tawa package (TAWA_TEST_INSTALLED: the
# installed package).
TREE = None if os.environ.get("TAWA_TEST_INSTALLED") else os.path.dirname(TESTS)


@pytest.fixture
def child(tmp_path):
    script = warm_start.prepare(str(tmp_path))
    cache = str(tmp_path / "cache")

    def run(shape=(512, 512, 512), launch=False):
        extra = {"WARM_SHAPE": ",".join(map(str, shape))}
        if launch:
            extra["WARM_LAUNCH"] = "1"
        return warm_start.run_child(script, warm_start.child_env(TREE, cache, str(tmp_path), True, extra))
    return run


def test_a_new_process_finds_each_specialization_on_disk(child):
    # 16 | K, K = 520 (no divisibility), M = 1 (folded into the kernel):
    # three specializations, three kernels.
    shapes = [(512, 512, 512), (512, 512, 520), (1, 512, 512)]
    cold = {}
    for shape in shapes:
        got = child(shape)
        assert got["stats"]["compiles"] == 1 and got["stats"]["disk_hits"] == 0, (shape, got)
        assert got["triton_binder_calls"] == 0
        cold[shape] = got["directory"]
    assert len(set(cold.values())) == 3
    for shape in shapes:
        got = child(shape)
        print(f"first call in a new process, {shape} on disk: {got['first_call_ms']:.1f} ms "
              f"(import tawa {got['import_tawa_ms']:.1f} ms)")
        assert got["stats"] == {"compiles": 0, "disk_hits": 1, "memory_hits": 0, "fallbacks": 0, "ttir": 0}
        assert got["directory"] == cold[shape]  # its own entry
        assert not got["gluon_imported"]
        assert not got["compiler_loaded"]
        assert got["triton_binder_calls"] == 0


def test_a_new_process_launches_from_disk(child):
    child()
    got = child(launch=True)
    assert got["launches"] == 1
    assert got["stats"]["disk_hits"] == 1 and got["stats"]["ttir"] == 0
    assert not got["gluon_imported"] and not got["compiler_loaded"]
