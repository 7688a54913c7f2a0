"""Line-range shards: they cover a file exactly as `read_lines` reads it, and the manifest
keeps only records of the same job and the same bytes."""
from __future__ import annotations

import gzip
import io
import lzma

import pytest

from laser.distributed import shards
from laser.distributed.shards import Manifest, plan_shards, read_shard
from laser.errors import LaserError
from laser.io.sources import decode_lines
from laser.io.text import read_lines

CONTENTS = [b"", b"a", b"a\n", b"a\nb", b"one\n\n\ntwo\nthree\n\nfour", "\u00e9t\u00e9\nxyz\n".encode() * 7]


COMPRESSIONS = {"text.txt": bytes, "text.gz": gzip.compress, "text.xz": lzma.compress}


@pytest.mark.parametrize("content", CONTENTS)
@pytest.mark.parametrize("shard_lines", [1, 2, 3, 5])
@pytest.mark.parametrize("name", sorted(COMPRESSIONS))
def test_shards_cover_every_line_once(tmp_path, monkeypatch, content, shard_lines, name):
    monkeypatch.setattr(shards, "READ_BLOCK", 4)  # shard cuts across read blocks
    path = tmp_path / name
    path.write_bytes(COMPRESSIONS[name](content))
    planned = plan_shards(str(path), shard_lines)
    lines = []
    for shard in planned:
        assert shard.start == len(lines)
        assert shard.lines == shard_lines or shard is planned[-1]
        lines += decode_lines(shard.path, io.BytesIO(read_shard(shard)), shard.start + 1)
    assert lines == list(read_lines(str(path)))


def test_the_shards_of_many_files_are_numbered_across_them_and_cut_at_each_file(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.gz").write_bytes(gzip.compress(b"1\n2\n3\n"))
    (folder / "b.txt").write_bytes(b"")
    (folder / "c.txt").write_bytes(b"4\n5")
    planned = plan_shards(str(folder), 2)
    assert [(shard.index, shard.path, shard.start, shard.stop) for shard in planned] == [
        (0, str(folder / "a.gz"), 0, 2), (1, str(folder / "a.gz"), 2, 3),
        (2, str(folder / "c.txt"), 0, 2)]
    assert b"".join(read_shard(shard) for shard in planned) == b"1\n2\n3\n4\n5"


def test_a_corrupt_compressed_file_is_refused_naming_it(tmp_path):
    path = tmp_path / "cut.gz"
    path.write_bytes(gzip.compress(b"a\nb\n" * 1000)[:-20])
    with pytest.raises(LaserError, match=f"^{path}: corrupt or truncated gzip stream"):
        plan_shards(str(path), 10)


def test_a_changed_shard_is_refused(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("a\nb\nc\n")
    first, second = plan_shards(str(path), 2)
    path.write_text("a\nb\nC\n")
    assert read_shard(first) == b"a\nb\n"
    with pytest.raises(LaserError, match="lines 3-3 changed"):
        read_shard(second)


def test_stdin_cannot_be_sharded():
    with pytest.raises(LaserError, match="^<stdin>: a distributed job reads regular files"):
        plan_shards("-", 10)


def test_manifest_keeps_records_of_the_same_job_and_bytes(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("a\nb\nc\n")
    planned = plan_shards(str(path), 2)
    manifest = Manifest.open(tmp_path / "work", {"model_sha256": "x"})
    for shard in planned:
        manifest.shard_path(shard).write_bytes(b"rows")
        manifest.mark_done(shard)
    reopened = Manifest.open(tmp_path / "work", {"model_sha256": "x"})
    assert [reopened.is_done(shard) for shard in planned] == [True, True]
    path.write_text("a\nb\nC\n")
    replanned = plan_shards(str(path), 2)
    assert [reopened.is_done(shard) for shard in replanned] == [True, False]
    other_model = Manifest.open(tmp_path / "work", {"model_sha256": "y"})
    assert [other_model.is_done(shard) for shard in planned] == [False, False]
