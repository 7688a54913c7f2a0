"""laser's numpy predictor of fastText files gives fastText's own labels and probabilities: checked
against fasttext-predict (fastText's C++ prediction, a test requirement only) on the shipped model,
the toy model and variants of it written by the test (dense, unpruned, other product quantisers,
a quantised output, hs, ova and ns losses, word trigrams, minn 1, no subwords), on thousands of
lines and on tricky ones; and bad model files are one-line errors."""
from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from laser import LaserError
from laser.lid.fasttext_file import read_model
from laser.lid.model import LanguageIdentifier, shipped_model_path
from laser.lid.predictor import Predictor, _sigmoid_table, fasttext_words
from laser.lid.scripts import line_script

from conftest import DATA, one_error_line, run_laser

LID = DATA / "lid"
TOY_MODEL = LID / "toy-lid.ftz"
TRICKY = [
    "", " ", "\t", "\t\v\f\r", "  a  ", "a\tb\vc\fd\re", "é", "Ελληνικά\u00a0κείμενα",
    "我们明天早上去北京看朋友。", "私は毎朝コーヒーを飲みます。", "😀 🎉👍🏽 ok 🇫🇷", "x" * 5000,
    "Le chat dort " * 200, "qqqzzx vvvkkw jjjxxq", "__label__fra_Latn", "bonjour __label__x monde",
    "hello </s> world", "</s>", "a", "<", "<>", ">a<", "ab", "\u0301\u0301", "Кошка спит.",
    "line one\nline two", "nul\0inside",
]
LOSSES = {"hs": 1, "ns": 2, "softmax": 3, "ova": 4}


