"""bench/mega_stragglers.py's analysis on made-up traces: per operator the
last task against the median one, per worker its lateness over the steps.
The script imports torch and tawa.mega only in main(), so this runs on a CPU
machine."""
import collections
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "mega_stragglers", os.path.join(ROOT, "bench", "mega_stragglers.py"))
stragglers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stragglers)

Record = collections.namedtuple(
    'Record', 'start_ns end_ns worker op ready_ns computed_ns weight_wait_ns')


def step(late_worker, late_ns, t0=0):
    """embed, then a layer of qkv (4 tasks) and o_proj (4 tasks) on workers
    0-3; each task starts when the previous operator's last task ended, has its
    inputs 500 ns later, computes 1000 ns and stores 200; `late_worker` has its
    inputs `late_ns` later in every operator."""
    trace = [Record(t0, t0 + 100, 0, 'embed', 0, 0, 0)]
    end = t0 + 100
    for op in ('l0.qkv', 'l0.o_proj'):
        last = end
        for w in range(4):
            ready = end + 500 + (late_ns if w == late_worker else 0)
            r = Record(end, ready + 1200, w, op, ready, ready + 1000, 0)
            trace.append(r)
            last = max(last, r.end_ns)
        end = last
    return trace


def test_the_late_worker_is_found(capsys):
    steps = [step(2, 700, t0=10_000 * i) for i in range(4)]
    sms = [[40, 41, 42, 43]] * 4
    out = stragglers.analyse(steps, sms)
    text = capsys.readouterr().out
    # Median end of 4 tasks: three on time, one 700 ns late -> spread 0.7 µs.
    assert out['spread'] == {'qkv': 0.7, 'o_proj': 0.7}
    # The last task had its inputs 0.7 µs after the median task's, started
    # with it and computed and stored as long.
    for kind in ('qkv', 'o_proj'):
        b = out['blame'][kind]
        assert b['start'] == 0 and b['ready'] == 0.7
        assert b['compute'] == 0 and b['epilogue'] == 0
    assert out['ranked'][0] == 2
    assert out['last'][('qkv', 2)] == 4 and out['last'][('o_proj', 2)] == 4
    assert 'worker   2 sm      42' in text
    # A constant ranking: the correlation is undefined only when no worker
    # differs; here worker 2 is late in even and odd steps alike.
    assert out['correlation'] > 0.99


def test_without_phases_only_the_ends_are_compared(capsys):
    steps = [[r._replace(ready_ns=0, computed_ns=0) for r in step(1, 300)]]
    out = stragglers.analyse(steps + steps, [[0, 1, 2, 3]] * 2)
    capsys.readouterr()
    assert out['spread'] == {'qkv': 0.3, 'o_proj': 0.3}
    assert out['blame'] == {}
    assert out['ranked'][0] == 1


def test_kind_of():
    assert stragglers.kind_of('l12.gate_up') == 'gate_up'
    assert stragglers.kind_of('lm_head') == 'lm_head'
    assert stragglers.kind_of('embed') == 'embed'
