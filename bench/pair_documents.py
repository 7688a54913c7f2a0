"""Document pairing (`laser align --pair-documents`) measured on collections built from the
corpus' dev split: for each language X, documents of 5-50 consecutive X-English dev pairs, the X
side in one collection and the English side in the other, a fifth of each collection's
documents without a translation in the other (drawn from other dev lines), and in each
translated pair sentences dropped from one side (--drop, per sentence) and consecutive
sentences merged on one side (--merge). File names are shuffled, so nothing but the text tells
which document is whose.

In one run, on the same embeddings (the shipped model), it pairs the collections three ways and
prints pairing precision and recall for each language and over all:

* `mean`     — each document the mean of its sentences' unit vectors, pairs taken one-to-one
               by cosine (competitive linking), best first, from --mean-threshold up;
* `ordered`  — laser's order-keeping document vectors (`laser.align.pairing`), taken
               one-to-one by cosine the same way, from --ordered-threshold up;
* `laser`    — the whole method: the k nearest candidates of each document by those vectors,
               re-scored by aligning their sentences, one-to-one from --pair-threshold up.

Thresholds are fixed in advance (not tuned on these collections); --seed draws the collections.

    python bench/pair_documents.py [--corpus ../shared/data/corpus]
                                   [--langs deu,fra,...] [--seed 1]
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.align import AlignOptions  # noqa: E402
from laser.align.collection import Document  # noqa: E402
from laser.align.pairing import (DocumentMatch, PairingOptions, Side,  # noqa: E402
                                 document_vectors, one_to_one, pair_documents)
from laser.align.spool import SpooledCollection  # noqa: E402
from laser.encoder import Encoder  # noqa: E402
from laser.search.vectors import unit_rows  # noqa: E402


LANGS = "deu,fra,spa,rus,ita,por,tur,pol,jpn,cmn,ara,heb,hin,swh,vie,kor"


@dataclass
class Collections:
    """Two collections and which document of one is the translation of which of the other."""

    src: list[Document]
    trg: list[Document]
    truth: set[tuple[int, int]]


def dev_pairs(corpus: Path, lang: str) -> list[tuple[str, str]]:
    with gzip.open(corpus / "dev" / f"{lang}-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t")) for line in f]


def lengths(total: int, rng: random.Random) -> list[int]:
    """Document sizes of 5-50 sentences filling `total` lines."""
    sizes = []
    while sum(sizes) + 5 <= total:
        sizes.append(min(rng.randint(5, 50), total - sum(sizes)))
    return sizes


def dropped(side: list[str], rng: random.Random, rate: float) -> list[str]:
    """The side with each sentence dropped at `rate` (at least 3 kept)."""
    kept = [sentence for sentence in side if rng.random() >= rate]
    return kept if len(kept) >= 3 else side


def merged(side: list[str], rng: random.Random, rate: float) -> list[str]:
    """The side with a sentence and the next one joined at `rate`."""
    joined, i = [], 0
    while i < len(side):
        if i + 1 < len(side) and rng.random() < rate:
            joined.append(f"{side[i]} {side[i + 1]}")
            i += 2
        else:
            joined.append(side[i])
            i += 1
    return joined


def damaged(src: list[str], trg: list[str], rng: random.Random, drop: float,
            merge: float) -> tuple[list[str], ...]:
    """A translated pair with sentences dropped (`drop` of them, half from each side) and
    neighbours merged (`merge`, half on each side)."""
    return tuple(merged(dropped(side, rng, drop / 2), rng, merge / 2) for side in (src, trg))


def build(pairs: list[tuple[str, str]], rng: random.Random, drop: float,
          merge: float) -> Collections:
    """The two collections of one language's dev pairs (see the module's docstring)."""
    sizes, start, documents = lengths(len(pairs), rng), 0, []
    for size in sizes:
        documents.append(pairs[start:start + size])
        start += size
    rng.shuffle(documents)
    lonely = len(documents) // 6  # a fifth of each side: 4 translated for 1 alone, each side
    translated = documents[2 * lonely:]
    src_docs = [[f for f, _ in doc] for doc in translated] + \
        [[f for f, _ in doc] for doc in documents[:lonely]]
    trg_docs = [[e for _, e in doc] for doc in translated] + \
        [[e for _, e in doc] for doc in documents[lonely:2 * lonely]]
    for i in range(len(translated)):
        src_docs[i], trg_docs[i] = damaged(src_docs[i], trg_docs[i], rng, drop, merge)
    src_order, trg_order = rng.sample(range(len(src_docs)), len(src_docs)), \
        rng.sample(range(len(trg_docs)), len(trg_docs))
    src = [Document(f"doc-{n:04d}.txt", "", src_docs[i]) for n, i in enumerate(src_order)]
    trg = [Document(f"doc-{n:04d}.txt", "", trg_docs[i]) for n, i in enumerate(trg_order)]
    src_at = {i: n for n, i in enumerate(src_order)}
    trg_at = {i: n for n, i in enumerate(trg_order)}
    return Collections(src, trg, {(src_at[i], trg_at[i]) for i in range(len(translated))})


def by_cosine(src: np.ndarray, trg: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    """One-to-one pairs by the cosine of document vectors, best first, from `threshold` up."""
    cosines = unit_rows(src) @ unit_rows(trg).T
    matches = [DocumentMatch(i, j, float(cosines[i, j]))
               for i in range(len(src)) for j in range(len(trg))]
    return {(m.src, m.trg) for m in one_to_one(matches, threshold)}


def mean_vectors(documents: list[Document], embed) -> np.ndarray:
    return np.stack([unit_rows(embed(doc.sentences)).mean(axis=0) for doc in documents])


def ordered_vectors(documents: list[Document], embed, chunks: int) -> np.ndarray:
    """laser's order-keeping document vectors of `documents`."""
    with tempfile.TemporaryDirectory() as folder, \
            SpooledCollection(os.path.join(folder, "spool")) as spool:
        return document_vectors(Side.read(documents, spool, embed), chunks)


