"""bench/ncu_mega_lines.py on a small made-up profile: Nsight Compute's
per-instruction CSV joined with nvdisasm -gi's line table by offset, grouped
by the outermost task frame, the innermost line and file, with the code each
task file runs."""
import gzip
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "ncu_mega_lines", os.path.join(ROOT, "bench", "ncu_mega_lines.py"))
lines = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lines)

T = "/r/include/tawa/device/mega"
SASS = f"""\
.text._Z5otherv:
        /*0000*/                   EXIT ;
.text._ZN4tawa6device4mega10megaKernelINS1_11DecodeTasksEEEvNS1_10TablesViewENS1_12RuntimeStateET_:
\t//## File "{T}/runtime.cuh", line 458
        /*0000*/                   S2R R9, SR_TID.X ;
\t//## File "/r/include/tawa/device/mma.cuh", line 24 inlined at "{T}/tasks/linear.cuh", line 230
\t//## File "{T}/tasks/linear.cuh", line 230 inlined at "{T}/tasks/linear.cuh", line 541
\t//## File "{T}/tasks/linear.cuh", line 541 inlined at "{T}/runtime.cuh", line 300
\t//## File "{T}/runtime.cuh", line 300
        /*0010*/                   HMMA.16816.F32.BF16 R96, R88, R80, R96 ;
        /*0020*/                   LDS.128 R80, [R132+0x200] ;
\t//## File "{T}/tasks/attention.cuh", line 477 inlined at "{T}/tasks/attention.cuh", line 842
\t//## File "{T}/tasks/attention.cuh", line 842 inlined at "{T}/runtime.cuh", line 300
\t//## File "{T}/runtime.cuh", line 300
        /*0030*/                   FFMA R1, R2, R3, R4 ;
.text._Z4nextv:
        /*0000*/                   EXIT ;
"""


def csv_text(rows):
    head = ('"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
            '"stall_wait","stall_short_sb","stall_wait (Not Issued)"')
    body = "\n".join(",".join(f'"{v}"' for v in r) for r in rows)
    return f'"Kernel Name","megaKernel"\n{head}\n{body}\n'


PROFILE = [
    ("0x7f0000001000", "S2R R9, SR_TID.X", 2, 128, 2, 0, 1),
    ("0x7f0000001010", "HMMA.16816.F32.BF16 R96, R88, R80, R96", 6, 4096, 1, 5, 0),
    ("0x7f0000001020", "LDS.128 R80, [R132+0x200]", 4, 4096, 4, 0, 0),
    ("0x7f0000001030", "FFMA R1, R2, R3, R4", 8, 0, 8, 0, 0),
]


@pytest.fixture
def files(tmp_path):
    c = tmp_path / "k-sass.csv"
    c.write_text(csv_text(PROFILE))
    s = tmp_path / "k.sass.gz"
    with gzip.open(s, "wt") as f:
        f.write(SASS)
    return str(c), str(s)


def test_groups_by_site_line_and_file(files):
    a = lines.attribute(*files)
    assert a["instructions"] == 4 and a["mismatched"] == 0 and a["total"] == 20
    site = a["site"]
    assert set(site) == {"(runtime) device/mega/runtime.cuh", "device/mega/tasks/linear.cuh:541",
                         "device/mega/tasks/attention.cuh:842"}
    lin = site["device/mega/tasks/linear.cuh:541"]
    assert (lin["samples"], lin["execs"], lin["instrs"]) == (10, 8192, 2)
    assert lin["stalls"] == {"wait": 5, "short_sb": 5}  # "Not Issued" columns left out
    assert a["line"]["device/mma.cuh:24"]["samples"] == 10
    assert a["file"]["device/mega/tasks/attention.cuh"]["samples"] == 8
    # Code: linear's two instructions ran (one 128-byte line); attention's did not.
    assert a["code"]["device/mega/tasks/linear.cuh"][:2] == [2, 2]
    assert a["code"]["device/mega/tasks/attention.cuh"][:2] == [1, 0]
    assert a["code"]["(runtime)"][:2] == [1, 1]


def test_a_different_cubin_is_reported(files, tmp_path):
    c = tmp_path / "other-sass.csv"
    rows = [list(r) for r in PROFILE]
    rows[2][1] = "IMAD R1, R2, R3, R4"
    c.write_text(csv_text(rows))
    assert lines.attribute(str(c), files[1])["mismatched"] == 1


def test_no_line_table_is_an_error(files, tmp_path):
    s = tmp_path / "plain.sass"
    s.write_text(".text._Z5otherv:\n        /*0000*/                   EXIT ;\n")
    with pytest.raises(SystemExit, match="megaKernel"):
        lines.attribute(files[0], str(s))
