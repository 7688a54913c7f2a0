#!/usr/bin/env python3
"""The recipe of the shipped sentence splitter (laser/data/sentence-splitter.tsv.xz): a logistic
regression over the features of candidate boundaries (laser.text.splitting.features), trained
with numpy on paragraphs built from the corpus's train split.

    python tasks/splitter_model.py CORPUS_DIR [--sib200 DIR] [--per-language 2000]
                                   [--english 20000] [--epochs 4] [--out FILE]

Each language's train sentences (the foreign side; English from the English sides) are
deduplicated, those equal to a FLORES dev row of SIB-200 (the bench's held-out set) dropped,
sampled, shuffled and joined 2 to 6 at a time into paragraphs (laser.text.splitting.paragraphs).
A language gets a candidate at every space when fewer than half its sentences end with a full
stop. Corpus lines that hold more than one sentence would teach the model that a boundary is
none: a first model finds them (a boundary it is sure of inside a line), and the shipped one is
trained without them. The corpus has few abbreviations: a tenth of the sentences of
the languages with Moses' non-breaking prefix lists are added again with a prefix put in. A fifth
of the paragraphs are seen as of no known language (`und`), so that the features
every language shares can decide alone for a language the corpus lacks. Trained with Adagrad on the logistic loss; features seen fewer than --min-count times
and weights under --min-weight are dropped from the shipped file.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from array import array
from collections import defaultdict
from pathlib import Path

import numpy as np

from laser.lid.corpus import PIVOT, corpus_files, flores_dev_rows, pairs
from laser.text.languages import UnknownLanguage
from laser.text.moses import LASER_PREFIX_LANGUAGES, nonbreaking_prefixes
from laser.text.splitting.candidates import CLOSERS, TERMINALS, candidates
from laser.text.splitting.features import candidate_features, keyed
from laser.text.splitting.model import BoundaryModel, model_language, prefixes_of
from laser.text.splitting.paragraphs import paragraphs, unquoted

# Every UNKNOWN_EVERY-th paragraph is seen as of no known language, so that the features shared by
# all languages decide alone for a language the model never saw.
UNKNOWN, UNKNOWN_EVERY = "und", 5
PREFIXED_EVERY = 10  # one sentence in ten again with a non-breaking prefix (`with_prefixes`)
SPACED_BELOW = 0.5  # share of sentences ending with a full stop under which spaces are candidates
# Scripts whose web text often goes without full stops, where a space may end a sentence: their
# languages get a candidate at every space, and learn from paragraphs without their stops too.
UNPUNCTUATED = frozenset({"th", "lo", "km", "my"})


def read_sentences(corpus: Path, held_out: set[str], english: int) -> dict[str, list[str]]:
    """Model language -> its distinct train sentences (English from every file's English side,
    `english` of them at most), without the held-out ones."""
    by_language: dict[str, dict[str, None]] = defaultdict(dict)
    dropped = 0
    for path in corpus_files(corpus, "train"):
        try:
            lang = model_language(path.name.split("-")[0])
        except UnknownLanguage:
            print(f"skipped {path.name}: unknown language", file=sys.stderr)
            continue
        for foreign, pivot in pairs(path):
            for code, sentence in ((lang, unquoted(foreign)), (model_language(PIVOT), pivot)):
                if sentence in held_out:
                    dropped += 1
                elif sentence:
                    by_language[code][sentence] = None
    print(f"{dropped} train sentences equal to a FLORES dev row dropped", file=sys.stderr)
    sentences = {lang: list(found) for lang, found in by_language.items()}
    sentences["en"] = random.Random(1).sample(sentences["en"], min(english, len(sentences["en"])))
    return sentences


def ends_with_stop(sentence: str) -> bool:
    return sentence.rstrip(CLOSERS)[-1:] in TERMINALS


def with_prefixes(sentences: list[str], lang: str, seed: int) -> list[str]:
    """A tenth of the sentences again, each with one of the language's Moses non-breaking
    prefixes and its full stop put before a word (before a number for the prefixes that only
    precede numbers): the corpus has too few abbreviations to learn them from."""
    if lang not in LASER_PREFIX_LANGUAGES:
        return []
    draw, table = random.Random(seed), sorted(nonbreaking_prefixes(lang).items())
    made = []
    for sentence in draw.sample(sentences, len(sentences) // PREFIXED_EVERY):
        words = sentence.split(" ")
        prefix, kind = draw.choice(table)
        at = draw.randrange(len(words))
        inserted = f"{prefix}. {draw.randint(1, 99)}" if kind == 2 else f"{prefix}."
        made.append(" ".join(words[:at] + [inserted] + words[at:]))
    return made


def without_stop(sentence: str) -> str:
    """The sentence without its final full stops (its closing quotes and brackets kept)."""
    core = sentence.rstrip(CLOSERS)
    return core.rstrip(TERMINALS) + sentence[len(core):] or sentence


class Examples:
    """The candidates' features (as indices into a growing vocabulary) and labels."""

    def __init__(self):
        self.vocabulary: dict[str, int] = {}
        self.indices, self.offsets, self.labels = array("i"), array("q", [0]), array("b")

    def add(self, text: str, boundaries: frozenset, lang: str, spaces: bool) -> None:
        prefixes = prefixes_of(lang)
        found = candidates(text, spaces)
        stops = any(candidate.punctuated for candidate in found)
        for candidate in found:
            for feature in keyed(candidate_features(text, candidate, prefixes, stops), lang):
                index = self.vocabulary.setdefault(feature, len(self.vocabulary))
                self.indices.append(index)
            self.offsets.append(len(self.indices))
            self.labels.append((candidate.end, candidate.start) in boundaries)


