"""Repository weight: a model binary enters git only when it ships (models/default, one
checkpoint), and candidates or experiments kept under models/ are ignored by git. Tiny models
vendored as test fixtures (tests/data) are the one exception."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import PurePosixPath

import pytest

from conftest import ROOT

SHIPPED = PurePosixPath("models/default")
FIXTURES = PurePosixPath("tests/data")
MODEL_SUFFIXES = {".pt", ".onnx", ".spm", ".fcodes", ".fvocab", ".cvocab", ".safetensors",
                  ".ckpt", ".bin", ".npz"}
LARGEST_FIXTURE = 2 * 2 ** 20  # bytes; every file above it outside models/default is refused

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="not a git checkout")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def tracked_sizes() -> dict[PurePosixPath, int]:
    """Every file in git's index with its blob's size in bytes."""
    entries = [line.split(maxsplit=3) for line in git("ls-files", "-s").splitlines()]
    blobs = "\n".join(entry[1] for entry in entries) + "\n"
    sizes = subprocess.run(["git", "cat-file", "--batch-check=%(objectsize)"], cwd=ROOT,
                           input=blobs, check=True, capture_output=True, text=True).stdout.split()
    return {PurePosixPath(entry[3]): int(size) for entry, size in zip(entries, sizes)}


def is_under(path: PurePosixPath, folder: PurePosixPath) -> bool:
    return folder in path.parents


def misplaced(path: PurePosixPath, size: int) -> bool:
    """A model file or a large file that is neither the shipped model nor a tiny fixture."""
    if is_under(path, SHIPPED):
        return False
    if size > LARGEST_FIXTURE:
        return True
    return path.suffix in MODEL_SUFFIXES and not is_under(path, FIXTURES)


def test_only_the_shipped_model_and_tiny_fixtures_are_tracked():
    sizes = tracked_sizes()
    assert [str(path) for path, size in sizes.items() if misplaced(path, size)] == []
    assert [path.name for path in sizes if is_under(path, SHIPPED) and path.suffix == ".pt"] == [
        "laser-default-v2.pt"]
    assert [str(path) for path in sizes if is_under(path, PurePosixPath("models"))
            and not is_under(path, SHIPPED)] == []


@pytest.mark.parametrize("path", ["models/v2-candidate/laser-default.pt",
                                  "models/run-x/MODEL_CARD.md", "models/laser-default.pt"])
def test_candidates_under_models_are_ignored(path):
    assert git("check-ignore", "--no-index", path).strip() == path


def test_the_shipped_model_is_not_ignored():
    result = subprocess.run(["git", "check-ignore", "--no-index", "models/default/laser-default-v2.pt"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 1, result.stdout
