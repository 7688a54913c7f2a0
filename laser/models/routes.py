"""Which model embeds a line whose language is known only line by line (`--lang auto`)?
The official LASER3 encoder of that language when it is installed and shares the requested
model's space (the LASER3 encoders were distilled into LASER2's space), else the requested model
itself (docs/models.md, "How a model is chosen"); so also with one language given per sentence."""
from __future__ import annotations

from collections import Counter
from typing import Optional

from ..errors import LaserError
from ..text.languages import UNDETERMINED
from .files import ModelFiles
from .installed import installed_model_files
from .languages import official_language
from .registry import find_model
from .spaces import model_identity

ROUTED_FAMILY = "LASER3"  # a language's own encoder; LASER2 is the multilingual one


def routed_files(lang: str, requested: ModelFiles) -> Optional[ModelFiles]:
    """The files of the installed official LASER3 encoder of `lang` when it is not `requested`
    and lies in its space; None otherwise (no such encoder, not downloaded, another space, or a
    language no official model covers)."""
    try:
        _, name = official_language(lang)
    except LaserError:  # unknown, ambiguous or uncovered (`und`): the requested model embeds it
        return None
    if find_model(name).family != ROUTED_FAMILY:
        return None
    files = installed_model_files(name)
    if files is None or files.encoder.resolve() == requested.encoder.resolve():
        return None
    if model_identity(files).space != model_identity(requested).space:
        return None
    return files


def language_models(lines: Counter, requested: ModelFiles,
                    fallback: Optional[str] = None) -> dict[str, dict]:
    """For a sidecar: each identified language's line count and the model that embedded them
    (`und` lines: the `fallback` language's)."""
    def name(lang: str) -> str:
        embedded_as = fallback if lang == UNDETERMINED and fallback else lang
        return model_identity(routed_files(embedded_as, requested) or requested).name
    return {lang: {"lines": count, "model": name(lang)} for lang, count in sorted(lines.items())}
