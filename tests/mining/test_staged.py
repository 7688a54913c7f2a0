"""`laser mine` in stages over a work directory: shards smaller than the inputs give the bytes
of one shard (the digests test_same_results.py recorded with the in-memory code), a re-run
resumes, a changed option recomputes only the stages after it, and bad shards are one line."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main

from test_same_results import CORPUS, RECORDED, embeddings, mined_digest  # noqa: F401


@pytest.mark.parametrize("shard_lines", [150, 256])
@pytest.mark.parametrize("name", sorted(RECORDED))
def test_small_shards_write_the_recorded_bytes(tmp_path, embeddings, name, shard_lines):
    options = [*RECORDED[name]["options"], "--shard-lines", str(shard_lines)]
    digest = mined_digest(tmp_path, CORPUS / "src.txt", CORPUS / "trg.txt",
                          embeddings / "src.npy", embeddings / "trg.npy", options)
    assert digest == RECORDED[name]["sha256"]
