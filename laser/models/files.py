"""A model directory's files: one `*.pt` checkpoint, its `*.fcodes` BPE codes and `*.fvocab`."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import LaserError


@dataclass(frozen=True)
class ModelFiles:
    encoder: Path
    codes: Path
    vocab: Optional[Path]

    @classmethod
    def from_dir(cls, directory: str | os.PathLike) -> "ModelFiles":
        directory = Path(directory)
        if not directory.is_dir():
            raise LaserError(f"{directory}: model directory not found")
        return cls(_single(directory, "*.pt"), _single(directory, "*.fcodes"),
                   _single(directory, "*.fvocab", required=False))

    def sha256(self) -> str:
        digest = hashlib.sha256()
        with open(self.encoder, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


def _single(directory: Path, pattern: str, required: bool = True) -> Optional[Path]:
    found = sorted(directory.glob(pattern))
    if len(found) > 1:
        raise LaserError(f"{directory}: several {pattern} files; pass the paths explicitly")
    if not found:
        if required:
            raise LaserError(f"{directory}: no {pattern} file in the model directory")
        return None
    return found[0]
