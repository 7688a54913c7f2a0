"""Document pairing at scale: `laser align SRC_DIR TRG_DIR --pair-documents` on collections of
N documents a side, built as bench/pair_documents.py builds them (5-50 consecutive pairs a
document, a fifth of each side without a translation, sentences dropped and merged, shuffled
names) but from pairs drawn at random from the corpus' train split of one language (default
fra-eng), written as two folders under --out. For each size it runs the command as a user
would (a process of its own) and prints its wall time, its CPU time and peak resident memory
(the process's own, from wait4) and pairing precision and recall; with --cache-mb, once per
cache size.

    nice -n 10 python bench/pair_documents_scale.py --documents 500 2000 [--cache-mb 1024 256]
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from pair_documents import build, ratio  # noqa: E402

LANG_CODES = {"fra": "fr", "deu": "de", "spa": "es", "rus": "ru"}


def train_pairs(corpus: Path, lang: str, needed: int, rng: random.Random) -> list[tuple[str, str]]:
    """`needed` pairs drawn from the language's train split (with text on both sides), in a
    random order: the split keeps paraphrases of one sentence on neighbouring lines, which would
    make a document and the lonely one beside it translations of each other."""
    with gzip.open(corpus / "train" / f"{lang}-eng.tsv.gz", "rt", encoding="utf-8") as f:
        pairs = [tuple(fields) for fields in (line.rstrip("\n").split("\t") for line in f)
                 if len(fields) == 2 and all(field.strip() for field in fields)]
    if len(pairs) < needed:
        raise SystemExit(f"{lang}-eng train has {len(pairs)} pairs; {needed} needed")
    return rng.sample(pairs, needed)


def write_collections(root: Path, corpus: Path, lang: str, per_side: int, seed: int,
                      drop: float, merge: float) -> set[tuple[str, str]]:
    """Two folders of `per_side` documents each under `root` (src/, trg/); the true pairs by
    file name."""
    documents = -(-per_side * 6 // 5)  # each side holds 5 of every 6 documents drawn
    sizes = random.Random(seed)
    total = sum(sizes.randint(5, 50) for _ in range(documents))
    built = build(train_pairs(corpus, lang, total, random.Random(f"{seed}-pairs")),
                  random.Random(seed), drop, merge)
    for side, docs in (("src", built.src), ("trg", built.trg)):
        (root / side).mkdir(parents=True, exist_ok=True)
        for doc in docs:
            (root / side / doc.name).write_text("".join(f"{s}\n" for s in doc.sentences),
                                                encoding="utf-8")
    return {(built.src[i].name, built.trg[j].name) for i, j in built.truth}


def run_measured(command: list[str]) -> tuple[float, float, float]:
    """Run `command`; its wall seconds, CPU seconds (user and system) and peak resident MiB."""
    started = time.perf_counter()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=BENCH.parents[1] / "shared/data/corpus")
    parser.add_argument("--lang", default="fra", choices=sorted(LANG_CODES))
    parser.add_argument("--documents", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--cache-mb", type=float, nargs="+", default=[None])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drop", type=float, default=0.1)
    parser.add_argument("--merge", type=float, default=0.1)
    parser.add_argument("--out", type=Path, default=BENCH / "out" / "pair-scale")
    args = parser.parse_args()
    laser = str(Path(sys.executable).parent / "laser")
    print("| documents a side | sentences (src / trg) | cache MiB | wall s | CPU s | "
          "peak RSS MiB | pairs found | P / R |")
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    for per_side in args.documents:
        root = args.out / f"{args.lang}-{per_side}-{args.seed}"
        truth = write_collections(root, args.corpus, args.lang, per_side, args.seed,
                                  args.drop, args.merge)
        counts = [sum(len(p.read_text(encoding="utf-8").splitlines())
                      for p in (root / side).iterdir()) for side in ("src", "trg")]
        for cache in args.cache_mb:
            pairs = root / f"pairs-{cache}.tsv"
            command = [laser, "align", str(root / "src"), str(root / "trg"), "--pair-documents",
                       "--src-lang", LANG_CODES[args.lang], "--trg-lang", "en", "--pairs-out",
                       str(pairs), "-o", str(root / f"beads-{cache}.tsv"), "-q"]
            if cache is not None:
                command += ["--pair-cache-mb", str(cache)]
            seconds, cpu, peak = run_measured(command)
            found = {tuple(line.split("\t")[:2]) for line in
                     pairs.read_text(encoding="utf-8").splitlines()}
            right = len(found & truth)
            print(f"| {per_side:,} | {counts[0]:,} / {counts[1]:,} | "
                  f"{'default' if cache is None else f'{cache:g}'} | {seconds:.0f} | {cpu:.0f} | "
                  f"{peak:.0f} | {len(found):,} | {ratio(right, len(found)):.3f} / "
                  f"{ratio(right, len(truth)):.3f} |", flush=True)


if __name__ == "__main__":
    main()
