#!/usr/bin/env python3
"""Speed of `laser embed` with the shipped default model, end to end and stage by stage.

Embeds the first N dev sentences of several languages (../shared/data/corpus/dev) twice in one
run: through the `laser embed` command (a fresh process: start-up, reading, writing included) and
through the library stage by stage (tokenise, BPE, encoder), so the figures say where time goes.

    python bench/default_model_speed.py [--sentences 1000] [--languages fra,deu,rus,cmn,jpn]
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

from laser.models.encoder import Encoder
from laser.text.languages import resolve
from laser.models.registry import shipped_model_dir

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "dev"


def dev_sentences(lang: str, count: int) -> list[str]:
    with gzip.open(DEV / f"{lang}-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [line.split("\t")[0] for line in itertools.islice(f, count)]


def time_command(lang: str, sentences: list[str], directory: Path) -> float:
    source = directory / f"{lang}.txt"
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "laser", "embed", str(source), "-o",
                    str(directory / f"{lang}.npy"), "--lang", lang, "--quiet"], check=True)
    return time.perf_counter() - started


def time_stages(encoder: Encoder, lang: str, sentences: list[str]) -> dict[str, float]:
    timings = {}
    started = time.perf_counter()
    tokenized = encoder.tokenize(sentences, lang)
    timings["tokenise"] = time.perf_counter() - started
    started = time.perf_counter()
    bpe = encoder.apply_bpe(tokenized)
    timings["bpe"] = time.perf_counter() - started
    started = time.perf_counter()
    encoder.encode_bpe(bpe)
    timings["encoder"] = time.perf_counter() - started
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000, help="per language (dev has <= 1000)")
    parser.add_argument("--languages", default="fra,deu,rus,cmn,jpn")
    args = parser.parse_args()
    encoder = Encoder.load("default")
    print(f"model {shipped_model_dir()} ({encoder.dim}-d), {args.sentences} dev sentences a language")
    print(f"{'lang':6} {'laser embed':>14} {'tokenise':>10} {'bpe':>8} {'encoder':>10}  (sentences/s)")
    totals = {"command": 0.0, "tokenise": 0.0, "bpe": 0.0, "encoder": 0.0}
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for lang in args.languages.split(","):
            sentences = dev_sentences(lang, args.sentences)
            command = time_command(resolve(lang).moses, sentences, Path(tmp))
            stages = time_stages(encoder, lang, sentences)
            n = len(sentences)
            count += n
            totals["command"] += command
            for stage, seconds in stages.items():
                totals[stage] += seconds
            print(f"{lang:6} {n / command:14.0f} {n / stages['tokenise']:10.0f} "
                  f"{n / stages['bpe']:8.0f} {n / stages['encoder']:10.0f}")
    print(f"{'all':6} {count / totals['command']:14.0f} {count / totals['tokenise']:10.0f} "
          f"{count / totals['bpe']:8.0f} {count / totals['encoder']:10.0f}")


if __name__ == "__main__":
    main()
