"""Shared fixtures: the vendored data in tests/data (README there), an encoder of its model."""
from __future__ import annotations

import importlib.util
import os
import pickle
import signal
import traceback
from pathlib import Path
from typing import Callable

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
NOBODY = 65534  # the uid and gid a test drops root for
CHILD_SECONDS = 120  # the longest a forked child of `as_nobody` may run


def environment_without(module: str, directory: Path) -> dict:
    """The environment of a child process in which `import MODULE` fails as for a package that
    is not installed (a MODULE.py in `directory`, first on its path, raises)."""
    import os
    (directory / f"{module}.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{module}'\", name='{module}')\n",
        encoding="utf-8")
    inherited = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(directory), *inherited, str(ROOT)])}


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


# The signals whose handlers a test may change (laser's commands run in this process install
# some: SIGTERM and SIGHUP end them cleanly); each test's are restored after it.
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
INTERRUPTED = []  # set by a Ctrl-C, which an in-process `laser` command turns into its exit 130


def _noting_interrupts(signum, frame):
    INTERRUPTED.append(signum)
    signal.default_int_handler(signum, frame)


@pytest.fixture(autouse=True)
def signal_handlers_restored():
    """Every test ends with the signal handlers it began with, and a Ctrl-C stops the suite
    even where a command run in this process caught it (`laser: interrupted`, exit 130)."""
    previous = {signum: signal.getsignal(signum) for signum in HANDLED_SIGNALS}
    if previous[signal.SIGINT] is signal.default_int_handler:
        signal.signal(signal.SIGINT, _noting_interrupts)
    yield
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    if INTERRUPTED:
        pytest.exit("interrupted (Ctrl-C)", returncode=pytest.ExitCode.INTERRUPTED)


@pytest.fixture(autouse=True)
def empty_laser_home(tmp_path_factory, monkeypatch):
    """An empty download cache: commands pick a language's official model when it is downloaded
    there, so no test may see the machine's downloads."""
    monkeypatch.setenv("LASER_HOME", str(tmp_path_factory.mktemp("laser-home")))


@pytest.fixture(scope="session")
def encoder():
    from laser.encoder import Encoder
    return Encoder.load(str(PARITY_MODEL))


@pytest.fixture(scope="session")
def expected_embeddings():
    return {stem: np.load(PARITY / "expected" / f"{stem}.npy") for stem in PARITY_STEMS}


@pytest.fixture(scope="session")
def laser2_encoder():
    from laser.encoder import Encoder
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


LASER3_FIXTURES = PARITY3 / "model"


def install_official(name: str, checkpoint: Path, home: Path | None = None) -> Path:
    """Install a fixture model as the official model `name` in $LASER_HOME, as `laser download`
    leaves it (the manifest's file names and a download record): `checkpoint` with the
    SentencePiece files of the LASER2 fixture."""
    import hashlib
    import os
    import shutil

    from laser.models.registry import find_model, laser_home, write_record
    directory = (home or laser_home()) / name
    directory.mkdir(parents=True, exist_ok=True)
    sources = {".pt": checkpoint, ".spm": PARITY2_MODEL / "encoder.spm",
               ".cvocab": PARITY2_MODEL / "encoder.cvocab"}
    record = {}
    for file in find_model(name).files:
        target = directory / file.name
        shutil.copyfile(sources[os.path.splitext(file.name)[1]], target)
        record[file.name] = {"size": target.stat().st_size,
                             "sha256": hashlib.sha256(target.read_bytes()).hexdigest()}
    write_record(directory, name, record)
    return directory


@pytest.fixture
def official_models():
    """laser2 (the LASER2 fixture) and the LASER3 encoders of Igbo and Amharic (LASER3 fixtures
    A and B) installed under their official names in the test's empty $LASER_HOME."""
    return {"laser2": install_official("laser2", PARITY2_MODEL / "encoder.pt"),
            "laser3-ibo_Latn": install_official("laser3-ibo_Latn",
                                                LASER3_FIXTURES / "A" / "laser3-A.pt"),
            "laser3-amh_Ethi": install_official("laser3-amh_Ethi",
                                                LASER3_FIXTURES / "B" / "laser3-B.pt")}


def run_laser(*args, input=None):
    """`laser ARGS` run in this process by click's runner, every argument as a string."""
    from click.testing import CliRunner

    from laser.cli import main
    return CliRunner().invoke(main, [str(arg) for arg in args], input=input)


def laser_ok(*args, input=None):
    """`run_laser`, asserting it succeeded."""
    result = run_laser(*args, input=input)
    assert result.exit_code == 0, result.output
    return result


def one_error_line(result) -> str:
    """The one `laser: error: ...` line a refused command prints (exit 1, no traceback)."""
    assert result.exit_code == 1, result.output
    line, = result.stderr.splitlines()
    assert line.startswith("laser: error: ") and "Traceback" not in result.output
    return line


@pytest.fixture
def syncs(monkeypatch) -> list[tuple[str, object]]:
    """What is made durable, in order: ("fsync", (device, inode)) and ("replace", absolute
    target), recorded by wrappers of `os.fsync` and `os.replace` that still do their work."""
    events: list[tuple[str, object]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        status = os.fstat(fd)
        real_fsync(fd)
        events.append(("fsync", (status.st_dev, status.st_ino)))

    def replace(source, target, **options):
        real_replace(source, target, **options)
        events.append(("replace", os.path.abspath(target)))
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return events


def assert_durable(syncs: list, path: Path) -> None:
    """`path` was renamed into place after its own inode was fsynced, and its directory was
    fsynced after the rename (as SQLite commits a file)."""
    def identity(synced: Path) -> tuple[int, int]:
        status = os.stat(synced)
        return status.st_dev, status.st_ino
    renamed = max(at for at, event in enumerate(syncs)
                  if event == ("replace", os.path.abspath(path)))  # the last rename is its own
    assert ("fsync", identity(path)) in syncs[:renamed], f"{path} not synced before its rename"
    assert ("fsync", identity(path.parent)) in syncs[renamed + 1:], \
        f"{path.parent} not synced after {path.name} was renamed into it"


def as_nobody(work: Callable[[], object], groups: tuple[int, ...] = ()) -> object:
    """`work()` in a forked child that dropped root for uid and gid 65534 (`nobody`, also in
    `groups`); its result comes back through a pipe. A fork, not a new interpreter, so the
    child needs no access to where Python is installed; run `work` once as root first, so that
    everything it imports is imported before root is dropped."""
    if os.geteuid() != 0:
        pytest.skip("dropping privileges needs root; this run is unprivileged already")
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        outcome: tuple = ("error", "")
        try:
            signal.alarm(CHILD_SECONDS)  # a child stuck (a lock held at the fork) dies, not waits
            os.close(readable)
            os.setgroups(list(groups))
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            outcome = ("ok", work())
        except BaseException:  # noqa: BLE001 - every failure goes back to the test
            outcome = ("error", traceback.format_exc())
        finally:
            with os.fdopen(writable, "wb") as pipe:
                pickle.dump(outcome, pipe)
            os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as pipe:
        report = pipe.read()
    _, exit_status = os.waitpid(child, 0)
    assert report, f"the child ended without a report (wait status {exit_status})"
    status, value = pickle.loads(report)
    assert status == "ok", value
    return value