def corpus_lines() -> list[str]:
    """Both sides of every row of the toy corpus (4,000 lines of seven languages)."""
    lines = []
    for path in sorted((LID / "corpus").glob("*/*.tsv.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines += [side for row in f for side in row.rstrip("\n").split("\t")]
    return lines


@pytest.fixture(scope="module")
def oracle():
    return pytest.importorskip("fasttext_pybind", reason="fasttext-predict is the test oracle")


def oracle_predictions(oracle, path, lines: list[str], k: int):
    model = oracle.fasttext()
    model.loadModel(str(path))
    return [model.predict(line + "\n", k, 0.0, "replace") for line in lines]


def assert_same_as_fasttext(path, lines: list[str], oracle, k: int = 3) -> None:
    """The same top-k labels (up to labels fastText itself cannot tell apart: probabilities
    within 1e-5) and probabilities within 1e-5 (1e-3 on a line of thousands of n-grams, where
    fastText's running float32 sum drifts)."""
    model = read_model(path)
    predictor = Predictor(model)
    words = [fasttext_words(line) for line in lines]
    ours = predictor.predict(words, k)
    every = predictor.predict(words, len(model.labels))
    expected = oracle_predictions(oracle, path, lines, k)
    for line, found, labels, probabilities, all_labels, all_probabilities in zip(
            lines, expected, ours.labels, ours.probabilities, every.labels, every.probabilities):
        label_probability = dict(zip(all_labels.tolist(), all_probabilities.tolist()))
        assert len(found) == int((labels >= 0).sum()), (line[:40], found, labels)
        for (probability, label), our_label, our_probability in zip(found, labels, probabilities):
            tolerance = tolerance_of(line, probability, model.settings.loss)
            assert our_probability == pytest.approx(probability, abs=tolerance), (line[:40], found)
            same = model.labels[our_label] == label or abs(
                label_probability.get(model.labels.index(label), 0.0) - probability) <= tolerance
            assert same, (line[:40], found, [model.labels[i] for i in labels], probabilities)


def tolerance_of(line: str, probability: float, loss: str) -> float:
    """1e-5 (1e-3 on a line of thousands of n-grams, where fastText's running float32 sum
    drifts); with a sigmoid loss (ova, ns) plus the gap to the next entry of fastText's sigmoid
    table, as a logit on the edge of two entries, summed in another order, falls in the next."""
    tolerance = 1e-5 if len(line) < 1000 else 1e-3
    if loss in ("ova", "ns"):
        entries = _sigmoid_table()
        nearest = int(np.abs(entries - probability).argmin())
        tolerance += float(np.abs(np.diff(entries[max(nearest - 1, 0):nearest + 2])).max())
    return tolerance


def test_the_shipped_model_gives_fasttext_predict_results(oracle):
    assert_same_as_fasttext(shipped_model_path(), corpus_lines() + TRICKY, oracle)


def test_the_toy_model_gives_fasttext_predict_results(oracle):
    assert_same_as_fasttext(TOY_MODEL, corpus_lines() + TRICKY, oracle, k=7)


def test_identify_reads_lines_as_laser_lid_did(oracle):
    """LanguageIdentifier joins a line's words by single spaces (any Unicode space or line break
    separates words), as it did when fasttext-predict ran the model; of fastText's guesses it
    keeps those the line's script allows, their probabilities (the toy model's softmax) shared
    among those labels alone, and a script's only label it gives with 1."""
    lines = corpus_lines()[::10] + TRICKY
    model = LanguageIdentifier(TOY_MODEL)
    found = model.identify(lines, top=2)
    expected = oracle_predictions(oracle, TOY_MODEL, [" ".join(line.split()) for line in lines],
                                  len(model.labels))
    for line, guesses, reference in zip(lines, found, expected):
        script = line_script(" ".join(line.split()))
        allowed = [label for label in model.labels if label.endswith(f"_{script}")
                   or (script == "Hani" and label.endswith(("_Hans", "_Jpan")))]
        if not allowed:
            assert [(guess.code, guess.probability) for guess in guesses] == [("und", 0.0)]
            continue
        if len(allowed) == 1:
            assert [(guess.code, guess.probability) for guess in guesses] == [(allowed[0], 1.0)]
            continue
        kept = [(probability - 1e-5, label.removeprefix("__label__"))
                for probability, label in reference if label.removeprefix("__label__") in allowed]
        share = sum(probability for probability, _ in kept)
        if share < 1e-4:
            continue  # fastText's probabilities of these labels are its floor: no ranking
        assert guesses[0].code == kept[0][1], line[:40]
        assert [guess.probability for guess in guesses] == pytest.approx(
            [min(probability / share + 1e-5, 1.0) for probability, _ in kept[:2]], abs=1e-5)


def write_fasttext(path, model, *, loss="softmax", word_ngrams=None, minn=None, maxn=None,
                   dense=False, subquantiser_size=None, quantised_output=False, version=12,
                   seed=0):
    """A fastText file with the toy model's dictionary and random matrices: dense and unpruned
    (every bucket a row), or product-quantised (sub-vectors of `subquantiser_size`, random codes
    and centroids), its output dense or quantised; other settings as given."""
    rng = np.random.default_rng(seed)
    settings = model.settings
    bucket = 3000 if dense else settings.bucket
    args = (settings.dim, 5, 1, 1, 5, word_ngrams or settings.word_ngrams, LOSSES[loss], 3, bucket,
            settings.minn if minn is None else minn, settings.maxn if maxn is None else maxn, 100,
            1e-4)
    out = [struct.pack("<ii", 793712314, version), struct.pack("<12id", *args)]
    entries = [(word, 1, 0) for word in model.words]
    entries += [(label, int(count), 1) for label, count in zip(model.labels, model.label_counts)]
    kept = model.bucket_rows.kept
    pruned = -1 if dense else len(kept)
    out.append(struct.pack("<iiiqq", len(entries), len(model.words), len(model.labels), 1000,
                           pruned))
    out += [word.encode("utf-8", "surrogateescape") + b"\0" + struct.pack("<qb", count, kind)
            for word, count, kind in entries]
    if not dense:
        rows = model.bucket_rows.kept_rows - len(model.words)
        out.append(np.stack([kept, rows], axis=1).astype("<i4").tobytes())
    rows = len(model.words) + (bucket if dense else len(kept))
    out.append(bytes([not dense]))
    out.append(_dense(rng, rows, settings.dim) if dense else
               _quantised(rng, rows, settings.dim, subquantiser_size or 2, qnorm=True))
    out.append(bytes([quantised_output and not dense]))
    out.append(_quantised(rng, len(model.labels), settings.dim, settings.dim, qnorm=True)
               if quantised_output and not dense else
               _dense(rng, len(model.labels), settings.dim))
    path.write_bytes(b"".join(out))
    return path


def _dense(rng, rows: int, dim: int) -> bytes:
    return struct.pack("<qq", rows, dim) + rng.normal(0, 1, (rows, dim)).astype("<f4").tobytes()


def _quantised(rng, rows: int, dim: int, dsub: int, qnorm: bool) -> bytes:
    subquantisers = -(-dim // dsub)
    last = dim - dsub * (subquantisers - 1)
    codes = rng.integers(0, 256, rows * subquantisers, dtype=np.uint8)
    out = [bytes([qnorm]), struct.pack("<qqi", rows, dim, codes.size), codes.tobytes(),
           struct.pack("<iiii", dim, subquantisers, dsub, last),
           rng.normal(0, 1, dim * 256).astype("<f4").tobytes()]
    if qnorm:
        out += [rng.integers(0, 256, rows, dtype=np.uint8).tobytes(),
                struct.pack("<iiii", 1, 1, 1, 1), rng.uniform(0.5, 2, 256).astype("<f4").tobytes()]
    return b"".join(out)


@pytest.mark.parametrize("variant", [
    {"dense": True},
    {"dense": True, "word_ngrams": 3},
    {"subquantiser_size": 3, "quantised_output": True},
    {"loss": "hs"},
    {"loss": "hs", "dense": True, "seed": 1},
    {"loss": "ova"},
    {"loss": "ns", "quantised_output": True},
    {"minn": 1, "maxn": 3, "word_ngrams": 2},
    {"maxn": 0, "word_ngrams": 2},
    {"version": 11},
], ids=repr)
def test_any_fasttext_classifier_gives_fasttext_predict_results(tmp_path, oracle, variant):
    path = write_fasttext(tmp_path / "model.bin", read_model(TOY_MODEL), **variant)
    assert_same_as_fasttext(path, corpus_lines()[::4] + TRICKY, oracle)


def test_a_word_vector_model_is_refused_in_one_line(tmp_path):
    data = bytearray(TOY_MODEL.read_bytes())
    struct.pack_into("<i", data, 8 + 7 * 4, 1)  # the model argument: cbow
    (tmp_path / "vectors.bin").write_bytes(bytes(data))
    with pytest.raises(LaserError, match="vectors.bin: a fastText word-vector model"):
        read_model(tmp_path / "vectors.bin")


@pytest.mark.parametrize("cut", [20, 60, 200, 3000, 60000, 105000, -1])
def test_a_truncated_model_is_one_error_naming_it(tmp_path, cut):
    model = tmp_path / "cut.ftz"
    model.write_bytes(TOY_MODEL.read_bytes()[:cut])
    with pytest.raises(LaserError, match=r"cut.ftz: (a truncated|not a) fastText model file"):
        read_model(model)


def test_laser_lid_names_a_damaged_model_in_one_line(tmp_path):
    data = bytearray(TOY_MODEL.read_bytes())
    struct.pack_into("<iiiqq", data, 8 + 56, 10 ** 9, 10 ** 9, 7, 0, 0)  # sizes beyond the file
    model = tmp_path / "damaged.ftz"
    model.write_bytes(bytes(data))
    source = tmp_path / "in.txt"
    source.write_text("bonjour\n", encoding="utf-8")
    line = one_error_line(run_laser("lid", source, "--lid-model", model))
    assert str(model) in line and "fastText model file" in line


def test_threads_sharing_a_model_get_each_their_own_answers():
    """The word cache changes as a batch runs: batches from several threads (as `laser serve`
    sends them) wait for each other and each gets what it alone would."""
    from concurrent.futures import ThreadPoolExecutor

    lines = corpus_lines()
    batches = [lines[start::7] for start in range(7)]
    alone = [LanguageIdentifier(TOY_MODEL).best(batch) for batch in batches]
    shared = LanguageIdentifier(TOY_MODEL)
    shared._predictor.capacity = 2  # the cache empties on almost every batch
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(shared.best, batches * 3))
    assert together == alone * 3


def test_the_kernels_softmax_exponentials_are_exp_to_a_ten_millionth():
    """The kernel's vectorised e^(logit - largest) over the whole float range a softmax meets
    (below -87: e^-87, about FLT_MIN), and each row's sum, against numpy's float64 exp of the same
    float32 differences."""
    from laser.lid.kernel import kernel

    rng = np.random.default_rng(0)
    logits = np.concatenate([rng.normal(0, 30, (500, 270)), np.zeros((1, 270)),
                             np.linspace(-120, 0, 270)[None, :]]).astype(np.float32)
    largest = logits.max(axis=1, keepdims=True)
    expected = np.exp((logits - largest).astype(np.float64))
    exponentials, sums = logits.copy(), np.empty_like(largest)
    kernel().softmax_exp(exponentials, largest, sums)
    normal = expected > 1.7e-38  # above e^-87
    assert np.all(np.abs(exponentials - expected)[normal] <= 1e-7 * expected[normal])
    assert np.all((exponentials[~normal] > 0) & (exponentials[~normal] < 1.7e-38))
    assert np.allclose(sums[:, 0], expected.sum(axis=1), rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match="largest"):
        kernel().softmax_exp(logits.copy(), largest[:-1], sums)
