"""bench/mega_code_size.py on a CPU machine: the kernel built for Qwen3-8B's
attention, disassembled with its inline chains, splits into the tasks of
DecodeTasks, each with code, adding up to the kernel."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "mega_code_size", os.path.join(ROOT, "bench", "mega_code_size.py"))
code_size = importlib.util.module_from_spec(spec)
spec.loader.exec_module(code_size)

needs_tools = pytest.mark.skipif(
    not os.path.isfile(code_size._nvcc()) or code_size.nvdisasm() is None,
    reason="nvcc or nvdisasm not found")


def test_every_task_call_is_found():
    names = set(code_size.call_lines().values())
    assert {"linear task", "attention task", "attention prefetch", "merge task"} <= names


@needs_tools
def test_code_by_task():
    flags = code_size.specialization_flags(4, 128)
    tasks, regions = code_size.attribute(code_size.disassemble(flags), code_size.call_lines())
    total = sum(tasks.values())
    # One attention variant: about 210 KB (every variant: about 720 KB).
    assert 100 * 1024 < total < 400 * 1024
    for name in ("linear task", "attention task", "attention prefetch", "linear prefetch",
                 "merge task", "runtime"):
        assert tasks[name] > 1024, name
    assert tasks["linear task"] > tasks["merge task"]
    assert sum(regions.values()) <= total
