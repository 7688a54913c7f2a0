"""Tatoeba-style evaluation: xsim error of every `tatoeba.xxx-eng.xxx` / `.eng` pair of a folder."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import LaserError
from ..io.text import read_lines
from ..mining.corpus import corpus_vectors, scan_corpus
from .xsim import Embedder, xsim_errors

def tatoeba_pairs(directory: str) -> list[tuple[str, str, str]]:
    """(language, its file, English file) of every `tatoeba.xxx-eng.xxx` in `directory`."""
    found = []
    for path in sorted(Path(directory).glob("tatoeba.*-eng.*")):
        lang = path.name.split(".")[1].split("-")[0]
        english = path.with_name(f"tatoeba.{lang}-eng.eng")
        if path.suffix == f".{lang}" and english.is_file():
            found.append((lang, str(path), str(english)))
    if not found:
        raise LaserError(f"{directory}: no tatoeba.xxx-eng.xxx / tatoeba.xxx-eng.eng file pairs")
    return found


def tatoeba_errors(directory: str, embed: Embedder, kinds: Sequence[str] = ("absolute",),
                   k: int = 4) -> list[tuple[str, str, float, float]]:
    """(language, margin kind, error xxx->eng, error eng->xxx) for every language of the folder;
    a retrieved sentence identical to the reference counts as correct."""
    rows = []
    for lang, path, english in tatoeba_pairs(directory):
        texts, eng_texts = list(read_lines(path)), list(read_lines(english))
        with embed(path, lang) as (x_matrix, x_name), embed(english, "eng") as (y_matrix, y_name):
            x = corpus_vectors(scan_corpus(path), x_matrix, x_name)
            y = corpus_vectors(scan_corpus(english), y_matrix, y_name)
            for kind in kinds:
                rows.append((lang, kind, *xsim_errors(x, y, kind, k, texts, eng_texts)))
    return rows
