"""A parallel corpus folder (`XXX-eng.tsv.gz`, `foreign<TAB>english` per line), tokenised once with
exactly the inference preprocessing of each language and cached as plain text."""
from __future__ import annotations

import gzip
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

from ..errors import LaserError
from ..text.tokenizer import Tokenizer
from ..io.atomic import atomic_text_output

PIVOT = "eng"
SUFFIXES = (f"-{PIVOT}.tsv.gz", f"-{PIVOT}.tsv")


@dataclass(frozen=True)
class PairFile:
    """One language's `foreign<TAB>english` file."""

    lang: str
    path: Path


def find_pair_files(directory: str | os.PathLike,
                    languages: Optional[Sequence[str]] = None) -> list[PairFile]:
    """The pair files of a folder, sorted by language; `languages` selects some."""
    directory = Path(directory)
    if not directory.is_dir():
        raise LaserError(f"{directory}: corpus folder not found")
    found = {}
    for path in sorted(directory.iterdir()):
        for suffix in SUFFIXES:
            if path.name.endswith(suffix):
                found[path.name[: -len(suffix)]] = PairFile(path.name[: -len(suffix)], path)
    if languages is not None:
        missing = sorted(set(languages) - found.keys())
        if missing:
            raise LaserError(f"{directory}: no pair file for {', '.join(missing)}")
        found = {lang: found[lang] for lang in languages}
    if not found:
        raise LaserError(f"{directory}: no XXX-{PIVOT}.tsv(.gz) files")
    return [found[lang] for lang in sorted(found)]


def read_pairs(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """(foreign, english) of each line; a line without exactly one tab is an error naming it."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="\n") as f:
            for number, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 2:
                    raise LaserError(f"{path}:{number}: expected 'foreign<TAB>english'")
                yield fields[0], fields[1]
    except UnicodeDecodeError:
        raise LaserError(f"{path}: not valid UTF-8") from None
    except (OSError, EOFError) as error:
        raise LaserError(f"{path}: cannot read: {error}") from None


def tokenized_path(cache: Path, pair_file: PairFile) -> Path:
    return cache / f"{pair_file.lang}-{PIVOT}.tok.tsv"


def _tokenize_file(pair_file: PairFile, target: Path) -> str:
    foreign, english = Tokenizer(pair_file.lang), Tokenizer("en")
    with atomic_text_output(str(target)) as out:
        for source, pivot in read_pairs(pair_file.path):
            out.write(f"{foreign(source)}\t{english(pivot)}\n")
    return pair_file.lang


def tokenize_corpus(pair_files: Sequence[PairFile], cache: Path, workers: int = 1,
                    on_done=None) -> list[PairFile]:
    """Tokenised copies of the pair files in `cache` (files already there are reused)."""
    cache.mkdir(parents=True, exist_ok=True)
    todo = [pf for pf in pair_files if not tokenized_path(cache, pf).exists()]
    # Largest first, so no worker is left alone with a big language at the end.
    todo.sort(key=lambda pf: -pf.path.stat().st_size)
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        for _ in pool.map(_tokenize_file, todo, [tokenized_path(cache, pf) for pf in todo]):
            if on_done:
                on_done()
    return [PairFile(pf.lang, tokenized_path(cache, pf)) for pf in pair_files]


def read_tokenized(path: Path) -> Iterator[tuple[str, str]]:
    with open(path, encoding="utf-8", newline="\n") as f:
        for line in f:
            source, pivot = line.rstrip("\n").split("\t")
            yield source, pivot
