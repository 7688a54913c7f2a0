"""The shared corpus (`train|dev/XXX-eng.tsv.gz`, `foreign<TAB>english`) as language-ID data:
each line labelled with its FLORES-200 style code, the language's ISO 639-3 code + the script
its letters are in (the recipe of the shipped model and bench/lid.py read it alike)."""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Iterator, Optional

from .scripts import line_script

PIVOT = "eng"
# Corpus codes that fold a FLORES-200 language into its macrolanguage (the corpus's
# MANIFEST.md), back to the FLORES-200 code; and a code that is not ISO 639-3.
FLORES_CODE = {"ara": "arb", "mon": "khk", "uzb": "uzn", "yid": "ydd", "sqi": "als",
               "aze": "azj", "kur": "kmr", "cmn": "zho", "toki": "tok"}
# Chinese languages: their Han lines carry the script FLORES-200 gives them (the corpus does not
# separate simplified from traditional characters).
HAN_SCRIPT = {"zho": "Hans", "yue": "Hant", "wuu": "Hans", "lzh": "Hant", "cjy": "Hans",
              "gan": "Hans", "nan": "Hant"}


def language_of(path: Path) -> str:
    """The language code of a corpus file `XXX-eng.tsv.gz`, as the model's labels spell it."""
    code = path.name.split("-")[0]
    return FLORES_CODE.get(code, code)


def label_of(language: str, line: str) -> Optional[str]:
    """`fra_Latn`: the line's language with the script of its letters (None: no letters)."""
    script = line_script(line)
    if script is None:
        return None
    if language == "jpn" and script in ("Hani", "Jpan"):
        return "jpn_Jpan"
    if language in HAN_SCRIPT and script == "Hani":
        return f"{language}_{HAN_SCRIPT[language]}"
    return f"{language}_{script}"


def corpus_files(corpus: Path, split: str) -> list[Path]:
    return sorted((corpus / split).glob("*-eng.tsv.gz"))


def pairs(path: Path) -> Iterator[tuple[str, str]]:
    """(foreign, english) of each line of a corpus file."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            foreign, _, english = line.rstrip("\n").partition("\t")
            yield foreign.strip(), english.strip()


FIRST_DEVTEST_ID = 997  # SIB-200 rows from here on are FLORES devtest, which the corpus holds


def flores_dev_rows(sib200: Path) -> dict[str, list[str]]:
    """FLORES-200 code -> the FLORES dev sentences among a SIB-200 folder's rows (its train and
    dev splits; index_id < FIRST_DEVTEST_ID), which the corpus does not hold."""
    rows: dict[str, list[str]] = {}
    for folder in sorted(path for path in sib200.iterdir() if path.is_dir()):
        texts = {}
        for split in sorted(folder.glob("*.tsv")):
            for row in split.read_text(encoding="utf-8").splitlines()[1:]:
                index_id, _, text = row.split("\t", 2)
                if int(index_id) < FIRST_DEVTEST_ID:
                    texts[int(index_id)] = text
        rows[folder.name] = [texts[index] for index in sorted(texts)]
    return rows
