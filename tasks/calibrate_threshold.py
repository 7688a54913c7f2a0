#!/usr/bin/env python3
"""Calibrate the `laser mine` threshold of a model on the dev pairs, with distractors.

    OMP_NUM_THREADS=1 python tasks/calibrate_threshold.py ../shared/data/corpus \
        [--languages fra,deu,...] [--top 20] [--pairs 1000] [--orphans 0.2] [--distractors 1.0] \
        [--model M] [--seed 1] [--markdown OUT]

For each language (default: the --top languages with the most training pairs, as
tasks/corpus_xsim.py orders them), the dev pairs CORPUS/dev/XXX-eng.tsv.gz with distinct foreign
and English sentences (at most --pairs of them, drawn at random) make a mining task:

- source side: the foreign sentences;
- target side: the English translations of all but an --orphans share of them (those sources
  have no true partner), plus --distractors x (true pairs) English sentences of the other
  selected languages' dev files whose text is not an English side of this language's dev file.

Both sides are embedded with the model (`Encoder.encode`, raw text in) and mined with
`laser.mining.mine.mine` at the `laser mine` defaults (ratio margin, k = 4, retrieval max). The
greedy `max` retrieval walks pairs best first, so the pairs kept at threshold t are the pairs above
t of the run at threshold 0: precision, recall and F1 against the gold pairs are computed for
every t of a 0.001 grid. Reported per language and pooled over all languages: the best-F1
threshold, the lowest thresholds from which precision stays >= 0.95 and >= 0.90, P/R/F1 at the
round thresholds (the official advice 1.04-1.06 among them), and percentiles of the margin scores of the true and the wrong pairs
among the mined ones. Table on stdout, progress on stderr.
"""
from __future__ import annotations

import argparse
import gzip
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from laser.mining.corpus import Corpus
from laser.mining.mine import MineOptions, mine
from laser.mining.retrieval import Pairs
from laser.mining.summary import ScoreSummary
from laser.encoder import Encoder
from laser.search.vectors import Vectors
from laser.training.corpus import find_pair_files, read_pairs

GRID = np.round(np.arange(0.900, 1.500, 0.001), 3)
PRECISIONS = (0.95, 0.90)
FIXED = (1.00, 1.04, 1.05, 1.06, 1.08, 1.10, 1.12, 1.15, 1.20, 1.25)


@dataclass
class Task:
    """One language's mining task: sentences of both sides and the gold (source, target) pairs."""

    lang: str
    foreign: list[str]
    english: list[str]
    gold: set[tuple[int, int]]


@dataclass
class Mined:
    """The pairs of one mining run at threshold 0, best first: scores and whether each is gold."""

    scores: np.ndarray
    correct: np.ndarray
    gold: int

    @classmethod
    def pooled(cls, runs: list["Mined"]) -> "Mined":
        scores = np.concatenate([r.scores for r in runs])
        correct = np.concatenate([r.correct for r in runs])
        order = np.argsort(-scores, kind="stable")
        return cls(scores[order], correct[order], sum(r.gold for r in runs))


@dataclass
class Curve:
    """Precision, recall and F1 of the pairs kept (score > t) for every threshold t of a grid."""

    thresholds: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    kept: np.ndarray


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def train_sizes(train_dir: Path) -> dict[str, int]:
    """Training pairs per language (line counts of the pair files)."""
    sizes = {}
    for pair_file in find_pair_files(train_dir):
        with gzip.open(pair_file.path, "rb") if pair_file.path.name.endswith(".gz") \
                else open(pair_file.path, "rb") as f:
            sizes[pair_file.lang] = sum(1 for _ in f)
    return sizes


def pick_languages(corpus: Path, top: int, languages: Optional[str]) -> list[str]:
    """--languages as given, or the dev languages with the most training pairs (ties by name)."""
    if languages:
        return [lang.strip() for lang in languages.split(",") if lang.strip()]
    sizes = train_sizes(corpus / "train")
    dev = [pair_file.lang for pair_file in find_pair_files(corpus / "dev")]
    return sorted(dev, key=lambda lang: (-sizes.get(lang, 0), lang))[:top]


def distinct_pairs(path: Path) -> list[tuple[str, str]]:
    """Pairs whose foreign and English sentences both appear for the first time."""
    seen_foreign, seen_english, kept = set(), set(), []
    for foreign, english in read_pairs(path):
        if foreign not in seen_foreign and english not in seen_english:
            kept.append((foreign, english))
        seen_foreign.add(foreign)
        seen_english.add(english)
    return kept


