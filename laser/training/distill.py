"""Multilingual knowledge distillation (Reimers & Gurevych 2020; LASER3): the student's embedding
of an English sentence and of its translation both regress to the teacher's embedding of the
English sentence, beside the translation-ranking loss.

The teacher runs once per distinct English training sentence (cached in `WORK/teacher/`, see
`teachers.py`); each training pair carries its English sentence's cache row. A linear projection
head maps the student's output to the teacher's width during training only: it is saved in the
resumable checkpoint, never in the exported model. A new run starts the head at the
least-squares fit of the starting student (`Distiller.fit_head`), not at random: a run that
starts from a trained model (`--init`) would otherwise spend its first steps pulling that model
towards a random projection of the teacher."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .corpus import PairFile, read_pairs
from .teachers import Teacher, build_cache, teacher_blocks

TEACHER_DIR = "teacher"


def english_sentences(pair_files: Sequence[PairFile]) -> list[str]:
    """The distinct English sides of the raw pair files, in code-point order: a deterministic
    list, independent of file order, whose index is the cache row."""
    distinct: set[str] = set()
    for pair_file in pair_files:
        distinct.update(english for _, english in read_pairs(pair_file.path))
    return sorted(distinct)


def sentence_rows(pair_files: Sequence[PairFile], sentences: Sequence[str]) -> dict[str, np.ndarray]:
    """Per language, the cache row of each pair's English side, in file (= token-id) order."""
    row_of = {sentence: row for row, sentence in enumerate(sentences)}
    return {pf.lang: np.fromiter((row_of[english] for _, english in read_pairs(pf.path)),
                                 dtype=np.int64) for pf in pair_files}


class TeacherTargets:
    """Training targets from the cache: each part of the teacher's output (`blocks`) centred by
    its mean over the whole cache and L2-normalised, the parts side by side scaled by
    1/sqrt(parts) so that every target has unit norm."""

    def __init__(self, cache: np.ndarray, blocks: Sequence[int] | None = None,
                 chunk: int = 65536):
        self.cache = cache
        self.blocks = tuple(blocks or (cache.shape[1],))
        self.mean = _column_mean(cache, chunk)

    @property
    def dim(self) -> int:
        return self.cache.shape[1]

    def __call__(self, rows: np.ndarray) -> torch.Tensor:
        order = np.argsort(rows)  # memory-map reads in file order
        raw = np.empty((len(rows), self.dim), dtype=np.float32)
        raw[order] = self.cache[np.asarray(rows)[order]]
        return self.of(raw)

    def of(self, raw: np.ndarray) -> torch.Tensor:
        """The targets of these teacher outputs (one row each), centred by the cache's mean."""
        centred = torch.from_numpy(np.asarray(raw, dtype=np.float32) - self.mean)
        parts = torch.split(centred, list(self.blocks), dim=1)
        scale = len(parts) ** -0.5
        return torch.cat([F.normalize(part, dim=1) * scale for part in parts], dim=1)


def _column_mean(cache: np.ndarray, chunk: int) -> np.ndarray:
    total = np.zeros(cache.shape[1], dtype=np.float64)
    for start in range(0, len(cache), chunk):
        total += cache[start:start + chunk].astype(np.float64).sum(0)
    return (total / max(1, len(cache))).astype(np.float32)


def distillation_loss(predicted: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean cosine distance 1 - cos(predicted, target): for unit-norm targets this is half the
    squared error of the normalised prediction, scale-free like the cosine that xsim and mining
    use, and of the same order as the ranking loss whatever the teacher's width."""
    return (1 - F.cosine_similarity(predicted, target, dim=1)).mean()


class Distiller(nn.Module):
    """The projection head (identity when the widths agree) and the weighted distillation loss
    of a batch whose embeddings are its B foreign sentences, then its B English ones."""

    def __init__(self, student_dim: int, targets: TeacherTargets, weight: float):
        super().__init__()
        self.targets, self.weight = targets, weight
        self.head = (nn.Identity() if student_dim == targets.dim
                     else nn.Linear(student_dim, targets.dim))

    def forward(self, embeddings: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
        return self.weight * distillation_loss(self.head(embeddings), self._both(rows, embeddings))

    def _both(self, rows: np.ndarray, embeddings: torch.Tensor) -> torch.Tensor:
        """Foreign i and English i share English i's target."""
        target = self.targets(rows).to(embeddings.device)
        return torch.cat([target, target])

    @torch.no_grad()
    def fit_head(self, embeddings: torch.Tensor, rows: np.ndarray) -> HeadFit:
        """Set a linear head to the ridge least-squares map from these embeddings (B foreign,
        then B English) to their targets; an identity head is left as it is."""
        targets = self._both(rows, embeddings)
        before = self._cosine(embeddings, targets)
        if isinstance(self.head, nn.Linear):
            weight, bias = least_squares(embeddings, targets)
            self.head.weight.copy_(weight)
            self.head.bias.copy_(bias)
        return HeadFit(len(embeddings), before, self._cosine(embeddings, targets))

    def _cosine(self, embeddings: torch.Tensor, targets: torch.Tensor) -> float:
        return F.cosine_similarity(self.head(embeddings), targets, dim=1).mean().item()


@dataclass(frozen=True)
class HeadFit:
    """How well the projection head mapped the sample to its targets before and after the fit
    (mean cosine)."""

    sentences: int
    cosine_before: float
    cosine_after: float


def least_squares(features: torch.Tensor, targets: torch.Tensor, ridge: float = 1e-3
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(weight, bias) minimising |features @ weight.T + bias - targets|^2 plus a ridge penalty
    of `ridge` times the mean feature energy, solved in float64."""
    x = torch.cat([features.double(), torch.ones(len(features), 1, dtype=torch.float64,
                                                      device=features.device)], dim=1)
    gram = x.T @ x
    penalty = ridge * gram.diagonal()[:-1].mean() * torch.eye(len(gram), dtype=torch.float64,
                                                                    device=gram.device)
    penalty[-1, -1] = 0  # the bias is not penalised
    solution = torch.linalg.solve(gram + penalty, x.T @ targets.double())
    return solution[:-1].T.float(), solution[-1].float()


@dataclass(frozen=True)
class Distillation:
    """What `prepare_distillation` hands the trainer: targets and every pair's cache row."""

    targets: TeacherTargets
    rows: dict[str, np.ndarray]


def prepare_distillation(teacher: Teacher, pair_files: Sequence[PairFile], work: Path,
                         progress: bool = True) -> Distillation:
    """Build (or reuse) the teacher cache of the raw pair files' English sentences in
    WORK/teacher/ and map every pair to its row."""
    sentences = english_sentences(pair_files)
    cache = build_cache(teacher, sentences, work / TEACHER_DIR, progress=progress)
    return Distillation(TeacherTargets(cache, teacher_blocks(teacher)),
                        sentence_rows(pair_files, sentences))
