"""int8 inference (`quantize="int8"`, `--quantize int8`): quantized LSTMs, vectors close to
float32, refused where it cannot run, and recorded in the provenance sidecar."""
import gzip
import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.errors import LaserError
from laser.models.encoder import Encoder
from laser.models.quantize import check_quantize

from conftest import CORPUS_SAMPLE

SENTENCES = 200


def french_dev(count=SENTENCES):
    with gzip.open(CORPUS_SAMPLE / "dev" / "fra-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [line.split("\t")[0] for line in itertools.islice(f, count)]


@pytest.fixture(scope="module")
def encoders():
    return Encoder.load("default"), Encoder.load("default", quantize="int8")


def cosines(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_int8_quantizes_every_lstm(encoders):
    from torch.ao.nn.quantized.dynamic import LSTM as Int8LSTM
    fp32, int8 = encoders
    int8_lstms = [lstm for directions in int8.model.layers for lstm in directions]
    assert len(int8_lstms) == 2 and all(isinstance(lstm, Int8LSTM) for lstm in int8_lstms)
    assert not any(isinstance(lstm, Int8LSTM) for lstm in fp32.model.layers[0])
    assert int8.dim == fp32.dim and int8.quantize == "int8" and fp32.quantize is None


def test_int8_vectors_stay_close_to_float32(encoders):
    fp32, int8 = encoders
    sentences = french_dev()
    exact, approximate = fp32.encode(sentences, "fr"), int8.encode(sentences, "fr")
    assert approximate.dtype == np.float32 and approximate.shape == exact.shape
    similarity = cosines(exact, approximate)
    assert np.median(similarity) >= 0.99 and similarity.min() >= 0.95
    assert np.abs(exact - approximate).max() > 1e-4  # the weights really are int8
    # each sentence still finds its own float32 vector first among the 200
    normed = [m / np.linalg.norm(m, axis=1, keepdims=True) for m in (exact, approximate)]
    assert (np.argmax(normed[1] @ normed[0].T, axis=1) == np.arange(len(sentences))).all()


def test_unknown_or_non_cpu_quantization_is_refused():
    with pytest.raises(LaserError, match="unknown quantization 'int4'"):
        check_quantize("int4", "cpu")
    with pytest.raises(LaserError, match="CPU only"):
        check_quantize("int8", "cuda")
    check_quantize(None, "cuda")
    with pytest.raises(LaserError, match="unknown quantization"):
        Encoder.load("default", quantize="fp8")


def test_cli_records_quantization_in_the_sidecar(encoders, tmp_path):
    source = tmp_path / "fr.txt"
    sentences = french_dev(20)
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    for flags, name, expected in (([], "fp32.npy", None),
                                  (["--quantize", "int8"], "int8.npy", "int8")):
        result = CliRunner().invoke(main, ["embed", str(source), "-o", str(tmp_path / name),
                                           "-l", "fr", "-q", *flags])
        assert result.exit_code == 0, result.output
        assert json.loads((tmp_path / f"{name}.json").read_text())["quantize"] == expected
    assert np.array_equal(np.load(tmp_path / "int8.npy"), encoders[1].encode(sentences, "fr"))
    assert np.array_equal(np.load(tmp_path / "fp32.npy"), encoders[0].encode(sentences, "fr"))
