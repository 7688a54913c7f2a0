"""`laser embed` and `laser knn build` on inputs of many files: one row per line, in order
across the files, as if they were one file."""
import gzip
import json

import faiss
import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.io.sources import zstd_module

from conftest import PARITY, PARITY_MODEL

MODEL = ["--model", str(PARITY_MODEL)]
SOURCE = PARITY / "inputs" / "de.txt"


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def shards_of(lines, folder):
    """The lines in a directory of three shards (gzip, zstd, plain) and an empty file."""
    folder.mkdir()
    cut = [0, 7, 19, len(lines)]
    parts = ["".join(lines[a:b]).encode("utf-8") for a, b in zip(cut, cut[1:])]
    (folder / "1.txt.gz").write_bytes(gzip.compress(parts[0]))
    (folder / "2.zst").write_bytes(zstd_module().compress(parts[1]))
    (folder / "3.txt").write_bytes(parts[2])
    (folder / "4-empty.txt").write_bytes(b"")
    return folder


def test_embed_of_a_directory_is_one_row_per_line_in_order(tmp_path):
    lines = SOURCE.read_text(encoding="utf-8").splitlines(keepends=True)
    shards = shards_of(lines, tmp_path / "shards")
    assert run("embed", SOURCE, "-o", tmp_path / "one.npy", "-l", "de", "-q", *MODEL).exit_code == 0
    result = run("embed", shards, "-o", tmp_path / "many.npy", "-l", "de", "-q", *MODEL)
    assert result.exit_code == 0, result.output
    one, many = np.load(tmp_path / "one.npy"), np.load(tmp_path / "many.npy")
    assert many.shape == (len(lines), one.shape[1])
    assert np.array_equal(one, many)
    assert json.loads((tmp_path / "many.npy.json").read_text())["rows"] == len(lines)


def test_knn_build_of_several_embedding_files_indexes_their_rows_in_order(tmp_path):
    rows = np.random.default_rng(5).standard_normal((50, 16)).astype(np.float32)
    np.save(tmp_path / "all.npy", rows)
    (tmp_path / "parts").mkdir()
    for index, (start, stop) in enumerate([(0, 20), (20, 20), (20, 50)]):
        np.save(tmp_path / "parts" / f"{index}.npy", rows[start:stop])
    (tmp_path / "parts" / "0.npy.json").write_text("{}")  # sidecars are not embeddings
    built = {}
    for name, source in (("one", tmp_path / "all.npy"), ("many", tmp_path / "parts")):
        result = run("knn", "build", source, "-o", tmp_path / f"{name}.index", "-q")
        assert result.exit_code == 0, result.output
        built[name] = faiss.read_index(str(tmp_path / f"{name}.index"))
    assert built["many"].ntotal == 50
    assert np.array_equal(built["one"].reconstruct_n(0, 50), built["many"].reconstruct_n(0, 50))


def test_embedding_files_of_different_dimensions_are_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((3, 8), dtype=np.float32))
    np.save(tmp_path / "b.npy", np.ones((3, 4), dtype=np.float32))
    result = run("knn", "build", tmp_path / "*.npy", "-o", tmp_path / "x.index", "-q")
    assert result.exit_code == 1
    assert result.output.startswith("laser: error: embedding files of different dimensions (")
    assert not (tmp_path / "x.index").exists()


@pytest.mark.parametrize("spec, message", [
    ("nothing-*.txt", "nothing-*.txt: no file matches"),
    ("@missing.list", "missing.list: no such file"),
])
def test_embed_of_a_bad_spec_is_one_line_and_no_output(tmp_path, monkeypatch, spec, message):
    monkeypatch.chdir(tmp_path)
    result = run("embed", spec, "-o", "out.npy", "-l", "de", "-q", *MODEL)
    assert result.exit_code == 1
    assert result.output.splitlines() == [f"laser: error: {message}"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_embed_on_ray_of_a_list_or_a_glob_equals_one_process(ray_runtime, tmp_path):
    """Compressed shards, an empty file, a list of paths relative to itself: one row per line,
    file after file, bit for bit as plain `laser embed` of the lines in one file."""
    lines = SOURCE.read_text(encoding="utf-8").splitlines(keepends=True)
    shards = shards_of(lines, tmp_path / "shards")
    (shards / "order.list").write_text("1.txt.gz\n2.zst\n4-empty.txt\n3.txt\n")
    assert run("embed", SOURCE, "-o", tmp_path / "one.npy", "-l", "de", "-q", *MODEL).exit_code == 0
    for spec in (f"@{shards / 'order.list'}", f"{shards}/[1-4]*"):
        result = run("embed", spec, "-o", tmp_path / "many.npy", "-l", "de", *MODEL, "--ray",
                     "local", "--ray-workers", "2", "--shard-lines", "5")
        assert result.exit_code == 0, result.output
        assert "8 shards computed, 0 reused" in result.output  # 5+2, 5+5+2, 5+5+1 lines
        assert (tmp_path / "many.npy").read_bytes() == (tmp_path / "one.npy").read_bytes()
