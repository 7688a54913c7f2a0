#!/usr/bin/env python3
"""Speed of `laser embed` with the shipped default model (and candidates beside it), end to end and
stage by stage.

Embeds the first N dev sentences of several languages (../shared/data/corpus/dev) in one run:
through the `laser embed` command (a fresh process: start-up, reading, writing included) and
through the library stage by stage (tokenise, BPE, encoder), so the figures say where time goes.
With --model given more than once, every model runs on the same sentences in turn, language by
language, and the summary gives each one's speed as a multiple of the first's (a candidate's
"within 2x of the shipped model" check: `--model default --model CANDIDATE_DIR`).

    python bench/default_model_speed.py [--sentences 1000] [--languages fra,deu,rus,cmn,jpn]
                                        [--model default --model DIR ...] [--repeats 1]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from laser.encoder import Encoder
from laser.text import moses
from laser.text.languages import resolve

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "dev"
STAGES = ("command", "tokenise", "bpe", "encoder")


@dataclass
class Timings:
    """Seconds per stage summed over languages, and the sentences they covered."""

    sentences: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def add(self, sentences: int, seconds: dict[str, float]) -> None:
        self.sentences += sentences
        for stage, value in seconds.items():
            self.seconds[stage] += value

    def rate(self, stage: str) -> float:
        return self.sentences / self.seconds[stage]

    @property
    def library_rate(self) -> float:
        """Sentences/s through tokenise + BPE + encoder, the cost of a long file once started."""
        return self.sentences / sum(self.seconds[s] for s in STAGES[1:])


def dev_sentences(lang: str, count: int) -> list[str]:
    with gzip.open(DEV / f"{lang}-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [line.split("\t")[0] for line in itertools.islice(f, count)]


def time_command(model: str, lang: str, source: Path, output: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "laser", "embed", str(source), "-o", str(output),
                    "--lang", lang, "--model", model, "--quiet"], check=True)
    return time.perf_counter() - started


def warm_up(encoders: dict[str, Encoder], languages: list[str]) -> None:
    """Load every model's and language's lazy parts (jieba's and MeCab's dictionaries) untimed."""
    for encoder, lang in itertools.product(encoders.values(), languages):
        encoder.encode(dev_sentences(lang, 1), lang)


def time_stages(encoder: Encoder, lang: str, sentences: list[str]) -> dict[str, float]:
    """Seconds of each library stage, the tokeniser's word cache emptied first as in a fresh
    process (so a second model is not timed on words the first one cached)."""
    moses.tokenizer(resolve(lang).moses).clear_word_cache()
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


def rates_line(label: str, timings: Timings) -> str:
    return f"{label:26} " + " ".join(f"{timings.rate(stage):10.0f}" for stage in STAGES)


def short_labels(models: list[str]) -> dict[str, str]:
    """Each model's directory name, or the path as given where two names would be the same."""
    names = [Path(model).name for model in models]
    return {model: name if names.count(name) == 1 else model for model, name in zip(models, names)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000, help="per language (dev has <= 1000)")
    parser.add_argument("--languages", default="fra,deu,rus,cmn,jpn")
    parser.add_argument("--model", action="append", help="model name or directory, repeatable; "
                        "the first is the reference of the ratios (default: default)")
    parser.add_argument("--repeats", type=int, default=1, help="passes over the languages")
    args = parser.parse_args()
    models = args.model or ["default"]
    encoders = {model: Encoder.load(model) for model in models}
    label = short_labels(models)
    totals = {model: Timings() for model in models}
    warm_up(encoders, args.languages.split(","))
    print(f"{args.sentences} dev sentences a language, {args.repeats} pass(es); sentences/s")
    print(f"{'model / lang':26} " + " ".join(f"{stage:>10}" for stage in STAGES))
    with tempfile.TemporaryDirectory() as tmp:
        for _, lang in itertools.product(range(args.repeats), args.languages.split(",")):
            sentences = dev_sentences(lang, args.sentences)
            source = Path(tmp) / f"{lang}.txt"
            source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
            for model, encoder in encoders.items():
                seconds = time_stages(encoder, lang, sentences)
                seconds["command"] = time_command(model, resolve(lang).moses, source,
                                                  Path(tmp) / "out.npy")
                timing = Timings()
                timing.add(len(sentences), seconds)
                totals[model].add(len(sentences), seconds)
                print(rates_line(f"{label[model]} {lang}", timing))
    print()
    reference = totals[models[0]]
    for model, timing in totals.items():
        print(f"{rates_line(label[model] + ' (all)', timing)}   library {timing.library_rate:.0f}/s"
              f" = {timing.library_rate / reference.library_rate:.2f}x, command"
              f" {timing.rate('command') / reference.rate('command'):.2f}x, encoder"
              f" {timing.rate('encoder') / reference.rate('encoder'):.2f}x of {label[models[0]]}"
              f" ({encoders[model].dim}-d)")


if __name__ == "__main__":
    main()
