"""The shared corpus (`train|dev/XXX-eng.tsv.gz`, `foreign<TAB>english`) as language-ID data:
each line labelled with its FLORES-200 style code, the language's ISO 639-3 code + the script
its letters are in (the recipe of the shipped model and bench/lid.py read it alike)."""
from __future__ import annotations

import gzip
import random
import unicodedata
from pathlib import Path
from typing import Iterator, Optional

from .scripts import NO_SPACES, line_script

PIVOT = "eng"
# Corpus codes that fold a FLORES-200 language into its macrolanguage (the corpus's
# MANIFEST.md), back to the FLORES-200 code; and a code that is not ISO 639-3.
FLORES_CODE = {"ara": "arb", "mon": "khk", "uzb": "uzn", "yid": "ydd", "sqi": "als",
               "aze": "azj", "kur": "kmr", "cmn": "zho", "toki": "tok"}
# Chinese languages: their Han lines carry the script FLORES-200 gives them (the corpus does not
# separate simplified from traditional characters).
HAN_SCRIPT = {"zho": "Hans", "yue": "Hant", "wuu": "Hans", "lzh": "Hant", "cjy": "Hans",
              "gan": "Hans", "nan": "Hant"}


def as_label_code(code: str) -> str:
    """A corpus code as the model's labels spell it (`FLORES_CODE`)."""
    return FLORES_CODE.get(code, code)


def file_code(path: Path) -> str:
    """The corpus code of a file `XXX-eng.tsv.gz`."""
    return path.name.split("-")[0]


def language_of(path: Path) -> str:
    """The language code of a corpus file, as the model's labels spell it."""
    return as_label_code(file_code(path))


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


def dev_lines(corpus: Path, per_language: int) -> dict[str, list[str]]:
    """Language -> the foreign sides of its first `per_language` corpus dev pairs (the recipe
    never trains on them; a misfiled pair under its own language, `SourceOf.origin`), for the
    languages that have any."""
    source_of = SourceOf(corpus)
    found: dict[str, list[str]] = {}
    for path in corpus_files(corpus, "dev"):
        for foreign, english in pairs(path):
            found.setdefault(as_label_code(source_of.origin(path, english)[1]), []).append(foreign)
    return {language: lines[:per_language] for language, lines in found.items() if lines}


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


# Source families of the corpus's pairs (its MANIFEST.md's source keys): Tatoeba's sentences
# (tatoeba-test and the anki-* exports), and the multi-way news and Wikipedia sets, whose English
# sides are the same sentences in every language they cover.
TATOEBA, FLORES, NTREX, TICO, WIKI = "tatoeba", "flores", "ntrex", "tico", "wiki"
SOURCE_FAMILY = {"tatoeba-test": TATOEBA, "flores200": FLORES, "ntrex128": NTREX,
                 "tico19": TICO, "flores1-wiki": WIKI}
# The family held out of a language's training lines to score it out of source, first found
# first: the conversational one where the language has it beside another.
HOLD_OUT_ORDER = (TATOEBA, NTREX, TICO)
# Source families of a corpus file (its code and the family) that are another language's lines:
# - the corpus's Slovenian Tatoeba sentences (the Tatoeba Challenge's slv-eng test sets) are
#   Slovak ("To nie je papier.", "V pondelok som šla do knižnice."): of their 1,014 train pairs,
#   388 hold words only Slovak writes (som, sa, nie, čo, už, ešte, aj...) and none only Slovenian;
# - its Northern Sotho NTREX-128 sentences are Southern Sotho: none of their 1,601 train pairs
#   writes š (815 of its 892 FLORES-200 pairs do), 1,283 hold Southern Sotho's ho, hore, tse, hao
#   or ena, 11 Northern Sotho's go, gore, tše, gago, ye or bja.
MISFILED = {("slv", TATOEBA): "slk", ("nso", NTREX): "sot"}


def manifest_sources(corpus: Path) -> dict[str, set[str]]:
    """Corpus file code (`fra`, `cmn`) -> the source families of its train pairs, read from the
    corpus's MANIFEST.md table (`| lang | script | key count, key count | ...`); none for a
    corpus without one."""
    manifest = corpus / "MANIFEST.md"
    if not manifest.is_file():
        return {}
    sources: dict[str, set[str]] = {}
    for row in manifest.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[3].isdigit():
            continue
        keys = [part.split()[0] for part in cells[2].split(",") if part.split()[1:2]
                and part.split()[1].isdigit()]
        if keys:
            sources[cells[0]] = {SOURCE_FAMILY.get(key, TATOEBA if key.startswith("anki-")
                                                   else key) for key in keys}
    return sources


