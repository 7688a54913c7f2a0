"""`make demo`: embed a small multilingual sample with `laser embed` and show cross-lingual neighbours."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections import defaultdict
from importlib import resources
from pathlib import Path

import numpy as np

from .models.registry import shipped_model_dir
from .search.vectors import unit_rows
from .models.resolve import MODEL_ENV

OUTPUT_DIR = Path("demo-output")


def _sample() -> dict[str, list[str]]:
    by_language: dict[str, list[str]] = defaultdict(list)
    text = resources.files("laser").joinpath("data/demo_sentences.tsv").read_text("utf-8")
    for line in text.splitlines():
        lang, sentence = line.split("\t")
        by_language[lang].append(sentence)
    return dict(by_language)


def _embed(model: Path, lang: str, sentences: list[str]) -> np.ndarray:
    source = OUTPUT_DIR / f"{lang}.txt"
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    target = OUTPUT_DIR / f"{lang}.npy"
    command = [sys.executable, "-m", "laser", "embed", str(source), "-o", str(target),
               "--lang", lang, "--model", str(model), "--quiet"]
    print(f"$ laser {shlex.join(command[3:])}")
    subprocess.run(command, check=True)
    embeddings = np.load(target)
    print(f"  -> {target} {embeddings.shape} {embeddings.dtype}")
    return embeddings


def main() -> None:
    model = os.environ.get(MODEL_ENV) or shipped_model_dir()
    if model is None:
        sys.exit("laser demo: no default model in this installation; set $LASER_MODEL to a "
                 "model directory")
    print(f"model: {model}")
    OUTPUT_DIR.mkdir(exist_ok=True)
    sample = _sample()
    vectors = {lang: unit_rows(_embed(model, lang, s)) for lang, s in sample.items()}
    english = sample["en"]
    correct = total = 0
    print("\nnearest neighbour (cosine) of each English sentence in the other languages:")
    for lang, sentences in sample.items():
        if lang == "en":
            continue
        similarity = vectors["en"] @ vectors[lang].T
        for i, row in enumerate(similarity):
            best = int(row.argmax())
            correct += best == i
            total += 1
            mark = "ok" if best == i else "MISS"
            print(f"  [{mark:4}] en: {english[i]!r}\n         {lang}: {sentences[best]!r} "
                  f"({row[best]:.3f})")
    print(f"\n{correct}/{total} nearest neighbours are the translation.")


if __name__ == "__main__":
    main()
