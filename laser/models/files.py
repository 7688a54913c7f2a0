"""Where a model's three files are: a directory holding one `*.pt`, `*.fcodes` and `*.fvocab`,
a model name (`default`, or one downloaded with `laser download`), or explicit paths."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import LaserError

MODEL_ENV = "LASER_MODEL"
# The default model ships in the repository's models/ folder, beside the package.
SHIPPED_MODEL_DIR = Path(__file__).resolve().parents[2] / "models" / "default"


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


def resolve_model(model: Optional[str] = None, encoder: Optional[str] = None,
                  codes: Optional[str] = None, vocab: Optional[str] = None) -> ModelFiles:
    """Explicit paths win; then --model (a directory or a name), $LASER_MODEL, shipped default."""
    if encoder or codes:
        if not (encoder and codes):
            raise LaserError("pass both --encoder and --bpe-codes (and usually --bpe-vocab)")
        for path in (encoder, codes, vocab):
            if path and not Path(path).is_file():
                raise LaserError(f"{path}: file not found")
        return ModelFiles(Path(encoder), Path(codes), Path(vocab) if vocab else None)
    model = model or default_model_dir()
    if not model:
        raise LaserError(f"no model given: pass --model DIR or NAME (or set ${MODEL_ENV})")
    return ModelFiles.from_dir(model_directory(model))


def model_directory(model: str | os.PathLike) -> Path:
    """An existing directory as it is; otherwise a model name: `default` or a downloaded one."""
    path = Path(model)
    if path.is_dir() or os.sep in str(model) or (os.altsep and os.altsep in str(model)):
        return path
    from .registry import resolve_name
    return resolve_name(str(model))


def default_model_dir() -> Optional[str]:
    """$LASER_MODEL, else the shipped default model when this installation has one."""
    if os.environ.get(MODEL_ENV):
        return os.environ[MODEL_ENV]
    return str(SHIPPED_MODEL_DIR) if SHIPPED_MODEL_DIR.is_dir() else None
