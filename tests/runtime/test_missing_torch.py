"""Where torch is not installed (the light install of `make light-test`, or a child process here
in which `import torch` fails as for a missing package): what needs torch says so in one line,
naming the extra with the index of torch's CPU build (without it, pip brings the CUDA build)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from laser.optional import TORCH_CPU_INDEX

from conftest import LASER3_FIXTURES, PARITY, ROOT, environment_without

DEFAULT_CHECKPOINT = ROOT / "models" / "default" / "laser-default-v2.pt"
BILSTM = f"{DEFAULT_CHECKPOINT}: a BiLSTM run in torch (--runtime torch, --quantize fp16, a GPU)"
HINT = (f"pip install 'laser-toolkit[torch]' --extra-index-url {TORCH_CPU_INDEX} (torch's CPU "
        "build; leave the index out for a CUDA GPU)")
LOAD = """
from laser.encoder import Encoder
from laser.errors import LaserError
try:
    Encoder.load("default", runtime="torch")
except LaserError as error:
    print(error)
"""


@pytest.fixture
def without_torch(tmp_path) -> dict:
    shadow = tmp_path / "no-torch"
    shadow.mkdir()
    return environment_without("torch", shadow)


def test_the_torch_runtime_in_python_is_a_laser_error_naming_the_cpu_build(without_torch):
    done = subprocess.run([sys.executable, "-c", LOAD], env=without_torch, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{BILSTM} needs torch, which is not installed: {HINT}\n"


@pytest.mark.parametrize("options, needs", [
    (["--model", "default", "--runtime", "torch"], BILSTM),
    (["--model", "default", "--quantize", "fp16"], BILSTM),
    (["--model", "default", "--device", "cuda"], "--device cuda"),
    (["--model", LASER3_FIXTURES / "A"], f"{LASER3_FIXTURES / 'A' / 'laser3-A.pt'}: a LASER3 "
                                         "transformer model"),
], ids=["runtime", "fp16", "cuda", "laser3"])
def test_commands_needing_torch_say_so_in_one_line(tmp_path, without_torch, options, needs):
    output = tmp_path / "out.npy"
    done = subprocess.run([sys.executable, "-m", "laser", "embed", str(PARITY / "inputs" / "en.txt"),
                           "--lang", "en", "-o", str(output), *map(str, options)],
                          env=without_torch, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"laser: error: {needs} needs torch, which is not installed: {HINT}"]
    assert not output.exists()
