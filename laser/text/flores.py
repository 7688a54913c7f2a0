"""FLORES-200 language codes (`ibo_Latn`: ISO 639-3 + script), the codes the NLLB models use,
and which of them a user's language means: a FLORES-200 code, an ISO 639-1/639-2/639-3 code or
an English name (the names `laser_encoders` accepts, in `laser/data/flores200.tsv`)."""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from .iso639 import iso_table

# ISO 639-3 macrolanguages whose FLORES-200 language has an individual code: the one the
# macrolanguage (and its 639-1 code) usually stands for (`ar` -> arb_Arab, `fa` -> pes_Arab).
MACROLANGUAGES = {
    "ara": "arb", "aym": "ayr", "aze": "azj", "din": "dik", "fas": "pes", "ful": "fuv",
    "kau": "knc", "kur": "kmr", "lav": "lvs", "mlg": "plt", "mon": "khk", "msa": "zsm",
    "nep": "npi", "nor": "nob", "ori": "ory", "orm": "gaz", "pus": "pbt", "que": "quy",
    "sqi": "als", "swa": "swh", "tmh": "taq", "uzb": "uzn", "yid": "ydd", "zho": "zho",
    "zza": "diq",
}


@lru_cache(maxsize=None)
def flores_names() -> dict[str, str]:
    """Every FLORES-200 code with its English name, in code order."""
    text = resources.files("laser").joinpath("data/flores200.tsv").read_text("utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return dict(sorted((code, name) for code, name in rows))


@lru_cache(maxsize=None)
def _by_lowercase_code() -> dict[str, str]:
    return {code.lower(): code for code in flores_names()}


@lru_cache(maxsize=None)
def _by_name() -> dict[str, list[str]]:
    codes: dict[str, list[str]] = {}
    for code, name in flores_names().items():
        codes.setdefault(name, []).append(code)
    return codes


@lru_cache(maxsize=None)
def _by_iso3() -> dict[str, list[str]]:
    codes: dict[str, list[str]] = {}
    for code in flores_names():
        codes.setdefault(code.split("_")[0], []).append(code)
    return codes


def flores_codes_of_name(name: str) -> list[str]:
    """The FLORES-200 codes of an English language name (any case), e.g. `Igbo` -> [ibo_Latn]."""
    return list(_by_name().get(" ".join(name.lower().split()), []))


def flores_codes(lang: str) -> list[str]:
    """The FLORES-200 codes `lang` may mean ([] when none): itself (`ibo_Latn`, `ibo-latn`),
    those of an English name (`igbo`), of an ISO 639 code (`ig`, `ibo`; a macrolanguage stands
    for its usual member: `ar` -> arb_Arab), a script subtag narrowing them (`zh-Hant`)."""
    key = lang.strip().lower().replace("-", "_")
    if key in _by_lowercase_code():
        return [_by_lowercase_code()[key]]
    named = flores_codes_of_name(lang)
    if named:
        return named
    base, _, subtag = key.partition("_")
    codes = _codes_of_iso(base)
    scripted = [code for code in codes if code.lower().endswith("_" + subtag)]
    return sorted(set(scripted or codes))


def _codes_of_iso(code: str) -> list[str]:
    """The FLORES-200 codes of an ISO 639 code: its own, else those of its macrolanguage's
    usual member, else those of every language sharing its 639-1 code."""
    if code in _by_iso3():
        return _by_iso3()[code]
    aliases = iso639_3_codes(code)
    usual = [MACROLANGUAGES[alias] for alias in aliases if alias in MACROLANGUAGES]
    return [flores for alias in usual or aliases for flores in _by_iso3().get(alias, [])]


def iso639_3_codes(code: str) -> list[str]:
    """The ISO 639-3 (and 639-2/B) codes sharing the 639-1 code of `code`: `ger` -> [deu, ger]
    (and `fa` -> [fas, per, pes, prs]: a macrolanguage's members share its 639-1 code)."""
    if not re.fullmatch(r"[a-z]{2,3}", code):
        return []
    table = iso_table()
    two = table.get(code, "")
    if not two:
        return [code] if code in table else []
    return sorted(three for three, alias in table.items() if alias == two and len(three) == 3)
