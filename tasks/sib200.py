#!/usr/bin/env python3
"""Zero-shot topic classification on SIB-200: train on English, evaluate on every other language.

    python tasks/sib200.py SIB_DIR [--model M | --teacher T] [--seed 1] [--retrieval]
                           [--markdown OUT.md] [--chart OUT.png]

SIB_DIR holds LANG/train.tsv and LANG/dev.tsv (`index_id<TAB>category<TAB>text`, with a header)
for eng_Latn and the other languages. The classifier of `laser classify` (an MLP on the frozen
embeddings, default options) is trained on eng_Latn/train, stopped early on eng_Latn/dev, and
applied unchanged to each other language's dev split. Prints accuracy and macro-F1 per language,
the mean accuracy over the other languages, and the accuracy pooled over FLORES dev rows and over
FLORES devtest rows (index_id >= 997; the shipped model's training corpus holds their
translations). --chart draws a bar chart (needs matplotlib, a task-only dependency).

--retrieval also reports how often the nearest neighbour (cosine) of an English sentence among a
language's rows, or of a row among the English ones, is not its translation, over the train and
dev rows and within each FLORES split, pooled over the languages: cross-lingual alignment of long
sentences the corpus holds and of sentences it never saw, apart from the classifier.

--teacher scores a distillation teacher of `laser train` (`use`, `e5`, `use+e5`: the `train`
extra) with the same classifier instead of a model: the level that distillation aims at.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np

from laser.apps.classify import Classifier, Labelled, ModelId, TrainOptions, embed
from laser.eval.classification import Evaluation
from laser.eval.xsim import xsim_misses
from laser.encoder import Encoder
from laser.search.vectors import Vectors
from laser.training.teachers import TeacherEncoder, make_teacher

PIVOT = "eng_Latn"
FIRST_DEVTEST_ID = 997  # FLORES-200 devtest sentences, which the shipped model's corpus holds
PARTS = ("FLORES dev", "FLORES devtest")
SPLITS = ("train", "dev")


def read_split(path: Path) -> tuple[list[int], list[str], list[str]]:
    """(index ids, labels, texts) of a SIB-200 file: a header, then index_id, category, text."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    if any(len(row) != 3 for row in rows):
        sys.exit(f"{path}: expected index_id<TAB>category<TAB>text rows")
    return [int(row[0]) for row in rows], [row[1] for row in rows], [row[2] for row in rows]


def embedded(encoder: Encoder | TeacherEncoder, path: Path) -> tuple[Labelled, np.ndarray]:
    """The split embedded in its language, and which rows are FLORES devtest sentences."""
    ids, labels, texts = read_split(path)
    data = Labelled(embed(encoder, texts, path.parent.name), labels, str(path))
    return data, np.array(ids) >= FIRST_DEVTEST_ID


def split_rows(directory: Path) -> dict[int, str]:
    """index_id -> text over the language's train and dev splits (those it has)."""
    rows: dict[int, str] = {}
    for split in SPLITS:
        if (path := directory / f"{split}.tsv").exists():
            ids, _, texts = read_split(path)
            rows.update(zip(ids, texts))
    return rows


def retrieval_misses(encoder: Encoder | TeacherEncoder, sib_dir: Path,
                     languages: list[Path]) -> dict[str, tuple[int, int]]:
    """Per FLORES split, (misses, searches) of eng<->X nearest-neighbour search over the rows
    each language shares with English, both directions, pooled over the languages."""
    english = split_rows(sib_dir / PIVOT)
    english_ids = sorted(english)
    english_vectors = dict(zip(english_ids, embed(encoder, [english[i] for i in english_ids],
                                                  PIVOT)))
    pooled = {part: (0, 0) for part in PARTS}
    for directory in languages:
        rows = split_rows(directory)
        ids = sorted(rows.keys() & english.keys())
        foreign = embed(encoder, [rows[i] for i in ids], directory.name)
        pivot = np.stack([english_vectors[i] for i in ids])
        devtest = np.array(ids) >= FIRST_DEVTEST_ID
        for part, keep in zip(PARTS, (~devtest, devtest)):
            if keep.any():
                misses = np.concatenate(xsim_misses(Vectors(pivot[keep]), Vectors(foreign[keep])))
                pooled[part] = (pooled[part][0] + int(misses.sum()),
                                pooled[part][1] + len(misses))
    return {part: counts for part, counts in pooled.items() if counts[1]}


def split_scores(classifier: Classifier, data: Labelled, devtest: np.ndarray) -> dict:
    """Scores on the FLORES dev rows and on the FLORES devtest rows of `data` (a part with no
    rows is left out)."""
    return {part: classifier.evaluate(Labelled(
                data.vectors[rows], [label for label, keep in zip(data.labels, rows) if keep]))
            for part, rows in zip(PARTS, (~devtest, devtest)) if rows.any()}


