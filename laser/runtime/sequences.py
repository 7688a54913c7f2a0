"""Token ids and the one batched inference loop, shared by every encoder network.

Dictionaries follow fairseq's convention: `<s>`=0, `<pad>`=1, `</s>`=2, `<unk>`=3. A network is
an `nn.Module` called as `model(tokens, lengths)` on a right-padded batch, returning one row per
sentence, with an `output_dim` attribute (or, for int8 BiLSTMs, an ONNX Runtime session called
the same way on numpy arrays: `laser.runtime.onnx_runtime`).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Optional, Sequence

import numpy as np

if TYPE_CHECKING:  # torch is imported where a batch is run: ids and batches need only numpy
    import torch
    from torch import nn

BOS, PAD, EOS, UNK = 0, 1, 2, 3


def sentence_ids(dictionary: dict[str, int], bpe_line: str, bos: bool = False) -> list[int]:
    """Dictionary ids of a subword line, unknown subwords as <unk>, then </s>; `bos` puts <s>
    first."""
    tokens = bpe_line.split()  # any run of white space separates, as in fairseq's tokenize_line
    get = dictionary.get
    return [BOS] * bos + [get(token, UNK) for token in tokens] + [EOS]


# Sentences of B >= MIN_EFFICIENT_BATCH already run the LSTM kernels near full speed, so a batch
# is closed once its next sentence would waste more than MAX_PADDING of its steps on padding.
MIN_EFFICIENT_BATCH = 16
MAX_PADDING = 0.1


def length_sorted_batches(lengths: Sequence[int], max_tokens: int,
                          max_sentences: int | None = None) -> Iterator[np.ndarray]:
    """Indices of sentences grouped longest first, each batch's padded size within max_tokens.

    A sentence longer than max_tokens gets a batch of its own.
    """
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    start = 0
    while start < len(order):
        longest = max(lengths[order[start]], 1)
        end = start + 1
        while end < len(order) and (end - start + 1) * longest <= max_tokens \
                and (max_sentences is None or end - start < max_sentences) \
                and (end - start < MIN_EFFICIENT_BATCH
                     or lengths[order[end]] >= (1 - MAX_PADDING) * longest):
            end += 1
        yield order[start:end]
        start = end


# What one batch costs, counted in tokens of work (bench/batch_cost.py fits them for the shipped
# model in ONNX Runtime): every time step costs as much as STEP_COST_ROWS more rows of the batch,
# and every batch as much as BATCH_COST_TOKENS more tokens.
STEP_COST_ROWS = 0.8
BATCH_COST_TOKENS = 9
# How many of the next longer lengths `cheapest_batch` tries as a batch's longest.
LONGER_LENGTHS_TRIED = 12


def batch_cost(longest: int, sentences: int) -> float:
    """The work of a batch of `sentences` padded to `longest` tokens, in tokens."""
    return longest * (sentences + STEP_COST_ROWS) + BATCH_COST_TOKENS


def cheapest_batch(waiting: Mapping[int, int], include: int, max_tokens: int,
                   max_sentences: Optional[int] = None) -> tuple[int, int, int]:
    """The batch to take from sentences waiting, counted by length, that must hold one of length
    `include`: (shortest, longest, count) of the lengths-contiguous batch, taken longest first,
    that embeds the most real tokens per unit of `batch_cost` within the padded budget."""
    lengths = sorted((length for length, count in waiting.items() if count), reverse=True)
    longer = [length for length in lengths if length >= include][-LONGER_LENGTHS_TRIED:]
    best, choice = -1.0, (include, include, 1)
    for longest in longer:
        room = max(1, max_tokens // longest)
        if max_sentences is not None:
            room = min(room, max_sentences)
        count = tokens = 0
        for length in lengths:
            if length > longest:
                continue
            if count == room:
                break
            taken = min(waiting[length], room - count)
            count += taken
            tokens += taken * length
            if length <= include and tokens / batch_cost(longest, count) > best:
                best, choice = tokens / batch_cost(longest, count), (length, longest, count)
    return choice


def pad_ids(sequences: Sequence[Sequence[int]], pad: int = PAD) -> tuple[np.ndarray, np.ndarray]:
    """A right-padded (batch, time) int64 array of id sequences, and their lengths."""
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    tokens = np.full((len(sequences), int(lengths.max())), pad, dtype=np.int64)
    for row, sequence in enumerate(sequences):
        tokens[row, :len(sequence)] = sequence
    return tokens, lengths


def pad_batch(sequences: Sequence[Sequence[int]], pad: int = PAD) -> tuple[torch.Tensor, torch.Tensor]:
    """`pad_ids` as torch tensors."""
    import torch
    tokens, lengths = pad_ids(sequences, pad)
    return torch.from_numpy(tokens), torch.from_numpy(lengths)


# Embeds one right-padded batch: (tokens (batch, time), lengths (batch,)) -> (batch, dim) rows.
BatchRunner = Callable[[np.ndarray, np.ndarray], np.ndarray]


class BatchPool:
    """Threads that embed batches side by side for one network, started on the first call with
    more than one batch and kept for the next (a forked process starts its own)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._executor: Optional[ThreadPoolExecutor] = None
        self._pid = 0
        self._lock = threading.Lock()

    def run_all(self, embed_batch: Callable[[np.ndarray], None],
                batches: Sequence[np.ndarray]) -> None:
        """`embed_batch` on every batch, a lone batch in the calling thread; the first error is
        raised once the batches running end, and batches not yet started are dropped."""
        if len(batches) == 1:
            embed_batch(batches[0])
            return
        executor = self._started()
        futures = [executor.submit(embed_batch, batch) for batch in batches]
        try:
            for future in futures:
                future.result()
        finally:  # on an error or an interrupt
            for future in futures:
                future.cancel()
            wait(futures)

    def _started(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="laser-batch")
                self._pid = os.getpid()
            return self._executor


