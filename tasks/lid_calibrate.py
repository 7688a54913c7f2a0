#!/usr/bin/env python3
"""Fits a language-ID model's calibration on held-out labelled lines and writes it beside the
model (models/default/laser-lid.ftz -> models/default/laser-lid.calibration.json), which
laser.lid reads whenever it loads the model.

    python tasks/lid_calibrate.py FIT.tsv [FIT2.tsv ...] [--model FILE] [--out FILE]
                                  [--eval NAME=FILE.tsv ...] [--no-map]

Each FILE holds `LABEL<TAB>LINE` rows (gzip when it ends in .gz), LABEL a label of the model
(`fra_Latn`). The temperature minimises the negative log-likelihood of the fitting lines' labels
(those a label of the model their script allows, and not their script's only label), then the
monotone map takes the tempered best probability to the share of right answers. Prints the
expected calibration error (laser.lid.calibration: 15 equal-width bins, over the answered lines)
before and after, on the fitting lines and on each --eval set, and records those figures in the
file.
"""
from __future__ import annotations

import argparse
import gzip
from pathlib import Path

from laser.lid.calibration import answers_error, calibration_path, fit_calibration
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fit", nargs="+", type=Path, help="LABEL<TAB>LINE files to fit on")
    parser.add_argument("--model", type=Path, default=None,
                        help="the fastText model (default: the shipped one)")
    parser.add_argument("--out", type=Path, help="default: beside the model")
    parser.add_argument("--eval", action="append", default=[], metavar="NAME=FILE",
                        help="a labelled set to report the error on (repeatable)")
    parser.add_argument("--no-map", action="store_true", help="the temperature alone")
    args = parser.parse_args()
    model_path = args.model or shipped_model_path()
    raw = LanguageIdentifier(model_path, calibrated=False)
    lines, labels = [], []
    for path in args.fit:
        more_lines, more_labels = labelled(path)
        lines += more_lines
        labels += more_labels
    sets = {"fit": (lines, labels)}
    for spec in args.eval:
        name, _, path = spec.partition("=")
        sets[name] = labelled(Path(path))
    scored = raw.scored(lines, labels)
    calibration = fit_calibration(scored, monotone=not args.no_map)
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
    print(f"temperature {calibration.temperature:.4f}, {len(calibration.xs)} map points, "
          f"fitted on {len(scored.gold)} lines")
    out = args.out or calibration_path(model_path)
    type(calibration)(calibration.temperature, calibration.xs, calibration.ys,
                      {"fitted_on": [str(path) for path in args.fit],
                       "fitted_lines": len(scored.gold), "errors": report}).save(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