def markdown(results: dict[str, Evaluation], by_part: dict[str, Evaluation],
             english: dict[str, Evaluation], retrieval: Optional[dict[str, tuple[int, int]]],
             model: str, seed: int, seconds: float) -> str:
    accuracies = [result.accuracy for result in results.values()]
    lines = [f"Mean zero-shot accuracy over {len(results)} languages: "
             f"**{100 * np.mean(accuracies):.2f}%** (min {100 * min(accuracies):.2f}%, max "
             f"{100 * max(accuracies):.2f}%; chance 14.29%). English dev (used for early "
             f"stopping): {100 * english['all'].accuracy:.2f}%.",
             f"By FLORES split, the {len(results)} languages pooled: {parts(by_part)}; "
             f"English: {parts(english)}."]
    if retrieval is not None:
        lines.append(f"eng<->X retrieval error over the train and dev rows, the {len(results)} "
                     f"languages pooled: {retrieval_parts(retrieval)}.")
    lines += [f"Model `{model}`, seed {seed}, {seconds:.0f} s on this machine.", "",
              "| language | dev accuracy % | dev macro-F1 % |", "|---|---:|---:|"]
    for lang, result in sorted(results.items(), key=lambda item: -item[1].accuracy):
        lines.append(f"| {lang} | {100 * result.accuracy:.2f} | {100 * result.macro_f1:.2f} |")
    return "\n".join(lines) + "\n"


def parts(scores: dict[str, Evaluation]) -> str:
    return ", ".join(f"{part} rows {100 * scores[part].accuracy:.2f}% ({scores[part].examples})"
                     for part in PARTS if part in scores)


def retrieval_parts(retrieval: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{part} rows {100 * misses / searches:.2f}% ({searches} searches)"
                     for part, (misses, searches) in retrieval.items())


def draw_chart(results: dict[str, Evaluation], path: Path, title: str) -> None:
    """One bar per language (accuracy), with the mean and chance as horizontal lines."""
    try:
        import matplotlib
    except ImportError:
        sys.exit("--chart needs matplotlib: pip install matplotlib==3.11.2")
    matplotlib.use("Agg")
    from matplotlib import pyplot
    ordered = sorted(results.items(), key=lambda item: -item[1].accuracy)
    accuracies = [100 * result.accuracy for _, result in ordered]
    figure, axes = pyplot.subplots(figsize=(12, 4.5), dpi=100)
    axes.bar([lang for lang, _ in ordered], accuracies, color="#4c72b0")
    axes.axhline(np.mean(accuracies), color="#dd8452", label=f"mean {np.mean(accuracies):.1f}%")
    axes.axhline(100 / 7, color="grey", linestyle="--", label="chance 14.3%")
    axes.set_ylabel("dev accuracy (%)")
    axes.set_ylim(0, 100)
    axes.set_title(title)
    axes.tick_params(axis="x", labelrotation=60)
    axes.legend(loc="upper right")
    figure.tight_layout()
    figure.savefig(path)


def load_encoder(args: argparse.Namespace) -> tuple[Encoder | TeacherEncoder, ModelId]:
    """The model or teacher to score, and the identity its classifier is recorded under."""
    if args.teacher:
        teacher = make_teacher(args.teacher, threads=2)
        return TeacherEncoder(teacher), ModelId(f"teacher:{teacher.name}",
                                                {"encoder": f"teacher {teacher.name}"})
    encoder = Encoder.load(args.model)
    return encoder, ModelId.of(encoder.files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("sib_dir", type=Path)
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--model", help="Model directory or name (default: the shipped model).")
    choice.add_argument("--teacher", help="Score this `laser train --teacher` instead of a model.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retrieval", action="store_true",
                        help="Also report eng<->X retrieval error on the train and dev rows.")
    parser.add_argument("--markdown", type=Path, help="Write the table here.")
    parser.add_argument("--chart", type=Path, help="Write a bar chart (PNG) here.")
    args = parser.parse_args()
    started = time.perf_counter()
    encoder, model_id = load_encoder(args)
    pivot = args.sib_dir / PIVOT
    english_dev, english_devtest = embedded(encoder, pivot / "dev.tsv")
    classifier = Classifier.train(embedded(encoder, pivot / "train.tsv")[0],
                                  model_id, english_dev,
                                  TrainOptions(seed=args.seed))
    english = {"all": classifier.evaluate(english_dev),
               **split_scores(classifier, english_dev, english_devtest)}
    results, by_part = {}, {}
    languages = sorted(path for path in args.sib_dir.iterdir()
                       if path.is_dir() and path.name != PIVOT)
    for directory in languages:
        dev, devtest = embedded(encoder, directory / "dev.tsv")
        results[directory.name] = classifier.evaluate(dev)
        for part, scores in split_scores(classifier, dev, devtest).items():
            by_part[part] = by_part[part] + scores if part in by_part else scores
        print(f"{directory.name}\t{100 * results[directory.name].accuracy:.2f}", file=sys.stderr)
    model = f"teacher {args.teacher}" if args.teacher else args.model or "default"
    retrieval = (retrieval_misses(encoder, args.sib_dir, languages) if args.retrieval else None)
    table = markdown(results, by_part, english, retrieval, model, args.seed,
                     time.perf_counter() - started)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    if args.chart:
        draw_chart(results, args.chart, f"SIB-200 zero-shot topic classification, English -> "
                                        f"{len(results)} languages (model {model})")
    print(table)


if __name__ == "__main__":
    main()
