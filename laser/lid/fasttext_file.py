"""A fastText supervised model file (.bin or .ftz) read into numpy: its settings, dictionary
(words, labels, the pruned-index map) and both matrices, product-quantised ones decoded once into
dense float32 (the layout of fastText's src/args.cc, dictionary.cc, densematrix.cc,
quantmatrix.cc and productquantizer.cc)."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import BinaryIO, Optional

import numpy as np

from ..errors import LaserError
from .kernel import kernel

FASTTEXT_MAGIC = 793712314
NEWEST_VERSION = 12
HEADER = struct.Struct("<ii")  # magic, version
# The arguments: dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn, maxn,
# lrUpdateRate (int32 each), t (double).
ARGS = struct.Struct("<12id")
DICTIONARY = struct.Struct("<iiiqq")  # size, words, labels, tokens, pruned index size
ENTRY_TAIL = 9  # after each entry's NUL-terminated string: count (int64), type (int8)
LOSSES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
SUPERVISED = 3
CENTROIDS = 256  # a product quantiser's centroids per sub-vector (8-bit codes)


@dataclass(frozen=True)
class Settings:
    """What prediction needs of a model's arguments."""

    dim: int
    word_ngrams: int
    loss: str  # hs, ns, softmax or ova
    bucket: int
    minn: int
    maxn: int


@dataclass
class FastTextModel:
    """A supervised model as arrays: `input` rows are the words, then the n-gram buckets (of a
    pruned model only the kept ones, in the order its pruned-index map gives them)."""

    settings: Settings
    words: list[str]
    labels: list[str]  # with their `__label__` prefix
    label_counts: np.ndarray  # int64, the labels' training counts (the hs tree's weights)
    bucket_rows: "BucketRows"  # the n-gram buckets' input rows
    input: np.ndarray  # float32 [rows, dim]
    output: np.ndarray  # float32 [labels (hs: labels - 1 tree nodes), dim]


@dataclass
class BucketRows:
    """Each n-gram bucket's row of the input matrix (fastText's pushHash): right after the
    words; in a pruned model, where its pruned-index map sends the bucket (none: pruned away)."""

    words: int
    kept: Optional[np.ndarray] = None  # a pruned model's kept buckets (int64; a later pair wins)
    kept_rows: Optional[np.ndarray] = None  # their rows (int64)


class _Reader:
    """Reads a model file in order; a short read is a one-line error naming the file."""

    def __init__(self, f: BinaryIO, path: str):
        self.f, self.path = f, path
        self.size = os.fstat(f.fileno()).st_size

    def bytes(self, size: int) -> bytes:
        data = self.f.read(size)
        if len(data) != size:
            raise self.truncated()
        return data

    def unpack(self, layout: struct.Struct) -> tuple:
        return layout.unpack(self.bytes(layout.size))

    def array(self, dtype, count: int) -> np.ndarray:
        """`count` values of `dtype`, read straight into the array."""
        if count < 0:
            raise self.damaged()
        if count * np.dtype(dtype).itemsize > self.size - self.f.tell():
            raise self.truncated()
        array = np.empty(count, dtype)
        if self.f.readinto(memoryview(array).cast("B")) != array.nbytes:
            raise self.truncated()
        return array

    def truncated(self) -> LaserError:
        return LaserError(f"{self.path}: a truncated fastText model file")

    def damaged(self) -> LaserError:
        return LaserError(f"{self.path}: not a fastText model file (its sizes do not add up)")


def read_labels(path: str | os.PathLike) -> list[str]:
    """The labels of a fastText model file (with their prefix), read from its dictionary."""
    with open(path, "rb") as f:
        reader = _Reader(f, str(path))
        _read_settings(reader)
        return _read_dictionary(reader)[1]


def read_model(path: str | os.PathLike) -> FastTextModel:
    """The model in `path`; a file that is not a supervised fastText model is a one-line error."""
    with open(path, "rb") as f:
        reader = _Reader(f, str(path))
        settings = _read_settings(reader)
        words, labels, counts, pruned = _read_dictionary(reader)
        (quantised,) = reader.bytes(1)
        if not quantised and pruned is not None:
            raise LaserError(f"{path}: a pruned fastText model without quantisation (fastText "
                             "refuses it too)")
        matrix = _read_quantised(reader) if quantised else _read_dense(reader)
        (quantised_output,) = reader.bytes(1)
        output = _read_quantised(reader) if quantised and quantised_output else _read_dense(reader)
    _check_shapes(str(path), settings, matrix, output, len(words), len(labels))
    rows = _bucket_rows(str(path), settings.bucket, len(words), pruned, matrix.shape[0])
    return FastTextModel(settings, words, labels, counts, rows, matrix, output)


