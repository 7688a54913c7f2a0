#!/usr/bin/env python3
"""End-to-end `embed_file` next to the encoder alone: does preprocessing hide behind encoding?

Writes --lines distinct French sentences (the French side of --corpus, by default the shared
training corpus; without it the vendored dev sentences, repeated to length) to a temporary file
and times, alternating, best of --repeats, with the shipped model (or --model):

* `encoder only`       — `Encoder.encode_ids` on ids prepared beforehand (the ceiling);
* `sequential`         — `embed_file(..., prefetch=False)`: read, preprocess, encode, write;
* `prefetch`           — `embed_file` as `laser embed` runs it: chunk i+1 preprocessed in a
                         background thread while chunk i encodes;
* `laser embed`        — the command in a fresh process (start-up and model loading included).

    python bench/pipeline_speed.py [--lines 20000] [--quantize int8] [--runtime torch] [--repeats 3]
                                   [--gil-switch SECONDS] [--corpus FRA-ENG.tsv.gz]

Every in-process run starts with the Moses tokeniser's word cache empty, as a fresh process
does, so repeats do not see words they met before.

`--gil-switch` replaces `laser.pipeline.GIL_SWITCH_SECONDS` (how often Python hands the GIL over
while a chunk is preprocessed beside the encoder; 0.005 is Python's own default) in this process.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser import pipeline  # noqa: E402
from laser.encoder import Encoder  # noqa: E402
from laser.pipeline import EmbedOptions, embed_file  # noqa: E402
from laser.text import moses  # noqa: E402

SHARED_CORPUS = ROOT.parent / "shared/data/corpus/train"
VENDORED_CORPUS = ROOT / "tests/data/corpus/dev"
SHARED_FRENCH = SHARED_CORPUS / "fra-eng.tsv.gz"
VENDORED_FRENCH = VENDORED_CORPUS / "fra-eng.tsv.gz"


def distinct_lines(path: Path, count: Optional[int] = None) -> list[str]:
    """The first `count` (default: all) distinct foreign sides of a pair file."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        foreign = (line.split("\t")[0] for line in f)
        return list(itertools.islice(dict.fromkeys(foreign), count))


def french_lines(corpus: Path, count: int) -> list[str]:
    """The first `count` distinct French sides of `corpus`, cycled if it has fewer."""
    return list(itertools.islice(itertools.cycle(distinct_lines(corpus)), count))


def cold(function):
    """`function` run with the French tokeniser's word cache emptied first."""
    def run():
        moses.tokenizer("fr").clear_word_cache()
        return function()
    return run


def seconds(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--model", default="default")
    parser.add_argument("--quantize", choices=["int8"], default=None)
    parser.add_argument("--runtime", choices=["auto", "torch", "onnxruntime"], default="auto")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gil-switch", type=float, default=pipeline.GIL_SWITCH_SECONDS)
    parser.add_argument("--corpus", type=Path,
                        default=SHARED_FRENCH if SHARED_FRENCH.exists() else VENDORED_FRENCH)
    args = parser.parse_args()
    pipeline.GIL_SWITCH_SECONDS = args.gil_switch
    encoder = Encoder.load(args.model, quantize=args.quantize, runtime=args.runtime)
    lines = french_lines(args.corpus, args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        source, output = Path(tmp) / "fr.txt", str(Path(tmp) / "fr.npy")
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        ids = encoder.prepare(lines, "fr")
        command = [sys.executable, "-m", "laser", "embed", str(source), "-o", output, "-l", "fr",
                   "--quiet", "--model", args.model, "--runtime", args.runtime] + (
                       ["--quantize", args.quantize] if args.quantize else [])
        runs = {
            "encoder only (ids ready)": lambda: encoder.encode_ids(ids),
            "embed_file, sequential": cold(lambda: embed_file(
                encoder, str(source), output, EmbedOptions("fr", prefetch=False))),
            "embed_file, prefetch (default)": cold(lambda: embed_file(
                encoder, str(source), output, EmbedOptions("fr"))),
            "`laser embed` (fresh process)": lambda: subprocess.run(command, check=True),
        }
        best = dict.fromkeys(runs, float("inf"))
        for _ in range(args.repeats):
            for name, run in runs.items():
                best[name] = min(best[name], seconds(run))
    ceiling = best["encoder only (ids ready)"]
    print(f"{args.lines} French lines ({len(set(lines))} distinct, {args.corpus.name}), "
          f"model {args.model}, quantize {args.quantize}, "
          f"runtime {encoder.runtime}, GIL switch {args.gil_switch * 1000:g} ms, "
          f"best of {args.repeats}")
    print("| path | seconds | sentences/s | share of encoder-only |")
    print("| --- | ---: | ---: | ---: |")
    for name, took in best.items():
        print(f"| {name} | {took:.2f} | {args.lines / took:,.0f} | {ceiling / took:.0%} |")


if __name__ == "__main__":
    main()
