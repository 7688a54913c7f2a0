"""Zero-shot cross-lingual classification: a small MLP trained on frozen sentence embeddings of one
language predicts labels for sentences of any language the model knows.

>>> encoder = Encoder.load()
>>> classifier = Classifier.train_texts(encoder, texts, labels, "en")
>>> classifier.predict_texts(encoder, ["Der Zug fährt um acht."], "de")
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np
from tqdm import tqdm

from ..errors import LaserError
from ..eval.classification import Evaluation
from ..io.atomic import atomic_path, atomic_text_output
from ..io.sidecar import read_sidecar
from ..models import torch_format
from ..models.spaces import Origin, check_same_space, model_identity
from ..version import __version__
from .mlp_options import TrainOptions

if TYPE_CHECKING:
    from ..encoder import Encoder
    from ..models.files import ModelFiles

RECORD_FILE = "classifier.json"
WEIGHTS_FILE = "classifier.pt"
FORMAT_VERSION = 1
ENCODE_CHUNK = 2000


@dataclass(frozen=True)
class ModelId:
    """The embedding model a classifier belongs to: its checkpoint's sha256, name and space (the
    space is what is compared: any model of it may embed the sentences to classify) and its
    files (family, paths), for messages."""

    sha256: str
    files: dict = field(default_factory=dict, compare=False)
    name: Optional[str] = None
    space: Optional[str] = None

    @classmethod
    def of(cls, files: ModelFiles) -> ModelId:
        identity = model_identity(files)
        return cls(files.sha256(), files.describe(), identity.name, identity.space)

    @classmethod
    def of_embeddings(cls, path: str) -> ModelId:
        """The model recorded in the provenance sidecar of an embeddings file."""
        record = read_sidecar(path)
        if not isinstance(record.get("model_sha256"), str):
            raise LaserError(f"{path}: no provenance sidecar ({Path(path).name}.json) names the "
                             "model of these embeddings; make them with `laser embed`, or give text")
        return cls(record["model_sha256"], record.get("model_files") or {},
                   record.get("model_name"), record.get("model_space"))

    @classmethod
    def of_record(cls, record: dict) -> ModelId:
        """The model a classifier record names."""
        return cls(record["model_sha256"], record["model_files"], record.get("model_name"),
                   record.get("model_space"))

    def origin(self, source: str) -> Origin:
        """The vectors of this model, for `check_same_space`."""
        return Origin(source, self.name or self.describe(), self.space, self.sha256)

    def describe(self) -> str:
        return f"{self.files.get('encoder', 'a model')} (sha256 {self.sha256[:12]})"


@dataclass(frozen=True)
class Labelled:
    """Sentence embeddings with one label each; `source` names them in messages."""

    vectors: np.ndarray
    labels: list[str]
    source: str = "data"

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or len(self.vectors) != len(self.labels):
            raise LaserError(f"{self.source}: {len(self.labels)} labels for embeddings of shape "
                             f"{self.vectors.shape}; give one label per row")
        if not len(self.labels):
            raise LaserError(f"{self.source}: no examples")


# The MLP's layers with weights (`laser.apps.mlp.build`) under their torch names.
STATE_NAMES = ("1.weight", "1.bias", "4.weight", "4.bias")


@dataclass(frozen=True)
class MLPWeights:
    """The trained MLP as numpy arrays: predicting needs no torch."""

    hidden_weight: np.ndarray
    hidden_bias: np.ndarray
    output_weight: np.ndarray
    output_bias: np.ndarray

    @classmethod
    def of_state(cls, state: dict) -> MLPWeights:
        """From a state dict (torch tensors or numpy arrays) under STATE_NAMES."""
        return cls(*(np.asarray(state[name], dtype=np.float32) for name in STATE_NAMES))

    def state(self) -> dict[str, np.ndarray]:
        return dict(zip(STATE_NAMES, (self.hidden_weight, self.hidden_bias, self.output_weight,
                                      self.output_bias)))

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The network in eval mode: unit-length rows -> hidden layer -> ReLU -> labels."""
        unit = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        hidden = np.maximum(unit @ self.hidden_weight.T + self.hidden_bias, 0)
        return hidden @ self.output_weight.T + self.output_bias


