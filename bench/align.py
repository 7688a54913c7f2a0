"""laser align on Bleualign's Text+Berg de-fr documents (the `bleualign_data/` folder of the
Vecalign repository, GPL-2, not vendored): strict and lax precision, recall and F1 as Vecalign's
scorer computes them, on the dev document (for tuning) and the seven test documents (reported,
never tuned on), with the shipped model's embeddings.

    .venv/bin/python bench/align.py PATH/TO/bleualign_data [--cache bench/out/align]

Each document's runs of up to five sentences are embedded once and cached as .npz under --cache,
so a rerun (or a sweep of the options) costs only the alignment.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from laser.align import AlignOptions, align_embeddings
from laser.align.formats import read_ladder
from laser.align.overlaps import Overlaps, embed_overlaps
from laser.align.scoring import score_alignments

CACHED_LONGEST = 5  # runs cached up to 5 sentences: enough for any --max-bead up to 6
DOCUMENTS = {"dev": ["dev"], "test": [f"test{number}" for number in range(7)]}


def overlaps(data: Path, cache: Path, stem: str, lang: str, longest: int) -> Overlaps:
    """The document's Overlaps of runs up to `longest`, from the cache or embedded with the
    shipped model."""
    cached = cache / f"{stem}.{lang}.L{CACHED_LONGEST}.npz"
    if not cached.exists():
        _embed(data, cached, stem, lang)
    saved = np.load(cached)
    return Overlaps.of(saved["vectors"][:longest], saved["chars"])


def _embed(data: Path, cached: Path, stem: str, lang: str) -> None:
    from laser.encoder import Encoder
    encoder = Encoder.load()
    sentences = (data / f"{stem}.{lang}").read_text(encoding="utf-8").splitlines()
    found = embed_overlaps(sentences, lambda texts: encoder.encode(texts, lang), CACHED_LONGEST)
    cached.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cached, vectors=found.vectors, chars=found.chars)


def evaluate(data: Path, cache: Path, split: str, options: AlignOptions):
    """The scores of one split's documents together, and the seconds the alignment took."""
    golds, tests, seconds = [], [], 0.0
    for stem in DOCUMENTS[split]:
        src, trg = (overlaps(data, cache, stem, lang, options.longest_side) for lang in ("de", "fr"))
        started = time.perf_counter()
        beads = align_embeddings(src, trg, options)
        seconds += time.perf_counter() - started
        gold = read_ladder((data / f"{stem}.defr").read_text(encoding="utf-8").splitlines(),
                           str(data / f"{stem}.defr"))
        golds.append([(bead.src, bead.trg) for bead in gold])
        tests.append([(bead.src, bead.trg) for bead in beads])
    return score_alignments(golds, tests), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="Vecalign's bleualign_data folder")
    parser.add_argument("--cache", type=Path, default=Path("bench/out/align"))
    parser.add_argument("--deletion-percentiles", type=float, nargs="*", default=[],
                        help="also score these deletion percentiles (a sweep: choose on dev)")
    parser.add_argument("--size-penalties", type=float, nargs="*", default=[],
                        help="also score these size penalties, with each deletion percentile")
    args = parser.parse_args()
    print("| options | split | strict P / R / F1 | lax P / R / F1 | align s |")
    print("|---|---|---|---|---:|")
    default = AlignOptions()
    variants = [default] + [
        replace(default, size_penalty=penalty, deletion_percentile=percentile)
        for penalty in args.size_penalties or [default.size_penalty]
        for percentile in args.deletion_percentiles or [default.deletion_percentile]
        if (penalty, percentile) != (default.size_penalty, default.deletion_percentile)]
    for options in variants:
        for split in ("dev", "test"):
            s, seconds = evaluate(args.data, args.cache, split, options)
            print(f"| max_bead {options.max_bead}, length {options.length_weight}, "
                  f"size penalty {options.size_penalty}, "
                  f"deletion {options.deletion_percentile} | "
                  f"{split} | {s.precision_strict:.3f} / {s.recall_strict:.3f} / "
                  f"{s.f1_strict:.3f} | {s.precision_lax:.3f} / {s.recall_lax:.3f} / "
                  f"{s.f1_lax:.3f} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
