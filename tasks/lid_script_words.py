#!/usr/bin/env python3
"""Writes tests/data/lid/script-words.tsv: for each label of the shipped language-ID model,
up to three words of its language in the corpus whose letters are all of the label's script
(`LABEL<TAB>WORD`; a word of a script written without spaces: its first 12 letters), which the
tests identify to check that no answer crosses scripts.

    python tasks/lid_script_words.py ../shared/data/corpus [--out tests/data/lid/script-words.tsv]
"""
from __future__ import annotations

import argparse
import gzip
from pathlib import Path

from laser.lid.corpus import corpus_files, label_of, language_of
from laser.lid.model import read_labels, shipped_model_path
from laser.lid.scripts import char_script

WORDS = 3
LETTERS = 12


def one_script_word(token: str) -> str:
    """The token's letters (at most LETTERS), or "" when they are of more than one script
    (Japanese: kana with Han is one)."""
    word = "".join(char for char in token if char_script(char))[:LETTERS]
    scripts = {char_script(char) for char in word}
    return word if len(word) >= 2 and (len(scripts) == 1 or scripts == {"Hani", "Jpan"}) else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--out", type=Path, default=Path("tests/data/lid/script-words.tsv"))
    args = parser.parse_args()
    labels = set(read_labels(shipped_model_path()))
    words: dict[str, list[str]] = {label: [] for label in labels}
    for path in corpus_files(args.corpus, "train"):
        language = language_of(path)
        wanted = [label for label in labels if label.split("_")[0] in (language, "eng")]
        with gzip.open(path, "rt", encoding="utf-8") as rows:
            for row in rows:
                foreign, _, english = row.rstrip("\n").partition("\t")
                for side, tokens in ((language, foreign), ("eng", english)):
                    for word in filter(None, map(one_script_word, tokens.split())):
                        label = label_of(side, word)
                        if label in words and len(words[label]) < WORDS \
                                and word not in words[label]:
                            words[label].append(word)
                if all(len(words[label]) == WORDS for label in wanted):
                    break
    with open(args.out, "w", encoding="utf-8") as out:
        out.writelines(f"{label}\t{word}\n" for label in sorted(words) for word in words[label])


if __name__ == "__main__":
    main()
