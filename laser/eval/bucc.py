"""BUCC-style mining F1: mine the training split, choose the threshold with the best F1 there,
then mine the test split with it."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ..errors import LaserError, located
from ..io.text import read_lines
from ..mining.corpus import Corpus, corpus_vectors, scan_corpus
from ..mining.mine import MineOptions, mine
from .xsim import Embedder

def bucc_candidates(pairs_lines: tuple[np.ndarray, np.ndarray, np.ndarray], src: Corpus,
                    trg: Corpus, src_ids: Sequence[str],
                    trg_ids: Sequence[str]) -> dict[tuple[str, str], float]:
    """Mined (src line, trg line, score) as id pairs; a unified sentence stands for its lines."""
    src_lines, trg_lines = _lines_by_sentence(src), _lines_by_sentence(trg)
    scores = {}
    for s, t, score in zip(*(column.tolist() for column in pairs_lines)):
        for i in src_lines[src.line_sentence[s]]:
            for j in trg_lines[trg.line_sentence[t]]:
                scores[(src_ids[i], trg_ids[j])] = score
    return scores


def _lines_by_sentence(corpus: Corpus) -> list[list[int]]:
    order = np.argsort(corpus.line_sentence, kind="stable")
    bounds = np.searchsorted(corpus.line_sentence[order], np.arange(corpus.sentences + 1))
    return [order[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:])]


def best_threshold(scores: dict[tuple[str, str], float], gold: set) -> float:
    """The official BUCC optimisation: walk candidates best first; the cut after the prefix with
    the highest F1, halfway to the next score (at the last score when it is the last)."""
    items = sorted(scores.items(), key=lambda item: -item[1])
    if not items or not gold:
        return 0.0
    values = np.array([score for _, score in items])
    correct = np.cumsum([pair in gold for pair, _ in items])
    f1 = 2 * correct / (np.arange(1, len(items) + 1) + len(gold))
    if correct[-1] == 0:
        return 0.0
    best = int(np.argmax(f1))
    return float(values[best] if best + 1 == len(values) else (values[best] + values[best + 1]) / 2)


@dataclass
class Scores:
    precision: float
    recall: float
    f1: float


def precision_recall(scores: dict[tuple[str, str], float], gold: set, threshold: float) -> Scores:
    """Precision, recall and F1 of the candidates scoring at least `threshold`."""
    extracted = {pair for pair, score in scores.items() if score >= threshold}
    correct = len(extracted & gold)
    precision = correct / len(extracted) if extracted else 0.0
    recall = correct / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
    return Scores(precision, recall, f1)


@dataclass
class BuccReport:
    threshold: float
    train: Scores
    test: Optional[Scores]
    extracted: list[tuple[str, str]]


def bucc_files(directory: str, pair: str, split: str) -> tuple[str, str, str]:
    """(source, English, gold) files of a split: [DIR/]PAIR/PAIR.SPLIT.{xx,en,gold}."""
    lang = pair.split("-")[0]
    for base in (Path(directory) / pair, Path(directory)):
        src = base / f"{pair}.{split}.{lang}"
        if src.is_file():
            return str(src), str(base / f"{pair}.{split}.en"), str(base / f"{pair}.{split}.gold")
    raise LaserError(f"{directory}: no {pair}.{split}.{lang} (nor {pair}/{pair}.{split}.{lang})")


def read_id_file(path: str, text_out: str) -> list[str]:
    """Ids of a BUCC `id<TAB>sentence` file; the sentences are written to `text_out`."""
    ids = []
    with open(text_out, "w", encoding="utf-8", newline="\n") as out:
        for number, line in enumerate(read_lines(path), 1):
            identifier, tab, text = line.partition("\t")
            if not tab:
                raise located(path, number, "expected id<TAB>sentence")
            ids.append(identifier)
            out.write(text + "\n")
    return ids


def read_gold(path: str) -> set[tuple[str, str]]:
    """(source id, English id) pairs of a BUCC gold file."""
    gold = set()
    for number, line in enumerate(read_lines(path), 1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise located(path, number, "expected source_id<TAB>english_id")
        gold.add((fields[0], fields[1]))
    return gold


def bucc_split_candidates(directory: str, pair: str, split: str, embed: Embedder,
                          k: int = 4) -> dict[tuple[str, str], float]:
    """Mine a split as the official BUCC task does (max retrieval, ratio margin, unified)."""
    lang = pair.split("-")[0]
    src_file, trg_file, _ = bucc_files(directory, pair, split)
    with tempfile.TemporaryDirectory(prefix=".laser-bucc-") as tmp:
        src_text = os.path.join(tmp, os.path.basename(src_file))
        trg_text = os.path.join(tmp, os.path.basename(trg_file))
        src_ids, trg_ids = read_id_file(src_file, src_text), read_id_file(trg_file, trg_text)
        src, trg = scan_corpus(src_text, unify=True), scan_corpus(trg_text, unify=True)
        with embed(src_text, lang) as (x_matrix, x_name), \
                embed(trg_text, "en") as (y_matrix, y_name):
            pairs = mine(src, trg, corpus_vectors(src, x_matrix, x_name),
                         corpus_vectors(trg, y_matrix, y_name), MineOptions(k=k))
    return bucc_candidates((pairs.src, pairs.trg, pairs.score), src, trg, src_ids, trg_ids)


def bucc_evaluate(directory: str, pair: str, embed: Embedder, train_split: str = "training",
                  test_split: str = "test", k: int = 4) -> BuccReport:
    """Threshold tuned for F1 on the training split, then precision/recall/F1 on the test split
    (when its gold file exists)."""
    train_gold = read_gold(bucc_files(directory, pair, train_split)[2])
    train = bucc_split_candidates(directory, pair, train_split, embed, k)
    threshold = best_threshold(train, train_gold)
    test = bucc_split_candidates(directory, pair, test_split, embed, k)
    test_gold_file = bucc_files(directory, pair, test_split)[2]
    test_scores = (precision_recall(test, read_gold(test_gold_file), threshold)
                   if os.path.isfile(test_gold_file) else None)
    extracted = [pair for pair, score in test.items() if score >= threshold]
    return BuccReport(threshold, precision_recall(train, train_gold, threshold), test_scores,
                      extracted)
