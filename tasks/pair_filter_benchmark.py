#!/usr/bin/env python3
"""Compare the learned pair filter with the margin threshold on the mining benchmark of
tasks/calibrate_threshold.py.

    OMP_NUM_THREADS=1 python tasks/pair_filter_benchmark.py ../shared/data/corpus \
        [--top 20] [--train-pairs 500] [--negatives 1:1,1:0,0:1] [--model M] [--seed 1] \
        [--markdown OUT] [--save-filter DIR]

Training: --train-pairs pairs per benchmark language, drawn at random from
CORPUS/train/XXX-eng.tsv.gz (disjoint from dev), all languages in one filter (foreign -> English),
trained with the library defaults (`FilterOptions`) except the negatives, given as random:hard
per positive (hard ones in each direction); one filter per --negatives entry, the first one is
the main one.

Benchmark: exactly calibrate_threshold's tasks (languages, --pairs, --orphans, --distractors,
seed), mined at the `laser mine` defaults at threshold 0; every mined pair is then kept or
dropped by (a) its margin score, (b) the filter's probability, (c) both (margin > t and
probability > p); plain cosine, a pair-only score like the filter's, for reference. Precision,
recall and F1 against the gold pairs are pooled over the languages (one threshold for all);
"best" thresholds are chosen on the benchmark itself, for every rule alike. Tables on stdout, progress on stderr.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from calibrate_threshold import (GRID, Mined, benchmark_parser, curve, embed_english, gold_flags,
                                 log, make_tasks, mined_pairs, pick_languages)
from laser.apps.pair_filter import EmbeddingModel, FilterOptions, PairFilter
from laser.mining.mine import aligned_similarities
from laser.encoder import Encoder
from laser.search.vectors import Vectors
from laser.training.corpus import find_pair_files, read_pairs

PROBABILITIES = np.round(np.arange(0.0, 1.0, 0.001), 3)
COMBINED_MARGINS = np.round(np.arange(0.90, 1.30, 0.01), 2)
COSINES = np.round(np.arange(0.0, 1.0, 0.001), 3)
PRECISIONS = (0.90, 0.95)


@dataclass
class Candidates:
    """Every mined pair of the benchmark: its language, margin, cosine, filter probabilities (one
    array per filter) and whether it is gold; `gold` counts the gold pairs of each language."""

    lang: np.ndarray
    margin: np.ndarray
    cosine: np.ndarray
    probability: dict[str, np.ndarray]
    correct: np.ndarray
    gold: dict[str, int]

    def select(self, keep: np.ndarray, lang: Optional[str] = None) -> "Candidates":
        gold = {lang: self.gold[lang]} if lang else self.gold
        return Candidates(self.lang[keep], self.margin[keep], self.cosine[keep],
                          {k: v[keep] for k, v in self.probability.items()}, self.correct[keep],
                          gold)

    def ranked(self, scores: np.ndarray) -> Mined:
        order = np.argsort(-scores, kind="stable")
        return Mined(scores[order], self.correct[order], sum(self.gold.values()))


@dataclass
class Point:
    """One rule at one threshold (as text and as numbers): precision, recall, F1, pairs kept."""

    rule: str
    threshold: str
    precision: float
    recall: float
    f1: float
    kept: int
    values: tuple[float, ...] = ()

    def cells(self) -> list[str]:
        return [self.rule, self.threshold, f"{100 * self.precision:.1f}",
                f"{100 * self.recall:.1f}", f"{100 * self.f1:.1f}", str(self.kept)]


def point(rule: str, threshold: str, mined: Mined, grid: np.ndarray, i: int,
          values: tuple[float, ...] = ()) -> Point:
    c = curve(mined, grid)
    return Point(rule, threshold, c.precision[i], c.recall[i], c.f1[i], int(c.kept[i]), values)


def at(grid: np.ndarray, value: float) -> int:
    return int(np.argmin(np.abs(grid - value)))


def best_points(rule: str, mined: Mined, grid: np.ndarray, fmt: str) -> list[Point]:
    """The best-F1 threshold, and the highest recall at precision >= 0.90 and >= 0.95."""
    c = curve(mined, grid)
    points = [point(f"{rule}, best F1", f"> {grid[int(np.argmax(c.f1))]:{fmt}}", mined, grid,
                    int(np.argmax(c.f1)))]
    for target in PRECISIONS:
        ok = np.flatnonzero(c.precision >= target)
        if len(ok):
            i = int(ok[np.argmax(c.recall[ok])])
            points.append(point(f"{rule}, most recall at P >= {target:.2f}",
                                f"> {grid[i]:{fmt}}", mined, grid, i))
    return points


def combined_points(candidates: Candidates, name: str) -> list[Point]:
    """Margin > t and probability > p: the best F1, and the most recall at P >= 0.90 / 0.95,
    over a grid of both thresholds."""
    best: dict[str, tuple[float, Point]] = {}
    for margin in COMBINED_MARGINS:
        part = candidates.select(candidates.margin > margin)
        mined = part.ranked(part.probability[name])
        c = curve(mined, PROBABILITIES)

        def both(rule: str, i: int) -> Point:
            return point(rule, f"margin > {margin:.2f}, p > {PROBABILITIES[i]:.3f}", mined,
                         PROBABILITIES, i, (float(margin), float(PROBABILITIES[i])))
        i = int(np.argmax(c.f1))
        if "f1" not in best or c.f1[i] > best["f1"][0]:
            best["f1"] = (c.f1[i], both("(c) both, best F1", i))
        for target in PRECISIONS:
            ok = np.flatnonzero(c.precision >= target)
            if len(ok):
                i = int(ok[np.argmax(c.recall[ok])])
                key = f"P >= {target:.2f}"
                if key not in best or c.recall[i] > best[key][0]:
                    best[key] = (c.recall[i], both(f"(c) both, most recall at {key}", i))
    return [value[1] for value in best.values()]


def comparison(candidates: Candidates, names: list[str]) -> list[Point]:
    """The rows of the pooled table."""
    margin = candidates.ranked(candidates.margin)
    rows = [point("mined, no threshold", "-", margin, GRID, 0),
            point("(a) margin, recommended", "> 1.100", margin, GRID, at(GRID, 1.10))]
    rows += best_points("(a) margin", margin, GRID, ".3f")
    cosine = candidates.ranked(candidates.cosine)
    rows += best_points("cosine", cosine, COSINES, ".3f")
    for name in names:
        mined = candidates.ranked(candidates.probability[name])
        rows.append(point(f"(b) filter {name}", "> 0.500", mined, PROBABILITIES,
                          at(PROBABILITIES, 0.5)))
        rows += best_points(f"(b) filter {name}", mined, PROBABILITIES, ".3f")
    return rows + combined_points(candidates, names[0])


def per_language(candidates: Candidates, name: str, combined: Point) -> str:
    """P/R/F1 of each language at the pooled thresholds: margin 1.10, filter 0.5, (c) best."""
    margin_t, prob_t = combined.values
    lines = [f"| lang | gold | (a) margin > 1.10 | (b) filter {name} > 0.5 | "
             f"(c) {combined.threshold} |",
             "|---|---:|---:|---:|---:|"]
    for lang in candidates.gold:
        part = candidates.select(candidates.lang == lang, lang)
        prob = part.probability[name]
        cells = []
        for keep in (part.margin > 1.10, prob > 0.5, (part.margin > margin_t) & (prob > prob_t)):
            hits, kept = int(part.correct[keep].sum()), int(keep.sum())
            p, r = hits / max(kept, 1), hits / part.gold[lang]
            f1 = 2 * p * r / max(p + r, 1e-9)
            cells.append(f"{100 * p:.1f} / {100 * r:.1f} / {100 * f1:.1f}")
        lines.append(f"| {lang} | {part.gold[lang]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def training_pairs(train_dir: Path, languages: list[str], count: int,
                   rng: np.random.Generator) -> dict[str, list[tuple[str, str]]]:
    """`count` random pairs of each language's training file."""
    chosen = {}
    for pair_file in find_pair_files(train_dir, languages):
        pairs = list(read_pairs(pair_file.path))
        chosen[pair_file.lang] = [pairs[i] for i in sorted(rng.permutation(len(pairs))[:count])]
    return chosen


