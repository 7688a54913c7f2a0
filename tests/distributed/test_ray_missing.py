"""`--ray` where Ray is not installed (simulated in a child process by a `ray` module on the
path that fails to import, as a missing package does): one line naming the extra, exit 1, and
nothing left behind (no shard directory, no output)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import PARITY, PARITY_MODEL, environment_without

ENGLISH = PARITY / "inputs" / "en.txt"
ENGLISH_NPY = PARITY / "expected" / "en.npy"


@pytest.fixture
def without_ray(tmp_path) -> dict:
    """The environment of a child process in which `import ray` fails."""
    shadow = tmp_path / "no-ray"
    shadow.mkdir()
    return environment_without("ray", shadow)


@pytest.mark.parametrize("command", [
    ["embed", ENGLISH, "-l", "en", "-o", "out.npy", "--model", PARITY_MODEL],
    ["mine", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY, "--trg-embeddings", ENGLISH_NPY,
     "-o", "out.tsv"],
    ["knn", "build", ENGLISH_NPY, "--index", "IVF2,Flat", "-o", "out.index"],
], ids=["embed", "mine", "knn build"])
def test_ray_option_without_ray_is_one_line_naming_the_extra(tmp_path, without_ray, command):
    work = tmp_path / "work"
    work.mkdir()
    result = subprocess.run([sys.executable, "-m", "laser", *map(str, command), "--ray", "local"],
                            cwd=work, env=without_ray, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        "laser: error: --ray needs Ray, which is not installed: "
        "pip install 'laser-toolkit[ray]'"]
    assert list(work.iterdir()) == []
