"""The one model resolver. In order: explicit file paths, a model directory or name (`--model`,
then $LASER_MODEL), the official model of the language when it is already downloaded, else the
shipped default (with a one-line note naming the download that would give the official model)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import LaserError
from .files import ModelFiles
from ..text.languages import AUTO, resolve
from .languages import AmbiguousLanguage, official_language, official_model
from .registry import (DEFAULT, find_model, load_manifest, missing_files, model_path,
                       shipped_model_dir)
from .spaces import model_identity

MODEL_ENV = "LASER_MODEL"


@dataclass(frozen=True)
class ModelRequest:
    """What a user asked for: explicit files, a model directory or name, and the language."""

    model: Optional[str] = None
    encoder: Optional[str] = None
    codes: Optional[str] = None
    vocab: Optional[str] = None
    spm: Optional[str] = None
    spm_vocab: Optional[str] = None
    lang: Optional[str] = None


@dataclass(frozen=True)
class ModelChoice:
    files: ModelFiles
    note: Optional[str] = None  # one line for stderr: the language's official model is missing


def resolve_model(model: Optional[str] = None, encoder: Optional[str] = None,
                  codes: Optional[str] = None, vocab: Optional[str] = None) -> ModelFiles:
    """Explicit paths win; then `model` (a directory or a name), $LASER_MODEL, shipped default."""
    return choose_model(ModelRequest(model, encoder, codes, vocab)).files


def choose_model(request: ModelRequest) -> ModelChoice:
    """The model `request` means, by the precedence in the module docstring; an unknown
    language is refused first, whatever the model. With `auto` (each line's language
    identified) no language chooses: the named model, else the shipped default."""
    if request.lang and request.lang != AUTO:
        resolve(request.lang)
    if request.encoder or request.codes or request.spm:
        return ModelChoice(explicit_files(request))
    named = request.model or os.environ.get(MODEL_ENV)
    if named:
        return ModelChoice(ModelFiles.from_dir(model_directory(named)))
    note = None
    if request.lang and request.lang != AUTO:
        official, note = installed_official_model(request.lang)
        if official is not None:
            return ModelChoice(ModelFiles.from_dir(named_model_dir(official)))
    return ModelChoice(ModelFiles.from_dir(named_model_dir(DEFAULT)), note)


def names_a_model(request: ModelRequest) -> bool:
    """Whether `request` (or $LASER_MODEL) names a model, rather than leaving it to the language."""
    return bool(request.encoder or request.codes or request.spm or request.model
                or os.environ.get(MODEL_ENV))


def choose_model_in_space(request: ModelRequest, space: Optional[str]) -> ModelChoice:
    """The model of `request` for text whose vectors will meet vectors of `space` (an index, an
    embeddings file, a classifier, the other side): `choose_model`, unless nothing names a model
    and the language's choice lies in another space; then an installed model of `space` (the
    official model the space is named after, e.g. laser2, else the shipped default) when there is
    one. Otherwise the language's choice stands, and the space check refuses it."""
    choice = choose_model(request)
    if space is None or names_a_model(request):
        return choice
    if model_identity(choice.files).space == space:
        return ModelChoice(choice.files)  # no note: another download would not fit the space
    for name in (space, DEFAULT):
        files = installed_model_files(name)
        if files is not None and model_identity(files).space == space:
            return ModelChoice(files)
    return choice


def installed_model_files(name: str) -> Optional[ModelFiles]:
    """The files of `default` (when shipped) or of a downloaded manifest model; None otherwise."""
    if name == DEFAULT:
        directory = shipped_model_dir()
    else:
        directory = downloaded_model_dir(name) if name in load_manifest().models else None
    return None if directory is None else ModelFiles.from_dir(directory)


def choose_side_models(src: ModelRequest, trg: ModelRequest) -> tuple[ModelChoice, ModelChoice]:
    """The models of the two sides of a bitext, each chosen as `choose_model` does (its language
    picks its official model when downloaded: LASER3 Igbo and LASER2 English). When a side names
    its model, the other side is chosen in that model's space (`choose_model_in_space`); when the
    languages alone chose models of two spaces (an official model is missing), the shipped
    default embeds both sides, with a note naming what to download."""
    if names_a_model(src) and not names_a_model(trg):
        first = choose_model(src)
        return first, choose_model_in_space(trg, model_identity(first.files).space)
    if names_a_model(trg) and not names_a_model(src):
        second = choose_model(trg)
        return choose_model_in_space(src, model_identity(second.files).space), second
    first, second = choose_model(src), choose_model(trg)
    one, other = model_identity(first.files), model_identity(second.files)
    if names_a_model(src) or one.space == other.space:
        return first, second
    note = (f"using the shipped default model on both sides, since {one.name} ({src.lang}) and "
            f"{other.name} ({trg.lang}) are not in one embedding space")
    for missing in filter(None, (first.note, second.note)):
        note += "; " + missing.split("; ", 1)[-1]
    default = ModelChoice(ModelFiles.from_dir(named_model_dir(DEFAULT)))
    return ModelChoice(default.files, note), default


def explicit_files(request: ModelRequest) -> ModelFiles:
    """The files named one by one: --encoder with --bpe-codes (LASER1) or --spm-model."""
    if not request.encoder or bool(request.codes) == bool(request.spm):
        raise LaserError("pass --encoder with either --bpe-codes (LASER1, and usually "
                         "--bpe-vocab) or --spm-model (LASER2/LASER3)")
    if (request.vocab and not request.codes) or (request.spm_vocab and not request.spm):
        raise LaserError("--bpe-vocab goes with --bpe-codes, --spm-vocab with --spm-model")
    for path in (request.encoder, request.codes, request.vocab, request.spm, request.spm_vocab):
        if path and not Path(path).is_file():
            raise LaserError(f"{path}: file not found")
    if request.codes:
        return ModelFiles(Path(request.encoder), Path(request.codes),
                          Path(request.vocab) if request.vocab else None)
    return ModelFiles(Path(request.encoder), None, None, Path(request.spm),
                      spm_vocabulary(Path(request.spm), request.spm_vocab))


def spm_vocabulary(spm: Path, given: Optional[str]) -> Optional[Path]:
    """The given *.cvocab, else the one beside the SentencePiece model (as the official
    `load_model` derives it), else none."""
    if given:
        return Path(given)
    beside = spm.with_suffix(".cvocab")
    return beside if beside.is_file() else None


def installed_official_model(lang: str) -> tuple[Optional[str], Optional[str]]:
    """The name of `lang`'s official model when it is downloaded; otherwise a note saying what
    to download (none when `lang` has no official model)."""
    try:
        code, name = official_language(lang)
    except AmbiguousLanguage as error:
        return None, f"using the shipped default model; {error}"
    except LaserError:
        return None, None
    if downloaded_model_dir(name) is not None:
        return name, None
    spec = find_model(name)
    return None, (f"using the shipped default model; for the official {spec.family} encoder of "
                  f"{code} run: laser download {name}")


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


def downloaded_model_dir(name: str, home: Optional[Path] = None) -> Optional[Path]:
    """The directory of the manifest model `name` when it is completely downloaded."""
    directory = model_path(name, home)
    if not directory.is_dir() or missing_files(find_model(name), directory):
        return None
    return directory


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
