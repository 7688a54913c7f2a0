"""Quiet means quiet and things are said once: the shipped-default hint (never with -q, once per
$LASER_HOME), FAISS's raw clustering warnings (never: the project says it in one line, and not
under -q, and mining says its progress in lines of its own)."""
from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from laser.cli import main

from conftest import PARITY

HINT = ("laser: using the shipped default model; for the official LASER2 encoder of eng_Latn "
        "run: laser download laser2")
FRENCH = PARITY / "inputs" / "batching_fr.txt"
FRENCH_NPY = PARITY / "expected" / "batching_fr.npy"  # 400 rows: short of 16 x 39 for IVF16


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_default_model_hint_never_with_quiet_and_once_per_laser_home(tmp_path, monkeypatch):
    source = tmp_path / "en.txt"
    source.write_text("Hello world.\n", encoding="utf-8")
    out = tmp_path / "en.npy"
    for home in ("first", "second"):
        monkeypatch.setenv("LASER_HOME", str(tmp_path / home))
        for command in ("embed", "preprocess"):
            quiet = run(command, source, "-o", out, "-l", "en", "-q")
            assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output
        first = run("embed", source, "-o", out, "-l", "en")
        assert first.exit_code == 0 and first.stderr.splitlines()[0] == HINT
        again = run("embed", source, "-o", out, "-l", "en")
        assert again.exit_code == 0 and HINT not in again.stderr
        assert run("preprocess", source, "-o", out, "-l", "en").stderr == ""


def laser(*args):
    """The console command in a child process: FAISS writes to file descriptor 2 itself."""
    return subprocess.run([sys.executable, "-m", "laser", *map(str, args)],
                          capture_output=True, text=True)


def test_faiss_clustering_warnings_become_one_line_of_ours(tmp_path):
    built = laser("knn", "build", FRENCH_NPY, "--index", "IVF16,Flat", "-o", tmp_path / "a.index")
    assert built.returncode == 0, built.stderr
    assert built.stderr.splitlines() == [
        f"laser: {FRENCH_NPY}: IVF16,Flat trained on 400 points for 16 lists; under 39 points per "
        "centroid may lower recall (more rows or fewer centroids help)",
        f"indexed 400 x 80 vectors (IVF16,Flat, cosine) in {tmp_path / 'a.index'}"]
    quiet = laser("knn", "build", FRENCH_NPY, "--index", "IVF4,PQ8x4fs", "-q", "-o",
                  tmp_path / "b.index")
    assert quiet.returncode == 0 and quiet.stderr == ""
    mined = laser("mine", FRENCH, FRENCH, "--src-embeddings", FRENCH_NPY, "--trg-embeddings",
                  FRENCH_NPY, "--index", "IVF16,Flat", "--nprobe", "16", "-o", tmp_path / "m.tsv")
    assert mined.returncode == 0
    assert all(line.startswith(("laser: mine ", str(FRENCH), "wrote 400 lines"))
               for line in mined.stderr.splitlines()), mined.stderr  # progress and a summary
    quiet = laser("mine", FRENCH, FRENCH, "--src-embeddings", FRENCH_NPY, "--trg-embeddings",
                  FRENCH_NPY, "--index", "IVF16,Flat", "--nprobe", "16", "-q", "-o",
                  tmp_path / "m.tsv")
    assert quiet.returncode == 0 and quiet.stderr == ""
