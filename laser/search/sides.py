"""The sides of a Python call (`laser.mine`, `laser.score`, `laser.Index`) as rows, by the rules
of the commands: numpy rows as they are, an embeddings file with the model its sidecar records,
sentences embedded now with the model `choose_models` picks for their language (each side its
own, models of two spaces refused); one float32 row per sentence, always."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np

from ..errors import LaserError, ModelChoiceWarning, warn_caller
from ..io.embeddings import open_embeddings
from ..models.options import ModelOptions
from ..models.resolve import ModelRequest, choose_models
from ..models.spaces import Origin, embeddings_origin

# Sentences (a list of strings), their embeddings (one numpy row each) or an embeddings file
# (a path: .npy or raw with its sidecar, as `laser embed` writes them).
Data = Union[Sequence[str], np.ndarray, str, os.PathLike]


@dataclass(frozen=True)
class Side:
    """One side of a call: its `data`, the language of its sentences, the model named for it,
    and how messages call it."""

    data: Data
    lang: Optional[str] = None
    model: Optional[str] = None
    name: str = "the sentences"

    @property
    def path(self) -> Optional[str]:
        """The embeddings file of this side, if its data is one."""
        return os.fspath(self.data) if isinstance(self.data, (str, os.PathLike)) else None

    @property
    def sentences(self) -> bool:
        return self.path is None and not isinstance(self.data, np.ndarray)

    def request(self) -> ModelRequest:
        """What this side asks of the model choice: a model for its sentences, else none (the
        model of an embeddings file is its sidecar's; plain rows record none)."""
        if self.sentences:
            if not self.lang:
                raise LaserError(f"{self.name}: sentences need their language to be embedded")
            return ModelRequest(self.model, self.lang, self.name)
        origin = embeddings_origin(self.path) if self.path else Origin(self.name)
        return ModelRequest(source=self.path or self.name, origin=origin)


@dataclass(frozen=True)
class SideRows:
    """The rows of one side and where they come from (an unknown Origin for plain rows)."""

    rows: np.ndarray
    origin: Origin


def side_rows(sides: Sequence[Side], against: Optional[Origin] = None,
              options: ModelOptions = ModelOptions()) -> list[SideRows]:
    """The rows of every side, the sentences embedded with each side's chosen model (facing
    the vectors of `against` when given: an index); the notes of the choice come as warnings."""
    from ..encoder import encoder_loaders
    requests = [side.request() for side in sides]
    facing = [ModelRequest(origin=against)] * bool(against)  # named first in refusals
    choices = choose_models(options, facing + requests)[len(facing):]
    for note in dict.fromkeys(choice.note for choice in choices if choice and choice.note):
        warn_caller(note, ModelChoiceWarning)
    found = []
    for side, request, choice, encoder in zip(sides, requests, choices,
                                              encoder_loaders(choices, options, notes=False)):
        if encoder is None:
            found.append(SideRows(given_rows(side), request.origin))
        else:
            found.append(SideRows(encoder().encode(list(side.data), side.lang),
                                  choice.origin(side.name)))
    return found


def given_rows(side: Side) -> np.ndarray:
    """The rows of a side given as numpy rows or as an embeddings file (memory-mapped)."""
    if side.path:
        return open_embeddings(side.path)
    rows = np.asarray(side.data)
    if rows.ndim != 2 or not np.issubdtype(rows.dtype, np.floating):
        raise LaserError(f"{side.name}: expected a 2-d float array, one row per sentence; got "
                         f"shape {rows.shape} of {rows.dtype}")
    return rows

