"""`embed_file` preprocesses the next chunk in a background thread: the rows are the sequential
path's, bit for bit, and an error raised there still reaches the caller with no output left."""
import numpy as np
import pytest

from laser.errors import LaserError
from laser.pipeline import EmbedOptions, embed_file

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