def multiway_english(corpus: Path, sources: dict[str, set[str]]) -> dict[str, str]:
    """English sentence -> its multi-way family (FLORES, NTREX, TICO), from the files (train and
    dev) of the languages whose only source is that family."""
    family_of: dict[str, str] = {}
    for split in ("train", "dev"):
        for path in corpus_files(corpus, split):
            only = sources.get(path.name.split("-")[0], set())
            if len(only) == 1 and next(iter(only)) in (FLORES, NTREX, TICO):
                family = next(iter(only))
                family_of.update((english, family) for _, english in pairs(path))
    return family_of


class SourceOf:
    """The source family of a corpus pair: its English side's multi-way set, else Wikipedia for a
    language whose only other sources are multi-way, else Tatoeba."""

    def __init__(self, corpus: Path):
        self.sources = manifest_sources(corpus)
        self.multiway = multiway_english(corpus, self.sources)
        self.families = {code: set(families) for code, families in self.sources.items()}
        for (code, family), language in MISFILED.items():
            if family in self.families.get(code, set()):
                self.families[code].discard(family)
                self.families.setdefault(language, set()).add(family)

    def __call__(self, path: Path, english: str) -> str:
        family = self.multiway.get(english)
        if family:
            return family
        return WIKI if WIKI in self.sources.get(file_code(path), set()) else TATOEBA

    def origin(self, path: Path, english: str) -> tuple[str, str]:
        """(source family, corpus code of the language it is in: `MISFILED`, where the manifest
        lists that family for the file's language) of a pair of this file."""
        family, code = self(path, english), file_code(path)
        if family not in self.sources.get(code, set()):
            return family, code
        return family, MISFILED.get((code, family), code)

    def held_out(self, code: str) -> Optional[str]:
        """The family held out of a language (its corpus code; None: it has only one)."""
        families = self.families.get(code, set())
        if len(families) < 2:
            return None
        # Beside Wikipedia, a Tatoeba line cannot be told from a Wikipedia one by its English.
        order = [family for family in HOLD_OUT_ORDER if not (family == TATOEBA and WIKI in families)]
        return next((family for family in order if family in families), None)

    def out_of_source(self, corpus: Path, per_language: int, seed: int = 0) -> dict[str, list[str]]:
        """Language -> at most `per_language` distinct foreign sides (drawn at random) of the train
        pairs of its held-out family: lines that a model trained with that family held out never
        saw."""
        found: dict[str, dict[str, None]] = {}
        for path in corpus_files(corpus, "train"):
            for foreign, english in pairs(path):
                family, code = self.origin(path, english)
                if family == self.held_out(code):
                    found.setdefault(as_label_code(code), {})[foreign] = None
        rng = random.Random(seed)
        return {language: rng.sample(list(lines), min(per_language, len(lines)))
                for language, lines in found.items()}


# A line of a script written without spaces between words is short at SHORT_LETTERS letters.
SHORT_WORDS, SHORT_LETTERS = 3, 6


def without_spaces(line: str) -> bool:
    return line_script(line) in NO_SPACES


def letters(text: str) -> int:
    return sum(character.isalpha() for character in text)


def is_short(line: str) -> bool:
    """At most SHORT_WORDS words, or SHORT_LETTERS letters in a script without spaces."""
    if without_spaces(line):
        return letters(line) <= SHORT_LETTERS
    return len(line.split()) <= SHORT_WORDS


def piece_of(line: str, rng: random.Random) -> str:
    """A random piece of 1 to 3 words of `line` (2 to 6 characters where its script has no
    spaces); "" when the piece has no letters."""
    if without_spaces(line):
        size = rng.randint(2, SHORT_LETTERS)
        start = rng.randrange(max(1, len(line) - size + 1))
        while start < len(line) - 1 and unicodedata.category(line[start]).startswith("M"):
            start += 1  # a piece starts at a character, not at its combining mark
        piece = line[start:start + size].strip()
    else:
        words = line.split()
        size = rng.randint(1, SHORT_WORDS)
        start = rng.randrange(max(1, len(words) - size + 1))
        piece = " ".join(words[start:start + size])
    return piece if letters(piece) else ""


def with_pieces(by_language: dict[str, list[str]], seed: int = 1) -> tuple[list[str], list[str]]:
    """Lines to fit a calibration on, and their labels (`label_of`): each line, and one piece
    of 1 to 3 words of it (`piece_of`), those with letters."""
    rng = random.Random(seed)
    lines, labels = [], []
    for language, texts in by_language.items():
        for line in texts:
            for text in (line, piece_of(line, rng)):
                label = label_of(language, text) if text else None
                if label:
                    lines.append(text)
                    labels.append(label)
    return lines, labels
