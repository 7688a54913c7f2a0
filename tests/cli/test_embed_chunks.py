"""Inputs longer than one processing chunk: rows across chunk boundaries and the row count of
the .npy written chunk by chunk."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.pipeline import CHUNK_LINES, EmbedOptions, embed_file

from conftest import PARITY, fixture_language, read_fixture_lines


# 400 lines over the encoder's token-batch limit, hand-written hard cases, MeCab, plain text
@pytest.mark.parametrize("stem", ["batching_fr", "edge", "edge_ja", "de"])
def test_small_chunks_give_the_single_chunk_and_official_rows(encoder, expected_embeddings,
                                                              tmp_path, stem):
    source, lang = PARITY / "inputs" / f"{stem}.txt", fixture_language(stem)
    lines = len(read_fixture_lines(source))
    assert lines > 7  # several chunks of 7, the last one short unless 7 divides the count
    embed_file(encoder, str(source), str(tmp_path / "one.npy"), EmbedOptions(lang))
    report = embed_file(encoder, str(source), str(tmp_path / "seven.npy"),
                        EmbedOptions(lang, chunk_lines=7))
    one, seven = np.load(tmp_path / "one.npy"), np.load(tmp_path / "seven.npy")
    assert seven.shape == one.shape == (lines, 80) and report.rows == lines
    assert np.abs(seven - one).max() <= 1e-5
    assert np.abs(seven - expected_embeddings[stem]).max() <= 1e-5


def test_cli_input_of_more_than_one_chunk(encoder, tmp_path):
    words = " ".join(read_fixture_lines(PARITY / "inputs" / "en.txt")).split()
    total = CHUNK_LINES + 13
    lines = [f"{words[i % len(words)]} {words[(7 * i + 3) % len(words)]} {i}" for i in range(total)]
    source = tmp_path / "long.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "long.npy"
    result = CliRunner().invoke(main, ["embed", str(source), "-o", str(out), "--lang", "en",
                                       "--model", str(PARITY / "model"), "-q"])
    assert result.exit_code == 0, result.output
    got = np.load(out)
    assert got.shape == (total, 80)
    assert json.loads((tmp_path / "long.npy.json").read_text())["rows"] == total
    for row in (0, 1, 4321, CHUNK_LINES - 1, CHUNK_LINES, CHUNK_LINES + 1, total - 1):
        alone = encoder.encode([lines[row]], "en")[0]
        assert np.abs(got[row] - alone).max() <= 1e-5, row
