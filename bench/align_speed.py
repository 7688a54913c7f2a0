"""laser align's time and memory against the documents' length, from 1,000 to 100,000 sentences a
side, and Vecalign's (and Bertalign's) time on the same embeddings.

    make bench-align    # bench/.venv-align, the rivals' virtualenv
    nice -n 10 .venv/bin/python bench/align_speed.py [--corpus ../shared/data/corpus]

The documents: --pair's train lines (French-English by default) in a random order (--seed), one
parallel document of which each size is a prefix, damaged as real ones are: each source or
target sentence dropped with probability --drop / 2 (a 1-0 or 0-1 bead), each two consecutive
sentences of one side merged into one with probability --merge / 2 a side (a 2-1 or 1-2 bead).
That damage is the gold, so each row also has strict F1.

Alignment alone: each sentence is embedded once by the shipped model, and a run of consecutive
sentences is represented by the normalised sum of its sentences' vectors (as laser's own
coarse levels are), so every size up to 100,000 is measured on the same kind of input. Each
size is aligned in a fresh process, which reports the alignment's seconds, wall and CPU (on a
shared machine the CPU seconds are the steadier measure); its peak resident memory above what
the process held once its inputs were built (the peak reset just before the alignment,
/proc/self/clear_refs); and the peak of what it allocates as tracemalloc sees it (a second,
untimed run: the steadier measure, since the resident memory before the alignment includes
memory freed while the inputs were built, which the alignment reuses).

With the embedding (sizes up to --embed-up-to): `laser.align.align_sentences` with the shipped
model, every run of up to four sentences embedded as `laser align` embeds them, the encoder
loaded beforehand.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.align import AlignOptions, align_embeddings, align_sentences  # noqa: E402
from laser.align.dp import runs_of  # noqa: E402
from laser.align.scoring import score_alignments  # noqa: E402

from align_rivals import peak_mib, reset_peak, traced_mib  # noqa: E402

SIZES = [1_000, 3_000, 10_000, 30_000, 100_000]


@dataclass
class Document:
    """A parallel document pair and its gold beads."""

    src: list[str]
    trg: list[str]
    gold: list[tuple[tuple[int, ...], tuple[int, ...]]]

    def prefix(self, size: int) -> Document:
        """The first beads covering `size` source sentences."""
        beads, covered = [], 0
        for bead in self.gold:
            if covered >= size:
                break
            beads.append(bead)
            covered += len(bead[0])
        n = sum(len(x) for x, _ in beads)
        m = sum(len(y) for _, y in beads)
        return Document(self.src[:n], self.trg[:m], beads)


def damaged(pairs: list[tuple[str, str]], size: int, drop: float, merge: float,
            rng: random.Random) -> Document:
    """A document of at least `size` source sentences from consecutive pairs, with sentences
    dropped and merged."""
    doc = Document([], [], [])
    pairs = iter(pairs)
    while len(doc.src) < size:
        src, trg = next(pairs)
        roll = rng.random()
        n, m = len(doc.src), len(doc.trg)
        if roll < drop / 2:
            doc.src.append(src)
            doc.gold.append(((n,), ()))
        elif roll < drop:
            doc.trg.append(trg)
            doc.gold.append(((), (m,)))
        elif roll < drop + merge / 2:
            other = next(pairs)
            doc.src.append(f"{src} {other[0]}")
            doc.trg.extend([trg, other[1]])
            doc.gold.append(((n,), (m, m + 1)))
        elif roll < drop + merge:
            other = next(pairs)
            doc.src.extend([src, other[0]])
            doc.trg.append(f"{trg} {other[1]}")
            doc.gold.append(((n, n + 1), (m,)))
        else:
            doc.src.append(src)
            doc.trg.append(trg)
            doc.gold.append(((n,), (m,)))
    return doc


def corpus_pairs(corpus: Path, pair: str, seed: int) -> list[tuple[str, str]]:
    with gzip.open(corpus / "train" / f"{pair}.tsv.gz", "rt", encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t")[:2] for line in f]
    unique = list(dict.fromkeys((src.strip(), trg.strip()) for src, trg in rows
                                if src.strip() and trg.strip()))
    random.Random(seed).shuffle(unique)
    return unique


def prepare(args: argparse.Namespace) -> Path:
    """The largest document, its gold and its sentences' embeddings, cached under --cache."""
    cached = args.cache / f"{args.pair}.seed{args.seed}.{max(args.sizes)}.npz"
    if cached.exists():
        return cached
    args.cache.mkdir(parents=True, exist_ok=True)
    src_lang, trg_lang = args.langs
    doc = damaged(corpus_pairs(args.corpus, args.pair, args.seed), max(args.sizes), args.drop,
                  args.merge, random.Random(args.seed))
    from laser.encoder import Encoder
    encoder = Encoder.load()
    started = time.perf_counter()
    src = encoder.encode(doc.src, src_lang)
    trg = encoder.encode(doc.trg, trg_lang)
    print(f"embedded {len(doc.src)} + {len(doc.trg)} sentences in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    pads = [encoder.encode(["PAD"], lang)[0] for lang in args.langs]
    np.savez(cached, src=src, trg=trg, src_pad=pads[0], trg_pad=pads[1],
             src_text=np.array(doc.src), trg_text=np.array(doc.trg),
             gold=np.array(json.dumps(doc.gold)))
    return cached


def load(cached: Path, size: int) -> tuple[Document, np.ndarray, np.ndarray, dict]:
    """The prefix of `size` source sentences: the document, its sentences' vectors (unit) and
    the 'PAD' line's vectors."""
    saved = np.load(cached)
    full = Document(list(saved["src_text"]), list(saved["trg_text"]),
                    [(tuple(x), tuple(y)) for x, y in json.loads(str(saved["gold"]))])
    doc = full.prefix(size)
    src, trg = (saved[side][:len(text)] for side, text in (("src", doc.src), ("trg", doc.trg)))
    pads = {side: saved[f"{side}_pad"] for side in ("src", "trg")}
    return doc, _unit(src), _unit(trg), pads


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def chars(texts: list[str]) -> np.ndarray:
    return np.array([len(text) for text in texts], dtype=np.int64)


def strict_f1(doc: Document, beads: list) -> float:
    return score_alignments([doc.gold], [[(tuple(x), tuple(y)) for x, y in beads]]).f1_strict


def measure_laser(cached: Path, size: int) -> dict:
    """One size aligned by laser (run in a fresh process): seconds, memory and strict F1."""
    doc, src, trg, _ = load(cached, size)
    options = AlignOptions()
    src_runs = runs_of(src, chars(doc.src), options.longest_side)
    trg_runs = runs_of(trg, chars(doc.trg), options.longest_side)
    del src, trg
    before = reset_peak()
    started, cpu = time.perf_counter(), time.process_time()
    beads = align_embeddings(src_runs, trg_runs, options)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    inputs = (src_runs.vectors.nbytes + trg_runs.vectors.nbytes) / 2**20
    memory = peak_mib() - before
    return {"n": len(doc.src), "m": len(doc.trg), "seconds": seconds, "cpu_seconds": cpu,
            "memory_mib": memory, "inputs_mib": inputs,
            "traced_mib": traced_mib(lambda: align_embeddings(src_runs, trg_runs, options)),
            "f1": strict_f1(doc, [(bead.src, bead.trg) for bead in beads])}


def rival_pair(cached: Path, size: int, longest: int, out: Path) -> tuple[Path, Document]:
    """The .npz bench/align_rivals.py reads, for one size."""
    doc, src, trg, pads = load(cached, size)
    arrays = {}
    for side, vectors, texts in (("src", src, doc.src), ("trg", trg, doc.trg)):
        arrays[side] = runs_of(vectors, chars(texts), longest).vectors
        arrays[f"{side}_pad"] = pads[side]
        arrays[f"{side}_bytes"] = run_bytes(texts, longest)
    path = out / f"pair.{size}.npz"
    np.savez(path, **arrays)
    return path, doc


def run_bytes(texts: list[str], longest: int) -> np.ndarray:
    """(L, n): the UTF-8 bytes of each run of sentences joined by spaces (0 past the end)."""
    sizes = np.array([len(text.encode("utf-8")) for text in texts], dtype=np.int64)
    total = np.concatenate([[0], np.cumsum(sizes)])
    n = len(texts)
    out = np.zeros((longest, n), dtype=np.int64)
    for length in range(1, longest + 1):
        starts = np.arange(n - length + 1)
        out[length - 1, starts] = total[starts + length] - total[starts] + length - 1
    return out


def measure_rival(args: argparse.Namespace, cached: Path, aligner: str, size: int) -> dict:
    """One size aligned by a rival in its virtualenv: seconds, peak memory and strict F1."""
    longest = args.vecalign_max_size if aligner == "vecalign" else 4
    path, doc = rival_pair(cached, size, longest, args.cache)
    try:
        done = subprocess.run(
            [str(args.rivals_python), str(ROOT / "bench" / "align_rivals.py"), aligner, str(path),
             "--max-size", str(args.vecalign_max_size), "--bertalign-src",
             str(args.bertalign_src)]
            + (["--warm-up"] if aligner == "bertalign" else ["--trace-memory"]),
            check=True, capture_output=True, text=True)
    finally:
        path.unlink()
    result = json.loads(done.stdout)
    return {"seconds": result["seconds"], "cpu_seconds": result["cpu_seconds"],
            "memory_mib": result["memory_mib"], "traced_mib": result["traced_mib"],
            "f1": strict_f1(doc, result["beads"])}


def measure_embedding(cached: Path, size: int, langs: tuple[str, str], encoder) -> dict:
    """The whole of laser.align on one size: the runs embedded, then aligned."""
    doc, _, _, _ = load(cached, size)
    started = time.perf_counter()
    beads = align_sentences(doc.src, doc.trg, lambda texts: encoder.encode(texts, langs[0]),
                            lambda texts: encoder.encode(texts, langs[1]))
    return {"seconds": time.perf_counter() - started,
            "f1": strict_f1(doc, [(bead.src, bead.trg) for bead in beads])}


def child(size: int) -> dict:
    """measure_laser in a fresh process (its peak memory its own)."""
    done = subprocess.run([sys.executable, __file__, "--child", str(size), *sys.argv[1:]],
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "corpus")
    parser.add_argument("--pair", default="fra-eng")
    parser.add_argument("--langs", nargs=2, default=("fr", "en"))
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--embed-up-to", type=int, default=10_000,
                        help="measure the whole alignment, embedding included, up to this size")
    parser.add_argument("--vecalign-up-to", type=int, default=100_000)
    parser.add_argument("--bertalign-up-to", type=int, default=10_000)
    parser.add_argument("--vecalign-max-size", type=int, default=5,
                        help="Vecalign's --alignment_max_size (5: laser's bead sizes)")
    parser.add_argument("--drop", type=float, default=0.04)
    parser.add_argument("--merge", type=float, default=0.06)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "out" / "align-speed")
    parser.add_argument("--rivals-python", type=Path,
                        default=ROOT / "bench" / ".venv-align" / "bin" / "python")
    parser.add_argument("--bertalign-src", type=Path,
                        default=ROOT / "bench" / "out" / "bertalign-src")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cached = prepare(args)
    if args.child:
        print(json.dumps(measure_laser(cached, args.child)))
        return
    encoder = None
    print("| sentences (src / trg) | laser align s (CPU s) | CPU s per 1,000 | MiB: RSS, traced "
          "(inputs) | strict F1 | Vecalign s (CPU s) | MiB: RSS, traced | strict F1 | "
          "Bertalign s (F1) | laser with embedding s (F1) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        laser = child(size)
        vecalign = (measure_rival(args, cached, "vecalign", size)
                    if size <= args.vecalign_up_to else None)
        bertalign = (measure_rival(args, cached, "bertalign", size)
                     if size <= args.bertalign_up_to else None)
        whole = None
        if size <= args.embed_up_to:
            if encoder is None:
                from laser.encoder import Encoder
                encoder = Encoder.load()
                for lang in args.langs:  # each language's tokeniser started before any timing
                    encoder.encode(["Bonjour."], lang)
            whole = measure_embedding(cached, size, tuple(args.langs), encoder)
        print(f"| {laser['n']:,} / {laser['m']:,} | {laser['seconds']:.2f} "
              f"({laser['cpu_seconds']:.2f}) | {1000 * laser['cpu_seconds'] / laser['n']:.3f} | "
              f"{laser['memory_mib']:.0f}, {laser['traced_mib']:.0f} ({laser['inputs_mib']:.0f}) | "
              f"{laser['f1']:.3f} | "
              f"{_memory(vecalign)} | {_timed(bertalign)} | {_timed(whole)} |", flush=True)


def _memory(result: dict | None) -> str:
    """Seconds, MiB and strict F1, or nothing for a size not measured."""
    if result is None:
        return " | |"
    return (f"{result['seconds']:.2f} ({result['cpu_seconds']:.2f}) | "
            f"{result['memory_mib']:.0f}, {result['traced_mib']:.0f} | {result['f1']:.3f}")


def _timed(result: dict | None) -> str:
    """Seconds (strict F1), or nothing for a size not measured."""
    return "" if result is None else f"{result['seconds']:.2f} ({result['f1']:.3f})"


if __name__ == "__main__":
    main()
