"""The GPU checks' bounded wait (gpu/compiled/workloads.py, synchronize): a
launch that never completes ends the check with status 3 and names what was
running, instead of holding the device call until its limit; a launch that
completes returns. Run here with stand-ins for torch and tawa.runtime (no GPU,
no PyTorch): only the waiting logic is under test."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Stand-ins: an Event that completes after `polls` queries (never, if None).
STUBS = textwrap.dedent("""
    import sys, types
    torch = types.ModuleType("torch")
    torch.float16 = torch.bfloat16 = torch.float8_e4m3fn = object()
    class Event:
        polls = None
        def __init__(self):
            self.n = 0
        def record(self):
            pass
        def query(self):
            self.n += 1
            return Event.polls is not None and self.n >= Event.polls
    synced = []
    torch.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: synced.append(1))
    sys.modules["torch"] = torch
    runtime = types.ModuleType("tawa.runtime")
    runtime.Kernel = object
    tawa = types.ModuleType("tawa")
    tawa.runtime = runtime
    sys.modules["tawa"] = tawa
    sys.modules["tawa.runtime"] = runtime
    sys.path.insert(0, {compiled!r})
    import workloads
""")


def run(body, hang_seconds):
    code = STUBS.format(compiled=os.path.join(ROOT, "gpu", "compiled")) + textwrap.dedent(body)
    env = dict(os.environ, TAWA_CHECK_HANG_SECONDS=str(hang_seconds))
    env.pop("PYTHONUNBUFFERED", None)  # a pipe: stdout block-buffered, as under `| tail`
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)


def test_a_launch_that_never_completes_ends_the_check_naming_it():
    r = run("""
        print("PASS an earlier kernel")  # buffered (stdout is a pipe): must not be lost
        workloads.RUNNING = "examples/gemm_kn_fp8_bn64/default 129x257x136"
        workloads.synchronize()
        print("not reached")
    """, 0.2)
    assert r.returncode == 3, r.stderr
    assert r.stdout.splitlines() == [
        "PASS an earlier kernel",
        "HANG examples/gemm_kn_fp8_bn64/default 129x257x136: not finished after 0.2 s; stopping"]


def test_a_launch_that_completes_returns_after_a_full_synchronize():
    r = run("""
        Event.polls = 3
        workloads.synchronize()
        print("returned", len(synced))
    """, 30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "returned 1"