def train(examples: Examples, epochs: int, rate: float = 0.2, batch: int = 512) -> np.ndarray:
    """Adagrad on the logistic loss; one weight per feature of the vocabulary."""
    indices = np.frombuffer(examples.indices, dtype=np.int32)
    offsets = np.frombuffer(examples.offsets, dtype=np.int64)
    labels = np.frombuffer(examples.labels, dtype=np.int8).astype(np.float64)
    weights = np.zeros(len(examples.vocabulary))
    squares = np.full(len(examples.vocabulary), 1e-6)
    shuffle = np.random.default_rng(3)
    for epoch in range(epochs):
        loss = 0.0
        order = shuffle.permutation(len(labels))
        for first in range(0, len(labels), batch):
            rows = order[first:first + batch]
            starts, lengths = offsets[rows], offsets[rows + 1] - offsets[rows]
            row_of = np.repeat(np.arange(len(rows)), lengths)
            taken = indices[np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
                            + np.arange(len(row_of))]
            scores = np.bincount(row_of, weights[taken], minlength=len(rows))
            probabilities = 1 / (1 + np.exp(-scores))
            loss += -np.sum(np.log(np.where(labels[rows] > 0, probabilities,
                                            1 - probabilities) + 1e-12))
            unique, inverse = np.unique(taken, return_inverse=True)
            gradient = np.bincount(inverse, (probabilities - labels[rows])[row_of])
            squares[unique] += gradient ** 2
            weights[unique] -= rate * gradient / np.sqrt(squares[unique])
        print(f"epoch {epoch + 1}: loss {loss / len(labels):.4f}", file=sys.stderr)
    return weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--sib200", type=Path, default=None)
    parser.add_argument("--per-language", type=int, default=2000)
    parser.add_argument("--english", type=int, default=20000)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--min-count", type=int, default=2)
    parser.add_argument("--min-weight", type=float, default=0.02)
    parser.add_argument("--out", type=Path, default=Path("laser/data/sentence-splitter.tsv.xz"))
    args = parser.parse_args()
    started = time.time()
    held_out = ({text for rows in flores_dev_rows(args.sib200).values() for row in rows
                 for text in (row, unquoted(row))}
                if args.sib200 else set())
    sentences = read_sentences(args.corpus, held_out, args.english)
    spaced = UNPUNCTUATED | {lang for lang, found in sentences.items()
                             if sum(map(ends_with_stop, found)) < SPACED_BELOW * len(found)}
    print(f"languages with a candidate at every space: {' '.join(sorted(spaced))}",
          file=sys.stderr)
    first = fitted(sentences, spaced, args)
    cleaned = {lang: [sentence for sentence in found if not first.sure_boundaries(sentence, lang)]
               for lang, found in sentences.items()}
    print(f"{sum(map(len, sentences.values())) - sum(map(len, cleaned.values()))} sentences "
          f"that hold a sure boundary dropped", file=sys.stderr)
    model = fitted(cleaned, spaced, args)
    model.header = {"languages": len(sentences)}
    model.save(args.out)
    print(f"{len(model.weights)} features kept in {args.out} ({args.out.stat().st_size} bytes, "
          f"{time.time() - started:.0f} s)", file=sys.stderr)


def fitted(sentences: dict[str, list[str]], spaced: frozenset[str],
           args: argparse.Namespace) -> BoundaryModel:
    """The model trained on paragraphs of a sample of each language's sentences."""
    examples = Examples()
    for seed, (lang, found) in enumerate(sorted(sentences.items())):
        sample = random.Random(seed).sample(found, min(args.per_language, len(found)))
        sample += with_prefixes(sample, lang, seed)
        random.Random(seed).shuffle(sample)
        versions = [sample, [without_stop(sentence) for sentence in sample]]
        for version in versions[:1 + (lang in spaced)]:
            for number, paragraph in enumerate(paragraphs(version, lang, seed)):
                key = UNKNOWN if number % UNKNOWN_EVERY == 0 else lang
                examples.add(paragraph.text, paragraph.boundaries, key, lang in spaced)
    print(f"{len(examples.labels)} candidates, {sum(examples.labels)} boundaries, "
          f"{len(examples.vocabulary)} features", file=sys.stderr)
    weights = train(examples, args.epochs)
    counts = np.bincount(np.frombuffer(examples.indices, dtype=np.int32),
                         minlength=len(weights))
    kept = {feature: float(weights[index]) for feature, index in examples.vocabulary.items()
            if counts[index] >= args.min_count and abs(weights[index]) >= args.min_weight
            and "\n" not in feature and "\r" not in feature}
    return BoundaryModel(kept, spaced)


if __name__ == "__main__":
    main()
