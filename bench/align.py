"""laser align, Vecalign and Bertalign side by side on Bleualign's Text+Berg de-fr documents (the
`bleualign_data/` folder of the Vecalign repository, GPL-2, not vendored): strict and lax
precision, recall and F1 as Vecalign's scorer computes them, on the dev document (for tuning)
and the seven test documents (reported, never tuned on), all three on the shipped model's
embeddings of the same lines.

    make bench-align        # the rivals' virtualenv, bench/.venv-align, then this script
    .venv/bin/python bench/align.py bench/out/bleualign_data --vecalign-cli

The embeddings are made as Vecalign's README makes them: its `overlap.py` writes every run of up
to 10 consecutive sentences of the documents (one file a language), and each line is embedded
once, here by laser's shipped model, into `overlaps.LANG.emb` (float32 rows) under --cache; a
rerun (or a sweep of laser's options) costs only the alignments. laser align reads the runs of up
to `max_bead - 1` sentences from that table, Vecalign (--alignment_max_size 8, as its README)
and Bertalign (its defaults, max_align 5) run in their own virtualenv (bench/align_rivals.py).
`--vecalign-cli` also runs Vecalign's own command on the test documents, as its README does, and
checks that its beads are the ones bench/align_rivals.py found and that its scorer (score.py)
gives the scores laser.align.scoring gives.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from laser.align import AlignOptions, align_embeddings
from laser.align.formats import read_ladder
from laser.align.overlaps import embed_overlaps, runs
from laser.align.scoring import AlignmentScores, score_alignments

DOCUMENTS = {"dev": ["dev"], "test": [f"test{number}" for number in range(7)]}
LANGS = ("de", "fr")
OVERLAPS = 10  # Vecalign's README: overlap.py -n 10
VECALIGN_MAX_SIZE = 8  # Vecalign's README: --alignment_max_size 8
RIVALS_LONGEST = VECALIGN_MAX_SIZE  # the most sentences a side either rival reads (Bertalign: 4)


def sentences(data: Path, stem: str, lang: str) -> list[str]:
    """A document's lines as Vecalign reads them (stripped; an empty one is 'BLANK_LINE')."""
    lines = (data / f"{stem}.{lang}").read_text(encoding="utf-8").splitlines()
    return [line.strip() or "BLANK_LINE" for line in lines]


@dataclass
class Table:
    """The embedding of each line of an overlaps file (Vecalign's `read_in_embeddings`)."""

    row_of: dict[str, int]
    rows: np.ndarray

    @classmethod
    def read(cls, text: Path, embedded: Path) -> Table:
        lines = text.read_text(encoding="utf-8").split("\n")[:-1]
        rows = np.fromfile(embedded, dtype=np.float32)
        return cls({line.strip(): number for number, line in enumerate(lines)},
                   rows.reshape(len(lines), -1))

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.rows[[self.row_of[text] for text in texts]]


def tables(data: Path, cache: Path, rivals_python: Path) -> dict[str, Table]:
    """Each language's table: the runs written by Vecalign's overlap.py, embedded with the shipped
    model (once; cached)."""
    found = {}
    for lang in LANGS:
        text, embedded = cache / f"overlaps.{lang}", cache / f"overlaps.{lang}.emb"
        if not embedded.exists():
            cache.mkdir(parents=True, exist_ok=True)
            inputs = [str(data / f"{stem}.{lang}")
                      for stems in DOCUMENTS.values() for stem in stems]
            subprocess.run([str(rivals_python), "-m", "vecalign.overlap", "-i", *inputs, "-o",
                            str(text), "-n", str(OVERLAPS)], check=True)
            _embed(text, embedded, lang)
        found[lang] = Table.read(text, embedded)
    return found


