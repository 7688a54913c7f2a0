#!/usr/bin/env python3
"""Fits a language-ID model's calibration on held-out labelled lines and writes it beside the
model (models/default/laser-lid.ftz -> models/default/laser-lid.calibration.json), which
laser.lid reads whenever it loads the model.

    python tasks/lid_calibrate.py [FIT.tsv ...] [--corpus DIR [--per-language N]]
                                  [--model FILE] [--out FILE] [--eval NAME=FILE.tsv ...]
                                  [--no-map] [--one-curve]

The fitting lines: each FILE's `LABEL<TAB>LINE` rows (gzip when it ends in .gz), LABEL a label
of the model (`fra_Latn`); with --corpus, the corpus's dev split (the first N lines of each
language; the recipe never trains on them) and one piece of 1 to 3 words of each of its lines
(laser.lid.corpus.with_pieces). For each bucket of line lengths (1, 2, 3, 4-7 and 8 or more
words; a script written without spaces counts 2 characters a word), the temperature minimises
the negative log-likelihood of its fitting lines' labels (those a label of the model their
script allows, and not their script's only label), then the monotone map takes the tempered
best probability to the share of right answers; --one-curve fits one for every length. Prints
the expected calibration error (laser.lid.calibration: 15 equal-width bins, over the answered
lines) before and after, on the fitting lines and on each --eval set, and records those
figures in the file.
"""
from __future__ import annotations

import argparse
import gzip
from dataclasses import replace
from pathlib import Path

from laser.lid.calibration import (LENGTH_BUCKETS, FitOptions, answers_error, calibration_path,
                                   fit_calibration)
from laser.lid.corpus import dev_lines, with_pieces
from laser.lid.model import LanguageIdentifier, shipped_model_path


def labelled(path: Path) -> tuple[list[str], list[str]]:
    """The (lines, labels) of a `LABEL<TAB>LINE` file."""
    opener = gzip.open if path.suffix == ".gz" else open
    lines, labels = [], []
    with opener(path, "rt", encoding="utf-8") as rows:
        for number, row in enumerate(rows, start=1):
            label, tab, line = row.rstrip("\n").partition("\t")
            if not tab:
                raise SystemExit(f"{path}:{number}: not LABEL<TAB>LINE")
            lines.append(line)
            labels.append(label)
    return lines, labels


def fitting_lines(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The (lines, labels) to fit on: the files', then the corpus dev split's with its pieces."""
    lines, labels = [], []
    for path in args.fit:
        more_lines, more_labels = labelled(path)
        lines += more_lines
        labels += more_labels
    if args.corpus:
        more_lines, more_labels = with_pieces(dev_lines(args.corpus, args.per_language))
        lines += more_lines
        labels += more_labels
    return lines, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fit", nargs="*", type=Path, help="LABEL<TAB>LINE files to fit on")
    parser.add_argument("--corpus", type=Path,
                        help="also fit on this corpus's dev split and a piece of each line")
    parser.add_argument("--per-language", type=int, default=1000,
                        help="with --corpus: at most this many dev lines a language")
    parser.add_argument("--model", type=Path, default=None,
                        help="the fastText model (default: the shipped one)")
    parser.add_argument("--out", type=Path, help="default: beside the model")
    parser.add_argument("--eval", action="append", default=[], metavar="NAME=FILE",
                        help="a labelled set to report the error on (repeatable)")
    parser.add_argument("--no-map", action="store_true", help="the temperature alone")
    parser.add_argument("--one-curve", action="store_true",
                        help="one temperature and map for lines of every length")
    args = parser.parse_args()
    if not args.fit and not args.corpus:
        parser.error("give FIT.tsv files, --corpus DIR or both")
    model_path = args.model or shipped_model_path()
    raw = LanguageIdentifier(model_path, calibrated=False)
    sets = {"fit": fitting_lines(args)}
    for spec in args.eval:
        name, _, path = spec.partition("=")
        sets[name] = labelled(Path(path))
    scored = raw.scored(*sets["fit"])
    options = FitOptions(not args.no_map, (1,) if args.one_curve else LENGTH_BUCKETS)
    calibration = fit_calibration(scored, options)
    calibrated = LanguageIdentifier(model_path, calibrated=False)
    calibrated.calibration = calibration
    report = {}
    for name, (set_lines, set_labels) in sets.items():
        before, answered = answers_error(*raw.ranked(set_lines), set_labels)
        after, _ = answers_error(*calibrated.ranked(set_lines), set_labels)
        report[name] = {"lines": len(set_lines), "answered": answered,
                        "ece_before": round(before, 4), "ece_after": round(after, 4)}
        print(f"{name}: {len(set_lines)} lines, {answered} answered, expected calibration "
              f"error {before:.4f} -> {after:.4f}")
    for start, curve in zip(calibration.starts, calibration.curves):
        print(f"from {start} words: temperature {curve.temperature:.4f}, {len(curve.xs)} map "
              "points")
    print(f"fitted on {len(scored.gold)} lines")
    out = args.out or calibration_path(model_path)
    fitted_on = [str(path) for path in args.fit] + (
        [f"{args.corpus} dev, {args.per_language} lines a language, with pieces"]
        if args.corpus else [])
    replace(calibration, about={"fitted_on": fitted_on, "fitted_lines": len(scored.gold),
                                "errors": report}).save(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
