"""Classification scores from a confusion matrix: accuracy, macro-F1 and a printable table."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Evaluation:
    """`confusion[i, j]` counts examples of true label `labels[i]` predicted as `labels[j]`."""

    labels: list[str]
    confusion: np.ndarray

    @classmethod
    def of(cls, labels: Sequence[str], gold: Sequence[int], predicted: Sequence[int]) -> Evaluation:
        """Count gold/predicted label indices into a confusion matrix."""
        confusion = np.zeros((len(labels), len(labels)), dtype=np.int64)
        np.add.at(confusion, (np.asarray(gold, dtype=np.int64),
                              np.asarray(predicted, dtype=np.int64)), 1)
        return cls(list(labels), confusion)

    def __add__(self, other: Evaluation) -> Evaluation:
        if self.labels != other.labels:
            raise ValueError("evaluations over different label sets")
        return Evaluation(self.labels, self.confusion + other.confusion)

    @property
    def examples(self) -> int:
        return int(self.confusion.sum())

    @property
    def correct(self) -> int:
        return int(np.trace(self.confusion))

    @property
    def accuracy(self) -> float:
        return self.correct / self.examples if self.examples else float("nan")

    def f1_scores(self) -> np.ndarray:
        """Per-label F1: 2 TP / (2 TP + FP + FN); NaN for a label neither present nor predicted."""
        true_positives = np.diag(self.confusion).astype(np.float64)
        denominator = self.confusion.sum(axis=0) + self.confusion.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, 2 * true_positives / denominator, np.nan)

    @property
    def macro_f1(self) -> float:
        """Mean F1 over the labels that occur in the gold labels or the predictions."""
        scores = self.f1_scores()
        present = scores[~np.isnan(scores)]
        return float(present.mean()) if len(present) else float("nan")

    def as_dict(self) -> dict:
        return {"examples": self.examples, "accuracy": self.accuracy, "macro_f1": self.macro_f1,
                "labels": self.labels, "confusion": self.confusion.tolist()}

    def report(self) -> str:
        """Accuracy, macro-F1 and the confusion matrix (rows: true label, columns: predicted)."""
        width = max(len(str(self.confusion.max())), 3) + 1
        names = [f"{index}={label}" for index, label in enumerate(self.labels)]
        lines = [f"examples  {self.examples}",
                 f"accuracy  {100 * self.accuracy:.2f}% ({self.correct}/{self.examples})",
                 f"macro-F1  {100 * self.macro_f1:.2f}%",
                 f"confusion (rows: true label, columns: predicted; labels {', '.join(names)})",
                 " " * 3 + "".join(f"{index:>{width}}" for index in range(len(self.labels)))]
        for index, row in enumerate(self.confusion):
            lines.append(f"{index:>3}" + "".join(f"{count:>{width}}" for count in row))
        return "\n".join(lines)
