"""A saved classifier predicts without torch (the light install): its weights are read by the
restricted checkpoint reader and run in numpy, equal to the torch network where torch is
installed. The vendored classifier (tests/data/classifier, README there) was trained on the
parity model's embeddings."""
import numpy as np
import pytest
from click.testing import CliRunner

from laser.apps.classify import Classifier
from laser.cli import main
from laser.encoder import Encoder

from conftest import DATA, PARITY_MODEL

CLASSIFIER = DATA / "classifier"
SENTENCES = ["The cat sleeps.", "It rains a lot.", "Dogs like to run.", "A cold wind blows."]


def test_predict_command_gives_one_label_per_line(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["classify", "predict", str(CLASSIFIER), str(source),
                                       "--lang", "en", "--model", str(PARITY_MODEL), "-q"])
    assert result.exit_code == 0, result.output
    labels = result.stdout.splitlines()
    assert len(labels) == len(SENTENCES) and set(labels) <= {"animal", "weather"}
    vectors = Encoder.load(str(PARITY_MODEL)).encode(SENTENCES, "en")
    assert labels == Classifier.load(CLASSIFIER).predict(vectors)


def test_the_numpy_network_is_the_saved_torch_network():
    torch = pytest.importorskip("torch")
    from laser.apps.mlp import build
    classifier = Classifier.load(CLASSIFIER)
    options = classifier.record["options"]
    network = build(classifier.dim, len(classifier.labels), options["hidden"], options["dropout"])
    network.load_state_dict(torch.load(CLASSIFIER / "classifier.pt", weights_only=True))
    vectors = Encoder.load(str(PARITY_MODEL)).encode(SENTENCES * 5, "en")
    with torch.no_grad():
        expected = network.eval()(torch.from_numpy(vectors)).numpy()
    assert np.abs(classifier.network.logits(vectors) - expected).max() < 1e-5
