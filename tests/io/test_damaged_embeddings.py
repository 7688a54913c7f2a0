"""A damaged embedding file (an .npy cut short, in its rows or in its header, a broken header,
rows past its shape) or provenance sidecar (not JSON, not an object) is one line naming it and
saying what is wrong, exit 1, in every command that reads embeddings: the one reader
(laser.io.embeddings.open_embeddings) checks it."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from conftest import DATA, PARITY, PARITY_MODEL, laser_ok, one_error_line, run_laser

ENGLISH = PARITY / "inputs" / "en.txt"
NPY_BYTES = 128 + 30 * 80 * 4  # the header laser writes, and 30 rows of 80 float32


@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> Path:
    """en.npy (30 x 80 float32) and its sidecar, by `laser embed` with the parity model."""
    out = tmp_path_factory.mktemp("embedded") / "en.npy"
    laser_ok("embed", ENGLISH, "-o", out, "-l", "en", "-q", "--model", PARITY_MODEL)
    return out


def replaced_in_header(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    assert len(old) == len(new)
    return lambda data: data[:128].replace(old, new) + data[128:]


DAMAGES = {
    "rows-cut-short": (lambda data: data[:5000], False,
                       "damaged .npy file: cut short: 5000 bytes, where the 30 x 80 float32 "
                       f"matrix its header declares takes {NPY_BYTES}"),
    "header-cut-short": (lambda data: data[:60], False,
                         "damaged .npy file: cut short inside its header"),
    "header-not-python": (replaced_in_header(b"'descr'", b"(descr'"), False,
                          "damaged .npy file: its header is not the dict of descr, "
                          "fortran_order and shape that numpy writes"),
    "header-keys": (replaced_in_header(b"'shape'", b"'sh4pe'"), False,
                    "damaged .npy file: its header is not the dict of descr, fortran_order "
                    "and shape that numpy writes"),
    "header-dtype": (replaced_in_header(b"'<f4'", b"'<q9'"), False,
                     "damaged .npy file: dtype '<q9' in its header"),
    "rows-past-the-shape": (lambda data: data + b"\0" * 7, False,
                            f"damaged .npy file: {NPY_BYTES + 7} bytes, more than the "
                            f"{NPY_BYTES} the 30 x 80 float32 matrix its header declares "
                            "takes"),
    "sidecar-not-json": (lambda text: text[:40], True,
                         "damaged sidecar, not valid JSON ("),
    "sidecar-not-an-object": (lambda text: b"[1, 2]\n", True,
                              "damaged sidecar, a JSON list, not an object; repair it, or "
                              "delete it to go on without its record"),
}

COMMANDS = {
    "knn-build": lambda x, tmp: ["knn", "build", x, "-q", "-o", tmp / "out.index"],
    "knn-search": lambda x, tmp: ["knn", "search", tmp / "good.index", x, "-o", tmp / "out"],
    "mine": lambda x, tmp: ["mine", ENGLISH, ENGLISH, "--src-embeddings", tmp / "good.npy",
                            "--trg-embeddings", x, "-q", "-o", tmp / "out"],
    "score": lambda x, tmp: ["score", ENGLISH, ENGLISH, "--src-embeddings", x,
                             "--trg-embeddings", tmp / "good.npy", "-q", "-o", tmp / "out"],
    "dedup": lambda x, tmp: ["dedup", ENGLISH, "--embeddings", x, "-q", "-o", tmp / "out"],
    "classify-predict": lambda x, tmp: ["classify", "predict", DATA / "classifier",
                                        "--embeddings", x, "-o", tmp / "out"],
}


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_damaged_embedding_file_is_one_line_naming_it(tmp_path, embedded, command, damage):
    for name in ("good.npy", "bad.npy"):
        shutil.copyfile(embedded, tmp_path / name)
        shutil.copyfile(f"{embedded}.json", tmp_path / f"{name}.json")
    laser_ok("knn", "build", tmp_path / "good.npy", "-q", "-o", tmp_path / "good.index")
    change, in_sidecar, message = DAMAGES[damage]
    damaged = tmp_path / ("bad.npy.json" if in_sidecar else "bad.npy")
    damaged.write_bytes(change(damaged.read_bytes()))
    result = run_laser(*COMMANDS[command](tmp_path / "bad.npy", tmp_path))
    line = one_error_line(result)
    assert line.startswith(f"laser: error: {damaged}: {message}")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.index").exists()
    assert not (tmp_path / ".out.shards").exists()  # mine: no stage ran, no work was kept


def test_the_reader_still_opens_what_numpy_writes(tmp_path):
    from laser.io.embeddings import open_embeddings
    rows = np.arange(12, dtype=np.float16).reshape(4, 3)
    for name, array in (("c.npy", rows), ("f.npy", np.asfortranarray(rows)),
                        ("empty.npy", rows[:0])):
        np.save(tmp_path / name, array)
        opened = open_embeddings(tmp_path / name)
        assert opened.dtype == np.float16 and np.array_equal(opened, array)
    np.save(tmp_path / "v2.npy", rows)  # the same header in format 2.0 (4 bytes of length)
    data = (tmp_path / "v2.npy").read_bytes()
    length = int.from_bytes(data[8:10], "little")
    (tmp_path / "v2.npy").write_bytes(data[:6] + b"\x02\x00" + (length - 2).to_bytes(4, "little")
                                      + data[10:10 + length - 2] + data[10 + length:])
    assert np.array_equal(open_embeddings(tmp_path / "v2.npy"), rows)