class Classifier:
    """A trained classifier: label names, the MLP and the embedding model it was trained on."""

    def __init__(self, network: MLPWeights, labels: list[str], model: ModelId, record: dict):
        self.network = network
        self.labels = labels
        self.model = model
        self.record = record

    @classmethod
    def train(cls, train: Labelled, model: ModelId, dev: Optional[Labelled] = None,
              options: TrainOptions = TrainOptions(), progress: bool = False) -> Classifier:
        """Fit the MLP on `train` (embeddings made by `model`), stopping early on `dev` (default:
        a `dev_fraction` of train, held out at random from `seed`)."""
        from .mlp import fit, held_out_split
        labels = sorted(set(train.labels))
        if len(labels) < 2:
            raise LaserError(f"{train.source}: a classifier needs at least 2 labels, found "
                             f"{len(labels)}")
        x, y = np.asarray(train.vectors, dtype=np.float32), label_indices(train, labels)
        if dev is None:
            (x, y), (dev_x, dev_y) = held_out_split(x, y, options.dev_fraction, options.seed)
        else:
            check_dimension(dev.vectors, x.shape[1], dev.source)
            dev_x, dev_y = np.asarray(dev.vectors, dtype=np.float32), label_indices(dev, labels)
        network, history = fit((x, y), (dev_x, dev_y), len(labels), options, progress)
        record = {"format": FORMAT_VERSION, "labels": labels, "dim": int(x.shape[1]),
                  "model_sha256": model.sha256, "model_name": model.name,
                  "model_space": model.space, "model_files": model.files,
                  "options": asdict(options), "train_examples": len(y),
                  "dev_examples": len(dev_y), "dev_source": dev.source if dev else "held out",
                  **history, "laser_version": __version__}
        return cls(MLPWeights.of_state(network.state_dict()), labels, model, record)

    @classmethod
    def train_texts(cls, encoder: Encoder, texts: Sequence[str], labels: Sequence[str], lang: str,
                    dev: Optional[tuple[Sequence[str], Sequence[str]]] = None,
                    options: TrainOptions = TrainOptions(), progress: bool = False) -> Classifier:
        """Embed labelled sentences of `lang` (and the optional dev `(texts, labels)`), then train."""
        train = Labelled(embed(encoder, texts, lang, progress), list(labels), "train")
        dev_set = None
        if dev:
            dev_set = Labelled(embed(encoder, dev[0], lang, progress), list(dev[1]), "dev")
        return cls.train(train, ModelId.of(encoder.files), dev_set, options, progress)

    @property
    def dim(self) -> int:
        return self.record["dim"]

    def check_model(self, model: ModelId, source: str) -> None:
        """Refuse embeddings of another space than the one this classifier was trained in (any
        model of that space is welcome: `check_same_space`)."""
        check_same_space(self.model.origin("the classifier"), model.origin(source))

    def predict(self, vectors: np.ndarray) -> list[str]:
        """The most likely label of each row (embeddings of this classifier's model)."""
        return [self.labels[index] for index in self.predict_indices(vectors)]

    def predict_indices(self, vectors: np.ndarray) -> np.ndarray:
        check_dimension(vectors, self.dim, "embeddings")
        if not len(vectors):
            return np.zeros(0, dtype=np.int64)
        return self.network.logits(np.asarray(vectors, dtype=np.float32)).argmax(axis=1)

    def evaluate(self, data: Labelled) -> Evaluation:
        """Accuracy, macro-F1 and confusion matrix on labelled embeddings."""
        return Evaluation.of(self.labels, label_indices(data, self.labels),
                             self.predict_indices(data.vectors))

    def predict_texts(self, encoder: Encoder, texts: Sequence[str], lang: str) -> list[str]:
        """Embed sentences of any language `encoder` knows, then predict."""
        self.check_model(ModelId.of(encoder.files), "encoder")
        return self.predict(embed(encoder, texts, lang))

    def evaluate_texts(self, encoder: Encoder, texts: Sequence[str], labels: Sequence[str],
                       lang: str) -> Evaluation:
        """Embed labelled sentences of any language `encoder` knows, then evaluate."""
        self.check_model(ModelId.of(encoder.files), "encoder")
        return self.evaluate(Labelled(embed(encoder, texts, lang), list(labels), "test"))

    def save(self, directory: str | os.PathLike) -> None:
        """Write DIR/classifier.pt (weights) and DIR/classifier.json (labels, model, options)."""
        import torch
        directory = Path(directory)
        check_output_dir(directory)
        directory.mkdir(exist_ok=True)
        with atomic_path(directory / WEIGHTS_FILE) as tmp:
            torch.save({name: torch.from_numpy(value) for name, value in
                        self.network.state().items()}, tmp)
        with atomic_text_output(str(directory / RECORD_FILE)) as f:
            json.dump(self.record, f, indent=2, ensure_ascii=False)
            f.write("\n")

    @classmethod
    def load(cls, directory: str | os.PathLike) -> Classifier:
        """A saved classifier, its weights read without torch."""
        directory = Path(directory)
        record = read_record(directory)
        try:
            network = MLPWeights.of_state(torch_format.load(directory / WEIGHTS_FILE))
        except Exception as error:  # noqa: BLE001 - a missing, corrupt or refused file
            raise LaserError(f"{directory / WEIGHTS_FILE}: cannot load classifier weights "
                             f"({type(error).__name__}: {error})") from None
        expected = (record["options"]["hidden"], record["dim"])
        if network.hidden_weight.shape != expected \
                or network.output_weight.shape[0] != len(record["labels"]):
            raise LaserError(f"{directory / WEIGHTS_FILE}: weights do not match "
                             f"{directory / RECORD_FILE} ({len(record['labels'])} labels, "
                             f"dim {record['dim']})")
        return cls(network, record["labels"], ModelId.of_record(record), record)


