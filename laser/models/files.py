"""Which files make up a model, and which preprocessing family do they imply?

* LASER1: one `*.pt` checkpoint, its `*.fcodes` BPE codes and (optionally) `*.fvocab`;
  preprocessing is the Moses tokeniser followed by fastBPE.
* LASER2: one `*.pt` checkpoint, one `*.spm` SentencePiece model and (optionally) its `*.cvocab`;
  preprocessing is the official `SPMApply`: Moses normalisation, lower-casing, SentencePiece.
* LASER3: the files of LASER2 (the `*.cvocab` is then required), with a fairseq transformer
  checkpoint; the files alone do not tell LASER2 from LASER3, the checkpoint does
  (`laser.runtime.network`).
"""
from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import LaserError

LASER1, LASER2 = "laser1", "laser2"


@dataclass(frozen=True)
class ModelFiles:
    """`codes`/`vocab` are the fastBPE files (LASER1), `spm`/`spm_vocab` the SentencePiece ones."""

    encoder: Path
    codes: Optional[Path]
    vocab: Optional[Path]
    spm: Optional[Path] = None
    spm_vocab: Optional[Path] = None

    def __post_init__(self) -> None:
        if (self.codes is None) == (self.spm is None):
            raise LaserError(f"{self.encoder}: a model needs exactly one of BPE codes (*.fcodes) "
                             "or a SentencePiece model (*.spm)")

    @property
    def name(self) -> str:
        """The model's versioned name: its checkpoint's file name without `.pt` (the shipped
        model's is `laser-default-v2`), recorded beside what it made."""
        return self.encoder.stem

    @property
    def family(self) -> str:
        """The preprocessing family: `laser1` (Moses + fastBPE) or `laser2` (SPMApply +
        SentencePiece, also LASER3's)."""
        return LASER2 if self.spm is not None else LASER1

    @classmethod
    def from_dir(cls, directory: str | os.PathLike) -> "ModelFiles":
        directory = Path(directory)
        if not directory.is_dir():
            raise LaserError(f"{directory}: model directory not found")
        encoder = _single(directory, "*.pt")
        codes = _single(directory, "*.fcodes", required=False)
        spm = _single(directory, "*.spm", required=False)
        if codes and spm:
            raise LaserError(f"{directory}: both *.fcodes and *.spm files; a model directory "
                             "holds one model")
        if spm:
            return cls(encoder, None, None, spm, _single(directory, "*.cvocab", required=False))
        if codes is None:
            raise LaserError(f"{directory}: no *.fcodes (LASER1) or *.spm (LASER2) file in the "
                             "model directory")
        return cls(encoder, codes, _single(directory, "*.fvocab", required=False))

    def roles(self) -> dict[str, Path]:
        """Each file used, by its role: encoder, codes, vocab, spm, spm_vocab."""
        roles = {"encoder": self.encoder, "codes": self.codes, "vocab": self.vocab,
                 "spm": self.spm, "spm_vocab": self.spm_vocab}
        return {role: path for role, path in roles.items() if path is not None}

    def describe(self) -> dict[str, str]:
        """The absolute path of each file used, by role, for provenance records."""
        return {role: str(path.resolve()) for role, path in self.roles().items()}

    def file_sha256(self) -> dict[str, str]:
        """The sha256 of each file used, by role, for provenance records."""
        return {role: sha256_of(path) for role, path in self.roles().items()}

    def sha256(self) -> str:
        """The encoder checkpoint's sha256: what identifies the model in provenance records."""
        return sha256_of(self.encoder)


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file, read in blocks; computed once per file version (path, size and
    modification time), since loading a model, its int8 graph cache and the sidecar all ask."""
    status = os.stat(path)
    return _file_sha256(os.path.realpath(path), status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
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
