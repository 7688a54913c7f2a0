"""Embedding parity with the official SentenceEncoder, batching invariance and model loading."""
import collections

import numpy as np
import pytest

from laser.models.checkpoint import read_bilstm_checkpoint as load_checkpoint
from laser.runtime.sequences import batch_cost, cheapest_batch, length_sorted_batches
from laser.encoder import Encoder, TruncationWarning
from laser.errors import LaserError
from laser.models import registry
from laser.models.files import ModelFiles
from laser.models.resolve import resolve_model

from conftest import PARITY, PARITY_MODEL, PARITY_STEMS, fixture_language, needs_torch, \
    read_fixture_lines

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def torch_encoder(device):
    """The parity model in torch on --device."""
    return Encoder.load(str(PARITY_MODEL), runtime="torch", device=device)


@pytest.mark.device
@pytest.mark.parametrize("runtime", ["onnxruntime", pytest.param("torch", marks=needs_torch)])
@pytest.mark.parametrize("stem", PARITY_STEMS)
def test_embeddings_match_official_encoder(request, expected_embeddings, stem, runtime):
    lines = read_fixture_lines(PARITY / "inputs" / f"{stem}.txt")
    encoder = request.getfixturevalue("encoder" if runtime == "onnxruntime" else "torch_encoder")
    assert encoder.runtime.startswith(runtime)
    got = encoder.encode(lines, lang=fixture_language(stem))
    expected = expected_embeddings[stem]
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.abs(got - expected).max() <= TOLERANCE


def test_result_does_not_depend_on_batch_companions(encoder):
    lines = read_fixture_lines(PARITY / "inputs" / "batching_fr.txt")
    bpe = encoder.apply_bpe(encoder.tokenize(lines, "fr"))
    together = encoder.encode_bpe(bpe)
    alone = np.concatenate([encoder.encode_bpe([line]) for line in bpe[:60]])
    reversed_order = encoder.encode_bpe(bpe[::-1])[::-1]
    assert np.abs(together[:60] - alone).max() <= 1e-6
    assert np.abs(together - reversed_order).max() <= 1e-6
    small = Encoder(ModelFiles.from_dir(PARITY_MODEL), max_tokens=64)
    assert np.abs(small.encode_bpe(bpe) - together).max() <= 1e-6


def test_batches_cover_every_sentence_once_longest_first():
    lengths = [5, 50, 1, 7, 7, 300, 2] * 20
    batches = list(length_sorted_batches(lengths, max_tokens=100))
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) == 1 or len(batch) * longest <= 100
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)


def test_one_batch_gives_the_rows_of_encode_ids(encoder):
    lines = read_fixture_lines(PARITY / "inputs" / "batching_fr.txt")[:40]
    sequences = encoder.prepare(lines, "fr")
    assert np.abs(encoder.encode_batch(sequences) - encoder.encode_ids(sequences)).max() <= 1e-6
    assert encoder.batch_tokens == 500 and encoder.parallel_batches >= 1
    # batches run at once share max_tokens, as in encode_ids
    small = Encoder(ModelFiles.from_dir(PARITY_MODEL), max_tokens=64)
    assert small.batch_tokens * small.parallel_batches <= 64


@needs_torch
def test_one_torch_batch_gives_the_rows_of_encode_ids(torch_encoder):
    sequences = torch_encoder.prepare(["Une phrase.", "Une autre phrase, plus longue."], "fr")
    one_batch = torch_encoder.encode_batch(sequences)
    assert np.abs(one_batch - torch_encoder.encode_ids(sequences)).max() <= 1e-6
    assert torch_encoder.parallel_batches == 1 and torch_encoder.batch_tokens == 12000


def test_cheapest_batch_holds_the_sentence_it_must_and_keeps_to_the_budget():
    waiting = {30: 1, 12: 40, 11: 40, 10: 5, 3: 2}
    for include in waiting:
        shortest, longest, count = cheapest_batch(waiting, include, max_tokens=500)
        assert shortest <= include <= longest
        assert count <= sum(n for length, n in waiting.items() if shortest <= length <= longest)
        assert count == 1 or count * longest <= 500
    assert cheapest_batch(waiting, 12, max_tokens=500, max_sentences=8)[2] == 8
    assert cheapest_batch({900: 3}, 900, max_tokens=500) == (900, 900, 1)


