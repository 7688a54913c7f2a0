"""The boundary classifier: a logistic regression over the candidates' features, shipped as
`laser/data/sentence-splitter.tsv.xz` (a JSON header line, then one FEATURE<TAB>WEIGHT a line)."""
from __future__ import annotations

import lzma
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..languages import resolve
from ..moses import nonbreaking_prefixes
from .candidates import Candidate, candidates
from .features import candidate_features, keyed

SHIPPED = "data/sentence-splitter.tsv.xz"
SURE = 2.2  # log-odds of a probability of 0.9


@dataclass
class BoundaryModel:
    """Feature weights, and the languages whose every space is a candidate (their text has no
    full stops)."""

    weights: dict[str, float]
    spaced: frozenset[str] = frozenset()
    header: dict = field(default_factory=dict)

    def boundaries(self, line: str, lang: str) -> list[Candidate]:
        """The candidates of a stripped line that end a sentence."""
        return [candidate for candidate, score in self.scored(line, lang) if score > 0]

    def sure_boundaries(self, line: str, lang: str) -> list[Candidate]:
        """The candidates of a stripped line that end a sentence with a probability over 0.9."""
        return [candidate for candidate, score in self.scored(line, lang) if score > SURE]

    def scored(self, line: str, lang: str) -> list[tuple[Candidate, float]]:
        """The candidates of a stripped line with their scores (log-odds of a boundary)."""
        found = candidates(line, spaces=lang in self.spaced)
        if not found:
            return []
        prefixes, weights = prefixes_of(lang), self.weights
        stops = found[0].punctuated or any(candidate.punctuated for candidate in found)
        return [(candidate, sum(weights.get(feature, 0.0) for feature in keyed(
            candidate_features(line, candidate, prefixes, stops), lang))) for candidate in found]

    def save(self, path: str | os.PathLike) -> None:
        header = {**self.header, "spaced": sorted(self.spaced)}
        with lzma.open(path, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as out:
            out.write(json.dumps(header, ensure_ascii=False) + "\n")
            for feature, weight in sorted(self.weights.items()):
                out.write(f"{feature}\t{weight:.3g}\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "BoundaryModel":
        with lzma.open(path, "rt", encoding="utf-8") as lines:
            header = json.loads(next(lines))
            weights = {}
            for line in lines:
                feature, _, weight = line.rstrip("\n").rpartition("\t")
                weights[feature] = float(weight)
        return cls(weights, frozenset(header.pop("spaced")), header)


@lru_cache(maxsize=None)
def shipped_model() -> BoundaryModel:
    """The model the package ships, loaded once."""
    return BoundaryModel.load(Path(str(resources.files("laser").joinpath(SHIPPED))))


@lru_cache(maxsize=None)
def prefixes_of(lang: str) -> dict[str, int]:
    """A language's Moses non-breaking prefixes (English ones where it has none), read once."""
    return nonbreaking_prefixes(lang)


def model_language(lang: str) -> str:
    """The model's key of a language: its Moses code (ISO 639-1 where one exists)."""
    return resolve(lang).moses
