"""Zero-shot classification with the shipped model: English SIB-200 topics in, German topics out;
determinism, the model check, and one-line errors for bad files (API and `laser classify`)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from laser import LaserError
from laser.apps.classify import Classifier, Labelled, ModelId, TrainOptions, embed
from laser.apps.classify_files import read_tsv
from laser.cli import main

from conftest import DATA, PARITY_MODEL, one_error_line

SIB = DATA / "sib200"
TRAIN, DEV, GERMAN = SIB / "eng_Latn.train.tsv", SIB / "eng_Latn.dev.tsv", SIB / "deu_Latn.dev.tsv"
CHANCE = 1 / 7


def run(*args):
    return CliRunner().invoke(main, ["classify", *map(str, args)])


@pytest.fixture(scope="module")
def default_encoder():
    from laser.encoder import Encoder
    return Encoder.load("default")


@pytest.fixture(scope="module")
def sib(default_encoder) -> dict[str, Labelled]:
    """The vendored SIB-200 slice embedded with the shipped model."""
    sets = {}
    for name, path, lang in (("train", TRAIN, "en"), ("dev", DEV, "en"), ("de", GERMAN, "de")):
        labels, texts = read_tsv(str(path))
        sets[name] = Labelled(embed(default_encoder, texts, lang), labels, name)
    return sets


@pytest.fixture(scope="module")
def classifier(sib, default_encoder) -> Classifier:
    return Classifier.train(sib["train"], ModelId.of(default_encoder.files), sib["dev"])


@pytest.fixture(scope="module")
def classifier_dir(classifier, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("classifier") / "topics"
    classifier.save(directory)
    return directory


@pytest.mark.slow
def test_english_training_transfers_to_german(classifier, sib):
    german = classifier.evaluate(sib["de"])
    assert german.examples == 99 and german.confusion.shape == (7, 7)
    assert german.accuracy > 2.5 * CHANCE
    assert german.macro_f1 > 2 * CHANCE
    assert classifier.record["dev_accuracy"] > 3 * CHANCE  # English dev, chosen on it


@pytest.mark.slow
def test_same_seed_same_classifier(classifier, sib, default_encoder):
    model = ModelId.of(default_encoder.files)
    again = Classifier.train(sib["train"], model, sib["dev"], TrainOptions(seed=1))
    assert again.predict(sib["de"].vectors) == classifier.predict(sib["de"].vectors)
    for name, weights in classifier.network.state().items():
        assert np.array_equal(weights, again.network.state()[name])
    other = Classifier.train(sib["train"], model, sib["dev"], TrainOptions(seed=2, epochs=3))
    assert not np.array_equal(other.network.hidden_weight, classifier.network.hidden_weight)


@pytest.mark.slow
def test_saved_classifier_predicts_the_same(classifier, classifier_dir, sib):
    loaded = Classifier.load(classifier_dir)
    assert loaded.labels == classifier.labels and loaded.model == classifier.model
    record = json.loads((classifier_dir / "classifier.json").read_text())
    assert record["model_name"] == loaded.model.name == "laser-default-v2"
    assert loaded.predict(sib["de"].vectors) == classifier.predict(sib["de"].vectors)


def test_numpy_prediction_equals_the_torch_network():
    """Saved classifiers predict without torch; the numpy MLP computes what torch's does."""
    torch = pytest.importorskip("torch")
    from laser.apps.classify import MLPWeights
    from laser.apps.mlp import build
    torch.manual_seed(0)
    network = build(16, 5, 32, 0.3).eval()
    x = np.random.default_rng(0).standard_normal((200, 16)).astype(np.float32)
    with torch.no_grad():
        expected = network(torch.from_numpy(x)).numpy()
    logits = MLPWeights.of_state(network.state_dict()).logits(x)
    assert np.abs(logits - expected).max() < 1e-5
    assert np.array_equal(logits.argmax(axis=1), expected.argmax(axis=1))


@pytest.mark.slow
def test_held_out_dev_without_a_dev_set(sib, default_encoder):
    trained = Classifier.train(sib["train"], ModelId.of(default_encoder.files),
                               options=TrainOptions(epochs=2))
    assert trained.record["dev_source"] == "held out"
    assert (trained.record["train_examples"], trained.record["dev_examples"]) == (270, 30)


@pytest.mark.slow
def test_another_model_is_refused(classifier, classifier_dir):
    from laser.encoder import Encoder
    with pytest.raises(LaserError, match=r"the classifier \(laser-default-v2, space laser-default-v2\) and encoder "
                       r"\(encoder, space sha256:\w+\) are not in one embedding space"):
        classifier.predict_texts(Encoder.load(str(PARITY_MODEL)), ["Hallo."], "de")
    line = one_error_line(run("eval", classifier_dir, GERMAN, "--lang", "de",
                              "--model", PARITY_MODEL))
    assert "(laser-default-v2, space laser-default-v2)" in line and "(encoder, space sha256:" in line


