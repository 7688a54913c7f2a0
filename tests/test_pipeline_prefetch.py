"""`embed_file` preprocesses the next chunk and writes the last one in background threads: the
rows are the sequential path's, bit for bit, and an error raised there still reaches the caller
with no output left."""
import sys

import numpy as np
import pytest

from laser.errors import LaserError
from laser.io.embeddings import EmbeddingWriter
from laser.pipeline import GIL_SWITCH_SECONDS, EmbedOptions, _write_behind, embed_file

from conftest import PARITY, read_fixture_lines


@pytest.mark.parametrize("chunk_lines", [7, 1000])
def test_prefetch_writes_the_sequential_rows(encoder, tmp_path, chunk_lines):
    source = tmp_path / "fr.txt"
    lines = read_fixture_lines(PARITY / "inputs" / "batching_fr.txt")[:60]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outputs = {}
    for prefetch in (False, True):
        outputs[prefetch] = tmp_path / f"prefetch-{prefetch}.npy"
        embed_file(encoder, str(source), str(outputs[prefetch]),
                   EmbedOptions("fr", chunk_lines=chunk_lines, prefetch=prefetch))
    sequential, overlapped = np.load(outputs[False]), np.load(outputs[True])
    assert sequential.shape == (60, encoder.dim)
    assert np.array_equal(sequential, overlapped)
    assert outputs[False].read_bytes() == outputs[True].read_bytes()


def test_error_in_the_background_reaches_the_caller(encoder, tmp_path):
    source = PARITY / "inputs" / "batching_fr.txt"
    output = tmp_path / "out.npy"
    assert len(read_fixture_lines(source)) > 7
    with pytest.raises(LaserError, match="language"):
        embed_file(encoder, str(source), str(output), EmbedOptions(" ", chunk_lines=7))
    assert not output.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("language", ["fr", " "])  # a job that ends, and one that fails
def test_threads_switch_often_only_while_a_chunk_is_prepared_beside_the_encoder(
        encoder, tmp_path, monkeypatch, language):
    seen = []
    encode_ids = encoder.encode_ids
    monkeypatch.setattr(encoder, "encode_ids",
                        lambda ids: seen.append(sys.getswitchinterval()) or encode_ids(ids))
    before = sys.getswitchinterval()
    source = PARITY / "inputs" / "batching_fr.txt"
    try:
        embed_file(encoder, str(source), str(tmp_path / "out.npy"),
                   EmbedOptions(language, chunk_lines=7))
    except LaserError:
        assert language == " "
    assert sys.getswitchinterval() == before != GIL_SWITCH_SECONDS
    assert set(seen) <= {GIL_SWITCH_SECONDS} and (seen or language == " ")


def test_rows_are_written_behind_in_order_and_a_write_error_reaches_the_caller(tmp_path):
    chunks = [np.full((n, 4), n, dtype=np.float32) for n in (3, 1, 5)]
    with EmbeddingWriter(tmp_path / "ok.npy", 4) as writer:
        _write_behind(writer, iter(chunks))
    assert np.array_equal(np.load(tmp_path / "ok.npy"), np.concatenate(chunks))
    bad = chunks[:2] + [np.zeros((2, 3), dtype=np.float32)] + chunks[2:]
    with pytest.raises(ValueError, match="dimension 4"):
        with EmbeddingWriter(tmp_path / "bad.npy", 4) as writer:
            _write_behind(writer, iter(bad))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ok.npy"]
