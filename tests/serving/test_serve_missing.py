"""`laser serve` where the `serve` extra is not installed (simulated in a child process by a
`starlette` module on the path that fails to import): one line naming the extra, exit 1."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT


def test_serve_without_its_extra_is_one_line_naming_it(tmp_path):
    shadow = tmp_path / "no-starlette"
    shadow.mkdir()
    (shadow / "starlette.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'starlette'\", name='starlette')\n",
        encoding="utf-8")
    inherited = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), *inherited, str(ROOT)])}
    result = subprocess.run([sys.executable, "-m", "laser", "serve", "--port", "0"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        "laser: error: laser serve needs starlette, which is not installed: "
        "pip install 'laser-toolkit[serve]'"]
