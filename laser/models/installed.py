"""Which models does this installation have, and where? The shipped default, the downloaded
official models ($LASER_HOME) and model directories, found by name or path (and the API's
download on demand)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from ..errors import LaserError
from .files import ModelFiles
from .languages import official_model
from .registry import (DEFAULT, ModelSpec, ModelStatus, find_model, load_manifest, missing_files,
                       model_path, shipped_model_dir)
from .spaces import model_identity


def model_directory(model: str | os.PathLike) -> Path:
    """An existing directory as it is; otherwise a model name: `default` or a downloaded one."""
    path = Path(model)
    if path.is_dir() or os.sep in str(model) or (os.altsep and os.altsep in str(model)):
        return path
    return named_model_dir(str(model))


def named_model_dir(name: str, home: Optional[Path] = None) -> Path:
    """The directory of the model called `name`: `default` or a downloaded model."""
    if name == DEFAULT:
        directory = shipped_model_dir()
        if directory is None:
            raise LaserError("this installation ships no default model: pass --model DIR or the "
                             "name of a downloaded model (see `laser models`)")
        return directory
    spec = find_model(name, "model directory not found, and not a known model name")
    directory = model_path(name, home)
    if not directory.is_dir() or not any(directory.iterdir()):
        raise LaserError(f"{name}: model not downloaded; run `laser download {name}` first")
    if missing_files(spec, directory):
        raise LaserError(f"{name}: download incomplete in {directory}; run `laser download {name}` "
                         "again")
    return directory


def downloaded_model_dir(name: str, home: Optional[Path] = None) -> Optional[Path]:
    """The directory of the manifest model `name` when it is completely downloaded."""
    directory = model_path(name, home)
    if not directory.is_dir() or missing_files(find_model(name), directory):
        return None
    return directory


def installed_model_files(name: str) -> Optional[ModelFiles]:
    """The files of `default` (when shipped) or of a downloaded manifest model; None otherwise."""
    if name == DEFAULT:
        directory = shipped_model_dir()
    else:
        directory = downloaded_model_dir(name) if name in load_manifest().models else None
    return None if directory is None else ModelFiles.from_dir(directory)


def official_model_dir(lang: str, download: bool = True, home: Optional[Path] = None) -> Path:
    """The directory of `lang`'s official model, downloaded now if need be (`fetched_model_dir`)."""
    return fetched_model_dir(official_model(lang), download, home)


def fetched_model_dir(name: str, download: bool = True, home: Optional[Path] = None) -> Path:
    """The directory of the manifest model `name` in `home` ($LASER_HOME by default), downloaded
    now when it is not yet and `download` is set (the API's behaviour, as `laser_encoders`)."""
    if downloaded_model_dir(name, home) is None:
        if not download:
            raise LaserError(f"{name}: model not downloaded; run `laser download {name}` (or load "
                             "it with download=True)")
        from .download import download_model
        download_model(name, home=home)
    return named_model_dir(name, home)


def shipped_status() -> ModelStatus:
    """The default model shipped with the package, if this installation has one."""
    directory = shipped_model_dir()
    if directory is None:
        return ModelStatus(DEFAULT, "shipped", "not shipped", None, None)
    size = sum(path.stat().st_size for path in directory.iterdir() if path.is_file())
    files = ModelFiles.from_dir(directory)
    return ModelStatus(DEFAULT, "shipped", "shipped", size, directory, files.name,
                       model_identity(files).space)


def model_status(spec: ModelSpec, home: Optional[Path] = None) -> ModelStatus:
    """Whether `spec` is downloaded, and its size: on disk when it is, else from the manifest."""
    directory = model_path(spec.name, home)
    if not directory.is_dir() or not any(directory.iterdir()):
        return ModelStatus(spec.name, spec.family, "not downloaded", spec.size, None,
                           space=spec.space)
    if missing_files(spec, directory):
        return ModelStatus(spec.name, spec.family, "partial", spec.size, directory,
                           space=spec.space)
    size = sum((directory / file.name).stat().st_size for file in spec.files)
    return ModelStatus(spec.name, spec.family, "downloaded", size, directory, space=spec.space)


def available_models(home: Optional[Path] = None) -> list[ModelStatus]:
    """The shipped default, then every manifest model with its download status."""
    specs = load_manifest().models.values()
    return [shipped_status()] + [model_status(spec, home) for spec in specs]
