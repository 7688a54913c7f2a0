"""The learned pair filter: it separates held-out translations from shuffled pairs of the dev
sample, is repeatable with a seed, refuses embeddings of another model and malformed pair files,
and `laser filter train` -> `laser filter score` round-trips on the command line."""
import gzip
import json
import itertools

import numpy as np
import pytest

from laser.apps.pair_filter import EmbeddingModel, FilterOptions, PairFilter, auc
from laser.apps.pair_files import read_pair_tsv
from laser.errors import LaserError
from laser.encoder import Encoder
from laser.models.registry import CHECKOUT_MODEL_DIR as SHIPPED_MODEL_DIR
from laser.models.spaces import Origin

from conftest import CORPUS_SAMPLE, PARITY_MODEL, run_laser as run, one_error_line

TRAIN, HELD_OUT = 300, 200
QUICK = FilterOptions(epochs=8, learning_rate=3e-3)


def dev_pairs(lang: str, count: int, skip: int = 0) -> list[tuple[str, str]]:
    with gzip.open(CORPUS_SAMPLE / "dev" / f"{lang}-eng.tsv.gz", "rt", encoding="utf-8") as f:
        lines = itertools.islice(f, skip, skip + count)
        return [tuple(line.rstrip("\n").split("\t")) for line in lines]


