"""fastText's prediction, a batch of lines at a time: the same labels and probabilities as
fastText's C++ `predict` (src/dictionary.cc, model.cc, loss.cc), at a fraction of its cost a
line. A small C kernel of laser's own (_features.c) reads each line's tokens, looks its words up,
hashes their character n-grams (FNV-1a over UTF-8 bytes, `% bucket`, the pruned-index map) and
the word n-grams, and averages their input rows (each distinct word's rows summed once, cached);
numpy runs the output layer, one matrix product for many lines."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .fasttext_file import FastTextModel
from .kernel import kernel

LABEL_PREFIX = "__label__"
SPACES = " \n\r\t\v\f\0"  # what separates fastText's tokens
LOG_FLOOR = np.float32(1e-5)  # fastText's std_log(x) = log(x + 1e-5)
CACHE_BYTES = 16 << 20  # the word cache's rows: at most this much memory
MIN_CACHED_WORDS = 1 << 16
LINES_AT_ONCE = 4096  # lines scored together
SIGMOID_TABLE = 512  # fastText's table sigmoid of ns and ova, on [-8, 8]
MAX_SIGMOID = 8


@dataclass(frozen=True)
class Predictions:
    """The `k` likeliest labels of each line, likeliest first: label indices (-1: none, as for
    a line without any known feature) and probabilities as fastText reports them; and how many
    tokens each line has."""

    labels: np.ndarray  # int64 [lines, k]
    probabilities: np.ndarray  # float32 [lines, k]
    tokens: np.ndarray  # int64 [lines]


def fasttext_words(line: str) -> list[str]:
    """The tokens fastText reads of `line + "\\n"`: up to the first newline, split on its
    spaces (without the end-of-line token)."""
    text = line.partition("\n")[0]
    for space in SPACES[2:]:
        if space in text:
            text = text.replace(space, " ")
    return [word for word in text.split(" ") if word]


@dataclass(frozen=True)
class Hidden:
    """Each line's hidden vector (the mean of its input rows), its number of rows (0: nothing
    the model knows) and of tokens."""

    hidden: np.ndarray  # float32 [lines, dim]
    counts: np.ndarray  # int64 [lines]
    tokens: np.ndarray  # int64 [lines]


@dataclass(frozen=True)
class Columns:
    """Some labels of a model (their indices) and their columns of its output matrix."""

    labels: np.ndarray  # int64 [labels]
    output: np.ndarray  # float32 [dim, labels]


class Predictor:
    """A loaded model's prediction over batches of lines. The summed rows of the words it has
    seen stay in the kernel's bounded cache; one batch runs at a time (`laser serve`'s threads
    share a model)."""

    def __init__(self, model: FastTextModel, cache_bytes: int = CACHE_BYTES):
        self.model = model
        self.settings = model.settings
        self.output = np.ascontiguousarray(model.output.T)  # [dim, labels]
        if self.settings.loss == "hs":
            self.tree = _HuffmanTree(model.label_counts)
        self.sigmoid_table = _sigmoid_table()
        self.features = _features(model, max(MIN_CACHED_WORDS,
                                             cache_bytes // (4 * self.settings.dim)))

    @property
    def capacity(self) -> int:
        """How many distinct words' summed rows the cache holds (it empties when full)."""
        return self.features.capacity

    @capacity.setter
    def capacity(self, words: int) -> None:
        self.features.capacity = words

    def predict(self, lines: Sequence[Sequence[str]], k: int = 1) -> Predictions:
        """The `k` likeliest labels of each line (each line: its words, as fastText splits it)."""
        return self.predict_text(batch_text([" ".join(words) for words in lines]), len(lines), k)

    def predict_text(self, text: bytes, lines: int, k: int = 1,
                     unicode_spaces: bool = False) -> Predictions:
        """The `k` likeliest labels of each of `lines` lines of UTF-8 `text` (separated by
        '\\n'), its words separated by fastText's spaces, or with `unicode_spaces` by any
        Unicode space (as str.split() separates them)."""
        k = max(1, min(k, len(self.model.labels)))
        found = self.hidden_text(text, lines, unicode_spaces)
        labels = np.empty((lines, k), np.int64)
        probabilities = np.empty((lines, k), np.float32)
        for first in range(0, lines, LINES_AT_ONCE):  # bounded [lines, labels] scores
            part = slice(first, first + LINES_AT_ONCE)
            labels[part], probabilities[part] = self.top(self.scores(found.hidden[part]), k)
        labels[found.counts == 0] = -1
        probabilities[found.counts == 0] = 0.0
        return Predictions(labels, probabilities, found.tokens)

    def hidden_text(self, text: bytes, lines: int, unicode_spaces: bool = False) -> Hidden:
        """Each line's hidden vector, its number of input rows and of tokens (`predict_text`)."""
        hidden = np.empty((lines, self.settings.dim), np.float32)
        counts = np.empty(lines, np.int64)
        tokens = np.empty(lines, np.int64)
        self.features.hidden(text, lines, unicode_spaces, hidden, counts, tokens)
        return Hidden(hidden, counts, tokens)

    def columns(self, labels: np.ndarray) -> "Columns":
        """Some labels (their indices) and their output rows, to score them alone."""
        return Columns(labels, np.ascontiguousarray(self.output[:, labels]))

    def scores(self, hidden: np.ndarray, columns: Optional["Columns"] = None) -> np.ndarray:
        """Each label's score of each line [lines, labels] (of `columns`' labels alone where
        given), which ranks the labels: its logit, or with `hs` its log-probability (-inf where
        fastText's search does not reach it)."""
        if self.settings.loss == "hs":
            scores = self.tree.log_probabilities(hidden @ self.output[:, :self.tree.internal])
            return scores if columns is None else scores[:, columns.labels]
        return hidden @ (self.output if columns is None else columns.output)

    def top(self, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best labels of each line and fastText's probabilities of them (`scores`: a
        label -inf is never among them; a softmax overwrites the scores)."""
        loss = self.settings.loss
        if loss == "hs":
            return _chosen(scores, _top_k(scores, k), np.exp)
        if loss == "softmax":
            labels, probabilities = softmax_top(scores, k)
            return labels, np.where(labels >= 0, np.exp(np.log(probabilities + LOG_FLOOR)),
                                    0).astype(np.float32)
        # ns and ova: the sigmoid table ranks as x does: the best found on x, only they looked up
        best = _top_k(scores, k)
        return _chosen(scores, best, lambda chosen: np.exp(np.log(
            _table_sigmoid(chosen, self.sigmoid_table) + LOG_FLOOR)))


def softmax_top(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best labels of each line [lines, k] and their softmax probabilities over the
    line's finite scores (-1 and 0 past a line's finite scores); overwrites `scores`."""
    best = _top_k(scores, k)  # exp(x - max) ranks as x does: the best found on x, only they
    chosen = np.take_along_axis(scores, best, axis=1)  # divided by the sum
    excluded = ~np.isfinite(chosen)
    total = np.empty((len(scores), 1), np.float32)
    kernel().softmax_exp(scores, np.ascontiguousarray(chosen[:, :1]), total)
    probabilities = np.take_along_axis(scores, best, axis=1) / total
    best[excluded], probabilities[excluded] = -1, 0.0
    return best.astype(np.int64), probabilities.astype(np.float32)


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """The indices of each row's k highest scores, highest first."""
    if k == 1:
        return scores.argmax(axis=1)[:, None]
    best = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < scores.shape[1] \
        else np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    chosen = np.take_along_axis(scores, best, axis=1)
    return np.take_along_axis(best, np.argsort(-chosen, axis=1, kind="stable"), axis=1)


