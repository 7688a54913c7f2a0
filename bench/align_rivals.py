"""Vecalign and Bertalign, laser align's rivals in bench/align.py and bench/align_speed.py, on
embeddings laser made: run in their own virtualenv (`make bench-align`), the pairs aligned one
after the other in one process (as Vecalign's command aligns several documents), timing only
each alignment.

    bench/.venv-align/bin/python bench/align_rivals.py vecalign|bertalign PAIR.npz... \
        [--bertalign-src bench/out/bertalign-src] [--max-size 8] [--warm-up]

Each PAIR.npz holds `src` and `trg`, each (L, n, dim): the embedding of the run of sentences
i .. i+l-1 at [l - 1, i] (laser's layout), `src_pad` and `trg_pad` (the embedding of Vecalign's
'PAD' line, which fills the runs that would start before the document does in the rivals'
layout), and `src_bytes` and `trg_bytes`, each run's length in UTF-8 bytes (Bertalign's length
term). One JSON line a pair goes to stdout, in order: the beads ([[src indices], [trg
indices]], 0-based), the alignment's seconds and CPU seconds (all threads), its peak resident
memory in MiB above what the process held before it (the inputs in the rival's layout built)
and, with --trace-memory, the peak of its allocations seen by tracemalloc.

Vecalign runs as its command does (`vecalign.vecalign.main`: seeds 42, one-to-many off, every
other option at its default but --alignment_max_size and, with --deletion,
--del_percentile_frac); Bertalign as `Bertalign.align_sents` does, with its defaults (max_align
5, top_k 3, win 5, skip -0.1 unless --skip, margin and length penalty on), its modules loaded
from its source without its package's __init__ (which loads LaBSE). Bertalign imports torch
only to ask whether a GPU is there for faiss: a stand-in module answers no, so it searches
with faiss on the CPU as it does on a machine without CUDA.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import tracemalloc
import types
from math import ceil
from pathlib import Path
from random import seed
from typing import Callable

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


def reset_peak() -> float:
    """Resets this process's peak resident memory (Linux's clear_refs) and gives what it holds
    now, in MiB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_mib("VmRSS")


def peak_mib() -> float:
    """This process's peak resident memory since the last reset_peak, in MiB."""
    return _status_mib("VmHWM")


def traced_mib(align: Callable[[], object]) -> float:
    """The peak of what `align()` allocates through Python's and numpy's allocators
    (tracemalloc), in MiB: a second, untimed run (numba's and faiss's own allocations, which
    Bertalign makes, are not seen)."""
    tracemalloc.start()
    try:
        align()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def vecalign_inputs(pair, max_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The arrays Vecalign's make_doc_embedding builds."""
    return (front_padded(pair["src"], pair["src_pad"], max_size),
            front_padded(pair["trg"], pair["trg_pad"], max_size))


def run_vecalign(inputs: tuple[np.ndarray, np.ndarray], max_size: int,
                 del_percentile_frac: float = 0.2) -> list:
    from vecalign.dp_utils import make_alignment_types, vecalign

    src, trg = inputs
    search_buffer_size = 5  # the command's default
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
    sys.modules[spec.name] = module  # numba's cache finds the module by its name
    spec.loader.exec_module(module)
    return module


BERTALIGN_MAX_ALIGN = 5  # Bertalign's default max_align


def bertalign_inputs(pair) -> tuple[np.ndarray, ...]:
    """The arrays Bertalign's Encoder.transform gives: vectors and byte lengths of the runs."""
    longest = BERTALIGN_MAX_ALIGN - 1
    return (_unit(front_padded(pair["src"], pair["src_pad"], longest)),
            _unit(front_padded(pair["trg"], pair["trg_pad"], longest)),
            front_padded(pair["src_bytes"], 3, longest),  # len(b"PAD")
            front_padded(pair["trg_bytes"], 3, longest))


def run_bertalign(inputs: tuple[np.ndarray, ...], corelib: types.ModuleType,
                  max_align: int = BERTALIGN_MAX_ALIGN, top_k: int = 3, win: int = 5,
                  skip: float = -0.1) -> list:
    """`Bertalign.align_sents` on the pair, with Bertalign's defaults."""
    src, trg, src_lens, trg_lens = inputs
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
    parser.add_argument("pairs", type=Path, nargs="+")
    parser.add_argument("--bertalign-src", type=Path, default=Path("bench/out/bertalign-src"))
    parser.add_argument("--max-size", type=int, default=8,
                        help="Vecalign's --alignment_max_size (its README runs 8)")
    parser.add_argument("--warm-up", action="store_true",
                        help="align the first pair once untimed first (Bertalign's numba "
                             "compiles its functions at the first call, or loads them from its "
                             "cache)")
    parser.add_argument("--deletion", type=float, default=0.2,
                        help="Vecalign's --del_percentile_frac (default 0.2)")
    parser.add_argument("--skip", type=float, default=-0.1, help="Bertalign's skip (default -0.1)")
    parser.add_argument("--trace-memory", action="store_true",
                        help="align each pair a second time under tracemalloc (traced_mib)")
    args = parser.parse_args()
    if args.aligner == "vecalign":
        seed(42)  # as Vecalign's command, once for all its documents
        np.random.seed(42)
        prepare = lambda pair: vecalign_inputs(pair, args.max_size)  # noqa: E731
        align = lambda inputs: run_vecalign(inputs, args.max_size, args.deletion)  # noqa: E731
    else:
        corelib = load_bertalign(args.bertalign_src)
        prepare = bertalign_inputs
        align = lambda inputs: run_bertalign(inputs, corelib, skip=args.skip)  # noqa: E731
    for number, path in enumerate(args.pairs):
        inputs = prepare(dict(np.load(path)))
        if args.warm_up and not number:
            align(inputs)
        before = reset_peak()
        started, cpu = time.perf_counter(), time.process_time()
        beads = align(inputs)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        memory = peak_mib() - before
        traced = traced_mib(lambda: align(inputs)) if args.trace_memory else None
        print(json.dumps({"beads": beads, "seconds": seconds, "cpu_seconds": cpu,
                          "memory_mib": memory, "traced_mib": traced}), flush=True)


if __name__ == "__main__":
    main()
