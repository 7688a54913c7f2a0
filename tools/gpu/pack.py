"""Pack a prepared `laser train` work folder for a leased GPU machine whose calls carry at most
64 MiB: the teacher's inputs (the distinct English sentences; the teacher runs there) and the
token ids (uint16, xz) with the --init model travel in two calls. See docs/training.md,
"On a leased GPU with a 64 MiB transfer limit".

    python tools/gpu/pack.py WORK CORPUS_TRAIN INIT_MODEL_DIR .gpu [--topic-clusters 1024]
"""
from __future__ import annotations

import argparse
import json
import lzma
import shutil
from pathlib import Path

import numpy as np

from laser.training.corpus import find_pair_files
from laser.training.distill import TEACHER_DIR, english_sentences, sentence_rows
from laser.training.teachers import sentences_digest

CHECK_ROWS = 512  # teacher rows the GPU machine compares with this machine's cache


def pack_teacher_inputs(work: Path, train_dir: Path, out: Path, topic_clusters: int) -> None:
    """english.txt.xz (cache row order), rows.npz, check.npz, topics, BPE files, dev ids."""
    files = find_pair_files(train_dir)
    sentences = english_sentences(files)
    state = json.loads((work / TEACHER_DIR / "use.state.json").read_text())
    if sentences_digest(sentences) != state["sentences_sha256"]:
        raise SystemExit(f"{work}: its teacher cache is of another corpus than {train_dir}")
    with lzma.open(out / "english.txt.xz", "wt", encoding="utf-8") as f:
        f.write("".join(sentence + "\n" for sentence in sentences))
    rows = sentence_rows(files, sentences)
    np.savez_compressed(out / "rows.npz", **{lang: r.astype(np.int32) for lang, r in rows.items()})
    cache = np.load(work / TEACHER_DIR / "use.f16.npy", mmap_mode="r")
    picked = np.sort(np.random.default_rng(0).choice(len(cache), min(CHECK_ROWS, len(cache)),
                                                         replace=False))
    np.savez(out / "check.npz", rows=picked, vectors=np.asarray(cache[picked]))
    shutil.copy(work / TEACHER_DIR / f"use.topics-{topic_clusters}.npy", out / "topics.npy")
    for name in ("bpe.fcodes", "bpe.fvocab"):
        shutil.copy(work / name, out / name)
    np.savez_compressed(out / "dev.npz", **id_arrays(work / "ids-dev"))


def id_arrays(folder: Path) -> dict[str, np.ndarray]:
    """Every STEM.tokens.npy / STEM.offsets.npy of an ids folder as uint16 tokens and lengths."""
    arrays = {}
    for tokens in sorted(folder.glob("*.tokens.npy")):
        stem = tokens.name[: -len(".tokens.npy")]
        arrays[f"{stem}.tokens"] = as_uint16(np.load(tokens))
        arrays[f"{stem}.lengths"] = as_uint16(np.diff(np.load(folder / f"{stem}.offsets.npy")))
    return arrays


def as_uint16(values: np.ndarray) -> np.ndarray:
    if len(values) and values.max() >= 1 << 16:
        raise SystemExit("a token id or sentence length does not fit 16 bits")
    return values.astype(np.uint16)


def pack_training_data(work: Path, init: Path, out: Path) -> None:
    """One xz stream of all training token ids and one of sentence lengths, language by
    language (source, then English), with index.json and the --init model."""
    languages = json.loads((work / "prepare.json").read_text())["languages"]
    arrays = id_arrays(work / "ids-train")
    pairs = {lang: len(arrays[f"{lang}.src.lengths"]) for lang in languages}
    (out / "index.json").write_text(json.dumps({"languages": languages, "pairs": pairs}))
    stems = [f"{lang}.{side}" for lang in languages for side in ("src", "eng")]
    for kind in ("tokens", "lengths"):
        with lzma.open(out / f"{kind}.u16.xz", "wb") as f:
            for stem in stems:
                f.write(arrays[f"{stem}.{kind}"].tobytes())
    shutil.copytree(init, out / "init", dirs_exist_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="a prepared work folder (--teacher use)")
    parser.add_argument("train_dir", type=Path, help="the corpus's train folder")
    parser.add_argument("init", type=Path, help="the model to start from (--init)")
    parser.add_argument("out", type=Path, help="gets teacher/ and data/ (ignore it in git)")
    parser.add_argument("--topic-clusters", type=int, default=1024,
                        help="the run's --topic-clusters (its teacher clusters travel)")
    args = parser.parse_args()
    for part in ("teacher", "data"):
        (args.out / part).mkdir(parents=True, exist_ok=True)
    pack_teacher_inputs(args.work, args.train_dir, args.out / "teacher", args.topic_clusters)
    pack_training_data(args.work, args.init, args.out / "data")


if __name__ == "__main__":
    main()