def read_record(directory: Path) -> dict:
    if not directory.is_dir():
        raise LaserError(f"{directory}: classifier directory not found")
    path = directory / RECORD_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LaserError(f"{directory}: not a classifier directory (no {RECORD_FILE})") from None
    except ValueError:
        raise LaserError(f"{path}: not valid JSON") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT_VERSION:
        raise LaserError(f"{path}: not a classifier record of format {FORMAT_VERSION}")
    return record


def check_output_dir(directory: Path) -> None:
    """Refuse, before any work, a classifier directory that cannot be created or written."""
    from ..io.atomic import check_output_path
    if directory.exists() and not directory.is_dir():
        raise LaserError(f"{directory}: exists and is not a directory")
    check_output_path(directory / RECORD_FILE if directory.is_dir() else directory)


def check_dimension(vectors: np.ndarray, dim: int, source: str) -> None:
    if vectors.ndim != 2 or vectors.shape[1] != dim:
        raise LaserError(f"{source}: embeddings of shape {vectors.shape}, the classifier takes "
                         f"dimension {dim}")


def label_indices(data: Labelled, labels: list[str]) -> np.ndarray:
    """Each label's index in `labels`, refusing labels the classifier does not know."""
    index = {label: position for position, label in enumerate(labels)}
    unknown = sorted(set(data.labels) - index.keys())
    if unknown:
        raise LaserError(f"{data.source}: unknown label(s) {', '.join(map(repr, unknown[:5]))}; "
                         f"the classifier knows {', '.join(labels)}")
    return np.array([index[label] for label in data.labels], dtype=np.int64)


def embed(encoder: Encoder, texts: Sequence[str], lang: str, progress: bool = False) -> np.ndarray:
    """Embed sentences in chunks (a progress bar on stderr when asked)."""
    texts = list(texts)
    rows = [np.zeros((0, encoder.dim), dtype=np.float32)]
    with tqdm(total=len(texts), unit="sent", disable=None if progress else True, leave=False,
              desc=f"embedding ({lang})") as bar:
        for start in range(0, len(texts), ENCODE_CHUNK):
            rows.append(encoder.encode(texts[start:start + ENCODE_CHUNK], lang))
            bar.update(len(rows[-1]))
    return np.concatenate(rows)