def make_task(lang: str, pairs: list[tuple[str, str]], english_of: set[str], pool: list[str],
              args: argparse.Namespace, rng: np.random.Generator) -> Task:
    """Sample pairs, drop the orphans' translations, add distractors foreign to this language."""
    chosen = [pairs[i] for i in sorted(rng.permutation(len(pairs))[:args.pairs])]
    orphans = set(rng.permutation(len(chosen))[:round(args.orphans * len(chosen))].tolist())
    foreign = [f for f, _ in chosen]
    english = [e for i, (_, e) in enumerate(chosen) if i not in orphans]
    gold_sources = [i for i in range(len(chosen)) if i not in orphans]
    candidates = sorted(set(pool) - english_of)
    wanted = min(len(candidates), round(args.distractors * len(english)))
    distractors = [candidates[i] for i in rng.permutation(len(candidates))[:wanted]]
    english = english + distractors
    order = rng.permutation(len(english))
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    gold = {(source, int(position[target])) for target, source in enumerate(gold_sources)}
    return Task(lang, foreign, [english[i] for i in order], gold)


def make_tasks(dev: Path, languages: list[str], args: argparse.Namespace) -> list[Task]:
    """One task per language; distractors come from the other languages' dev English."""
    files = {pf.lang: pf.path for pf in find_pair_files(dev, languages)}
    pairs = {lang: distinct_pairs(path) for lang, path in files.items()}
    english_of = {lang: {e for _, e in read_pairs(path)} for lang, path in files.items()}
    rng = np.random.default_rng(args.seed)
    tasks = []
    for lang in languages:
        pool = sorted({e for other in languages if other != lang for _, e in pairs[other]})
        tasks.append(make_task(lang, pairs[lang], english_of[lang], pool, args, rng))
    return tasks


def embed_english(encoder: Encoder, tasks: list[Task]) -> dict[str, np.ndarray]:
    """Every English sentence of every task, embedded once."""
    texts = sorted({e for task in tasks for e in task.english})
    vectors = encoder.encode(texts, "en")
    return dict(zip(texts, vectors))


def corpus(name: str, size: int) -> Corpus:
    """A corpus of `size` distinct sentences, one a line (the mining API's view of a side)."""
    every = np.arange(size)
    return Corpus(name, every, every, every)


def mined_pairs(task: Task, x: np.ndarray, y: np.ndarray) -> Pairs:
    """Mine at the `laser mine` defaults (threshold 0: every pair `max` retrieval can keep)."""
    src, trg = corpus(f"{task.lang} dev", len(x)), corpus("eng dev", len(y))
    return mine(src, trg, Vectors(x, f"{task.lang} dev"), Vectors(y, "eng dev"), MineOptions())


def gold_flags(task: Task, pairs: Pairs) -> np.ndarray:
    """Whether each mined pair is a gold pair."""
    return np.array([(s, t) in task.gold for s, t in zip(pairs.src.tolist(), pairs.trg.tolist())],
                    dtype=bool)


def mine_task(task: Task, x: np.ndarray, y: np.ndarray) -> Mined:
    """The mined pairs' margin scores (best first) and whether each is gold."""
    pairs = mined_pairs(task, x, y)
    return Mined(pairs.score.astype(np.float64), gold_flags(task, pairs), len(task.gold))


