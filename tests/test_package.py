"""The built package: a wheel (and a wheel built from the sdist) carries the default model, and
an install of it embeds offline with no --model, outside the checkout."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import re
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

SOURCES = ("setup.py", "MANIFEST.in", "README.md", "requirements.txt", "laser", "models/default")
SENTENCES = "Das Buch liegt auf dem Tisch.\nWo ist der Bahnhof?\n"

pytestmark = pytest.mark.slow


def _pip(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
                   cwd=cwd, check=True, capture_output=True)


def _source_copy(target: Path) -> Path:
    """The files a release is built from, copied so that building leaves the checkout alone."""
    target.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def _wheel(source: Path, out: Path) -> Path:
    _pip("wheel", ".", "--no-deps", "--no-build-isolation", "-w", str(out), cwd=source)
    wheel, = out.glob("laser_toolkit-*.whl")
    return wheel


def _installed(wheel: Path, target: Path) -> Path:
    _pip("install", "--no-deps", "--target", str(target), str(wheel), cwd=target.parent)
    return target


def _run_installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m laser ARGS` importing laser from `site` only, run outside the checkout."""
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("LASER_MODEL", None)
    return subprocess.run([sys.executable, "-m", "laser", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def _embed_from(site: Path, work: Path) -> np.ndarray:
    (work / "in.txt").write_text(SENTENCES, encoding="utf-8")
    where = subprocess.run([sys.executable, "-c", "import laser; print(laser.__file__)"], cwd=work,
                           env=dict(os.environ, PYTHONPATH=str(site)), capture_output=True,
                           text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(site), where
    result = _run_installed(site, work, "embed", "in.txt", "-o", "out.npy", "--lang", "de", "-q")
    assert result.returncode == 0, result.stderr
    provenance = json.loads((work / "out.npy.json").read_text(encoding="utf-8"))
    assert Path(provenance["model_encoder"]).is_relative_to(site)
    assert provenance["model_name"] == "laser-default-v2"
    return np.load(work / "out.npy")


def _checkout_embeddings() -> np.ndarray:
    from laser import Encoder
    return Encoder.load().encode(SENTENCES.splitlines(), lang="de")


def _requirements(wheel: Path) -> dict[str, set[str]]:
    """The wheel's Requires-Dist project names by extra ("" for the base install)."""
    with zipfile.ZipFile(wheel) as archive:
        metadata, = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        lines = archive.read(metadata).decode().splitlines()
    found: dict[str, set[str]] = {}
    for line in lines:
        if line.startswith("Requires-Dist: "):
            name = re.match(r"[A-Za-z0-9_.-]+", line[len("Requires-Dist: "):]).group().lower()
            extra = re.search(r"""extra == ["']([^"']+)""", line)
            found.setdefault(extra.group(1) if extra else "", set()).add(name)
    return found


def test_wheel_ships_the_default_model_and_embeds_offline(tmp_path):
    wheel = _wheel(_source_copy(tmp_path / "src"), tmp_path / "dist")
    # the light install: every language; no torch, scipy or onnx
    requirements = _requirements(wheel)
    assert {"onnxruntime", "jieba", "mecab-python3", "ipadic"} <= requirements[""]
    assert not {"torch", "scipy", "onnx", "fasttext-predict"} & requirements[""]
    assert "torch" in requirements["torch"] and "scipy" in requirements["graph"]
    site = _installed(wheel, tmp_path / "site")
    work = tmp_path / "elsewhere"
    work.mkdir()
    vectors = _embed_from(site, work)
    assert vectors.shape == (2, 576) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, _checkout_embeddings(), rtol=0, atol=1e-6)
    listing = _run_installed(site, work, "models").stdout.splitlines()
    default, = [line for line in listing if line.startswith("default (laser-default-v2) ")]
    assert "shipped" in default and str(site) in default
    assert (site / "laser" / "training" / "recipes" / "v2.json").is_file()  # laser train --recipe v2
    identified = _run_installed(site, work, "lid", "in.txt", "-q")  # the packaged laser-lid.ftz
    assert identified.returncode == 0, identified.stderr
    assert [line.split("\t")[0] for line in identified.stdout.splitlines()] == ["deu_Latn"] * 2


def test_sdist_carries_the_model_into_its_wheel(tmp_path):
    source = _source_copy(tmp_path / "src")
    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "sdist")],
                   cwd=source, check=True, capture_output=True)
    archive, = (tmp_path / "sdist").glob("laser_toolkit-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    unpacked, = (tmp_path / "unpacked").iterdir()
    site = _installed(_wheel(unpacked, tmp_path / "dist"), tmp_path / "site")
    assert sorted(path.name for path in (site / "laser" / "models" / "default").iterdir()) == \
        sorted(path.name for path in (ROOT / "models" / "default").iterdir())
    assert (site / "laser" / "training" / "recipes" / "v2.json").is_file()