def embed_in_batches(run: BatchRunner, dim: int, sequences: Sequence[Sequence[int]],
                     max_tokens: int, max_sentences: int | None = None,
                     pool: Optional[BatchPool] = None) -> np.ndarray:
    """The one batched inference loop: id sequences embedded by `run` in length-sorted batches,
    in the calling thread or `pool.workers` batches at a time (`run` must then release the GIL;
    each batch then holds at most its share of max_tokens and of the sentences), rows returned
    as float32 in input order."""
    output = np.empty((len(sequences), dim), dtype=np.float32)
    lengths = [len(sequence) for sequence in sequences]

    def embed_batch(batch: np.ndarray) -> None:
        output[batch] = run(*pad_ids([sequences[i] for i in batch]))

    if pool is None or pool.workers == 1:
        for batch in length_sorted_batches(lengths, max_tokens, max_sentences):
            embed_batch(batch)
        return output
    # the budget is shared by the batches in flight, and every worker gets a batch
    share = -(-len(sequences) // pool.workers)
    pool.run_all(embed_batch, list(length_sorted_batches(
        lengths, max(1, max_tokens // pool.workers), min(max_sentences or share, share))))
    return output


def embed_sequences(model: nn.Module, sequences: Sequence[Sequence[int]], device: torch.device,
                    max_tokens: int, max_sentences: int | None = None) -> np.ndarray:
    """`embed_in_batches` with a torch network on `device`."""
    import torch
    with torch.inference_mode(), _float32_lstms(torch.device(device)):
        return embed_in_batches(_torch_batch(model, device), model.output_dim, sequences,
                                max_tokens, max_sentences)


def torch_batch_runner(model: nn.Module, device: torch.device) -> BatchRunner:
    """A torch network on `device` as a `BatchRunner` that sets up inference for each batch."""
    import torch
    run = _torch_batch(model, device)

    def run_batch(tokens: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        with torch.inference_mode(), _float32_lstms(torch.device(device)):
            return run(tokens, lengths)
    return run_batch


def _torch_batch(model: nn.Module, device: torch.device) -> BatchRunner:
    """A torch network on `device` as a `BatchRunner`, in the inference mode its caller sets."""
    import torch

    def run(tokens: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        embeddings = model(torch.from_numpy(tokens).to(device), torch.from_numpy(lengths).to(device))
        return embeddings.float().cpu().numpy()
    return run


@contextmanager
def _float32_lstms(device: torch.device) -> Iterator[None]:
    """cuDNN's LSTMs in float32 rather than TensorFloat-32, which torch allows them by default:
    on an H200 the official CPU vectors were 4.6e-5 away with it, 2.2e-6 without
    (docs/performance.md); `quantize="fp16"` is the fast way on a GPU."""
    import torch
    if device.type != "cuda":
        yield
        return
    allowed = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = allowed
