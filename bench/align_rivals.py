"""Vecalign and Bertalign, laser align's rivals in bench/align.py and bench/align_speed.py, on
embeddings laser made: run in their own virtualenv (`make bench-align`), one document pair a
call, timing only the alignment.

    bench/.venv-align/bin/python bench/align_rivals.py vecalign|bertalign PAIR.npz \
        [--bertalign-src bench/out/bertalign-src] [--max-size 8]

PAIR.npz holds `src` and `trg`, each (L, n, dim): the embedding of the run of sentences
i .. i+l-1 at [l - 1, i] (laser's layout), `src_pad` and `trg_pad` (the embedding of Vecalign's
'PAD' line, which fills the runs that would start before the document does in the rivals'
layout), and `src_bytes` and `trg_bytes`, each run's length in UTF-8 bytes (Bertalign's length
term). One JSON line goes to stdout: the beads ([[src indices], [trg indices]], 0-based), the
alignment's seconds and the process's peak resident memory in MiB.

Vecalign runs as its command does (`vecalign.vecalign.main`: seeds 42, one-to-many off, every
other option at its default but --alignment_max_size); Bertalign as `Bertalign.align_sents`
does, with its defaults (max_align 5, top_k 3, win 5, skip -0.1, margin and length penalty on),
its modules loaded from its source without its package's __init__ (which loads LaBSE). Bertalign
imports torch only to ask whether a GPU is there for faiss: a stand-in module answers no, so it
searches with faiss on the CPU as it does on a machine without CUDA.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import sys
import time
import types
from math import ceil
from pathlib import Path

import numpy as np


def front_padded(runs: np.ndarray, pad: np.ndarray, longest: int) -> np.ndarray:
    """The rivals' layout: [l - 1, i] the run of l sentences ending at sentence i, `pad` where
    it would start before the document."""
    count, n = min(longest, runs.shape[0]), runs.shape[1]
    out = np.empty((longest, n) + runs.shape[2:], dtype=runs.dtype)
    out[:] = pad
    for length in range(1, count + 1):
        out[length - 1, length - 1:] = runs[length - 1, :n - length + 1]
    return out


def run_vecalign(pair, max_size: int) -> list:
    from random import seed

    from vecalign.dp_utils import make_alignment_types, vecalign

    seed(42)
    np.random.seed(42)
    src = front_padded(pair["src"], pair["src_pad"], max_size)
    trg = front_padded(pair["trg"], pair["trg_pad"], max_size)
    search_buffer_size, del_percentile_frac = 5, 0.2  # the command's defaults
    stack = vecalign(vecs0=src, vecs1=trg, final_alignment_types=make_alignment_types(max_size),
                     del_percentile_frac=del_percentile_frac,
                     width_over2=ceil(max_size / 2.0) + search_buffer_size,
                     max_size_full_dp=300, costs_sample_size=20000, num_samps_for_norm=100)
    return [[list(x), list(y)] for x, y in stack[0]["final_alignments"]]


def load_bertalign(source: Path) -> types.ModuleType:
    """Bertalign's corelib, loaded from its file (its package's __init__ loads LaBSE)."""
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    sys.modules.setdefault("torch", torch)
    spec = importlib.util.spec_from_file_location("bertalign_corelib",
                                                  source / "bertalign" / "corelib.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bertalign(pair, corelib: types.ModuleType, max_align: int = 5, top_k: int = 3,
                  win: int = 5, skip: float = -0.1) -> list:
    """`Bertalign.align_sents` on the pair, with Bertalign's defaults."""
    longest = max_align - 1
    src = _unit(front_padded(pair["src"], pair["src_pad"], longest))
    trg = _unit(front_padded(pair["trg"], pair["trg_pad"], longest))
    src_lens = front_padded(pair["src_bytes"], 3, longest)  # len(b"PAD")
    trg_lens = front_padded(pair["trg_bytes"], 3, longest)
    n, m = src.shape[1], trg.shape[1]
    char_ratio = np.sum(src_lens[0]) / np.sum(trg_lens[0])
    distances, indices = corelib.find_top_k_sents(np.ascontiguousarray(src[0]),
                                                  np.ascontiguousarray(trg[0]), k=top_k)
    first_types = corelib.get_alignment_types(2)
    first_w, first_path = corelib.find_first_search_path(n, m)
    pointers = corelib.first_pass_align(n, m, first_w, first_path, first_types, distances, indices)
    first = corelib.first_back_track(n, m, pointers, first_path, first_types)
    second_types = corelib.get_alignment_types(max_align)
    second_w, second_path = corelib.find_second_search_path(first, win, n, m)
    pointers = corelib.second_pass_align(src, trg, src_lens, trg_lens, second_w, second_path,
                                         second_types, char_ratio, skip, margin=True,
                                         len_penalty=True)
    beads = corelib.second_back_track(n, m, pointers, second_path, second_types)
    return [[list(map(int, x)), list(map(int, y))] for x, y in beads]


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (LaBSE's, which Bertalign reads, already are)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("aligner", choices=["vecalign", "bertalign"])
    parser.add_argument("pair", type=Path)
    parser.add_argument("--bertalign-src", type=Path, default=Path("bench/out/bertalign-src"))
    parser.add_argument("--max-size", type=int, default=8,
                        help="Vecalign's --alignment_max_size (its README runs 8)")
    parser.add_argument("--warm-up", action="store_true",
                        help="align the pair once untimed first (Bertalign's numba compiles its "
                             "functions at the first call, or loads them from its cache)")
    args = parser.parse_args()
    pair = dict(np.load(args.pair))
    if args.aligner == "vecalign":
        align = lambda: run_vecalign(pair, args.max_size)  # noqa: E731
    else:
        corelib = load_bertalign(args.bertalign_src)
        align = lambda: run_bertalign(pair, corelib)  # noqa: E731
    if args.warm_up:
        align()
    started = time.perf_counter()
    beads = align()
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"beads": beads, "seconds": seconds, "peak_mib": peak}))


if __name__ == "__main__":
    main()
