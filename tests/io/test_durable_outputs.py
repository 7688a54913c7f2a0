"""Every output is durable, as SQLite commits a file: its data fsynced before the rename that
makes it the output, its directory fsynced after (so the new name survives a power loss); see
the `syncs` fixture. Streams (standard output, a device, a FIFO) are never synced. Downloads:
tests/models/test_download.py."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from conftest import DATA, PARITY, PARITY_MODEL, assert_durable, laser_ok, needs_torch

MODEL = ["--model", str(PARITY_MODEL)]
ENGLISH = PARITY / "inputs" / "en.txt"
ENGLISH_NPY = PARITY / "expected" / "en.npy"


def files_under(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*") if path.is_file())


def test_embeddings_their_sidecar_and_the_onnx_cache_are_durable(tmp_path, syncs):
    out = tmp_path / "en.npy"
    laser_ok("embed", ENGLISH, "-o", out, "-l", "en", "-q", *MODEL)
    assert files_under(tmp_path) == [out, tmp_path / "en.npy.json"]
    cache = files_under(Path(os.environ["LASER_HOME"]))
    assert [path.suffix for path in cache] == [".onnx"]  # the model's ONNX graph
    for path in [out, tmp_path / "en.npy.json", *cache]:
        assert_durable(syncs, path)


@pytest.mark.parametrize("command, outputs", [
    (["preprocess", ENGLISH, "-l", "en", "-q", *MODEL], ["out"]),
    (["knn", "build", ENGLISH_NPY, "-q"], ["out", "out.json"]),
    (["mine", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY, "--trg-embeddings",
      ENGLISH_NPY], ["out"]),
    (["embed", ENGLISH, "-l", "en", "-q", "--format", "raw", "--fp16", *MODEL],
     ["out", "out.json"]),
], ids=["text", "index", "mined-pairs", "raw-embeddings"])
def test_every_kind_of_output_is_durable(tmp_path, syncs, command, outputs):
    laser_ok(*command, "-o", tmp_path / "out")
    assert [path.name for path in files_under(tmp_path)] == outputs
    for name in outputs:
        assert_durable(syncs, tmp_path / name)


def test_work_directory_shards_and_manifest_are_durable(tmp_path, syncs, encoder):
    from laser.distributed.shards import Manifest, plan_shards
    from laser.distributed.work import ShardJob, embed_shard
    manifest = Manifest.open(tmp_path / "work", {"job": 1})
    shard = plan_shards(str(ENGLISH), 16)[1]
    embed_shard(encoder, ShardJob(shard, str(manifest.shard_path(shard)), "en", "float32", 8))
    manifest.mark_done(shard)
    assert len(np.load(manifest.shard_path(shard))) == shard.lines
    assert_durable(syncs, manifest.shard_path(shard))
    assert_durable(syncs, tmp_path / "work" / "manifest.json")


@needs_torch
def test_a_saved_classifier_is_durable(tmp_path, syncs):
    from laser.apps.classify import Classifier
    Classifier.load(DATA / "classifier").save(tmp_path / "clf")
    saved = files_under(tmp_path / "clf")
    assert [path.name for path in saved] == ["classifier.json", "classifier.pt"]
    for path in saved:
        assert_durable(syncs, path)


def test_streams_are_written_through_unsynced(tmp_path, syncs):
    laser_ok("embed", ENGLISH, "-o", tmp_path / "en.npy", "-l", "en", "-q", *MODEL)
    syncs.clear()  # the model's ONNX graph is cached by now
    laser_ok("embed", ENGLISH, "-o", "-", "-l", "en", "-q", *MODEL)
    laser_ok("knn", "build", ENGLISH_NPY, "-q", "-o", "-")
    assert syncs == []
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer may open it
    try:
        laser_ok("mine", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY, "--trg-embeddings",
                 ENGLISH_NPY, "-o", fifo)
    finally:
        os.close(reader)
    # mine's stages write their shards to a work folder (durable, for a re-run); the pairs
    # themselves go to the fifo unsynced
    fifo_id = (os.stat(fifo).st_dev, os.stat(fifo).st_ino)
    assert syncs and fifo_id not in [what for call, what in syncs if call == "fsync"]
    assert all(".shards" in what for call, what in syncs if call == "replace")