def curve(mined: Mined, thresholds: np.ndarray = GRID) -> Curve:
    """P/R/F1 of the pairs scoring strictly above each threshold (precision 1 when none is)."""
    ascending = mined.scores[::-1]
    kept = len(ascending) - np.searchsorted(ascending, thresholds, side="right")
    hits = np.concatenate([[0], np.cumsum(mined.correct)])[kept]
    precision = np.where(kept > 0, hits / np.maximum(kept, 1), 1.0)
    recall = hits / max(mined.gold, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.nan_to_num(2 * precision * recall / (precision + recall))
    return Curve(thresholds, precision, recall, f1, kept)


def best_f1(c: Curve) -> int:
    """Index of the best F1 (the lowest such threshold on ties)."""
    return int(np.argmax(c.f1))


def precision_from(c: Curve, target: float) -> Optional[int]:
    """Index of the lowest threshold from which precision stays >= target at every higher one."""
    below = np.nonzero(c.precision < target)[0]
    start = 0 if len(below) == 0 else int(below[-1]) + 1
    return start if start < len(c.thresholds) else None


def at(c: Curve, threshold: float) -> int:
    """Index of the grid threshold nearest `threshold`."""
    return int(np.argmin(np.abs(c.thresholds - threshold)))


def point(c: Curve, i: Optional[int]) -> str:
    """`t (P/R/F1)` of grid index i."""
    if i is None:
        return "-"
    return (f"{c.thresholds[i]:.3f} ({100 * c.precision[i]:.1f}/{100 * c.recall[i]:.1f}/"
            f"{100 * c.f1[i]:.1f})")


def row(name: str, task_sizes: str, mined: Mined) -> list[str]:
    """One line of the per-language table."""
    c = curve(mined)
    true = ScoreSummary.of(mined.scores[mined.correct]).percentiles
    wrong = ScoreSummary.of(mined.scores[~mined.correct]).percentiles
    return [name, task_sizes, point(c, best_f1(c)),
            *(point(c, precision_from(c, p)) for p in PRECISIONS),
            point(c, at(c, 1.05)),
            f"{true[5]:.3f} / {true[50]:.3f}", f"{wrong[50]:.3f} / {wrong[95]:.3f}"]


HEADER = ["lang", "src / trg / gold", "best F1: t (P/R/F1 %)", "P >= 0.95 from t",
          "P >= 0.90 from t", "at t = 1.05", "true p5 / p50", "wrong p50 / p95"]


def markdown_table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def distribution(mined: Mined) -> str:
    """Percentiles of the true and the wrong mined pairs' scores (pooled), as a markdown table."""
    lines = ["| mined pairs | count | min | p5 | p25 | p50 | p75 | p95 | max |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, scores in (("true", mined.scores[mined.correct]),
                         ("wrong", mined.scores[~mined.correct]), ("all", mined.scores)):
        s = ScoreSummary.of(scores)
        values = [s.minimum, *s.percentiles.values(), s.maximum]
        lines.append(f"| {name} | {s.count} | " + " | ".join(f"{v:.4f}" for v in values) + " |")
    return "\n".join(lines)


def fixed_thresholds(mined: Mined) -> str:
    """Pooled P/R/F1 at round thresholds, the official advice 1.04-1.06 among them."""
    c = curve(mined)
    lines = ["| threshold | " + " | ".join(f"{t:.2f}" for t in FIXED) + " |",
             "|---|" + "---:|" * len(FIXED)]
    for name, values in (("precision %", c.precision), ("recall %", c.recall), ("F1 %", c.f1),
                         ("pairs kept", c.kept)):
        shown = (f"{100 * values[at(c, t)]:.1f}" if name.endswith("%") else
                 str(int(values[at(c, t)])) for t in FIXED)
        lines.append(f"| {name} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def benchmark_parser(doc: str, corpus_help: str) -> argparse.ArgumentParser:
    """The options of the mining benchmark, shared with tasks/pair_filter_benchmark.py."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("corpus", type=Path, help=corpus_help)
    parser.add_argument("--languages", help="Comma-separated ISO 639-3 codes.")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=1000, help="At most this many per language.")
    parser.add_argument("--orphans", type=float, default=0.2,
                        help="Share of sources whose translation is removed.")
    parser.add_argument("--distractors", type=float, default=1.0,
                        help="Distractor English sentences per true pair.")
    parser.add_argument("--model", help="Model directory or name (default: the shipped model).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", type=Path, help="Write the tables here too.")
    return parser


def parse_args() -> argparse.Namespace:
    return benchmark_parser(__doc__, "Corpus folder with dev/ (and train/).").parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    languages = pick_languages(args.corpus, args.top, args.languages)
    log(f"languages: {', '.join(languages)}")
    tasks = make_tasks(args.corpus / "dev", languages, args)
    encoder = Encoder.load(args.model or "default")
    english = embed_english(encoder, tasks)
    log(f"embedded {len(english)} English sentences ({time.perf_counter() - started:.0f} s)")
    rows, runs = [], []
    for task in tasks:
        x = encoder.encode(task.foreign, task.lang)
        mined = mine_task(task, x, np.stack([english[e] for e in task.english]))
        runs.append(mined)
        sizes = f"{len(task.foreign)} / {len(task.english)} / {len(task.gold)}"
        rows.append(row(task.lang, sizes, mined))
        log(f"{task.lang}: {sizes}, best F1 {rows[-1][2]} "
            f"({time.perf_counter() - started:.0f} s)")
    pooled = Mined.pooled(runs)
    total = (f"{sum(len(t.foreign) for t in tasks)} / {sum(len(t.english) for t in tasks)} / "
             f"{pooled.gold}")
    rows.append(row("**all (pooled)**", total, pooled))
    text = "\n\n".join([markdown_table(rows), distribution(pooled), fixed_thresholds(pooled),
                        f"{len(tasks)} languages in {time.perf_counter() - started:.0f} s."])
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
