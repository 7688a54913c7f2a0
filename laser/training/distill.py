"""Multilingual knowledge distillation (Reimers & Gurevych 2020; LASER3): the student's embedding
of an English sentence and of its translation both regress to the teacher's embedding of the
English sentence, beside the translation-ranking loss.

The teacher runs once per distinct English training sentence (cached in `WORK/teacher/`, see
`teachers.py`); each training pair carries its English sentence's cache row. A linear projection
head maps the student's output to the teacher's width during training only: it is saved in the
resumable checkpoint, never in the exported model."""
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
        centred = torch.from_numpy(raw - self.mean)
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
        target = self.targets(rows).to(embeddings.device)
        both = torch.cat([target, target])  # foreign i and English i share English i's target
        return self.weight * distillation_loss(self.head(embeddings), both)


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
