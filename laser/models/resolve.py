"""Which model embeds each side of a command? `choose_models` takes the command's model options
and its sides, and applies every rule in one place (docs/models.md, "How a model is chosen"):

1. an unknown language is refused, whatever the model;
2. a side whose vectors exist already (an embeddings file, an index, a classifier) gets no
   model: its space is the one the other sides must meet;
3. a side that names its model gets it: the explicit files (--encoder...), else its own
   --src-model/--trg-model, else --model, else $LASER_MODEL;
4. any other side gets its language's official model when it is downloaded, else the shipped
   default, with a one-line note naming the download that would give the official model;
5. against a space (rule 2's vectors, else a named model's), a side of rule 4 whose model lies
   in another space gets an installed model of that space instead, without a note: the official
   model the space is named after (laser2), else the shipped default;
6. sides of rule 4 alone, whose languages chose models of two spaces: the shipped default on
   every side, with one note;
7. models of two spaces are refused, naming both (`check_same_space`).

A side of language `auto` (each line's language identified, laser.lid) has no one language:
rule 4 gives it the shipped default.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

from ..errors import LaserError
from ..text.languages import AUTO, resolve
from .files import ModelFiles
from .installed import (downloaded_model_dir, installed_model_files, model_directory,
                        named_model_dir)
from .languages import AmbiguousLanguage, official_language
from .options import ModelOptions
from .registry import DEFAULT, find_model
from .spaces import Origin, check_same_space, model_identity

MODEL_ENV = "LASER_MODEL"


@dataclass(frozen=True)
class ModelRequest:
    """One side of a command: the model named for it alone (--src-model), its language, and
    the `origin` of the vectors it has already (then it needs no model); `source` names the
    side in messages (its file)."""

    model: Optional[str] = None
    lang: Optional[str] = None
    source: str = "the sentences"
    origin: Optional[Origin] = None


@dataclass(frozen=True)
class ModelChoice:
    """The model chosen for one side: its files, its name and embedding space (its identity),
    and the note to show once on stderr (what to download for the language's official model),
    if any."""

    files: ModelFiles
    name: str
    space: str
    note: Optional[str] = None

    def origin(self, source: str) -> Origin:
        """The origin of the vectors this model makes of `source`."""
        return Origin(source, self.name, self.space, self.files.sha256())

    @classmethod
    def of(cls, files: ModelFiles, note: Optional[str] = None) -> ModelChoice:
        identity = model_identity(files)
        return cls(files, identity.name, identity.space, note)


def choose_models(options: ModelOptions,
                  sides: Sequence[ModelRequest]) -> list[Optional[ModelChoice]]:
    """The model of each side (None for a side whose vectors exist), by the rules of the module
    docstring, in their order."""
    for side in sides:
        if side.lang and side.lang != AUTO:
            resolve(side.lang)
    named = [named_choice(options, side) if side.origin is None else None for side in sides]
    # The space to meet (rule 5): the first that vectors which exist record, else the first
    # named model's; None when nothing sets one.
    spaces = [side.origin.space for side in sides if side.origin is not None]
    space = next(filter(None, spaces + [choice.space for choice in named if choice]), None)
    choices = [choice or (language_choice(side, space) if side.origin is None else None)
               for side, choice in zip(sides, named)]
    if space is None and not any(named):
        choices = one_space_by_language(sides, choices)
    refuse_two_spaces(sides, choices)
    return choices


def named_choice(options: ModelOptions, side: ModelRequest) -> Optional[ModelChoice]:
    """Rule 3: the model the options or the side name, else None."""
    if options.names_files:
        return ModelChoice.of(explicit_files(options))
    named = side.model or options.model or os.environ.get(MODEL_ENV)
    return ModelChoice.of(ModelFiles.from_dir(model_directory(named))) if named else None


def language_choice(side: ModelRequest, space: Optional[str]) -> ModelChoice:
    """Rules 4 and 5: the language's official model when downloaded, else the shipped default
    with a note; against `space`, an installed model of it when the choice lies elsewhere."""
    official, note = (installed_official_model(side.lang) if side.lang and side.lang != AUTO
                      else (None, None))
    files = ModelFiles.from_dir(named_model_dir(official or DEFAULT))
    choice = ModelChoice.of(files, None if official else note)
    if space is None:
        return choice
    if choice.space == space:
        return replace(choice, note=None)  # another download would not fit
    for name in (space, DEFAULT):
        files = installed_model_files(name)
        if files is not None and model_identity(files).space == space:
            return ModelChoice.of(files)
    return choice  # refused by rule 7, or where its vectors meet the others'


def one_space_by_language(sides: Sequence[ModelRequest],
                          choices: list[Optional[ModelChoice]]) -> list[Optional[ModelChoice]]:
    """Rule 6: the choices as they are when they share a space; else the shipped default on
    every side, the note on the first saying why and what to download."""
    chosen = [(side, choice) for side, choice in zip(sides, choices) if choice is not None]
    if len({choice.space for _, choice in chosen}) < 2:
        return choices
    models = " and ".join(f"{choice.name} ({side.lang})" for side, choice in chosen)
    note = f"using the shipped default model on both sides, since {models} are not in one " \
           "embedding space"
    for _, choice in chosen:
        if choice.note:
            note += "; " + choice.note.split("; ", 1)[-1]
    default = ModelChoice.of(ModelFiles.from_dir(named_model_dir(DEFAULT)))
    first = replace(default, note=note)
    return [None if choice is None else first if index == 0 else default
            for index, choice in enumerate(choices)]


def refuse_two_spaces(sides: Sequence[ModelRequest],
                      choices: Sequence[Optional[ModelChoice]]) -> None:
    """Rule 7: the known origins of all sides (vectors that exist, models chosen) in one space."""
    if len(sides) < 2:
        return
    known = []
    for side, choice in zip(sides, choices):
        origin = side.origin if choice is None else choice.origin(side.source)
        if origin.known:
            known.append(origin)
    for origin in known[1:]:
        check_same_space(known[0], origin)


def choose_model(request: ModelRequest, options: ModelOptions = ModelOptions()) -> ModelChoice:
    """The model of one side (`choose_models`)."""
    return choose_models(options, [request])[0]


def resolve_model(model: Optional[str] = None) -> ModelFiles:
    """The files of `model` (a directory or a name), else of $LASER_MODEL, else of the
    shipped default."""
    return choose_model(ModelRequest(), ModelOptions(model=model)).files


def explicit_files(options: ModelOptions) -> ModelFiles:
    """The files named one by one: --encoder with --bpe-codes (LASER1) or --spm-model."""
    if not options.encoder or bool(options.bpe_codes) == bool(options.spm_model):
        raise LaserError("pass --encoder with either --bpe-codes (LASER1, and usually "
                         "--bpe-vocab) or --spm-model (LASER2/LASER3)")
    if (options.bpe_vocab and not options.bpe_codes) or \
            (options.spm_vocab and not options.spm_model):
        raise LaserError("--bpe-vocab goes with --bpe-codes, --spm-vocab with --spm-model")
    for path in (options.encoder, options.bpe_codes, options.bpe_vocab, options.spm_model,
                 options.spm_vocab):
        if path and not Path(path).is_file():
            raise LaserError(f"{path}: file not found")
    if options.bpe_codes:
        return ModelFiles(Path(options.encoder), Path(options.bpe_codes),
                          Path(options.bpe_vocab) if options.bpe_vocab else None)
    return ModelFiles(Path(options.encoder), None, None, Path(options.spm_model),
                      spm_vocabulary(Path(options.spm_model), options.spm_vocab))


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