@pytest.mark.slow
def test_cli_train_predict_eval(tmp_path, classifier, sib):
    topics = tmp_path / "topics"
    trained = run("train", TRAIN, "--lang", "en", "--dev", DEV, "-o", topics)
    assert trained.exit_code == 0, trained.output
    assert "best dev accuracy" in trained.stderr
    sentences = tmp_path / "de.txt"
    sentences.write_text("".join(line.split("\t")[1] + "\n"
                                 for line in GERMAN.read_text(encoding="utf-8").splitlines()),
                         encoding="utf-8")
    predictions = tmp_path / "de.labels"
    assert run("predict", topics, sentences, "--lang", "de", "-o", predictions).exit_code == 0
    predicted = predictions.read_text(encoding="utf-8").splitlines()
    assert predicted == classifier.predict(sib["de"].vectors)  # same data and seed as the API's
    accuracy = np.mean([p == g for p, g in zip(predicted, sib["de"].labels)])
    assert len(predicted) == 99 and accuracy > 2.5 * CHANCE
    scores = run("eval", topics, GERMAN, "--lang", "de", "--json")
    assert scores.exit_code == 0, scores.output
    report = json.loads(scores.stdout)
    assert report["accuracy"] == pytest.approx(accuracy)
    assert report["confusion"] == classifier.evaluate(sib["de"]).confusion.tolist()


@pytest.mark.slow
def test_cli_from_embeddings(tmp_path, classifier_dir):
    sentences, labels = tmp_path / "de.txt", tmp_path / "de.labels"
    rows = [line.split("\t") for line in GERMAN.read_text(encoding="utf-8").splitlines()[:20]]
    sentences.write_text("".join(text + "\n" for _, text in rows), encoding="utf-8")
    labels.write_text("".join(label + "\n" for label, _ in rows), encoding="utf-8")
    vectors = tmp_path / "de.npy"
    assert CliRunner().invoke(main, ["embed", str(sentences), "-o", str(vectors), "--lang", "de",
                                     "-q"]).exit_code == 0
    from_text = run("predict", classifier_dir, sentences, "--lang", "de")
    from_vectors = run("predict", classifier_dir, "--embeddings", vectors)
    assert from_vectors.exit_code == 0 and from_vectors.stdout == from_text.stdout
    assert len(from_vectors.stdout.splitlines()) == 20
    topics = tmp_path / "topics"
    trained = run("train", "--embeddings", vectors, "--labels", labels, "-o", topics,
                  "--epochs", "2", "-q")
    assert trained.exit_code == 0, trained.output
    assert Classifier.load(topics).model == Classifier.load(classifier_dir).model
    Path(f"{vectors}.json").unlink()
    assert "no provenance sidecar" in one_error_line(
        run("predict", classifier_dir, "--embeddings", vectors))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("content, message", [
    ("sports\tA goal.\nsports A goal without a tab.\n", "bad.tsv:2: expected label<TAB>text, found 1"),
    ("1\tsports\tA goal.\n", "bad.tsv:1: expected label<TAB>text, found 3"),
    ("sports\tA goal.\n\tNo label.\n", "bad.tsv:2: empty label"),
    ("", "bad.tsv: empty file"),
])
def test_bad_training_files(tmp_path, content, message):
    bad = write(tmp_path / "bad.tsv", content)
    line = one_error_line(run("train", bad, "--lang", "en", "-o", tmp_path / "out"))
    assert message in line
    assert not (tmp_path / "out").exists()


def test_one_label_is_not_a_classifier(tmp_path):
    one = write(tmp_path / "one.tsv", "sports\tA goal.\nsports\tA match.\nsports\tA race.\n")
    assert "at least 2 labels" in one_error_line(run("train", one, "--lang", "en", "--model",
                                                     "default", "-o", tmp_path / "out"))


def test_inputs_that_do_not_go_together(tmp_path):
    assert "--lang" in one_error_line(run("train", TRAIN, "-o", tmp_path / "out"))
    assert "--labels" in one_error_line(run("train", "--embeddings", "x.npy", "-o", tmp_path))
    assert "either" in one_error_line(run("predict", tmp_path, "--lang", "de"))
    assert "not a classifier directory" in one_error_line(
        run("predict", tmp_path, GERMAN, "--lang", "de"))


@pytest.mark.slow
def test_unknown_label_at_eval(tmp_path, classifier_dir):
    bad = write(tmp_path / "bad.tsv", "sports\tEin Tor.\nweather\tEs regnet.\n")
    line = one_error_line(run("eval", classifier_dir, bad, "--lang", "de"))
    assert "bad.tsv:2: unknown label 'weather'" in line


def test_labels_must_match_the_embedding_rows(tmp_path):
    from laser.apps.classify_files import read_labels
    labels = write(tmp_path / "labels", "sports\nhealth\n")
    with pytest.raises(LaserError, match="2 labels for 3 embedding rows"):
        read_labels(str(labels), 3)


def test_dev_embeddings_of_another_space_are_refused(tmp_path):
    rows = [line.split("\t") for line in TRAIN.read_text(encoding="utf-8").splitlines()[:12]]
    sentences = write(tmp_path / "en.txt", "".join(text + "\n" for _, text in rows))
    labels = write(tmp_path / "en.labels", "".join(label + "\n" for label, _ in rows))
    for name, model in (("train.npy", "default"), ("dev.npy", PARITY_MODEL)):
        embedded = CliRunner().invoke(main, ["embed", str(sentences), "-o", str(tmp_path / name),
                                             "--lang", "en", "--model", str(model), "-q"])
        assert embedded.exit_code == 0, embedded.output
    line = one_error_line(run("train", "--embeddings", tmp_path / "train.npy", "--labels", labels,
                              "--dev-embeddings", tmp_path / "dev.npy", "--dev-labels", labels,
                              "-o", tmp_path / "topics", "--epochs", 1))
    assert f"{tmp_path / 'train.npy'} (laser-default-v2, space laser-default-v2) and " in line
    assert f"{tmp_path / 'dev.npy'} (encoder, space sha256:" in line
    assert "not in one embedding space" in line
    assert not (tmp_path / "topics").exists()