def _embed(text: Path, embedded: Path, lang: str) -> None:
    from laser.encoder import Encoder
    lines = text.read_text(encoding="utf-8").split("\n")[:-1]
    started = time.perf_counter()
    rows = np.asarray(Encoder.load().encode(lines, lang), dtype=np.float32)
    print(f"embedded {len(lines)} lines of {text} in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    partial = embedded.with_suffix(".partial")
    rows.tofile(partial)
    partial.replace(embedded)


def gold(data: Path, stem: str) -> list:
    path = data / f"{stem}.defr"
    return [(bead.src, bead.trg) for bead in
            read_ladder(path.read_text(encoding="utf-8").splitlines(), str(path))]


def evaluate_laser(data: Path, found: dict[str, Table], split: str,
                   options: AlignOptions) -> tuple[AlignmentScores, float]:
    """laser align's scores on one split's documents together, and its alignment's seconds."""
    golds, tests, seconds = [], [], 0.0
    for stem in DOCUMENTS[split]:
        src, trg = (embed_overlaps(sentences(data, stem, lang), found[lang].embed,
                                   options.longest_side) for lang in LANGS)
        started = time.perf_counter()
        beads = align_embeddings(src, trg, options)
        seconds += time.perf_counter() - started
        golds.append(gold(data, stem))
        tests.append([(bead.src, bead.trg) for bead in beads])
    return score_alignments(golds, tests), seconds


def rival_pair(data: Path, found: dict[str, Table], stem: str, out: Path) -> Path:
    """The .npz bench/align_rivals.py reads for one document pair: each side's runs of up to
    RIVALS_LONGEST sentences (the table's rows, as Vecalign's make_doc_embedding takes them),
    the 'PAD' line's row and each run's length in UTF-8 bytes."""
    arrays = {}
    for side, lang in zip(("src", "trg"), LANGS):
        lines = sentences(data, stem, lang)
        arrays[side], arrays[f"{side}_bytes"] = run_arrays(lines, found[lang].embed,
                                                           RIVALS_LONGEST)
        arrays[f"{side}_pad"] = found[lang].embed(["PAD"])[0]
    path = out / f"{stem}.npz"
    np.savez(path, **arrays)
    return path


def run_arrays(lines: list[str], embed, longest: int) -> tuple[np.ndarray, np.ndarray]:
    """(L, n, dim) embeddings of the runs starting at each sentence (zero past the end), as
    `embed` gives them (not rescaled), and (L, n) their lengths in UTF-8 bytes."""
    n, longest = len(lines), min(longest, len(lines))
    texts = runs(lines, longest)
    rows = embed(texts)
    vectors = np.zeros((longest, n, rows.shape[1]), dtype=np.float32)
    sizes = np.zeros((longest, n), dtype=np.int64)
    position = 0
    for length in range(1, longest + 1):
        count = n - length + 1
        vectors[length - 1, :count] = rows[position:position + count]
        sizes[length - 1, :count] = [len(text.encode("utf-8"))
                                     for text in texts[position:position + count]]
        position += count
    return vectors, sizes


def run_rival(args: argparse.Namespace, aligner: str, pairs: list[Path],
              knob: list[str]) -> tuple[list, float]:
    """The beads of each pair (in one process, as Vecalign's command aligns several documents)
    and the alignments' seconds."""
    worker = Path(__file__).with_name("align_rivals.py")
    # numba compiles Bertalign's functions at their first call; Vecalign draws its random
    # samples from one seed for all documents, so its first is not aligned twice
    warm_up = ["--warm-up"] if aligner == "bertalign" else []
    done = subprocess.run([str(args.rivals_python), str(worker), aligner, *map(str, pairs),
                           "--bertalign-src", str(args.bertalign_src), *knob, *warm_up],
                          check=True, capture_output=True, text=True)
    results = [json.loads(line) for line in done.stdout.splitlines()]
    return [result["beads"] for result in results], sum(r["seconds"] for r in results)


def evaluate_rival(args: argparse.Namespace, found: dict[str, Table], aligner: str,
                   knob: list[str], split: str,
                   work: Path) -> tuple[AlignmentScores, float, list]:
    """A rival's scores on one split's documents together, its alignments' seconds and beads."""
    pairs = [rival_pair(args.data, found, stem, work) for stem in DOCUMENTS[split]]
    beads, seconds = run_rival(args, aligner, pairs, knob)
    tests = [[(tuple(x), tuple(y)) for x, y in doc] for doc in beads]
    return (score_alignments([gold(args.data, stem) for stem in DOCUMENTS[split]], tests),
            seconds, tests)


def vecalign_cli(data: Path, cache: Path, rivals_python: Path) -> tuple[list, str]:
    """Vecalign's command on the test documents as its README runs it: the beads of each
    document and the score table its score.py prints."""
    stems = DOCUMENTS["test"]
    files = {kind: [str(data / f"{stem}.{kind}") for stem in stems]
             for kind in ("de", "fr", "defr")}
    done = subprocess.run(
        [str(rivals_python), "-m", "vecalign.vecalign", "--alignment_max_size",
         str(VECALIGN_MAX_SIZE), "--src", *files["de"], "--tgt", *files["fr"],
         "--gold", *files["defr"], "--src_embed", str(cache / "overlaps.de"),
         str(cache / "overlaps.de.emb"), "--tgt_embed", str(cache / "overlaps.fr"),
         str(cache / "overlaps.fr.emb")], check=True, capture_output=True, text=True)
    beads = [(tuple(bead.src), tuple(bead.trg))
             for bead in read_ladder(done.stdout.splitlines(), "vecalign's output")]
    return split_documents(beads, [len(sentences(data, stem, "de")) for stem in stems],
                           [len(sentences(data, stem, "fr")) for stem in stems]), done.stderr


def split_documents(beads: list, src_sizes: list[int], trg_sizes: list[int]) -> list[list]:
    """Concatenated ladders (each document's indices from 0) cut back into documents."""
    documents, position = [], 0
    for n, m in zip(src_sizes, trg_sizes):
        covered = [0, 0]
        start = position
        while covered != [n, m]:
            src, trg = beads[position]
            covered = [covered[0] + len(src), covered[1] + len(trg)]
            position += 1
        documents.append(beads[start:position])
    return documents


def row(name: str, dev: AlignmentScores, test: AlignmentScores, seconds: float) -> str:
    return (f"| {name} | {dev.f1_strict:.3f} ({dev.f1_lax:.3f}) | {test.precision_strict:.3f} / "
            f"{test.recall_strict:.3f} / {test.f1_strict:.3f} | {test.f1_lax:.3f} | "
            f"{seconds:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="Vecalign's bleualign_data folder")
    parser.add_argument("--cache", type=Path, default=Path("bench/out/align"))
    parser.add_argument("--rivals-python", type=Path, default=Path("bench/.venv-align/bin/python"),
                        help="the Python of the virtualenv with Vecalign and Bertalign's needs "
                             "(`make bench-align`)")
    parser.add_argument("--bertalign-src", type=Path, default=Path("bench/out/bertalign-src"))
    parser.add_argument("--no-rivals", action="store_true", help="laser align's rows only")
    parser.add_argument("--vecalign-cli", action="store_true",
                        help="also run Vecalign's command on the test set and check it agrees")
    parser.add_argument("--deletion-percentiles", type=float, nargs="*", default=[],
                        help="also score these deletion percentiles (a sweep: choose on dev)")
    parser.add_argument("--size-penalties", type=float, nargs="*", default=[],
                        help="also score these size penalties, with each deletion percentile")
    parser.add_argument("--vecalign-deletions", type=float, nargs="*", default=[],
                        help="also score Vecalign with these --del_percentile_frac (choose on dev)")
    parser.add_argument("--bertalign-skips", type=float, nargs="*", default=[],
                        help="also score Bertalign with these skip costs (choose on dev)")
    args = parser.parse_args()
    found = tables(args.data, args.cache, args.rivals_python)
    print("| aligner | dev strict F1 (lax) | test strict P / R / F1 | test lax F1 | test align s |")
    print("|---|---|---|---:|---:|")
    default = AlignOptions()
    variants = [default] + [
        replace(default, size_penalty=penalty, deletion_percentile=percentile)
        for penalty in args.size_penalties or [default.size_penalty]
        for percentile in args.deletion_percentiles or [default.deletion_percentile]
        if (penalty, percentile) != (default.size_penalty, default.deletion_percentile)]
    for options in variants:
        (dev, _), (test, seconds) = (evaluate_laser(args.data, found, split, options)
                                     for split in ("dev", "test"))
        name = "laser align (defaults)" if options == default else (
            f"laser align, size penalty {options.size_penalty}, "
            f"deletion {options.deletion_percentile}")
        print(row(name, dev, test, seconds), flush=True)
    if args.no_rivals:
        return
    rivals = [("vecalign", [], f"Vecalign (max size {VECALIGN_MAX_SIZE})"),
              ("bertalign", [], "Bertalign (defaults)")]
    rivals += [("vecalign", ["--deletion", str(value)], f"Vecalign, deletion percentile {value}")
               for value in args.vecalign_deletions]
    rivals += [("bertalign", ["--skip", str(value)], f"Bertalign, skip {value}")
               for value in args.bertalign_skips]
    with tempfile.TemporaryDirectory(dir=args.cache) as work:
        outputs = {}
        for aligner, knob, name in rivals:
            (dev, _, _), (test, seconds, beads) = (
                evaluate_rival(args, found, aligner, knob, split, Path(work))
                for split in ("dev", "test"))
            outputs.setdefault(aligner, beads)
            print(row(name, dev, test, seconds), flush=True)
    if args.vecalign_cli:
        check_cli(args, outputs["vecalign"])


def check_cli(args: argparse.Namespace, ours: list) -> None:
    """Vecalign's command against bench/align_rivals.py, and its scorer against laser's."""
    beads, table = vecalign_cli(args.data, args.cache, args.rivals_python)
    same = sum(a == b for a, b in zip(beads, ours))
    print(f"\nVecalign's command on the test documents: {same} of {len(beads)} documents with "
          "the beads bench/align_rivals.py found; its score.py:")
    print("\n".join(line for line in table.splitlines() if "|" in line or "---" in line))
    ours_scores = score_alignments([gold(args.data, stem) for stem in DOCUMENTS["test"]], beads)
    print(f"laser.align.scoring on the command's output: strict P / R / F1 "
          f"{ours_scores.precision_strict:.3f} / {ours_scores.recall_strict:.3f} / "
          f"{ours_scores.f1_strict:.3f}, lax {ours_scores.precision_lax:.3f} / "
          f"{ours_scores.recall_lax:.3f} / {ours_scores.f1_lax:.3f}")


if __name__ == "__main__":
    main()
