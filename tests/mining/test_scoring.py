"""`laser score`: cosine, margin and CSLS per line against brute force; histogram text and PNG."""
import struct
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.errors import LaserError
from laser.search.vectors import Vectors
from laser.mining.scoring import Histogram, score_bitext

from conftest import PARITY


def bitext(n=60, dim=24, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((n, dim)) + 1.5
    x = base + 0.4 * rng.standard_normal((n, dim))
    y = base + rng.uniform(0.2, 2.0, (n, 1)) * rng.standard_normal((n, dim))
    return x.astype(np.float32), y.astype(np.float32)


def brute_force(x, y, k):
    """cos(x_i, y_i), and the mean similarity of each side's k nearest on the other side."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    sims = x.astype(np.float64) @ y.astype(np.float64).T
    r_x = np.sort(sims, axis=1)[:, ::-1][:, :k].mean(axis=1)
    r_y = np.sort(sims, axis=0)[::-1][:k].mean(axis=0)
    return np.diag(sims), r_x, r_y


@pytest.mark.parametrize("k", [1, 4, 100])
def test_scores_match_brute_force(k):
    x, y = bitext()
    cos, r_x, r_y = brute_force(x, y, k)
    np.testing.assert_allclose(score_bitext(Vectors(x), Vectors(y), "cosine"), cos, atol=1e-6)
    expected = {"ratio": cos / ((r_x + r_y) / 2), "distance": cos - (r_x + r_y) / 2,
                "absolute": cos}
    for kind, values in expected.items():
        np.testing.assert_allclose(score_bitext(Vectors(x), Vectors(y), "margin", k, kind), values,
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(score_bitext(Vectors(x), Vectors(y), "csls", k), 2 * cos - r_x - r_y,
                               atol=1e-5)


def test_unaligned_sides_are_refused():
    x, y = bitext()
    with pytest.raises(LaserError, match="must be line-aligned"):
        score_bitext(Vectors(x, "a"), Vectors(y[:-1], "b"), "cosine")


def test_histogram_counts_and_shares():
    scores = np.array([0.1, 0.2, 0.2, 0.5, 0.9, 1.0, np.nan], dtype=np.float32)
    histogram = Histogram.of(scores, bins=3)
    counts, edges = np.histogram(scores[:-1].astype(np.float64), bins=3)
    np.testing.assert_array_equal(histogram.counts, counts)
    np.testing.assert_allclose(histogram.edges, edges)
    text = histogram.text()
    assert text.startswith("# 6 scores from 0.1000 to 1.0000; 1 not a number")
    bins = [line.split() for line in text.splitlines() if not line.startswith("#")]
    assert [int(row[2]) for row in bins] == counts.tolist()
    assert [row[4] for row in bins] == ["100.00%", "50.00%", "33.33%"]
    assert bins[0][5] == "#" * 40


def read_png(data):
    """Width, height and grey pixels of an 8-bit grey PNG, checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks = 8, {}
    while position < len(data):
        length, = struct.unpack(">I", data[position:position + 4])
        kind, body = data[position + 4:position + 8], data[position + 8:position + 8 + length]
        crc, = struct.unpack(">I", data[position + 8 + length:position + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = chunks.get(kind, b"") + body
        position += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, color) == (8, 0) and b"IEND" in chunks
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(height, width + 1)
    assert not raw[:, 0].any()
    return width, height, raw[:, 1:]


def test_png_bars_follow_the_counts():
    scores = np.concatenate([np.full(10, 0.1), np.full(40, 0.5), np.full(20, 0.9)])
    histogram = Histogram.of(scores, bins=4)
    width, height, pixels = read_png(histogram.png(width=400, height=200))
    assert (width, height) == (400, 200)
    bars = (pixels == 110).sum(axis=0)
    np.testing.assert_array_equal(histogram.counts, [10, 0, 40, 20])
    columns = [bars[70 + (2 * i + 1) * 310 // 8] for i in range(4)]
    assert columns == [35, 0, 140, 70]
    assert (pixels == 0).sum() > 100


def write_bitext(tmp_path, x, y):
    for name, matrix in (("src", x), ("trg", y)):
        np.save(tmp_path / f"{name}.npy", matrix)
        (tmp_path / f"{name}.txt").write_text("".join(f"{name} {i}\n" for i in range(len(matrix))))
    return [str(tmp_path / "src.txt"), str(tmp_path / "trg.txt"),
            "--src-embeddings", str(tmp_path / "src.npy"),
            "--trg-embeddings", str(tmp_path / "trg.npy")]


def test_cli_writes_scores_text_histogram_and_png(tmp_path):
    x, y = bitext(40)
    result = CliRunner().invoke(main, ["score", *write_bitext(tmp_path, x, y), "--method", "csls",
                                       "-o", str(tmp_path / "s.tsv"), "--with-text",
                                       "--histogram", str(tmp_path / "h.txt"), "--png",
                                       str(tmp_path / "h.png"), "--bins", "5", "-q"])
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in (tmp_path / "s.tsv").read_text().splitlines()]
    assert [line[1:] for line in lines] == [[f"src {i}", f"trg {i}"] for i in range(40)]
    expected = score_bitext(Vectors(x), Vectors(y), "csls")
    np.testing.assert_allclose([float(line[0]) for line in lines], expected, rtol=1e-6)
    histogram = (tmp_path / "h.txt").read_text()
    assert histogram == Histogram.of(expected, 5).text()
    assert read_png((tmp_path / "h.png").read_bytes())[:2] == (640, 360)


def test_cli_histogram_goes_to_stderr_and_scores_to_stdout(tmp_path):
    x, y = bitext(30)
    result = CliRunner().invoke(main, ["score", *write_bitext(tmp_path, x, y), "--method",
                                       "cosine"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 30
    warning, histogram = result.stderr.split("\n", 1)
    assert warning.startswith("laser: warning: no sidecar records the model of ")
    assert "src.npy and " in warning and warning.endswith("trg.npy share an embedding space")
    assert histogram.startswith("# 30 scores from")


def test_cli_refuses_files_of_different_lengths(tmp_path):
    x, y = bitext(30)
    args = write_bitext(tmp_path, x, y)
    (tmp_path / "trg.txt").write_text("".join(f"t {i}\n" for i in range(29)))
    result = CliRunner().invoke(main, ["score", *args, "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "src.txt has 30 lines but" in result.output and "trg.txt has 29" in result.output
    assert not (tmp_path / "out").exists()


def test_cli_refuses_sides_of_different_dimensions_in_one_line(tmp_path):
    x, y = bitext(30)
    args = write_bitext(tmp_path, x, y[:, :-1])
    result = CliRunner().invoke(main, ["score", *args, "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"has dimension {x.shape[1]} but" in result.output
    assert not (tmp_path / "out").exists()


def test_cli_embeds_on_the_fly_like_the_official_embeddings(tmp_path):
    """Two different files (de, fr): each line's cosine equals the one computed with numpy from
    the official LASER embeddings of the parity fixture (not 1, which any vectors would give)."""
    model = PARITY / "model"
    runner = CliRunner()
    on_the_fly = runner.invoke(main, ["score", str(PARITY / "inputs/de.txt"),
                                      str(PARITY / "inputs/fr.txt"), "--src-lang", "de",
                                      "--trg-lang", "fr", "--model", str(model), "-q",
                                      "--method", "cosine"])
    assert on_the_fly.exit_code == 0, on_the_fly.output
    x, y = np.load(PARITY / "expected/de.npy"), np.load(PARITY / "expected/fr.npy")
    expected = (x * y).sum(axis=1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
    scores = np.array(on_the_fly.stdout.split(), dtype=float)
    assert scores.shape == (30,) and (1 - expected).min() > 1e-3  # far from 1 at atol 1e-5
    np.testing.assert_allclose(scores, expected, atol=1e-5)
