"""Start-up stays light: `import laser`, help and input validation run without importing torch,
faiss, ray, ONNX (Runtime), scipy or sacremoses; embedding with a cached ONNX graph imports only
ONNX Runtime (the Moses steps are laser's own, without sacremoses' ~0.3 s of regexes)."""
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

HEAVY = ("torch", "faiss", "ray", "onnx", "onnxruntime", "sacremoses", "joblib", "scipy")
# Runs the CLI in a fresh interpreter, then prints which heavy packages got imported.
PROBE = """
import sys
from laser.cli import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    code = done.code
print(sorted(name for name in {heavy!r} if name in sys.modules))
sys.exit(code)
"""


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_import_laser_imports_no_heavy_package():
    probe = f"import sys, laser; print(sorted(name for name in {HEAVY!r} if name in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("args", [["--help"], ["embed", "--help"], ["knn", "--help"],
                                  ["mine", "--help"]])
def test_help_imports_no_heavy_package(args):
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("package", ["mining", "search"])
def test_the_search_and_mining_modules_import_no_heavy_package(package):
    """Each imports what it needs (faiss, scipy for graphs) when a function runs, not at import."""
    probe = (f"import importlib, pkgutil, sys, laser.{package} as package\n"
             "for module in pkgutil.iter_modules(package.__path__):\n"
             "    importlib.import_module(f'{package.__name__}.{module.name}')\n"
             f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_missing_input_is_reported_without_importing_torch(tmp_path):
    missing = tmp_path / "absent.txt"
    done = run_cli("embed", str(missing), "-o", str(tmp_path / "out.npy"), "--lang", "fr")
    assert done.returncode == 1
    assert done.stderr.strip() == f"laser: error: {missing}: no such file"
    assert done.stdout.strip() == "[]"
    assert not (tmp_path / "out.npy").exists()


def test_empty_directory_input_is_reported_without_importing_torch(tmp_path):
    done = run_cli("embed", str(tmp_path), "-o", str(tmp_path / "out.npy"), "--lang", "fr",
                   "--quantize", "int8")
    assert done.returncode == 1
    assert done.stderr.strip() == f"laser: error: {tmp_path}: no files in this directory"
    assert done.stdout.strip() == "[]"


def test_embedding_with_a_cached_graph_imports_onnx_runtime_alone(tmp_path):
    from laser.encoder import Encoder
    Encoder.load("default")  # builds the graph in this test's $LASER_HOME
    source = tmp_path / "fr.txt"
    source.write_text("Bonjour le monde.\nÇa va ?\n", encoding="utf-8")
    done = run_cli("embed", str(source), "-o", str(tmp_path / "out.npy"), "--lang", "fr", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['onnxruntime']"
    assert np.load(tmp_path / "out.npy").shape == (2, Encoder.load("default").dim)
