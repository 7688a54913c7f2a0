"""The classifier's file jobs: labelled sentence files (`label<TAB>text`, no header) or embeddings
with a labels file in; training, predictions (one label per input line) and evaluations out."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import numpy as np
from tqdm import tqdm

from ..errors import LaserError, located
from ..eval.classification import Evaluation
from ..io.atomic import atomic_text_output, check_output_path
from ..io.embeddings import open_embeddings
from ..io.text import batched, check_input, count_lines, read_lines
from ..models.spaces import check_same_space
from .classify import Classifier, Labelled, ModelId, TrainOptions, check_output_dir, embed

if TYPE_CHECKING:
    from ..encoder import Encoder

EncoderLoader = Callable[[], "Encoder"]  # loads the model on first call only
CHUNK = 10000


def read_tsv(path: str, known: Optional[list[str]] = None) -> tuple[list[str], list[str]]:
    """(labels, texts) of a `label<TAB>text` file; with `known`, any other label is an error."""
    labels, texts = [], []
    for number, line in enumerate(read_lines(path), 1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise located(path, number, f"expected label<TAB>text, found {len(fields)} "
                                        f"tab-separated field(s)")
        label, text = fields
        if not label.strip():
            raise located(path, number, "empty label")
        if known is not None and label not in known:
            raise located(path, number, f"unknown label {label!r}; the classifier knows "
                                        f"{', '.join(known)}")
        labels.append(label)
        texts.append(text)
    if not labels:
        raise LaserError(f"{path}: empty file; expected label<TAB>text lines")
    return labels, texts


def read_labels(path: str, rows: int) -> list[str]:
    """One non-empty label per line, as many as there are embedding rows."""
    labels = []
    for number, label in enumerate(read_lines(path), 1):
        if not label.strip():
            raise located(path, number, "empty label")
        labels.append(label)
    if len(labels) != rows:
        raise LaserError(f"{path}: {len(labels)} labels for {rows} embedding rows; give one "
                         "label per row")
    return labels


@dataclass(frozen=True)
class LabelledFile:
    """Labelled examples on disk: a `label<TAB>text` file in `lang`, or `embeddings` (with the
    provenance sidecar naming their model) plus a `labels` file."""

    tsv: Optional[str] = None
    lang: Optional[str] = None
    embeddings: Optional[str] = None
    labels: Optional[str] = None

    def __post_init__(self) -> None:
        if bool(self.tsv) == bool(self.embeddings):
            raise LaserError("give either a label<TAB>text file or --embeddings with --labels")
        if self.embeddings and not self.labels:
            raise LaserError(f"{self.embeddings}: embeddings need their --labels file")
        if self.tsv and not self.lang:
            raise LaserError(f"{self.tsv}: pass --lang, the language of its sentences")

    def check(self) -> None:
        """Refuse missing or unreadable files before any work."""
        for path in (self.tsv, self.embeddings, self.labels):
            if path:
                check_input(path)

    def load(self, encoder: EncoderLoader, known: Optional[list[str]] = None,
             progress: bool = False) -> tuple[Labelled, ModelId]:
        """The embedded examples and the model that embedded them."""
        if self.embeddings:
            vectors = open_embeddings(self.embeddings)
            return (Labelled(vectors, read_labels(self.labels, len(vectors)), self.embeddings),
                    ModelId.of_embeddings(self.embeddings))
        labels, texts = read_tsv(self.tsv, known)
        return (Labelled(embed(encoder(), texts, self.lang, progress), labels, self.tsv),
                ModelId.of(encoder().files))


def train_files(train: LabelledFile, output: str, encoder: EncoderLoader,
                dev: Optional[LabelledFile] = None, options: TrainOptions = TrainOptions(),
                progress: bool = False) -> Classifier:
    """Train on `train` (early stopping on `dev`, else on a held-out part of train) and save
    the classifier directory `output`."""
    for data in (train, dev):
        if data:
            data.check()
    check_output_dir(Path(output))
    examples, model = train.load(encoder, progress=progress)
    dev_set = None
    if dev:
        dev_set, dev_model = dev.load(encoder, sorted(set(examples.labels)), progress)
        check_same_space(model.origin(examples.source), dev_model.origin(dev_set.source))
    classifier = Classifier.train(examples, model, dev_set, options, progress)
    classifier.save(output)
    return classifier


@dataclass(frozen=True)
class SentenceFile:
    """Sentences to classify: a text file in `lang`, or their precomputed `embeddings`."""

    text: Optional[str] = None
    lang: Optional[str] = None
    embeddings: Optional[str] = None

    def __post_init__(self) -> None:
        if bool(self.text) == bool(self.embeddings):
            raise LaserError("give either a text file or --embeddings")
        if self.text and not self.lang:
            raise LaserError(f"{self.text}: pass --lang, the language of its sentences")

    def model(self, encoder: EncoderLoader) -> ModelId:
        if self.embeddings:
            return ModelId.of_embeddings(self.embeddings)
        return ModelId.of(encoder().files)

    def vector_chunks(self, encoder: EncoderLoader, progress: bool) -> Iterator[np.ndarray]:
        """The embeddings, in chunks of rows, streamed (a progress bar on stderr when asked)."""
        if self.embeddings:
            vectors = open_embeddings(self.embeddings)
            with _bar(len(vectors), progress) as bar:
                for start in range(0, len(vectors), CHUNK):
                    bar.update(len(vectors[start:start + CHUNK]))
                    yield vectors[start:start + CHUNK]
            return
        with _bar(count_lines(self.text) if progress else None, progress) as bar:
            for chunk in batched(read_lines(self.text), CHUNK):
                yield encoder().encode(chunk, self.lang)
                bar.update(len(chunk))


def _bar(total: Optional[int], show: bool) -> tqdm:
    return tqdm(total=total, unit="sent", disable=None if show else True, leave=False,
                dynamic_ncols=True)


def predict_file(classifier: Classifier, sentences: SentenceFile, output: str,
                 encoder: EncoderLoader, progress: bool = False) -> int:
    """Write the predicted label of every input line (or embedding row), one per line, to
    `output` ('-': stdout); returns the count."""
    check_input(sentences.text or sentences.embeddings)
    check_output_path(output)
    classifier.check_model(sentences.model(encoder), sentences.text or sentences.embeddings)
    rows = 0
    with atomic_text_output(output) as out:
        for vectors in sentences.vector_chunks(encoder, progress):
            out.writelines(label + "\n" for label in classifier.predict(vectors))
            rows += len(vectors)
    return rows


def evaluate_file(classifier: Classifier, test: LabelledFile, encoder: EncoderLoader,
                  progress: bool = False) -> Evaluation:
    """Accuracy, macro-F1 and confusion matrix on labelled examples of any language."""
    test.check()
    if test.tsv:
        classifier.check_model(ModelId.of(encoder().files), test.tsv)
    examples, model = test.load(encoder, classifier.labels, progress)
    classifier.check_model(model, examples.source)
    return classifier.evaluate(examples)
