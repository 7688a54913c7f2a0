"""Shared fixtures: the vendored data in tests/data (README there), an encoder of its model."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
PARITY = DATA / "parity"
PARITY_MODEL = PARITY / "model"
PARITY_STEMS = sorted(path.stem for path in (PARITY / "inputs").glob("*.txt"))
PARITY2 = DATA / "parity2"
PARITY2_MODEL = PARITY2 / "model"
PARITY2_STEMS = sorted(path.stem for path in (PARITY2 / "inputs").glob("*.txt"))
PARITY3 = DATA / "parity3"
PARITY3_STEMS = sorted(path.stem for path in (PARITY3 / "inputs").glob("*.txt"))
MINING_FIXTURES = DATA / "mining"
# The light install (`make light-test`) has no torch: what needs it is skipped there, only there.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="torch is not installed (the light install)")
CORPUS_SAMPLE = DATA / "corpus"


def fixture_language(stem: str) -> str:
    """The language each parity input was processed as (edge, edge_spm -> en; edge_xx and
    batching_xx -> xx)."""
    return "en" if stem in ("edge", "edge_spm") else stem.split("_")[-1]


def read_fixture_lines(path: Path) -> list[str]:
    """Lines split on '\\n' only, as the official pipeline splits them."""
    lines = path.read_bytes().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def pytest_addoption(parser):
    parser.addoption("--device", default="cpu",
                     help="where the tests marked `device` run torch: cpu (default) or cuda")


@pytest.fixture(scope="session")
def device(request) -> str:
    """The torch device of the tests marked `device` (`--device`; cpu unless a GPU is asked for)."""
    name = request.config.getoption("--device")
    if name != "cpu":
        import torch
        if not torch.cuda.is_available():
            pytest.exit(f"--device {name}: torch sees no CUDA device", returncode=4)
    return name


@pytest.fixture(autouse=True)
def empty_laser_home(tmp_path_factory, monkeypatch):
    """An empty download cache: commands pick a language's official model when it is downloaded
    there, so no test may see the machine's downloads."""
    monkeypatch.setenv("LASER_HOME", str(tmp_path_factory.mktemp("laser-home")))


@pytest.fixture(scope="session")
def encoder():
    from laser.models.encoder import Encoder
    return Encoder.load(str(PARITY_MODEL))


@pytest.fixture(scope="session")
def expected_embeddings():
    return {stem: np.load(PARITY / "expected" / f"{stem}.npy") for stem in PARITY_STEMS}


@pytest.fixture(scope="session")
def laser2_encoder():
    from laser.models.encoder import Encoder
    return Encoder.load(str(PARITY2_MODEL))


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty $LASER_HOME (download cache) and no mirror or model from the environment."""
    monkeypatch.setenv("LASER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LASER_DOWNLOAD_URL", raising=False)
    monkeypatch.delenv("LASER_MODEL", raising=False)
    return tmp_path / "home"


@pytest.fixture(scope="session")
def ray_runtime():
    """A real local Ray runtime of 2 CPUs, started once for every distributed test (slow to
    start); its workers import this checkout's `laser`."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    yield ray
    ray.shutdown()
