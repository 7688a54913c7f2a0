"""Which official model serves a language? Its own LASER3 encoder where one exists, else LASER2
(the choice `laser_encoders` makes). The manifest's `languages` field of each model is the one
source; `laser models --languages` and docs/models.md print the whole table."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..errors import LaserError
from ..text.flores import flores_codes, flores_names
from ..text.languages import LIST_HINT, resolve
from .registry import ModelSpec, load_manifest

# A language's own encoder comes before the multilingual one.
PREFERENCE = ("LASER3", "LASER2")


class AmbiguousLanguage(LaserError):
    """A language name or code that means several languages served by different models."""


@dataclass(frozen=True)
class LanguageModel:
    """One row of the language table: a FLORES-200 language and its official model (if any)."""

    code: str
    name: str
    model: Optional[str]
    spm: Optional[str]  # the SentencePiece model file the official model reads

    @property
    def preprocessing(self) -> str:
        """How its text is prepared: the official `SPMApply` with this language's rules."""
        if self.model is None:
            return "-"
        return f"SPMApply -l {resolve(self.code).moses}, {self.spm}"


@lru_cache(maxsize=None)
def models_by_language() -> dict[str, str]:
    """FLORES-200 code -> the name of its official model."""
    chosen: dict[str, str] = {}
    specs = load_manifest().models.values()
    for family in reversed(PREFERENCE):
        for spec in specs:
            if spec.family == family:
                chosen.update((code, spec.name) for code in spec.languages)
    return chosen


def official_model(lang: str) -> str:
    """The manifest name of the official model for `lang` (a FLORES-200 code, an ISO 639 code
    or an English name); a one-line LaserError when there is none or `lang` is ambiguous."""
    return official_language(lang)[1]


def official_language(lang: str) -> tuple[str, str]:
    """The FLORES-200 code `lang` means and the name of its official model (as above)."""
    codes = flores_codes(lang)
    if not codes:
        resolve(lang)  # an unknown language: its error suggests close ones
        raise LaserError(f"{lang}: no official LASER2 or LASER3 encoder covers it; pass a model "
                         f"(e.g. laser2) to embed it anyway; {LIST_HINT}")
    served = {code: models_by_language()[code] for code in codes if code in models_by_language()}
    if not served:
        raise LaserError(f"{lang}: no official LASER2 or LASER3 encoder covers "
                         f"{', '.join(codes)}; pass a model (e.g. laser2) to embed it anyway; "
                         f"{LIST_HINT}")
    if len(set(served.values())) > 1:
        names = flores_names()
        options = ", ".join(f"{code} ({names[code]})" for code in served)
        raise AmbiguousLanguage(f"{lang} may mean {options}; pass one of these codes")
    return next(iter(served.items()))


def language_table() -> list[LanguageModel]:
    """Every FLORES-200 language with its official model and SentencePiece file, by code."""
    specs = load_manifest().models
    rows = []
    for code, name in flores_names().items():
        model = models_by_language().get(code)
        rows.append(LanguageModel(code, name, model, _spm_file(specs[model]) if model else None))
    return rows


def _spm_file(spec: ModelSpec) -> Optional[str]:
    return next((file.name for file in spec.files if file.name.endswith(".spm")), None)
