"""The shell scripts that run on the GPU machine (gpu/tools, scripts, .ci)
parse: a syntax error there is found only after a device call has started,
and costs that call. `bash -n` reads each without running it; two of them
are also run without their arguments, which they must refuse."""
import glob
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "gpu", "tools", "*.sh")) +
                 glob.glob(os.path.join(ROOT, "scripts", "*.sh")) +
                 [os.path.join(ROOT, ".ci", "run")])


def test_scripts_are_found():
    names = {os.path.basename(p) for p in SCRIPTS}
    assert {"mega_decode_run.sh", "mega_sanitize.sh", "mega_variants.sh", "mega_ab.sh",
            "test.sh", "run.sh", "run"} <= names


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: os.path.relpath(p, ROOT))
def test_script_parses(path):
    r = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_mega_sanitize_needs_its_directories():
    r = subprocess.run(["bash", os.path.join(ROOT, "gpu", "tools", "mega_sanitize.sh")],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "usage" in r.stderr


def test_mega_variants_needs_a_variant():
    r = subprocess.run(["bash", os.path.join(ROOT, "gpu", "tools", "mega_variants.sh")],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "usage" in r.stdout