def _chosen(scores: np.ndarray, best: np.ndarray, probability) -> tuple[np.ndarray, np.ndarray]:
    """(best, probability(their scores)); -1 and 0 where a score is not finite."""
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


def _features(model: FastTextModel, capacity: int):
    """The kernel's view of a model: its input matrix, dictionary (words, then labels, each
    ended by a NUL), n-gram settings and pruned-index map; a cache of `capacity` words."""
    entries = [word.encode("utf-8", "surrogateescape") for word in model.words]
    entries += [label.encode("utf-8") for label in model.labels]
    settings = model.settings
    return kernel().Features(
        input=np.ascontiguousarray(model.input, np.float32),
        entries=b"".join(entry + b"\0" for entry in entries), words=len(model.words),
        kept=model.bucket_rows.kept, kept_rows=model.bucket_rows.kept_rows, minn=settings.minn,
        maxn=settings.maxn, word_ngrams=settings.word_ngrams, bucket=settings.bucket,
        capacity=capacity)


def batch_text(lines: Sequence[str]) -> bytes:
    """Lines as `Predictor.predict_text` takes them: UTF-8, separated by newlines (a newline
    inside a line becomes a space)."""
    text = "\n".join(lines)
    if text.count("\n") != max(len(lines) - 1, 0):
        text = "\n".join(line.replace("\n", " ") for line in lines)
    return text.encode("utf-8", "surrogatepass")
