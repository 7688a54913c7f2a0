"""How closely a distilled run's student follows its teacher on any sentences: per sentence, the
cosine between the teacher's target (centred and normalised as in training) and the student's
embedding mapped through the run's projection head, both taken from the run's checkpoint.

On the run's own training sentences this is one minus the distillation loss of their English side
without dropout; on unseen text of another kind it shows how far the student generalises its
teacher (docs/experiments/training-log.md, "How closely the student follows its teacher")."""
from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import LaserError
from ..runtime.bilstm import BiLSTMEncoder
from ..encoder import Encoder
from ..models.files import ModelFiles
from ..subwords.fastbpe import read_vocab
from .config import TrainConfig
from .distill import TEACHER_DIR, Distiller, TeacherTargets
from .prepare import make_dictionary
from .run import work_bpe_files
from .teachers import Teacher, cache_paths, make_teacher, teacher_blocks
from .trainer import CHECKPOINT_FILE, encoder_params, export_model


def run_state(work: Path) -> dict:
    """The checkpoint of a distilled `laser train` run in `work`."""
    path = Path(work) / CHECKPOINT_FILE
    if not path.exists():
        raise LaserError(f"{work}: no {CHECKPOINT_FILE}; expected the --work-dir of a "
                         "`laser train` run")
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not state["config"].get("teacher"):
        raise LaserError(f"{path}: this run was not distilled (no --teacher)")
    return state


class TeacherFit:
    """The student and head of a distilled run's checkpoint, and its teacher, to compare them on
    any sentences."""

    def __init__(self, work: Path, teacher: Optional[Teacher] = None, threads: int = 1):
        """`teacher`: an instance of the run's teacher; by default the one its spec names,
        built with `threads` threads."""
        work = Path(work)
        state = run_state(work)
        config = TrainConfig.from_dict(state["config"])
        self.teacher = teacher or make_teacher(config.teacher, threads)
        if self.teacher.name != config.teacher:
            raise LaserError(f"{work}: the run distilled from {config.teacher}, "
                             f"not {self.teacher.name}")
        self.targets = TeacherTargets(_cache(work, self.teacher), teacher_blocks(self.teacher))
        model = BiLSTMEncoder(encoder_params(config))
        model.load_state_dict(state["model"])
        self.distiller = Distiller(model.output_dim, self.targets, config.distill_weight)
        self.distiller.load_state_dict(state["head"])
        self._scratch = TemporaryDirectory()
        self.student = _for_inference(model, work, Path(self._scratch.name))

    def cosines(self, sentences: Sequence[str], lang: str) -> np.ndarray:
        """Per sentence (in language `lang`), the cosine between the teacher's target and the
        student's embedding through the head."""
        embeddings = torch.from_numpy(self.student.encode(list(sentences), lang))
        wanted = self.targets.of(self.teacher.encode(list(sentences)))
        with torch.no_grad():
            return F.cosine_similarity(self.distiller.head(embeddings), wanted, dim=1).numpy()


def _cache(work: Path, teacher: Teacher) -> np.ndarray:
    """The run's teacher cache: its column mean centres the targets as in training."""
    array_path, _ = cache_paths(teacher.name, work / TEACHER_DIR)
    if not array_path.exists():
        raise LaserError(f"{array_path}: the run's teacher cache is missing")
    return np.load(array_path, mmap_mode="r")


def _for_inference(model: BiLSTMEncoder, work: Path, directory: Path) -> Encoder:
    """The student exported in float32 to `directory` with the run's BPE, and loaded for
    inference (each language's own preprocessing)."""
    codes, vocab = work_bpe_files(work)
    export_model(model, make_dictionary(read_vocab(vocab)), codes, vocab, directory, "student",
                 fp16=False)
    return Encoder(ModelFiles.from_dir(directory))
