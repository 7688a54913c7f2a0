"""fastText's prediction, a batch of lines at a time in numpy: the same labels and probabilities
as fastText's C++ `predict` (src/dictionary.cc, model.cc, loss.cc), at a fraction of its cost a
line. Each distinct word of the batch is looked up and hashed once, all of them together: its
row and its character n-grams (FNV-1a over UTF-8 bytes, `% bucket`, the pruned-index map); then
the word n-grams, each line's mean row, one matrix product for the output layer."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Sequence

import numpy as np

from .fasttext_file import FastTextModel

EOS = "</s>"  # the token a line's newline gives
LABEL_PREFIX = "__label__"
SPACES = " \n\r\t\v\f\0"  # what separates fastText's tokens
FNV_OFFSET = 2166136261
FNV_PRIME = np.uint32(16777619)
WORD_NGRAM_FACTOR = np.uint64(116049371)
LOG_FLOOR = np.float32(1e-5)  # fastText's std_log(x) = log(x + 1e-5)
CACHE_BYTES = 64 << 20  # the word cache's rows: at most this much memory
MIN_CACHED_WORDS = 1 << 16
WORDS_AT_ONCE = 16384  # new words hashed together (bounds the temporaries)
ROWS_AT_ONCE = 16384  # rows gathered together
LINES_AT_ONCE = 4096  # lines scored together
PREFIX_HASHES = 1 << 24  # hashes of every byte's prefixes at most (64 MB), else one n-gram at a time
SIGMOID_TABLE = 512  # fastText's table sigmoid of ns and ova, on [-8, 8]
MAX_SIGMOID = 8


@dataclass(frozen=True)
class Predictions:
    """The `k` likeliest labels of each line, likeliest first: label indices (-1: none, as for
    a line without any known feature) and probabilities as fastText reports them."""

    labels: np.ndarray  # int64 [lines, k]
    probabilities: np.ndarray  # float32 [lines, k]


def fasttext_words(line: str) -> list[str]:
    """The tokens fastText reads of `line + "\\n"`: up to the first newline, split on its
    spaces (without the end-of-line token)."""
    text = line.partition("\n")[0]
    for space in SPACES[2:]:
        if space in text:
            text = text.replace(space, " ")
    return [word for word in text.split(" ") if word]


class Predictor:
    """A loaded model's prediction over batches of lines, each given as its words. The rows of
    the words it has seen (their sum, their number, their hash) stay in a bounded cache."""

    def __init__(self, model: FastTextModel, cache_bytes: int = CACHE_BYTES):
        self.model = model
        self.settings = model.settings
        self.vocabulary = dict(zip(model.words, range(len(model.words))))
        self.input = model.input
        self.output = np.ascontiguousarray(model.output.T)  # [dim, labels]
        if self.settings.loss == "hs":
            self.tree = _HuffmanTree(model.label_counts)
        self.sigmoid_table = _sigmoid_table()
        self.capacity = max(MIN_CACHED_WORDS, cache_bytes // (4 * self.settings.dim))
        self._lock = threading.Lock()  # one batch at a time: the cache changes as it runs
        self._clear_cache()

    def _clear_cache(self) -> None:
        """Only the end-of-line token (slot 0): its own row if the vocabulary has it, no n-grams."""
        self.cache = {EOS: 0}
        self.cached = _WordTable(self.settings.dim, 1024, self.capacity)
        eos_row = self.vocabulary.get(EOS, -1)
        if eos_row >= 0:
            self.cached.sums[0] = self.input[eos_row]
            self.cached.counts[0] = 1
        eos = np.frombuffer(EOS.encode(), np.uint8)
        self.cached.hashes[0] = _fnv(eos, np.zeros(1, np.int64), np.array([len(eos)]))[0]

    def predict(self, lines: Sequence[Sequence[str]], k: int = 1) -> Predictions:
        """The `k` likeliest labels of each line (each line: its words, as fastText splits it)."""
        if any(EOS in words for words in lines):  # fastText stops reading a line at `</s>`
            lines = [words[:words.index(EOS)] if EOS in words else words for words in lines]
        k = max(1, min(k, len(self.model.labels)))
        if not lines:
            return Predictions(np.zeros((0, k), np.int64), np.zeros((0, k), np.float32))
        with self._lock:
            hidden, known = self.hidden(lines)
        labels = np.empty((len(lines), k), np.int64)
        probabilities = np.empty((len(lines), k), np.float32)
        for first in range(0, len(lines), LINES_AT_ONCE):  # bounded [lines, labels] scores
            part = slice(first, first + LINES_AT_ONCE)
            labels[part], probabilities[part] = self.top(hidden[part], k)
        labels[~known] = -1
        probabilities[~known] = 0.0
        return Predictions(labels, probabilities)

    def hidden(self, lines: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Each line's mean input row (float32 [lines, dim]), and whether it has any row."""
        slots = self.slots(list(chain.from_iterable(lines)))
        lengths = np.fromiter(map(len, lines), np.int64, len(lines))
        stream, lengths = _with_line_ends(slots, lengths, self.cached.labels)
        total = _segment_sums(self.cached.sums, stream, lengths)
        counts = np.add.reduceat(self.cached.counts[stream], np.cumsum(lengths) - lengths)
        if self.settings.word_ngrams > 1 and self.settings.bucket > 0:
            ngram_total, ngram_counts = self.word_ngram_rows(self.cached.hashes[stream], lengths)
            total += ngram_total
            counts += ngram_counts
        known = counts > 0
        total *= (1.0 / np.maximum(counts, 1)).astype(np.float32)[:, None]
        return total, known

    def slots(self, words: list[str]) -> np.ndarray:
        """Each word's slot in the cache, the words it lacks put in first (the cache emptied
        first when they would not fit)."""
        slots = np.fromiter(map(self.cache.get, words, repeat(-1)), np.int64, len(words))
        missing = np.flatnonzero(slots < 0)
        if not len(missing):
            return slots
        new = list(dict.fromkeys(map(words.__getitem__, missing.tolist())))
        if len(self.cache) + len(new) > self.capacity:
            self._clear_cache()
            missing, new = np.arange(len(words)), list(dict.fromkeys(words))
        base = len(self.cache)
        self.cached.reserve(base + len(new))
        for first in range(0, len(new), WORDS_AT_ONCE):
            self.word_rows(new[first:first + WORDS_AT_ONCE], base + first)
        self.cache.update(zip(new, range(base, base + len(new))))
        slots[missing] = np.fromiter(map(self.cache.__getitem__, map(words.__getitem__,
                                                                      missing.tolist())),
                                     np.int64, len(missing))
        return slots

    def word_rows(self, words: list[str], base: int) -> None:
        """Fill the cache's slots base.. for `words`: the sum of each word's input rows (its
        own if in the vocabulary, then its character n-grams'), their number, its FNV hash,
        whether it is a label (no feature)."""
        table, end = self.cached, base + len(words)
        wids = np.fromiter(map(self.vocabulary.get, words, repeat(-1)), np.int64, len(words))
        joined, text, word_starts, word_ends = _bracketed(words)
        table.hashes[base:end] = _fnv(text, word_starts + 1, word_ends - word_starts - 2)
        table.labels[base:end] = wids >= len(self.model.words)  # in the file as labels
        if b"<" + LABEL_PREFIX.encode() in joined:  # and any other word of their prefix
            table.labels[base:end] |= np.fromiter(
                (word.startswith(LABEL_PREFIX) for word in words), bool, len(words))
        sums, counts = table.sums[base:end], table.counts[base:end]
        sums[:] = 0
        counts[:] = 0
        if self.settings.maxn > 0 and self.settings.bucket > 0:
            owners, rows = self.char_ngram_rows(text)
            present, first = _groups(owners)
            sums[present] = _segment_sums(self.input, rows, np.diff(first, append=len(rows)))
            counts[:] = np.bincount(owners, minlength=len(words))
        known = np.flatnonzero(wids >= 0)
        sums[known] += self.input[wids[known]]
        counts[known] += 1

    def char_ngram_rows(self, text: np.ndarray):
        """The kept character n-grams (minn..maxn characters) of each `<word>` in `text`: (the
        word of each, its input row), word by word."""
        minn, maxn = max(self.settings.minn, 1), self.settings.maxn
        starts = np.flatnonzero((text & 0xC0) != 0x80)  # every character, spaces too
        space = text[starts] == 0x20
        chars = len(starts)
        before = np.concatenate([[0], np.cumsum(space)])  # spaces before each character
        owners, begins, spans = [], [], []
        for size in range(minn, maxn + 1):
            if size >= chars:
                break
            inside = before[size:chars] == before[:chars - size]  # no space among them
            inside &= ~space[:chars - size]
            if size == 1:  # fastText skips the lone `<` and `>`
                inside &= ~np.concatenate([[True], space[:chars - 2]]) & ~space[1:chars]
            first = np.flatnonzero(inside)
            owners.append(before[first])
            begins.append(starts[first])
            spans.append(starts[first + size] - starts[first])
        if not owners:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        owners, begins, spans = map(np.concatenate, (owners, begins, spans))
        longest = int(spans.max(initial=1))
        if longest * len(text) <= PREFIX_HASHES:
            hashes = _prefix_fnv(text, longest).ravel()[(spans - 1) * len(text) + begins]
        else:  # very long n-grams: each hashed on its own
            hashes = _fnv(text, begins, spans)
        rows = self.model.bucket_rows[hashes % np.uint32(self.settings.bucket)]
        kept = rows >= 0
        owners, rows = owners[kept], rows[kept]
        order = np.argsort(owners, kind="stable")  # word by word (merges the sizes' runs)
        return owners[order], rows[order]

    def word_ngram_rows(self, hashes: np.ndarray, lengths: np.ndarray):
        """Each line's sum of its word n-gram rows (2..wordNgrams consecutive words; fastText
        chains their int32 hashes, sign-extended, in uint64) and their number."""
        line = np.repeat(np.arange(len(lengths)), lengths)
        wide = hashes.view(np.int32).astype(np.int64).view(np.uint64)
        total = np.zeros((len(lengths), self.settings.dim), np.float32)
        counts = np.zeros(len(lengths), np.int64)
        first, chained = np.arange(len(line)), wide  # each n-gram's first word, its hash so far
        for offset in range(1, min(self.settings.word_ngrams, int(lengths.max(initial=1)))):
            inside = first < len(line) - offset
            first, chained = first[inside], chained[inside]
            same = line[first + offset] == line[first]
            first, chained = first[same], chained[same]
            chained = chained * WORD_NGRAM_FACTOR + wide[first + offset]
            rows = self.model.bucket_rows[chained % np.uint64(self.settings.bucket)]
            kept = rows >= 0
            owners = line[first[kept]]
            counts += np.bincount(owners, minlength=len(lengths))
            present, starts = _groups(owners)
            total[present] += _segment_sums(self.input, rows[kept],
                                            np.diff(starts, append=len(owners)))
        return total, counts

    def top(self, hidden: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best labels of each line and fastText's probabilities of them."""
        loss = self.settings.loss
        if loss == "hs":
            scores = self.tree.log_probabilities(hidden @ self.output[:, :self.tree.internal])
            return _best(scores, k, np.exp)
        logits = hidden @ self.output
        if loss == "softmax":
            logits -= logits.max(axis=1, keepdims=True)
            np.exp(logits, out=logits)
            logits /= logits.sum(axis=1, keepdims=True)
        else:  # ns and ova
            logits = _table_sigmoid(logits, self.sigmoid_table)
        return _best(logits, k, lambda best: np.exp(np.log(best + LOG_FLOOR)))


class _WordTable:
    """The cached words' rows: sums [slots, dim], counts, FNV hashes, label flags; grows (to
    `capacity` slots, unless one batch needs more)."""

    def __init__(self, dim: int, size: int, capacity: int):
        self.capacity = capacity
        self.sums = np.zeros((size, dim), np.float32)
        self.counts = np.zeros(size, np.int64)
        self.hashes = np.zeros(size, np.uint32)
        self.labels = np.zeros(size, bool)

    def reserve(self, size: int) -> None:
        if size <= len(self.counts):
            return
        grown = max(size, min(2 * len(self.counts), self.capacity))
        for name in ("sums", "counts", "hashes", "labels"):
            old = getattr(self, name)
            new = np.zeros((grown, *old.shape[1:]), old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)


def _best(scores: np.ndarray, k: int, probability) -> tuple[np.ndarray, np.ndarray]:
    """The k highest scores of each row, highest first: (indices, probability(scores))."""
    if k == 1:
        best = scores.argmax(axis=1)[:, None]
    else:
        best = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < scores.shape[1] \
            else np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
        chosen = np.take_along_axis(scores, best, axis=1)
        best = np.take_along_axis(best, np.argsort(-chosen, axis=1, kind="stable"), axis=1)
    chosen = np.take_along_axis(scores, best, axis=1)
    found = np.isfinite(chosen)  # hs: leaves fastText's search does not reach
    return (np.where(found, best, -1).astype(np.int64),
            np.where(found, probability(np.where(found, chosen, 0)), 0).astype(np.float32))


def _sigmoid_table() -> np.ndarray:
    """fastText's sigmoid table: 513 values on [-8, 8]."""
    x = (np.arange(SIGMOID_TABLE + 1, dtype=np.float32) * np.float32(2 * MAX_SIGMOID)
         / np.float32(SIGMOID_TABLE) - np.float32(MAX_SIGMOID))
    return (1.0 / (1.0 + np.exp(-x).astype(np.float64))).astype(np.float32)


def _table_sigmoid(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """fastText's sigmoid of ns and ova: 0 below -8, 1 above 8, else the table's entry."""
    index = ((x + np.float32(MAX_SIGMOID)) * np.float32(SIGMOID_TABLE) / np.float32(MAX_SIGMOID)
             / np.float32(2))
    values = table[np.clip(index, 0, SIGMOID_TABLE).astype(np.int64)]
    return np.where(x < -MAX_SIGMOID, np.float32(0), np.where(x > MAX_SIGMOID, np.float32(1),
                                                               values))


class _HuffmanTree:
    """The tree of fastText's hierarchical softmax, built from the label counts as fastText
    builds it; a leaf's log-probability sums log(f + 1e-5) or log(1 - f + 1e-5) along its path."""

    def __init__(self, counts: np.ndarray):
        labels = len(counts)
        self.internal = labels - 1
        size = 2 * labels - 1
        count = np.full(size, 1e15)
        count[:labels] = counts
        parent = np.full(size, -1)
        right = np.zeros(size, bool)
        leaf, node = labels - 1, labels
        for i in range(labels, size):
            pair = []
            for _ in range(2):
                if leaf >= 0 and count[leaf] < count[node]:
                    pair.append(leaf)
                    leaf -= 1
                else:
                    pair.append(node)
                    node += 1
            count[i] = count[pair[0]] + count[pair[1]]
            parent[pair] = i
            right[pair[1]] = True
        self.labels, self.parent, self.right = labels, parent, right
        # Nodes top-down, a level at a time (the root, 2 * labels - 2, has none above it).
        depth = np.zeros(size, np.int64)
        for i in range(size - 2, -1, -1):
            depth[i] = depth[parent[i]] + 1
        self.levels = [np.flatnonzero(depth == level) for level in range(1, depth.max() + 1)]

    def log_probabilities(self, logits: np.ndarray) -> np.ndarray:
        """Each leaf's score [lines, labels]; -inf where fastText's search stops before it
        (a node below log(1e-5))."""
        f = 1.0 / (1.0 + np.exp(-logits))
        size = 2 * self.labels - 1
        score = np.zeros((len(logits), size), np.float32)
        floor = np.log(LOG_FLOOR)
        for nodes in self.levels:
            above = self.parent[nodes]
            step = f[:, above - self.labels]
            step = np.where(self.right[nodes], step, np.float32(1.0) - step)
            score[:, nodes] = score[:, above] + np.log(step + LOG_FLOOR)
            reached = score[:, above] >= floor
            score[:, nodes] = np.where(reached, score[:, nodes], -np.inf)
        leaves = score[:, :self.labels]
        return np.where(leaves >= floor, leaves, -np.inf)


def _with_line_ends(slots: np.ndarray, lengths: np.ndarray, labels: np.ndarray):
    """The batch's word slots with the end-of-line token (slot 0) after each line's words, the
    labels left out: (slots, tokens of each line)."""
    ends = np.cumsum(lengths + 1) - 1
    stream = np.zeros(len(slots) + len(lengths), np.int64)
    mask = np.ones(len(stream), bool)
    mask[ends] = False
    stream[mask] = slots
    if labels[slots].any():
        line = np.repeat(np.arange(len(lengths)), lengths + 1)
        keep = ~labels[stream]
        return stream[keep], np.bincount(line[keep], minlength=len(lengths))
    return stream, lengths + 1


def _segment_sums(table: np.ndarray, index: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The sum of the table rows of each segment of `index` (consecutive, `lengths` long): the
    segments of one length at a time, their rows gathered side by side and summed (numpy's
    add.reduceat is several times slower on rows)."""
    total = np.empty((len(lengths), table.shape[1]), np.float32)
    starts = np.cumsum(lengths) - lengths
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order]
    bounds = np.flatnonzero(np.diff(ordered, prepend=-1)).tolist() + [len(ordered)]
    for begin, end in zip(bounds[:-1], bounds[1:]):
        size = int(ordered[begin])
        step = max(1, ROWS_AT_ONCE // max(size, 1))
        for first in range(begin, end, step):  # bounded temporaries
            segments = order[first:min(first + step, end)]
            rows = index[starts[segments][:, None] + np.arange(size)]
            total[segments] = np.take(table, rows, axis=0, mode="clip").sum(axis=1)
    return total


def _bracketed(words: list[str]) -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray]:
    """`<word>` of each word as UTF-8 bytes, joined by spaces (with one after the last): the
    bytes, as an array, and where each `<word>` starts and ends."""
    joined = ("<" + "> <".join(words) + "> ").encode("utf-8", "surrogatepass")
    text = np.frombuffer(joined, np.uint8)
    ends = np.flatnonzero(text == 0x20)
    starts = np.concatenate([[0], ends[:-1] + 1])
    return joined, text, starts, ends


def _sign_extended(text: np.ndarray) -> np.ndarray:
    """Each byte as fastText's hash reads it: a signed char widened to uint32."""
    return text.view(np.int8).astype(np.int32).view(np.uint32)


def _fnv(text: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """fastText's FNV-1a hash of each byte range text[start:start + size], all ranges a byte
    at a time (the longest first, so that the ones still running are a leading slice)."""
    signed = _sign_extended(text)
    order = np.argsort(-sizes, kind="stable")
    ordered_starts = starts[order]
    longest = int(sizes.max(initial=0))
    running = np.searchsorted(-sizes[order], -np.arange(longest), side="left")
    hashes = np.full(len(starts), FNV_OFFSET, np.uint32)
    for j, active in enumerate(running.tolist()):
        part = hashes[:active]
        part ^= signed[ordered_starts[:active] + j]
        part *= FNV_PRIME
    result = np.empty_like(hashes)
    result[order] = hashes
    return result


def _prefix_fnv(text: np.ndarray, longest: int) -> np.ndarray:
    """prefixes[j, b]: FNV-1a of text[b:b + j + 1], for every byte b and j < longest."""
    signed = _sign_extended(np.concatenate([text, np.zeros(longest, np.uint8)]))
    prefixes = np.empty((longest, len(text)), np.uint32)
    hashes = np.full(len(text), FNV_OFFSET, np.uint32)
    for j in range(longest):
        hashes ^= signed[j:j + len(text)]
        hashes *= FNV_PRIME
        prefixes[j] = hashes
    return prefixes


def _groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of sorted `keys` and where each one's run starts."""
    starts = np.flatnonzero(np.diff(keys, prepend=-1))
    return keys[starts], starts