def scores(found: set[tuple[int, int]], truth: set[tuple[int, int]]) -> tuple[int, int, int]:
    return len(found & truth), len(found), len(truth)


def ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/corpus")
    parser.add_argument("--langs", default=LANGS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drop", type=float, default=0.1)
    parser.add_argument("--merge", type=float, default=0.1)
    parser.add_argument("--mean-threshold", type=float, default=0.5)
    parser.add_argument("--ordered-threshold", type=float, default=0.5)
    parser.add_argument("--pair-threshold", type=float, default=PairingOptions().threshold)
    args = parser.parse_args()
    encoder = Encoder.load()
    options = PairingOptions(threshold=args.pair_threshold)
    totals = {name: np.zeros(3, dtype=int) for name in ("mean", "ordered", "laser")}
    print(f"model {encoder.name}; drop {args.drop}, merge {args.merge}, seed {args.seed}")
    print("| language | documents (src / trg / translated) | mean P / R | ordered P / R | "
          "laser P / R | laser s |")
    print("|---|---|---|---|---|---|")
    for lang in args.langs.split(","):
        built = build(dev_pairs(args.corpus, lang), random.Random(f"{args.seed}-{lang}"),
                      args.drop, args.merge)
        cache: dict = {}

        def embed_as(code):
            def embed(texts):
                missing = [t for t in dict.fromkeys(texts) if (code, t) not in cache]
                if missing:
                    cache.update({(code, t): row for t, row in
                                  zip(missing, encoder.encode(missing, code))})
                return np.stack([cache[(code, t)] for t in texts])
            return embed
        embed_src, embed_trg = embed_as(lang), embed_as("en")
        found = {
            "mean": by_cosine(mean_vectors(built.src, embed_src),
                              mean_vectors(built.trg, embed_trg), args.mean_threshold),
            "ordered": by_cosine(ordered_vectors(built.src, embed_src, options.chunks),
                                 ordered_vectors(built.trg, embed_trg, options.chunks),
                                 args.ordered_threshold)}
        started = time.perf_counter()
        with pair_documents(built.src, built.trg, embed_src, embed_trg, AlignOptions(),
                            options) as pairing:
            found["laser"] = {(m.src, m.trg) for m in pairing.matches}
        seconds = time.perf_counter() - started
        cells = []
        for name, pairs in found.items():
            counts = scores(pairs, built.truth)
            totals[name] += counts
            cells.append(f"{ratio(counts[0], counts[1]):.3f} / {ratio(counts[0], counts[2]):.3f}")
        print(f"| {lang}-eng | {len(built.src)} / {len(built.trg)} / {len(built.truth)} | "
              f"{' | '.join(cells)} | {seconds:.1f} |", flush=True)
    cells = [f"{ratio(t[0], t[1]):.3f} / {ratio(t[0], t[2]):.3f}" for t in totals.values()]
    print(f"| all | | {' | '.join(cells)} | |")


if __name__ == "__main__":
    main()