def train_filters(encoder: Encoder, pairs: dict[str, list[tuple[str, str]]], specs: list[str],
                  seed: int) -> dict[str, PairFilter]:
    """One filter per `random:hard` spec, on the same embedded pairs."""
    x = np.concatenate([encoder.encode([f for f, _ in p], lang) for lang, p in pairs.items()])
    y = encoder.encode([e for p in pairs.values() for _, e in p], "en")
    log(f"embedded {len(x)} training pairs")
    filters = {}
    for spec in specs:
        random, hard = (int(n) for n in spec.split(":"))
        options = FilterOptions(random_negatives=random, hard_negatives=hard, seed=seed)
        filters[spec] = PairFilter.train(x, y, EmbeddingModel.of(encoder), options, progress=True,
                                         info={"languages": list(pairs)})
        t = filters[spec].record["training"]
        log(f"filter {spec}: {t['seconds']} s, best epoch {t['best_epoch']} of {t['epochs_run']},"
            f" dev AUC {t['dev']['auc']:.4f}")
    return filters


def benchmark(encoder: Encoder, args: argparse.Namespace, languages: list[str],
              filters: dict[str, PairFilter]) -> Candidates:
    """Mine every task at threshold 0 and score the mined pairs with every filter."""
    tasks = make_tasks(args.corpus / "dev", languages, args)
    english = embed_english(encoder, tasks)
    parts = []
    for task in tasks:
        x = encoder.encode(task.foreign, task.lang)
        y = np.stack([english[e] for e in task.english])
        pairs = mined_pairs(task, x, y)
        probability = {name: f.probabilities(x[pairs.src], y[pairs.trg])
                       for name, f in filters.items()}
        cosine = aligned_similarities(Vectors(x), Vectors(y), pairs.src, pairs.trg)
        parts.append(Candidates(np.full(len(pairs), task.lang), pairs.score.astype(np.float64),
                                cosine.astype(np.float64), probability, gold_flags(task, pairs),
                                {task.lang: len(task.gold)}))
        log(f"{task.lang}: {len(pairs)} pairs mined")
    return Candidates(np.concatenate([p.lang for p in parts]),
                      np.concatenate([p.margin for p in parts]),
                      np.concatenate([p.cosine for p in parts]),
                      {name: np.concatenate([p.probability[name] for p in parts])
                       for name in filters},
                      np.concatenate([p.correct for p in parts]),
                      {lang: n for p in parts for lang, n in p.gold.items()})


