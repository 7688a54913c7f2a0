"""`laser mine` on sides of many files (a directory, a glob, @LIST, compressed shards): the same
pairs as the same lines in one file, each pair's provenance, bad shards as one-line errors, and
a split killed between files resumed at the file it had not read."""
import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.io.sources import zstd_module
from laser.io.text import read_lines

COMPRESS = [gzip.compress, lzma.compress, bz2.compress,
            zstd_module().compress, lambda data: data]
SUFFIXES = [".gz", ".xz", ".bz2", ".zst", ".txt"]
SRC_CUTS = [0, 13, 13, 30, 52, 70]


def cli(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def word(prefix, number):
    """A sentence per number without digits (normalised text turns every digit into 0)."""
    return f"{prefix} {''.join('abcdefghij'[int(digit)] for digit in str(number))}"


def as_bytes(lines):
    return "".join(line + "\n" for line in lines).encode("utf-8")


@pytest.fixture
def sides(tmp_path):
    """70 source and 60 target lines with duplicates and planted pairs, as one file a side and
    as shards: the source in a directory of differently compressed files (one empty) with its
    embeddings in three .npy files, the target in @LIST."""
    rng = np.random.default_rng(3)
    src = [word("quelle", i % 55) for i in range(62)] + [word("QUELLE", i) for i in range(8)]
    trg = [word("ziel", i % 48) for i in range(60)]
    y = rng.standard_normal((60, 24)).astype(np.float32)
    x = rng.standard_normal((70, 24)).astype(np.float32)
    x[:40] = y[20:60] + 0.4 * rng.standard_normal((40, 24)).astype(np.float32)
    (tmp_path / "src.txt").write_bytes(as_bytes(src))
    (tmp_path / "trg.txt").write_bytes(as_bytes(trg))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    shards = tmp_path / "src-shards"
    shards.mkdir()
    for index, (start, stop) in enumerate(zip(SRC_CUTS, SRC_CUTS[1:])):
        data = COMPRESS[index](as_bytes(src[start:stop]))
        (shards / f"part{index}{SUFFIXES[index]}").write_bytes(data)
    for index, (start, stop) in enumerate([(0, 25), (25, 50), (50, 70)]):
        np.save(tmp_path / f"xpart{index}.npy", x[start:stop])
    for name, (start, stop) in {"t1.txt.gz": (0, 31), "t0.txt": (31, 60)}.items():
        data = as_bytes(trg[start:stop])
        (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (tmp_path / "trg.list").write_text(f"{tmp_path / 't1.txt.gz'}\n{tmp_path / 't0.txt'}\n")
    return tmp_path


def mine(folder, src, trg, x, y, output, *options):
    result = cli("mine", src, trg, "--src-embeddings", x, "--trg-embeddings", y, "-k", 3,
                 "-o", folder / output, *options)
    assert result.exit_code == 0, result.output
    return (folder / output).read_text(encoding="utf-8").splitlines()


def without_provenance(line, fmt):
    if fmt != "jsonl":
        return line.rsplit("\t", 4)[0]
    record = json.loads(line)
    for field in ("src_file", "src_file_line", "trg_file", "trg_file_line"):
        del record[field]
    return json.dumps(record, ensure_ascii=False)


@pytest.mark.parametrize("fmt", ["tsv", "ids", "jsonl"])
@pytest.mark.parametrize("unify", [[], ["--unify"], ["--unify", "--unify-by", "normalized"]])
def test_many_files_mine_the_pairs_of_their_lines_in_one_file(sides, fmt, unify):
    options = ["--output-format", fmt, *unify]
    one = mine(sides, sides / "src.txt", sides / "trg.txt", sides / "x.npy", sides / "y.npy",
               "one.out", *options)
    many = mine(sides, sides / "src-shards", f"@{sides / 'trg.list'}", sides / "xpart*.npy",
                sides / "y.npy", "many.out", *options, "--provenance")
    assert len(one) > 20
    assert [without_provenance(line, fmt) for line in many] == one
    if fmt != "ids":  # upper-case copies are sentences of their own unless normalised
        assert ("QUELLE" in "".join(one)) == ("normalized" not in unify)


def test_one_file_a_side_gives_the_same_pairs_as_before_with_provenance_columns_added(sides):
    args = (sides, sides / "src.txt", sides / "trg.txt", sides / "x.npy", sides / "y.npy")
    plain = mine(*args, "plain.tsv", "--unify")
    with_origin = mine(*args, "origin.tsv", "--unify", "--provenance")
    assert [line.rsplit("\t", 4)[0] for line in with_origin] == plain
    for line in with_origin:
        _, src, trg, src_file, src_line, trg_file, trg_line = line.split("\t")
        assert (src_file, trg_file) == (str(sides / "src.txt"), str(sides / "trg.txt"))
        assert list(read_lines(src_file))[int(src_line) - 1] == src
        assert list(read_lines(trg_file))[int(trg_line) - 1] == trg


def test_provenance_names_each_pairs_shard_and_line(sides):
    rows = mine(sides, sides / "src-shards", f"@{sides / 'trg.list'}", sides / "xpart*.npy",
                sides / "y.npy", "many.jsonl", "--output-format", "jsonl", "--provenance")
    shard_files = {record["src_file"] for record in map(json.loads, rows)}
    assert len(shard_files) >= 3
    for record in map(json.loads, rows):
        assert list(read_lines(record["src_file"]))[record["src_file_line"] - 1] == record["src"]
        assert list(read_lines(record["trg_file"]))[record["trg_file_line"] - 1] == record["trg"]


@pytest.mark.parametrize("problem, message", [
    ("missing shard", r"t0\.txt: no such file$"),
    ("truncated gz", r"part0\.gz:\d+: corrupt or truncated gzip stream \(compressed file ended "
                     r"before the end-of-stream marker was reached\)$"),
    ("bad xz", r"part1\.xz: not a valid xz stream \(corrupt, or misnamed\)$"),
    ("no match", r"nothing-\*\.txt: no file matches$"),
    ("empty directory", r"empty: no files in this directory$"),
])
def test_a_bad_shard_is_one_line_naming_it_and_no_output(sides, problem, message):
    src, trg = sides / "src-shards", f"@{sides / 'trg.list'}"
    if problem == "missing shard":
        (sides / "t0.txt").unlink()
    elif problem == "truncated gz":
        data = gzip.compress(as_bytes([f"lang {i}" for i in range(20000)]))
        (src / "part0.gz").write_bytes(data[:len(data) // 2])
    elif problem == "bad xz":
        (src / "part1.xz").write_bytes(b"not xz at all\n")
    elif problem == "no match":
        trg = sides / "nothing-*.txt"
    elif problem == "empty directory":
        (sides / "empty").mkdir()
        src = sides / "empty"
    out = sides / "out.tsv"
    result = cli("mine", src, trg, "--src-embeddings", sides / "xpart*.npy", "--trg-embeddings",
                 sides / "y.npy", "--unify", "-o", out)
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if not line.startswith("laser: warn")]
    assert len(errors) == 1 and errors[0].startswith("laser: error: "), result.output
    assert __import__("re").search(message, errors[0]), errors[0]
    assert "Traceback" not in result.output
    assert not out.exists()
    assert not [path.name for path in sides.iterdir() if path.name.startswith(".")]


def test_unify_by_goes_with_unify(sides):
    result = cli("mine", sides / "src.txt", sides / "trg.txt", "--src-embeddings",
                 sides / "x.npy", "--trg-embeddings", sides / "y.npy", "--unify-by",
                 "normalized", "-o", sides / "out.tsv")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "laser: error: --unify-by goes with --unify"


def _feed(fifo, lines):
    """Write `lines` into the named pipe `fifo` from a thread (once a reader opens it)."""
    def write():
        with open(fifo, "wb") as pipe:
            pipe.write(as_bytes(lines))
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_split_killed_between_files_resumes_at_the_file_it_had_not_read(sides):
    """The source side's two files are named pipes: the first run reads the first and is killed
    while it waits on the second; the re-run is fed only the second (reading the first again
    would wait for ever) and writes what the lines in regular files give."""
    src = [line for line in (sides / "src.txt").read_text(encoding="utf-8").splitlines()]
    pipes = [sides / "p0.fifo", sides / "p1.fifo"]
    for pipe in pipes:
        os.mkfifo(pipe)
    stamps = [os.stat(pipe) for pipe in pipes]
    (sides / "src-pipes.list").write_text("".join(f"{pipe}\n" for pipe in pipes))
    work, out = sides / "work", sides / "resumed.tsv"
    command = [sys.executable, "-m", "laser", "mine", f"@{sides / 'src-pipes.list'}",
               str(sides / "trg.txt"), "--src-embeddings", str(sides / "x.npy"),
               "--trg-embeddings", str(sides / "y.npy"), "-k", "3", "--unify",
               "--shard-lines", "16", "--work-dir", str(work), "-o", str(out)]
    _feed(pipes[0], src[:40])
    first = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    manifest = work / "src-split" / "manifest.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and "read-000000" not in (
            json.loads(manifest.read_text())["done"] if manifest.exists() else {}):
        time.sleep(0.05)
    first.kill()
    first.wait()
    assert not out.exists()
    for pipe, stamp in zip(pipes, stamps):  # the same input: writing a pipe touched its times
        os.utime(pipe, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    _feed(pipes[1], src[40:])
    subprocess.run(command, check=True, timeout=120, stderr=subprocess.DEVNULL)
    (sides / "p0.txt").write_bytes(as_bytes(src[:40]))
    (sides / "p1.txt").write_bytes(as_bytes(src[40:]))
    (sides / "src-files.list").write_text(f"{sides / 'p0.txt'}\n{sides / 'p1.txt'}\n")
    fresh = mine(sides, f"@{sides / 'src-files.list'}", sides / "trg.txt", sides / "x.npy",
                 sides / "y.npy", "fresh.tsv", "--unify", "--shard-lines", "16")
    assert len(fresh) > 20 and out.read_text(encoding="utf-8").splitlines() == fresh
