"""Which vectors may meet in one similarity? Embedding spaces.

Two sets of vectors can be compared only when their models map sentences into one space: LASER2
and every LASER3 encoder share the space `laser2` (the LASER3 encoders were distilled into it),
LASER1's 93-language encoder has its own, and so has every other model unless it declares one.

Where a model's space comes from, in order:
* `model.json` beside its checkpoint: `{"name": "...", "space": "..."}` (`laser train --teacher`
  writes it when distilling into a downloaded official teacher's space);
* the manifest (laser/data/models.json) for an official model in its download folder;
* else its own space, named after its checkpoint's sha256 (and the model after its checkpoint
  file, the versioned name: `laser-default-v2`).

The shipped default model declares its own versioned space (`laser-default-v2`) in its
`model.json`, so a later default is a new space and its vectors never meet this one's.

Vectors carry their origin in their sidecars (`model_name`, `model_space`, `model_sha256`), and
`check_same_space` is the one check every place where vectors of two origins meet calls.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import LaserError
from .files import ModelFiles
from .registry import RECORD, load_manifest

DECLARATION = "model.json"
OWN_SPACE_PREFIX = "sha256:"


class SpaceMismatch(LaserError):
    """Vectors of two different embedding spaces were about to be compared."""


@dataclass(frozen=True)
class Origin:
    """Where some vectors come from: `source` names them in messages (a file, an index, "the
    queries"); `model` names their model, `space` its space, `sha256` its checkpoint. All three
    None: nothing is known (embeddings without a sidecar)."""

    source: str
    model: Optional[str] = None
    space: Optional[str] = None
    sha256: Optional[str] = None

    @property
    def known(self) -> bool:
        return bool(self.space or self.sha256)

    def describe(self) -> str:
        """The model and its space, for messages."""
        model = self.model or (f"model {self.sha256[:12]}" if self.sha256 else "unknown model")
        return f"{model}, space {self.space}" if self.space else model

    @classmethod
    def of_record(cls, source: str, record: dict) -> Origin:
        """The origin a sidecar (or index metadata) records; older ones carry only the sha256."""
        values = [record.get(key) for key in ("model_name", "model_space", "model_sha256")]
        return cls(source, *(value if isinstance(value, str) else None for value in values))


@dataclass(frozen=True)
class ModelIdentity:
    """A model's name (for messages and sidecars) and the space its vectors live in."""

    name: str
    space: str


def model_identity(files: ModelFiles) -> ModelIdentity:
    """The name and space of the model of `files` (the order in the module docstring)."""
    directory = files.encoder.parent
    declared = read_declaration(directory)
    official = official_name(directory)
    name = declared.get("name") or official or files.name
    space = declared.get("space") or (manifest_space(official) if official else None)
    return ModelIdentity(name, space or own_space(files.sha256()))


def own_space(sha256: str) -> str:
    """The space of a model that declares none: its own, named after its checkpoint."""
    return f"{OWN_SPACE_PREFIX}{sha256[:16]}"


def model_origin(files: ModelFiles, source: str) -> Origin:
    """The origin of vectors the model of `files` makes now."""
    identity = model_identity(files)
    return Origin(source, identity.name, identity.space, files.sha256())


def read_declaration(directory: Path) -> dict:
    """The `model.json` of a model directory ({} when there is none)."""
    path = directory / DECLARATION
    if not path.is_file():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise LaserError(f"{path}: not valid JSON; it declares the model's name and space, "
                         'e.g. {"name": "my-model", "space": "laser2"}') from None
    if not isinstance(record, dict):
        raise LaserError(f"{path}: expected an object with name and space")
    return {key: record[key] for key in ("name", "space") if isinstance(record.get(key), str)}


def write_declaration(directory: Path, name: str, space: str) -> None:
    """Declare the name and space of the model in `directory` (its `model.json`)."""
    from ..io.atomic import atomic_text_output
    with atomic_text_output(str(directory / DECLARATION)) as f:
        json.dump({"name": name, "space": space}, f, indent=2)
        f.write("\n")


def official_name(directory: Path) -> Optional[str]:
    """The manifest name of the official model downloaded into `directory`, if it is one."""
    try:
        name = json.loads((directory / RECORD).read_text(encoding="utf-8")).get("model")
    except (OSError, ValueError, AttributeError):
        return None
    return name if name in load_manifest().models else None


def manifest_space(name: str) -> str:
    """The space the manifest declares for the official model `name`."""
    return load_manifest().models[name].space


def same_space(a: Origin, b: Origin) -> bool:
    """Whether two known origins share a space: one checkpoint always does (a copy of a model
    without its model.json), else by space, else by checkpoint when a record is older than
    spaces."""
    if a.sha256 and a.sha256 == b.sha256:
        return True
    if a.space and b.space:
        return a.space == b.space
    return a.sha256 == b.sha256


def _undeclared(origin: Origin, other: Origin) -> str:
    """Why `origin` has a space of its own, and how to put it in `other`'s, for messages."""
    if not (origin.space or "").startswith(OWN_SPACE_PREFIX):
        return ""
    example = json.dumps({"name": origin.model or "my-model", "space": other.space or "SPACE"})
    return (f"; {origin.source}'s model declares no space (no {DECLARATION} beside its "
            "checkpoint), so its space is its own, named after its checkpoint's sha256: if it "
            f"was trained into the other's space, declare it in that {DECLARATION}: {example}")


def check_same_space(a: Origin, b: Origin) -> None:
    """Refuse, in one line naming both models, to compare vectors of two different spaces; warn
    when either side's model is unknown, since then nothing can be checked. The same vectors
    on both sides (one file) need no check."""
    if a == b:
        return
    unknown = [origin.source for origin in (a, b) if not origin.known]
    if unknown:
        warnings.warn(f"no sidecar records the model of {' or '.join(unknown)}, so nothing "
                      f"checks that {a.source} and {b.source} share an embedding space")
    if a.known and b.known and not same_space(a, b):
        raise SpaceMismatch(f"{a.source} ({a.describe()}) and {b.source} ({b.describe()}) are "
                            "not in one embedding space, so their similarities mean nothing; use "
                            "models of one space (docs/search-and-mining.md#embedding-spaces)"
                            f"{_undeclared(a, b)}{_undeclared(b, a)}")


def embeddings_origin(path: str) -> Origin:
    """The origin recorded in the provenance sidecar of an embeddings file, or the one the files
    of a directory, glob or @LIST share (unknown without)."""
    from ..io.sidecar import shared_sidecar
    return Origin.of_record(path, shared_sidecar(path))


class OneSpace:
    """Checks that every origin shown to it shares the first one's space (`check_same_space`),
    saying once, not per file, when origins without a record make that uncheckable."""

    def __init__(self) -> None:
        self.first: Optional[Origin] = None
        self.warned = False

    def check(self, origin: Origin) -> None:
        if self.first is None:
            self.first = origin
            return
        if not (origin.known and self.first.known):
            if self.warned:
                return
            self.warned = True
        check_same_space(self.first, origin)
