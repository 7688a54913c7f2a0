"""The one model resolver: explicit file paths, a model directory, a model name (`default` or a
downloaded official model), $LASER_MODEL, else the shipped default."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from ..errors import LaserError
from .files import ModelFiles
from .registry import DEFAULT, find_model, missing_files, model_path, shipped_model_dir

MODEL_ENV = "LASER_MODEL"


def resolve_model(model: Optional[str] = None, encoder: Optional[str] = None,
                  codes: Optional[str] = None, vocab: Optional[str] = None) -> ModelFiles:
    """Explicit paths win; then `model` (a directory or a name), $LASER_MODEL, shipped default."""
    if encoder or codes:
        if not (encoder and codes):
            raise LaserError("pass both --encoder and --bpe-codes (and usually --bpe-vocab)")
        for path in (encoder, codes, vocab):
            if path and not Path(path).is_file():
                raise LaserError(f"{path}: file not found")
        return ModelFiles(Path(encoder), Path(codes), Path(vocab) if vocab else None)
    return ModelFiles.from_dir(model_directory(model or os.environ.get(MODEL_ENV) or DEFAULT))


def model_directory(model: str | os.PathLike) -> Path:
    """An existing directory as it is; otherwise a model name: `default` or a downloaded one."""
    path = Path(model)
    if path.is_dir() or os.sep in str(model) or (os.altsep and os.altsep in str(model)):
        return path
    return named_model_dir(str(model))


def named_model_dir(name: str) -> Path:
    """The directory of a loadable model called `name`: `default` or a downloaded model."""
    if name == DEFAULT:
        directory = shipped_model_dir()
        if directory is None:
            raise LaserError("this installation ships no default model: pass --model DIR or the "
                             "name of a downloaded model (see `laser models`)")
        return directory
    spec = find_model(name, "model directory not found, and not a known model name")
    if not spec.loadable:
        raise LaserError(f"{name}: {spec.family} models are transformer checkpoints, which this "
                         "version cannot load yet (they can be downloaded, not embedded with)")
    directory = model_path(name)
    if not directory.is_dir() or not any(directory.iterdir()):
        raise LaserError(f"{name}: model not downloaded; run `laser download {name}` first")
    if missing_files(spec, directory):
        raise LaserError(f"{name}: download incomplete in {directory}; run `laser download {name}` "
                         "again")
    return directory
