"""The test suite's own guard: missing shared data stops it with one clear line."""
import os
import subprocess
import sys

from conftest import ROOT


def test_missing_shared_data_stops_the_suite_with_one_line(tmp_path):
    missing = tmp_path / "no-shared-here"
    env = {**os.environ, "LASER_SHARED": str(missing)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(ROOT / "tests" / "test_knn.py")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 4
    assert "which is missing" in run.stdout + run.stderr
    assert str(missing) in run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