def write_tsv(path, rows) -> str:
    path.write_text("".join("\t".join(map(str, row)) + "\n" for row in rows), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def shipped():
    return Encoder.load(str(SHIPPED_MODEL_DIR))


@pytest.fixture(scope="module")
def embedded(shipped):
    """German and English embeddings of the first TRAIN + HELD_OUT German dev pairs."""
    pairs = dev_pairs("deu", TRAIN + HELD_OUT)
    return (shipped.encode([p[0] for p in pairs], "de"),
            shipped.encode([p[1] for p in pairs], "en"))


@pytest.fixture(scope="module")
def trained(shipped, embedded):
    x, y = embedded
    return PairFilter.train(x[:TRAIN], y[:TRAIN], EmbeddingModel.of(shipped), QUICK)


@pytest.mark.slow
def test_filter_separates_held_out_translations_from_shuffled_pairs(trained, embedded):
    x, y = (side[TRAIN:] for side in embedded)
    true = trained.probabilities(x, y)
    shuffled = trained.probabilities(x, np.roll(y, 1, axis=0))
    labels = np.r_[np.ones(HELD_OUT), np.zeros(HELD_OUT)]
    assert auc(np.r_[true, shuffled], labels) > 0.95
    accuracy = ((true > 0.5).mean() + (shuffled <= 0.5).mean()) / 2
    assert accuracy > 0.85
    training = trained.record["training"]
    assert training["dev"]["auc"] > 0.9
    assert training["examples"]["train"]["positives"] + training["examples"]["dev"]["positives"] \
        == TRAIN


@pytest.mark.slow
def test_training_is_repeatable_with_a_seed(shipped, embedded, trained):
    x, y = (side[:TRAIN] for side in embedded)
    again = PairFilter.train(x, y, EmbeddingModel.of(shipped), QUICK)
    for name, weights in trained.weights.items():
        np.testing.assert_array_equal(weights, again.weights[name])
    other = PairFilter.train(x, y, EmbeddingModel.of(shipped), FilterOptions(
        epochs=QUICK.epochs, learning_rate=QUICK.learning_rate, seed=2))
    assert not np.array_equal(other.weights["hidden_weight"], trained.weights["hidden_weight"])


def test_auc_counts_ties_as_half():
    assert auc(np.array([0.1, 0.9, 0.5, 0.5]), np.array([0, 1, 1, 0])) == pytest.approx(0.875)


@pytest.mark.slow  # trains a filter (module fixture)
def test_saved_filter_records_the_model_and_scores_the_same(tmp_path, trained, embedded, shipped):
    trained.save(tmp_path / "f")
    record = json.loads((tmp_path / "f" / "filter.json").read_text())
    assert record["model_sha256"] == shipped.files.sha256()
    assert record["model_name"] == PairFilter.load(tmp_path / "f").model.name == "laser-default-v2"
    assert record["model_files"]["encoder"] == str(shipped.files.encoder.resolve())
    assert record["options"]["hard_negatives"] == 1 and record["dim"] == shipped.dim
    loaded = PairFilter.load(tmp_path / "f")
    x, y = embedded
    np.testing.assert_array_equal(loaded.probabilities(x, y), trained.probabilities(x, y))


@pytest.mark.slow  # trains a filter (module fixture)
def test_another_model_is_refused(trained):
    with pytest.raises(LaserError, match=r"x.npy \(model 000000000000\) are not in one embedding space"):
        trained.check_model(Origin("x.npy", sha256="0" * 64), trained.record["dim"])
    with pytest.raises(LaserError, match="1024-d embeddings"):
        trained.check_model(Origin("x.npy", sha256=trained.record["model_sha256"]), 1024)
    with pytest.warns(UserWarning, match="of x.npy, so nothing checks that the pair filter and x.npy share"):
        trained.check_model(Origin("x.npy"), trained.record["dim"])  # unknown model: accepted


@pytest.mark.slow  # trains a filter (module fixture)
def test_too_few_pairs_and_bad_options_are_refused(shipped, embedded):
    x, y = embedded
    with pytest.raises(LaserError, match="at least 20 pairs"):
        PairFilter.train(x[:5], y[:5], EmbeddingModel.of(shipped))
    with pytest.raises(LaserError, match="needs negatives"):
        FilterOptions(random_negatives=0, hard_negatives=0)


@pytest.mark.parametrize("text, message", [
    ("", "empty file, no pairs"),
    ("a\tb\nc\n", ":2: 1 column(s) but line 1 has 2 (src<TAB>trg)"),
    ("one column\n", ":1: 1 column(s); expected src<TAB>trg or score<TAB>src<TAB>trg"),
    ("a\tb\tc\td\n", ":1: 4 column(s)"),
    ("1.2\ta\tb\nhigh\tc\td\n", ":2: first column 'high' is not a score"),
])
def test_malformed_pair_files_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "pairs.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LaserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(read_pair_tsv(str(path)))


def test_mined_and_plain_pairs_read_alike(tmp_path):
    mined = write_tsv(tmp_path / "mined.tsv", [(1.25, "Hallo", "Hello"), ("nan", "a", "b")])
    assert list(read_pair_tsv(mined)) == [("Hallo", "Hello"), ("a", "b")]


@pytest.fixture(scope="module")
def cli_filter(tmp_path_factory):
    """A filter trained with `laser filter train` on 300 French dev pairs."""
    folder = tmp_path_factory.mktemp("cli")
    pairs = write_tsv(folder / "pos.tsv", dev_pairs("fra", TRAIN))
    result = run("filter", "train", pairs, "--src-lang", "fr", "--trg-lang", "en", "-o",
                 folder / "fra.filter", "--epochs", 8, "--learning-rate", 3e-3, "--quiet")
    assert result.exit_code == 0, result.output
    return folder / "fra.filter"


@pytest.mark.slow
def test_cli_train_then_score_round_trip(tmp_path, cli_filter):
    pairs = dev_pairs("fra", 100, skip=TRAIN)
    shuffled = [(s, pairs[(i + 1) % len(pairs)][1]) for i, (s, _) in enumerate(pairs)]
    mined = write_tsv(tmp_path / "mined.tsv", [(1.1, s, t) for s, t in pairs + shuffled])
    out = tmp_path / "scored.tsv"
    result = run("filter", "score", mined, cli_filter, "--src-lang", "fr", "--trg-lang", "en",
                 "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"scored 200 pairs, wrote 200 to {out}"
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(s, t) for _, s, t in rows] == pairs + shuffled
    probabilities = np.array([float(p) for p, _, _ in rows])
    assert ((probabilities[:100] > 0.5).mean() + (probabilities[100:] <= 0.5).mean()) / 2 > 0.85
    kept = tmp_path / "kept.tsv"
    result = run("filter", "score", mined, cli_filter, "--src-lang", "fr", "--trg-lang", "en",
                 "-o", kept, "--threshold", 0.5, "--quiet")
    assert result.exit_code == 0, result.output
    assert kept.read_text(encoding="utf-8").splitlines() == \
        ["\t".join(row) for row in rows if float(row[0]) > 0.5]


@pytest.mark.slow
def test_cli_scoring_with_another_model_or_bad_input_is_refused(tmp_path, cli_filter):
    pairs = write_tsv(tmp_path / "pairs.tsv", dev_pairs("fra", 3))
    out = tmp_path / "out.tsv"
    sides = ["--src-lang", "fr", "--trg-lang", "en", "-o", out]
    line = one_error_line(run("filter", "score", pairs, cli_filter, *sides,
                              "--model", PARITY_MODEL))
    assert "(encoder, space sha256:" in line and "not in one embedding space" in line
    other = np.zeros((3, 640), dtype=np.float32)
    np.save(tmp_path / "other.npy", other)
    (tmp_path / "other.npy.json").write_text(json.dumps({"model_sha256": "f" * 64}))
    line = one_error_line(run("filter", "score", pairs, cli_filter, "--src-embeddings",
                              tmp_path / "other.npy", "--trg-lang", "en", "-o", out))
    assert "other.npy (model ffffffffffff) are not in one embedding space" in line
    np.save(tmp_path / "short.npy", other[:2])
    line = one_error_line(run("filter", "score", pairs, cli_filter, "--src-embeddings",
                              tmp_path / "short.npy", "--trg-lang", "en", "-o", out))
    assert "short.npy has 2 rows but" in line and "has 3 pairs" in line
    line = one_error_line(run("filter", "score", pairs, cli_filter, "--trg-lang", "en",
                              "-o", out))
    assert "pass --src-embeddings, or --src-lang" in line
    bad = write_tsv(tmp_path / "bad.tsv", [("a", "b"), ("c",)])
    line = one_error_line(run("filter", "score", bad, cli_filter, *sides))
    assert line == f"laser: error: {bad}:2: 1 column(s) but line 1 has 2 (src<TAB>trg)"
    line = one_error_line(run("filter", "score", pairs, tmp_path, *sides))
    assert "not a pair filter folder" in line
    assert not out.exists()


def test_cli_train_refuses_an_empty_file(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    line = one_error_line(run("filter", "train", empty, "--src-lang", "fr", "--trg-lang", "en",
                              "-o", tmp_path / "f"))
    assert line == f"laser: error: {empty}: empty file, no pairs"
    assert not (tmp_path / "f").exists()


@pytest.mark.slow  # trains a filter (module fixture)
def test_sentences_score_as_their_embeddings_and_other_models_are_refused(trained, embedded,
                                                                          shipped, encoder):
    pairs = dev_pairs("deu", 20, skip=TRAIN)
    src, trg = [p[0] for p in pairs], [p[1] for p in pairs]
    x, y = (side[TRAIN:TRAIN + 20] for side in embedded)
    np.testing.assert_allclose(trained.score_texts(shipped, src, trg, "de", "en"),
                               trained.probabilities(x, y), atol=1e-5)
    with pytest.raises(LaserError, match="the pair filter .* are not in one embedding space"):
        trained.score_texts(encoder, src, trg, "de", "en")


def test_cli_train_refuses_an_unwritable_folder_before_any_work(tmp_path):
    pairs = write_tsv(tmp_path / "pos.tsv", dev_pairs("fra", 30))
    taken = tmp_path / "taken"
    taken.write_text("a file")
    line = one_error_line(run("filter", "train", pairs, "--src-lang", "fr", "--trg-lang", "en",
                              "-o", taken, "--model", "/no/such/model"))
    assert line == f"laser: error: {taken}: exists and is not a directory"
    line = one_error_line(run("filter", "train", pairs, "--src-lang", "fr", "--trg-lang", "en",
                              "-o", tmp_path / "no" / "f", "--model", "/no/such/model"))
    assert "output directory does not exist" in line


@pytest.mark.slow
def test_cli_score_lid_filter_drops_and_counts_the_pairs_of_other_languages(tmp_path, cli_filter):
    pairs = dev_pairs("fra", 6, skip=TRAIN)
    german = dev_pairs("deu", 3)
    mixed = pairs + german
    mined = write_tsv(tmp_path / "mined.tsv", [(1.1, s, t) for s, t in mixed])
    out = tmp_path / "kept.tsv"
    result = run("filter", "score", mined, cli_filter, "--src-lang", "fr", "--trg-lang", "en",
                 "-o", out, "--lid-filter")
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"scored 9 pairs, wrote 6 to {out} (3 dropped by --lid-filter)"
    assert [line.split("\t")[1:] for line in out.read_text(encoding="utf-8").splitlines()] == \
        [list(pair) for pair in pairs]