def _read_settings(reader: _Reader) -> Settings:
    head = reader.f.read(HEADER.size)
    if len(head) < HEADER.size or HEADER.unpack(head)[0] != FASTTEXT_MAGIC:
        raise LaserError(f"{reader.path}: not a fastText model file")
    version = HEADER.unpack(head)[1]
    if version > NEWEST_VERSION:
        raise LaserError(f"{reader.path}: a fastText model file of version {version}, newer "
                         f"than fastText's {NEWEST_VERSION}")
    dim, _, _, _, _, word_ngrams, loss, model, bucket, minn, maxn, _, _ = reader.unpack(ARGS)
    if model != SUPERVISED:
        raise LaserError(f"{reader.path}: a fastText word-vector model, not a classifier "
                         "(train it with `fasttext supervised`)")
    if loss not in LOSSES or dim <= 0 or bucket < 0:
        raise reader.damaged()
    if version == 11:
        maxn = 0  # fastText: supervised models of version 11 have no character n-grams
    return Settings(dim, word_ngrams, LOSSES[loss], bucket, minn, maxn)


def _read_dictionary(reader: _Reader):
    """Words, labels (with their counts) and the pruned-index map (None: not pruned)."""
    size, nwords, nlabels, _, pruned_size = reader.unpack(DICTIONARY)
    if size < 0 or nwords < 0 or nlabels <= 0 or nwords + nlabels != size:
        raise reader.damaged()
    strings, counts, types = _read_entries(reader, size)
    if any(types[:nwords]) or not all(types[nwords:]):
        raise reader.damaged()
    pruned = reader.array("<i4", 2 * pruned_size).reshape(-1, 2) if pruned_size >= 0 else None
    words = [text.decode("utf-8", "surrogateescape") for text in strings[:nwords]]
    labels = [text.decode("utf-8", "replace") for text in strings[nwords:]]
    return words, labels, np.array(counts[nwords:], np.int64), pruned


def _bucket_rows(path: str, bucket: int, nwords: int, pruned: Optional[np.ndarray],
                 rows: int) -> "BucketRows":
    if pruned is None:
        if nwords + bucket > rows:
            raise LaserError(f"{path}: not a fastText model file (fewer rows than words and "
                             "buckets)")
        return BucketRows(nwords)
    pruned = pruned[(pruned[:, 0] >= 0) & (pruned[:, 0] < bucket)]
    targets = nwords + pruned[:, 1].astype(np.int64)
    if len(targets) and (targets.min() < nwords or targets.max() >= rows):
        raise LaserError(f"{path}: not a fastText model file (its n-gram rows lie outside "
                         "its matrix)")
    return BucketRows(nwords, pruned[:, 0].astype(np.int64), targets)


def _read_entries(reader: _Reader, size: int) -> tuple[list[bytes], list[int], list[int]]:
    """The dictionary's entries: each a NUL-terminated string, an int64 count, an int8 type."""
    strings, counts, types = [], [], []
    buffer, start = b"", 0
    tail = struct.Struct("<qb")
    while len(strings) < size:
        end = buffer.find(b"\0", start)
        if end < 0 or len(buffer) < end + 1 + ENTRY_TAIL:
            block = reader.f.read(1 << 20)
            if not block:
                raise reader.truncated()
            buffer, start = buffer[start:] + block, 0
            continue
        strings.append(buffer[start:end])
        count, kind = tail.unpack_from(buffer, end + 1)
        counts.append(count)
        types.append(kind)
        start = end + 1 + ENTRY_TAIL
    reader.f.seek(start - len(buffer), os.SEEK_CUR)  # give back what was read past the last entry
    return strings, counts, types


def _read_dense(reader: _Reader) -> np.ndarray:
    rows, cols = reader.unpack(struct.Struct("<qq"))
    if rows < 0 or cols < 0:
        raise reader.damaged()
    return reader.array("<f4", rows * cols).reshape(rows, cols)


def _read_quantised(reader: _Reader) -> np.ndarray:
    """A product-quantised matrix (optionally with quantised row norms), decoded to float32."""
    (qnorm,) = reader.bytes(1)
    rows, cols, code_size = reader.unpack(struct.Struct("<qqi"))
    codes = reader.array(np.uint8, code_size)
    dense = _decode(reader, codes, rows, cols)
    if qnorm:
        norm_codes = reader.array(np.uint8, rows)
        norms = _decode(reader, norm_codes, rows, 1)
        dense *= norms
    return dense


def _decode(reader: _Reader, codes: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Each row of a product quantiser: its sub-vectors' centroids side by side."""
    dim, subquantisers, dsub, last_dsub = reader.unpack(struct.Struct("<iiii"))
    centroids = reader.array("<f4", dim * CENTROIDS)
    if (dim != cols or subquantisers <= 0 or dsub <= 0 or last_dsub <= 0 or rows < 0
            or codes.size != rows * subquantisers or dsub * (subquantisers - 1) + last_dsub != dim):
        raise reader.damaged()
    dense = np.empty((rows, dim), np.float32)
    kernel().decode(codes, centroids, rows, subquantisers, dsub, dense)
    return dense


def _check_shapes(path: str, settings: Settings, matrix: np.ndarray, output: np.ndarray,
                  words: int, labels: int) -> None:
    if (matrix.shape[1] != settings.dim or matrix.shape[0] < words
            or output.shape != (labels, settings.dim)):
        raise LaserError(f"{path}: not a fastText model file (its matrices do not fit "
                         "its settings)")