def training_table(filters: dict[str, PairFilter]) -> str:
    lines = ["| filter (random:hard) | train pos / neg | dev pos / neg | epochs (best) | dev acc | "
             "dev AUC | seconds |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, f in filters.items():
        t = f.record["training"]
        train, dev = t["examples"]["train"], t["examples"]["dev"]
        lines.append(f"| {name} | {train['positives']} / {train['negatives']} | "
                     f"{dev['positives']} / {dev['negatives']} | {t['epochs_run']} "
                     f"({t['best_epoch']}) | {t['dev']['accuracy']:.4f} | {t['dev']['auc']:.4f} | "
                     f"{t['seconds']} |")
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = benchmark_parser(__doc__, "Corpus folder with train/ and dev/.")
    parser.add_argument("--train-pairs", type=int, default=500,
                        help="Training pairs per language.")
    parser.add_argument("--negatives", default="1:1,1:0,0:1",
                        help="Filters to train, as random:hard negatives per positive.")
    parser.add_argument("--save-filter", type=Path, help="Save the main filter in this folder.")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    languages = pick_languages(args.corpus, args.top, args.languages)
    log(f"languages: {', '.join(languages)}")
    encoder = Encoder.load(args.model or "default")
    pairs = training_pairs(args.corpus / "train", languages, args.train_pairs,
                           np.random.default_rng(args.seed))
    specs = args.negatives.split(",")
    filters = train_filters(encoder, pairs, specs, args.seed)
    if args.save_filter:
        filters[specs[0]].save(args.save_filter)
    candidates = benchmark(encoder, args, languages, filters)
    rows = comparison(candidates, specs)
    table = ["| rule | threshold | precision % | recall % | F1 % | pairs kept |",
             "|---|---|---:|---:|---:|---:|"] + ["| " + " | ".join(r.cells()) + " |" for r in rows]
    combined = next(r for r in rows if r.rule == "(c) both, best F1")
    text = "\n\n".join([training_table(filters), "\n".join(table),
                        per_language(candidates, specs[0], combined),
                        f"{len(languages)} languages, {len(candidates.margin)} mined pairs, "
                        f"{sum(candidates.gold.values())} gold, in "
                        f"{time.perf_counter() - started:.0f} s."])
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