def test_cheapest_batch_prefers_even_lengths_to_padding():
    # a lone long sentence is embedded alone rather than padding forty short ones to its length
    assert cheapest_batch({40: 1, 10: 40}, 10, max_tokens=2000) == (10, 10, 40)
    assert cheapest_batch({40: 1, 10: 40}, 40, max_tokens=2000) == (40, 40, 1)
    # two sentences one step longer fill their batch with shorter ones rather than run alone
    assert cheapest_batch({11: 2, 10: 20}, 11, max_tokens=500) == (10, 11, 22)
    assert (2 * 11 + 20 * 10) / batch_cost(11, 22) > 2 * 11 / batch_cost(11, 2)


def test_blank_lines_embed_as_the_end_of_sentence_step(encoder, expected_embeddings):
    rows = encoder.encode(["", " ", "\t"], lang="en")
    assert np.isfinite(rows).all() and np.abs(rows).sum() > 0
    assert np.array_equal(rows[0], rows[1]) and np.array_equal(rows[0], rows[2])
    edge = read_fixture_lines(PARITY / "inputs" / "edge.txt")
    blank = [i for i, line in enumerate(edge) if not line.strip()]
    assert blank and np.abs(expected_embeddings["edge"][blank[0]] - rows[0]).max() <= TOLERANCE


def test_single_string_gives_a_vector(encoder):
    vector = encoder.encode("Hello world.", lang="en")
    assert vector.shape == (encoder.dim,)
    assert np.allclose(vector, encoder.encode(["Hello world."], lang="en")[0])


def test_sentence_with_line_break_is_refused(encoder):
    with pytest.raises(LaserError, match="line break"):
        encoder.encode(["one\ntwo"], lang="en")


def test_max_length_truncates_with_warning():
    truncating = Encoder(ModelFiles.from_dir(PARITY_MODEL), max_length=5)
    long_sentence = " ".join(["word"] * 50)
    with pytest.warns(TruncationWarning):
        row = truncating.encode([long_sentence], lang="en")
    bpe = truncating.apply_bpe(truncating.tokenize([long_sentence], "en"))[0]
    ids = truncating.token_ids(bpe)[:5] + [2]
    assert np.abs(row - truncating.encode_ids([ids])).max() == 0


def test_checkpoint_with_arbitrary_objects_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "evil.pt"
    torch.save({"params": collections.OrderedDict(a=1), "model": {}, "dictionary": {},
                "payload": Exception("not plain data")}, path)
    with pytest.raises(LaserError, match=r"asks for builtins\.Exception, .*nothing was executed"):
        load_checkpoint(path)


@pytest.mark.parametrize("content, message", [
    (b"", "not a loadable checkpoint"),
    (b"garbage" * 100, "not a loadable checkpoint"),
])
def test_corrupt_checkpoint_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "broken.pt"
    path.write_bytes(content)
    with pytest.raises(LaserError, match=message):
        load_checkpoint(path)


def test_truncated_real_checkpoint_is_a_clear_error(tmp_path):
    data = (PARITY_MODEL / "encoder.pt").read_bytes()
    path = tmp_path / "cut.pt"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(LaserError, match="not a loadable checkpoint"):
        load_checkpoint(path)


def test_checkpoint_without_laser_keys_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "other.pt"
    torch.save({"state_dict": {}}, path)
    with pytest.raises(LaserError, match="expected keys params, model, dictionary"):
        load_checkpoint(path)


def test_sizes_come_from_the_checkpoint():
    checkpoint = load_checkpoint(PARITY_MODEL / "encoder.pt")
    assert checkpoint.params["num_embeddings"] == len(checkpoint.dictionary) == 7227
    assert [checkpoint.dictionary[t] for t in ("<s>", "<pad>", "</s>", "<unk>")] == [0, 1, 2, 3]


def test_model_directory_resolution(tmp_path, monkeypatch):
    files = ModelFiles.from_dir(PARITY_MODEL)
    assert files.encoder.name == "encoder.pt" and files.codes.suffix == ".fcodes"
    with pytest.raises(LaserError, match="no \\*.pt file"):
        ModelFiles.from_dir(tmp_path)
    monkeypatch.delenv("LASER_MODEL", raising=False)
    monkeypatch.setattr(registry, "SHIPPED_MODEL_DIRS", (tmp_path / "not-shipped",))
    with pytest.raises(LaserError, match="ships no default model"):
        resolve_model()
    monkeypatch.setenv("LASER_MODEL", str(PARITY_MODEL))
    assert resolve_model() == files


def test_cuda_without_gpu_is_a_clear_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("checks the no-GPU error")
    with pytest.raises(LaserError, match="no CUDA device"):
        Encoder(ModelFiles.from_dir(PARITY_MODEL), device="cuda")
