"""Pack a prepared `laser train` work folder for a leased GPU machine whose calls carry at most
64 MiB: the teacher's inputs (the distinct English sentences; USE runs there) and the token ids
(uint16, xz) with the --init model travel in two calls. With `--teacher use+e5` the e5 block of
the cache, which the machine cannot recompute in time, travels too: int8 with a scale per row,
in parts of at most --part-mib, one call each. See docs/experiments/training-log.md, "On a leased GPU with a
64 MiB transfer limit".

    python tools/gpu/pack.py WORK CORPUS_TRAIN INIT_MODEL_DIR .gpu [--teacher use+e5]
"""
from __future__ import annotations

import argparse
import json
import lzma
import math
import shutil
from pathlib import Path

import numpy as np

from laser.models.installed import model_directory
from laser.training.corpus import find_pair_files
from laser.training.distill import TEACHER_DIR, english_sentences, sentence_rows
from laser.training.run import work_bpe_files
from laser.training.teachers import (PACKAGED_TEACHERS, USETeacher, cache_paths, cache_stem,
                                     sentences_digest)
from laser.training.topics import topic_labels_path

CHECK_ROWS = 512  # teacher rows the GPU machine compares with this machine's cache
TEACHERS = ("use", "use+e5")  # USE is computed there, the rest of the cache carried


def packaged_blocks(spec: str) -> tuple[int, ...]:
    """The widths of the packaged teachers' parts that a spec joins."""
    return tuple(width for part in spec.split("+") for width in PACKAGED_TEACHERS[part].blocks)


def pack_teacher_inputs(work: Path, train_dir: Path, out: Path, topic_clusters: int,
                        teacher: str) -> np.ndarray:
    """english.txt.xz (cache row order), rows.npz, check.npz, topics, BPE files, dev ids and
    teacher.json; returns the cache (read-only)."""
    files = find_pair_files(train_dir)
    sentences = english_sentences(files)
    cache_path, state_path = cache_paths(teacher, work / TEACHER_DIR)
    state = json.loads(state_path.read_text())
    if sentences_digest(sentences) != state["sentences_sha256"]:
        raise SystemExit(f"{work}: its teacher cache is of another corpus than {train_dir}")
    if state["done"] != len(sentences):
        raise SystemExit(f"{work}: its {teacher} cache is not finished")
    with lzma.open(out / "english.txt.xz", "wt", encoding="utf-8") as f:
        f.write("".join(sentence + "\n" for sentence in sentences))
    rows = sentence_rows(files, sentences)
    np.savez_compressed(out / "rows.npz", **{lang: r.astype(np.int32) for lang, r in rows.items()})
    cache = np.load(cache_path, mmap_mode="r")
    picked = np.sort(np.random.default_rng(0).choice(len(cache), min(CHECK_ROWS, len(cache)),
                                                         replace=False))
    np.savez(out / "check.npz", rows=picked, vectors=np.asarray(cache[picked]))
    shutil.copy(topic_labels_path(work / TEACHER_DIR, cache_stem(teacher), topic_clusters),
                out / "topics.npy")
    for path in work_bpe_files(work):
        shutil.copy(path, out / path.name)
    np.savez_compressed(out / "dev.npz", **id_arrays(work / "ids-dev"))
    (out / "teacher.json").write_text(json.dumps(
        {"teacher": teacher, "blocks": packaged_blocks(teacher), "rows": len(sentences)}))
    return cache


def pack_carried_block(cache: np.ndarray, out: Path, part_mib: float) -> list[Path]:
    """The columns after USE's as int8 codes with a float32 scale per row (the row's largest
    magnitude over 127), in folders OUT/e5-0, OUT/e5-1, ... of at most part_mib each."""
    width = cache.shape[1] - USETeacher.dim
    parts = math.ceil(len(cache) / max(1, int(part_mib * 2 ** 20 // (width + 4))))
    rows_per_part = math.ceil(len(cache) / parts)  # even parts
    folders = []
    for number, start in enumerate(range(0, len(cache), rows_per_part)):
        block = np.asarray(cache[start:start + rows_per_part, USETeacher.dim:], dtype=np.float32)
        scales = np.maximum(np.abs(block).max(1), np.finfo(np.float32).tiny) / 127
        codes = np.rint(block / scales[:, None]).astype(np.int8)
        folder = out / f"e5-{number}"
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / f"e5-{number}.npz", start=np.int64(start), codes=codes, scales=scales)
        folders.append(folder)
    return folders


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


def pack_training_data(work: Path, init: str, out: Path) -> None:
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
    shutil.copytree(model_directory(init), out / "init", dirs_exist_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="a prepared work folder (--teacher use or use+e5)")
    parser.add_argument("train_dir", type=Path, help="the corpus's train folder")
    parser.add_argument("init", help="the model to start from (--init): a directory, or default")
    parser.add_argument("out", type=Path, help="gets teacher/, data/ and e5-K/ (ignore it in git)")
    parser.add_argument("--topic-clusters", type=int, default=1024,
                        help="the run's --topic-clusters (its teacher clusters travel)")
    parser.add_argument("--teacher", choices=TEACHERS, default="use",
                        help="the run's --teacher (its cache in WORK/teacher)")
    parser.add_argument("--part-mib", type=float, default=60,
                        help="the most each carried part of the e5 block may take")
    args = parser.parse_args()
    for part in ("teacher", "data"):
        (args.out / part).mkdir(parents=True, exist_ok=True)
    cache = pack_teacher_inputs(args.work, args.train_dir, args.out / "teacher",
                                args.topic_clusters, args.teacher)
    if args.teacher != "use":
        for folder in pack_carried_block(cache, args.out, args.part_mib):
            print(f"{folder}: carry it in its own call (tools/gpu/stash.sh)")
    pack_training_data(args.work, args.init, args.out / "data")


if __name__ == "__main__":
    main()
