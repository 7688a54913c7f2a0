#!/usr/bin/env python3
"""Moses tokenisation speed: our perl-faithful chain next to sacremoses, on distinct real lines.

For each of --languages, the first --lines distinct foreign sides of LANG-eng.tsv.gz in --corpus
(the shared training corpus by default, else the vendored dev split) go through, alternating, best
of --repeats, one thread:

* `laser`: `laser.text.tokenizer.Tokenizer` (non-printing characters, punctuation normalisation,
  tokenisation, lower-casing: what LASER1 models read before BPE), its word cache emptied before
  every run, as in a fresh process;
* `sacremoses`: `MosesPunctNormalizer(lang).normalize`, `MosesTokenizer(lang).tokenize(escape=
  False, return_str=True)` and `lower()`, the Python Moses port other LASER packages build on
  (a later Moses version, so its output differs from perl's on some lines; counted in `differ`;
  for zh, ja and el ours also segments or romanises, so every line differs).

    python bench/tokenize_speed.py [--languages fra,deu,spa,rus] [--lines 20000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline_speed import SHARED_CORPUS, VENDORED_CORPUS, distinct_lines  # noqa: E402
from sacremoses import MosesPunctNormalizer, MosesTokenizer  # noqa: E402

from laser.text import moses  # noqa: E402  (pipeline_speed puts the repository on sys.path)
from laser.text.tokenizer import Tokenizer  # noqa: E402


def ours(lang: str):
    tokenizer = Tokenizer(lang)

    def run(lines: list[str]) -> list[str]:
        moses.tokenizer(tokenizer.language.moses).clear_word_cache()
        return [tokenizer(line) for line in lines]
    return run


def sacremoses_chain(lang: str):
    code = Tokenizer(lang).language.moses
    normalizer, tokenizer = MosesPunctNormalizer(lang=code), MosesTokenizer(lang=code)

    def run(lines: list[str]) -> list[str]:
        return [tokenizer.tokenize(normalizer.normalize(line), escape=False,
                                   return_str=True).lower() for line in lines]
    return run


def best_seconds(runs: dict, lines: list[str], repeats: int) -> dict[str, tuple[float, list]]:
    """Each run's best time over `repeats` rounds, alternating, and its output."""
    best = {name: (float("inf"), []) for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            started = time.perf_counter()
            output = run(lines)
            best[name] = (min(best[name][0], time.perf_counter() - started), output)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", default="fra,deu,spa,rus")
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--corpus", type=Path,
                        default=SHARED_CORPUS if SHARED_CORPUS.exists() else VENDORED_CORPUS)
    args = parser.parse_args()
    print(f"distinct lines of {args.corpus}, best of {args.repeats}, one thread")
    print("| language | lines | laser lines/s | sacremoses lines/s | laser / sacremoses | differ |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for lang in args.languages.split(","):
        lines = distinct_lines(args.corpus / f"{lang}-eng.tsv.gz", args.lines)
        timed = best_seconds({"laser": ours(lang), "sacremoses": sacremoses_chain(lang)}, lines,
                             args.repeats)
        (ours_seconds, ours_output), (theirs_seconds, theirs_output) = timed.values()
        differ = sum(a != b for a, b in zip(ours_output, theirs_output))
        print(f"| {lang} | {len(lines):,} | {len(lines) / ours_seconds:,.0f} | "
              f"{len(lines) / theirs_seconds:,.0f} | {theirs_seconds / ours_seconds:.2f}x | "
              f"{differ / len(lines):.1%} |")


if __name__ == "__main__":
    main()
