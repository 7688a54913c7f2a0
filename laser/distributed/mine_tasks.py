"""The shard tasks of `laser mine`: each one idempotent, picklable and free of Ray, reading its
inputs from the work directory and writing its outputs there atomically, so that it runs in
this process or on any node that sees the directory (`laser.distributed.ray_tasks`).

Stages: split a side into text shards (and --unify it), embed its distinct sentences by shards
(each once, however often its line repeats), train an index on a sample and populate it by
shards (with --index), find the k nearest neighbours of each query shard both ways (exact: by
pairs of shards, the backward lists merged on disk), score the margins of each shard's
candidates, sort each shard's pairs into a run, and merge the runs (`laser.mining.retrieval`)."""
from __future__ import annotations

import contextlib
import functools
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import atomic_text_output, replace_atomically
from ..io.embeddings import EmbeddingWriter, StackedRows, open_embeddings, save_array
from ..search.approximate import ApproximateSearch, check_found, rescored
from ..search.exact import exact_knn, merge_neighbours
from ..search.index import add_rows, search, trained_index
from ..search.vectors import Neighbours, Vectors
from ..io.bad_lines import BadLines
from ..io.sources import numbered_file_lines
from ..mining.corpus import Corpus, corpus_arrays
from ..mining.margins import Candidates, margin
from ..mining.retrieval import (Pairs, best_run, candidate_run, chunked, greedy, merged,
                        new_candidates, pairs_of)
from ..mining.unify import UnifyOptions, number_lines, partition_lines, resolve_partition
from .shards import content_digest
from .work import EncoderSpec, write_embeddings
from .workdir import checked_file

if TYPE_CHECKING:
    from ..encoder import Encoder

SPLIT = "split.json"
CORPUS_ARRAYS = ("line_sentence", "first_line", "embedding_row")
# With lines skipped (--bad-lines skip): the number in the side's input of each line kept, and
# of each sentence's embedding row (the row of its line in a precomputed embeddings file).
NUMBER_ARRAYS = ("line_number", "embedding_line")
# A retrieved pair, as line numbers (pairs.bin), in output order.
PAIR = np.dtype([("src", "<i8"), ("trg", "<i8"), ("score", "<f4")])
LINES_AT_ONCE = 65536


def load(path: str) -> np.ndarray:
    """A shard array of the work directory, memory-mapped; one line naming it when it is
    missing or damaged."""
    try:
        return np.load(checked_file(path), mmap_mode="r")
    except (OSError, ValueError) as error:
        raise LaserError(f"{path}: damaged shard in the work directory ({error}); remove it "
                         "and run the command again") from None


def stacked(paths: tuple[str, ...]) -> np.ndarray | StackedRows:
    """Shard arrays of one side (n x width each), read as one."""
    parts = [load(path) for path in paths]
    return parts[0] if len(parts) == 1 else StackedRows(parts, list(paths))


class OneOutput:
    """A task whose one file is `output`."""

    output: str

    def outputs(self) -> list[str]:
        return [self.output]


# -- split ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SplitPlan:
    """How a side is split: into `directory`, text shards of `shard_lines` lines, its lines
    grouped into sentences with --unify (by `unify_key`) or for the legacy line map, lines
    that are not UTF-8 text failed, skipped or replaced (`bad_lines`)."""

    directory: str
    shard_lines: int
    unify: bool = False
    legacy_line_map: bool = False
    unify_key: str = "line"
    bad_lines: str = "fail"

    @property
    def grouped(self) -> bool:
        return self.unify or self.legacy_line_map

    def unify_options(self) -> UnifyOptions:
        return UnifyOptions(self.unify_key if self.unify else "line")

    def path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def part(self, index: int) -> str:
        """The prefix of the files the split makes of the side's file `index`."""
        return self.path(f"file-{index:06d}.")


def text_path(directory: str, index: int) -> str:
    return os.path.join(directory, f"text-{index:06d}.txt")


def offsets_path(directory: str, index: int) -> str:
    return os.path.join(directory, f"offsets-{index:06d}.npy")


class _PlainText:
    """Writes the lines passing through `tee` to PREFIXtxt as UTF-8 and the byte offset of each
    line, and of the end, to PREFIXoffsets (raw int64)."""

    def __init__(self, prefix: str):
        self.prefix, self.size = prefix, 0

    def tee(self, lines: Iterator[str]) -> Iterator[str]:
        offsets = [0]
        with open(f"{self.prefix}txt.tmp", "wb") as text, \
                open(f"{self.prefix}offsets.tmp", "wb") as ends:
            for line in lines:
                data = line.encode("utf-8") + b"\n"
                text.write(data)
                offsets.append(offsets[-1] + len(data))
                if len(offsets) > LINES_AT_ONCE:
                    ends.write(np.array(offsets[:-1], dtype=np.int64).tobytes())
                    offsets = offsets[-1:]
                yield line
            ends.write(np.array(offsets, dtype=np.int64).tobytes())
        self.size = offsets[-1]
        for part in ("txt", "offsets"):
            os.replace(f"{self.prefix}{part}.tmp", f"{self.prefix}{part}")


class _SkippedLines:
    """Notes the (0-based) numbers of the lines a reader skipped, from the numbers of those it
    kept, to PREFIXskipped (raw int64) with --bad-lines skip."""

    def __init__(self, prefix: str, skip: bool):
        self.path = f"{prefix}skipped" if skip else None
        self.numbers: list[int] = []
        self.next = 0  # the number the next line has when none is skipped

    def texts(self, numbered: Iterator[tuple[int, str]]) -> Iterator[str]:
        with open(f"{self.path}.tmp", "wb") if self.path else contextlib.nullcontext() as out:
            for number, text in numbered:
                self._note(out, number - 1)
                yield text
            self._flush(out)

    def finish(self, lines: int) -> None:
        """Note the lines skipped after the last one kept; `lines`: all lines of the file."""
        if self.path:
            with open(f"{self.path}.tmp", "ab") as out:
                self._note(out, lines)
                self._flush(out)
            os.replace(f"{self.path}.tmp", self.path)

    def _note(self, out, number: int) -> None:
        if out is not None and number > self.next:
            self.numbers += range(self.next, number)
            if len(self.numbers) >= LINES_AT_ONCE:
                self._flush(out)
        self.next = number + 1

    def _flush(self, out) -> None:
        if out is not None:
            out.write(np.array(self.numbers, dtype=np.int64).tobytes())
        self.numbers = []


@dataclass(frozen=True)
class ReadFile:
    """Read one file of a side (decompressing): its lines as plain text with their offsets,
    for --unify its lines grouped into partition files (`partition_lines`), and with
    --bad-lines skip the numbers of the lines skipped (PREFIXskipped)."""

    name: str
    path: str
    prefix: str
    plan: SplitPlan

    def outputs(self) -> list[str]:
        return [f"{self.prefix}{part}" for part in
                ("txt", "offsets", *(("chunk-first",) if self.plan.grouped else ()),
                 *(("skipped",) if self.plan.bad_lines == "skip" else ()))]

    def run(self) -> dict:
        text = _PlainText(self.prefix)
        bad = BadLines(self.plan.bad_lines, "--bad-lines")
        skipped = _SkippedLines(self.prefix, self.plan.bad_lines == "skip")
        lines = text.tee(skipped.texts(numbered_file_lines(self.path, bad)))
        if self.plan.grouped:
            count = partition_lines(lines, self.plan.unify_options(), self.prefix)
        else:
            count = sum(1 for _ in lines)
        skipped.finish(count + bad.count)
        return {"lines": count, "size": text.size, "bad_lines": bad.count,
                "bad_named": bad.named}


@dataclass(frozen=True)
class ResolvePartition(OneOutput):
    """One partition of a side's keys over all its files (`resolve_partition`): `parts` are each
    file's partition file with the file's first line."""

    name: str
    parts: tuple[tuple[str, int], ...]
    output: str
    plan: SplitPlan

    def run(self) -> dict:
        return {"groups": resolve_partition(self.parts, self.output, self.plan.unify_options())}


@dataclass(frozen=True)
class NumberLines:
    """The sentence of each line, the first line and the embedding row of each sentence
    (`number_lines` with --unify or the legacy line map, else the lines themselves); with lines
    skipped, the number in the input of each line kept and of each embedding row's line, from
    each file's skipped lines (`skipped`: PREFIXskipped, the file's lines and its first line in
    the side's input)."""

    name: str
    chunk_firsts: tuple[tuple[str, int], ...]
    resolved: tuple[str, ...]
    lines: int
    plan: SplitPlan
    skipped: tuple[tuple[str, int, int], ...] = ()

    def outputs(self) -> list[str]:
        arrays = CORPUS_ARRAYS + (NUMBER_ARRAYS if self.skipped else ())
        return [self.plan.path(f"{array}.npy") for array in arrays]

    def run(self) -> dict:
        unified = (number_lines(self.chunk_firsts, self.resolved, self.lines,
                                self.plan.unify_options(), self.plan.directory)
                   if self.plan.grouped else None)
        arrays = corpus_arrays(unified, self.plan.unify, self.lines)
        if self.skipped:
            numbers = np.concatenate([
                np.delete(np.arange(first, first + lines),
                          np.fromfile(checked_file(path), dtype=np.int64))
                for path, lines, first in self.skipped])
            arrays += (numbers, numbers[np.asarray(arrays[2])])
        for path, array in zip(self.outputs(), arrays):
            save_array(path, array)
        return {"sentences": len(arrays[1])}


@dataclass(frozen=True)
class WriteTextShard:
    """Text shard `index`: `pieces` (each a file's plain text prefix and a range of its lines)
    copied into text-NNNNNN.txt, with the byte offset of each line (offsets-NNNNNN.npy)."""

    name: str
    pieces: tuple[tuple[str, int, int], ...]
    index: int
    directory: str

    def outputs(self) -> list[str]:
        return [text_path(self.directory, self.index), offsets_path(self.directory, self.index)]

    def run(self) -> dict:
        chunks, offsets, digest = [], [np.zeros(1, dtype=np.int64)], content_digest()
        for prefix, start, stop in self.pieces:
            ends = np.fromfile(checked_file(f"{prefix}offsets"), dtype=np.int64,
                               count=stop - start + 1, offset=8 * start)
            with open(checked_file(f"{prefix}txt"), "rb") as f:
                f.seek(int(ends[0]))
                chunks.append(f.read(int(ends[-1] - ends[0])))
            digest.update(chunks[-1])
            offsets.append(ends[1:] - ends[0] + offsets[-1][-1])
        data = b"".join(chunks)

        def write(tmp: str) -> None:
            with open(tmp, "wb") as out:
                out.write(data)
        replace_atomically(text_path(self.directory, self.index), write)
        save_array(offsets_path(self.directory, self.index), np.concatenate(offsets))
        return {"lines": int(sum(stop - start for _, start, stop in self.pieces)),
                "size": len(data), "digest": digest.hexdigest()}


@dataclass(frozen=True)
class RecordSplit:
    """The split record of a side (split.json: its files, where each starts, its text shards),
    then the files the split worked with (`scratch`) removed."""

    name: str
    record: dict
    directory: str
    scratch: tuple[str, ...]

    def outputs(self) -> list[str]:
        return [os.path.join(self.directory, SPLIT)]

    def run(self) -> dict:
        with atomic_text_output(self.outputs()[0]) as out:
            json.dump(self.record, out)
        for path in self.scratch:
            if os.path.exists(path):
                os.remove(path)
        return {key: self.record[key] for key in ("lines", "sentences")}


def text_shard_pieces(prefixes: list[str], lines: list[int], shard_lines: int
                      ) -> list[tuple[tuple[str, int, int], ...]]:
    """Each text shard of `shard_lines` lines of the side as pieces of its files: (prefix,
    first line, end line) in the file."""
    starts = np.cumsum([0] + lines)
    shards = []
    for first in range(0, int(starts[-1]), shard_lines):
        last = min(first + shard_lines, int(starts[-1]))
        shards.append(tuple(
            (prefix, max(first, begin) - begin, min(last, end) - begin)
            for prefix, begin, end in zip(prefixes, starts[:-1].tolist(), starts[1:].tolist())
            if begin < end and begin < last and end > first))
    return shards


@dataclass(frozen=True)
class SplitSideFiles:
    """What the split wrote for a side, read back."""

    directory: str
    record: dict

    @classmethod
    def read(cls, directory: str) -> "SplitSideFiles":
        with open(checked_file(os.path.join(directory, SPLIT), "split record"),
                  encoding="utf-8") as f:
            return cls(directory, json.load(f))

    @property
    def skipped(self) -> int:
        """How many lines of the side --bad-lines skip left out."""
        return self.record.get("skipped", 0)

    def corpus(self) -> Corpus:
        arrays = {name: load(self.path(name))
                  for name in CORPUS_ARRAYS + (("line_number",) if self.skipped else ())}
        return Corpus(self.record["spec"], files=tuple(self.record["files"]),
                      file_starts=np.array(self.record["file_starts"], dtype=np.int64),
                      skipped=self.skipped, **arrays)

    def path(self, array: str) -> str:
        """Where one of the split's arrays is (CORPUS_ARRAYS, NUMBER_ARRAYS)."""
        return os.path.join(self.directory, f"{array}.npy")

    def texts(self) -> "ShardTexts":
        return ShardTexts(self.directory, self.record["shards"])


class ShardTexts:
    """The text of any line of a side, read from its text shards by byte offset."""

    def __init__(self, directory: str, shards: list[dict]):
        self.directory, self.shards = directory, shards
        self.starts = np.cumsum([0] + [shard["lines"] for shard in shards])

    def __call__(self, lines: np.ndarray) -> dict[int, str]:
        """{line: text} of the given (0-based) lines of the side."""
        texts = {}
        wanted = np.unique(lines)
        shard_of = np.searchsorted(self.starts, wanted, side="right") - 1
        for index in np.unique(shard_of).tolist():
            chosen = wanted[shard_of == index]
            data = np.memmap(self._checked(index), dtype=np.uint8, mode="r")
            offsets = load(offsets_path(self.directory, index))
            local = chosen - self.starts[index]
            for line, begin, end in zip(chosen.tolist(), offsets[local].tolist(),
                                        offsets[local + 1].tolist()):
                texts[line] = data[begin:end - 1].tobytes().decode("utf-8")
        return texts

    def _checked(self, index: int) -> str:
        """A text shard's path, refused when its size is not the one written."""
        path = checked_file(text_path(self.directory, index))
        size = os.path.getsize(path)
        if size != self.shards[index]["size"]:
            raise LaserError(f"{path}: changed since it was written ({size} bytes, not "
                             f"{self.shards[index]['size']}); remove {self.directory} and run "
                             "the command again")
        return path


# -- embed ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=2)
def _encoder(spec: EncoderSpec) -> Encoder:
    return spec.load()


@dataclass(frozen=True)
class EmbedSentences(OneOutput):
    """Embed sentences `start`..`stop` of a split side (`directory`) in `lang` into `output`
    (float32 rows, one per sentence, in sentence order): each sentence's text is its embedding
    row's line (the last of its lines with --unify), read from the text shards, so a line
    repeated elsewhere is not embedded again."""

    name: str
    directory: str
    start: int
    stop: int
    output: str
    lang: str
    spec: EncoderSpec
    chunk_lines: int

    def run(self) -> dict:
        encoder = _encoder(self.spec)
        with EmbeddingWriter(self.output, encoder.dim) as writer:
            write_embeddings(encoder, self._texts(), writer, self.lang, self.chunk_lines)
        return {"rows": writer.rows}

    def _texts(self) -> Iterator[str]:
        """The text of each sentence, read a chunk at a time."""
        rows = load(os.path.join(self.directory, "embedding_row.npy"))
        texts = SplitSideFiles.read(self.directory).texts()
        for first in range(self.start, self.stop, self.chunk_lines):
            lines = np.asarray(rows[first:min(first + self.chunk_lines, self.stop)])
            found = texts(lines)
            yield from (found[line] for line in lines.tolist())


@dataclass(frozen=True)
class SideVectors:
    """The search vectors of a side, as any process opens them: its embeddings (a file, glob
    or @LIST), and with `rows` the .npy of the embedding row of each distinct sentence."""

    embeddings: str
    name: str
    rows: Optional[str] = None
    dim: Optional[int] = None
    fp16: bool = False

    def open(self) -> Vectors:
        matrix = open_embeddings(self.embeddings, self.dim, self.fp16)
        return Vectors(matrix, self.name, load(self.rows) if self.rows else None)

    def part(self, start: int, stop: int) -> Vectors:
        """Sentences start..stop."""
        whole = self.open()
        rows = (np.arange(start, stop) if whole.rows is None
                else np.array(whole.rows[start:stop]))
        return Vectors(whole.matrix, self.name, rows)


# -- k-NN -------------------------------------------------------------------------------------

def save_neighbours(prefix: str, found: Neighbours) -> None:
    """A shard's k-NN lists and the mean similarity of each row (prefix.sims/ids/mean.npy)."""
    save_array(f"{prefix}.sims.npy", found.sims)
    save_array(f"{prefix}.ids.npy", found.ids)
    save_array(f"{prefix}.mean.npy", found.mean()[:, None])


def neighbour_files(prefix: str) -> list[str]:
    return [f"{prefix}.{part}.npy" for part in ("sims", "ids", "mean")]


def load_neighbours(prefix: str) -> Neighbours:
    return Neighbours(np.array(load(f"{prefix}.sims.npy")), np.array(load(f"{prefix}.ids.npy")))


@dataclass(frozen=True)
class ExactShard:
    """Exact k-NN of x sentences start..stop among each y shard: their fwd lists merged into
    `output`, and for each y shard the bwd lists of its sentences among these (`parts`)."""

    name: str
    x: SideVectors
    y: SideVectors
    start: int
    stop: int
    y_ranges: tuple[tuple[int, int], ...]
    k: int
    output: str
    parts: tuple[str, ...]

    def outputs(self) -> list[str]:
        return neighbour_files(self.output)

    def run(self) -> dict:
        queries, found = self.x.part(self.start, self.stop), []
        for (first, last), part in zip(self.y_ranges, self.parts):
            fwd, bwd = exact_knn(queries, self.y.part(first, last), self.k)
            found.append((first, fwd))
            save_array(f"{part}.sims.npy", bwd.sims)
            save_array(f"{part}.ids.npy", bwd.ids + self.start)
        total = self.y_ranges[-1][1]
        save_neighbours(self.output, merge_neighbours(len(queries), min(self.k, total), found))
        return {"rows": len(queries)}


@dataclass(frozen=True)
class MergeBackward:
    """The bwd k-NN lists of y sentences from their lists among each x shard (removed once
    merged)."""

    name: str
    parts: tuple[str, ...]
    rows: int
    k: int
    output: str

    def outputs(self) -> list[str]:
        return neighbour_files(self.output)

    def run(self) -> dict:
        if not all(os.path.exists(path) for path in self.outputs()):
            parts = [(0, load_neighbours(part)) for part in self.parts]
            save_neighbours(self.output, merge_neighbours(self.rows, self.k, parts))
        for part in self.parts:
            for path in (f"{part}.sims.npy", f"{part}.ids.npy"):
                if os.path.exists(path):
                    os.remove(path)
        return {"rows": self.rows}


def _write_index(index, path: str) -> None:
    import faiss
    replace_atomically(path, lambda tmp: faiss.write_index(index, tmp))


def _read_index(path: str):
    import faiss
    try:
        return faiss.read_index(checked_file(path, "index"))
    except RuntimeError:
        raise LaserError(f"{path}: not a readable FAISS index; remove it and run the command "
                         "again") from None


@dataclass(frozen=True)
class TrainIndex(OneOutput):
    """An empty index of `factory`, trained on the seeded sample `build_index` takes."""

    name: str
    base: SideVectors
    factory: str
    output: str

    def run(self) -> dict:
        index = trained_index(self.base.open(), self.factory, "cosine")
        _write_index(index, self.output)
        return {}


@dataclass(frozen=True)
class PopulateIndex(OneOutput):
    """The trained index holding every sentence of the side, added in order a block at a time
    from the memory map (merging indexes populated by shards is not safe for FAISS's fast-scan
    lists, whose blocks of 32 codes are copied whole)."""

    name: str
    base: SideVectors
    trained: str
    output: str

    def run(self) -> dict:
        index = _read_index(self.trained)
        add_rows(index, self.base.open())
        _write_index(index, self.output)
        return {"rows": int(index.ntotal)}


@dataclass(frozen=True)
class ApproximateShard:
    """k-NN of query sentences start..stop through the index of the other side, the index's
    candidates re-scored with exact cosines (as `approximate_neighbours`)."""

    name: str
    queries: SideVectors
    base: SideVectors
    index: str
    start: int
    stop: int
    k: int
    approximate: ApproximateSearch
    output: str

    def outputs(self) -> list[str]:
        return neighbour_files(self.output)

    def run(self) -> dict:
        queries, base = self.queries.part(self.start, self.stop), self.base.open()
        wanted = min(self.k, len(base))
        candidates = search(_read_index(self.index), queries, wanted * self.approximate.refine,
                            nprobe=self.approximate.nprobe)
        found = rescored(candidates, queries, base, wanted)
        check_found(found, self.approximate, base.name)
        save_neighbours(self.output, found)
        return {"rows": len(queries)}


# -- margins and runs -------------------------------------------------------------------------

@dataclass(frozen=True)
class MarginShard:
    """Margin scores of a shard's candidates (`lists`), with the other side's neighbourhood
    means read from its shards' memory maps; and each sentence's best candidate."""

    name: str
    lists: str
    other_means: tuple[str, ...]
    kind: str
    output: str

    def outputs(self) -> list[str]:
        return [f"{self.output}.{part}.npy" for part in ("scores", "best", "best_score")]

    def run(self) -> dict:
        found = load_neighbours(self.lists)
        own = np.array(load(f"{self.lists}.mean.npy"))
        other = stacked(self.other_means)[found.ids.ravel()].reshape(found.ids.shape)
        candidates = Candidates(margin(found.sims, own, other, self.kind), found.ids)
        best, score = candidates.best()
        save_array(f"{self.output}.scores.npy", candidates.scores)
        save_array(f"{self.output}.best.npy", best[:, None])
        save_array(f"{self.output}.best_score.npy", score[:, None])
        return {"rows": len(best)}


def load_candidates(lists: str, margins: str) -> Candidates:
    return Candidates(np.array(load(f"{margins}.scores.npy")),
                      np.array(load(f"{lists}.ids.npy")))


@dataclass(frozen=True)
class RunShard(OneOutput):
    """One shard's pairs sorted best first (`laser.mining.retrieval`): its best candidates, or
    every candidate; for intersect only mutual ones, for candidates of both directions only
    bwd candidates the fwd lists (`fwd_ids`) lack."""

    name: str
    source_side: bool
    lists: str
    margins: str
    first: int
    order_base: int
    every_candidate: bool
    output: str
    mutual_with: tuple[str, ...] = ()  # intersect: the bwd best files
    fwd_ids: tuple[str, ...] = ()

    def run(self) -> dict:
        if self.every_candidate:
            candidates = load_candidates(self.lists, self.margins)
            keep = (new_candidates(candidates, self.first, stacked(self.fwd_ids))
                    if self.fwd_ids else None)
            run = candidate_run(candidates, self.first, self.source_side, self.order_base, keep)
        else:
            best = np.array(load(f"{self.margins}.best.npy"))[:, 0]
            score = np.array(load(f"{self.margins}.best_score.npy"))[:, 0]
            keep = None
            if self.mutual_with:
                own = np.arange(self.first, self.first + len(best))
                keep = stacked(self.mutual_with)[best][:, 0] == own
            run = best_run(best, score, self.first, self.source_side, self.order_base, keep)
        save_array(self.output, run)
        return {"pairs": len(run)}


def write_pair_file(path: str, chunks: Iterator[Pairs]) -> int:
    """Pairs of line numbers written to `path` as PAIR records, atomically; how many."""
    count = 0

    def records(tmp: str) -> None:
        nonlocal count
        with open(tmp, "wb") as out:
            for chunk in chunks:
                rows = np.empty(len(chunk), dtype=PAIR)
                rows["src"], rows["trg"], rows["score"] = chunk.src, chunk.trg, chunk.score
                out.write(rows.tobytes())
                count += len(rows)
    replace_atomically(path, records)
    return count


@dataclass(frozen=True)
class MergeRuns(OneOutput):
    """The retrieved pairs (pairs.bin, line numbers): the runs merged best first, walked
    greedily for max (above the threshold), else all of them."""

    name: str
    runs: tuple[str, ...]
    greedy: bool
    threshold: float
    src: str  # split directories
    trg: str
    output: str

    def run(self) -> dict:
        src, trg = SplitSideFiles.read(self.src), SplitSideFiles.read(self.trg)
        records = merged(load(path) for path in self.runs)
        found = (greedy(records, self.threshold, src.record["sentences"],
                        trg.record["sentences"]) if self.greedy else pairs_of(records))
        src_corpus, trg_corpus = src.corpus(), trg.corpus()
        lines = (chunk.to_lines(src_corpus, trg_corpus) for chunk in chunked(found))
        return {"pairs": write_pair_file(self.output, lines)}


@dataclass(frozen=True)
class SearchLines(OneOutput):
    """Mode search: every source line with the best target of its sentence (pairs.bin)."""

    name: str
    src: str
    trg: str
    best: tuple[str, ...]
    output: str

    def run(self) -> dict:
        src, trg = SplitSideFiles.read(self.src).corpus(), SplitSideFiles.read(self.trg).corpus()
        best, score = (stacked(tuple(f"{path}.{part}.npy" for path in self.best))
                       for part in ("best", "best_score"))

        def found() -> Iterator[Pairs]:
            for start in range(0, src.lines, LINES_AT_ONCE):
                sentence = np.asarray(src.line_sentence[start:start + LINES_AT_ONCE])
                yield Pairs(np.arange(start, start + len(sentence)),
                            np.asarray(trg.first_line[np.asarray(best[sentence])[:, 0]]),
                            np.asarray(score[sentence])[:, 0])
        return {"pairs": write_pair_file(self.output, found())}


@dataclass(frozen=True)
class ScoreLines(OneOutput):
    """Mode score: the margin of line i with line i of the input, up to the shorter side
    (pairs.bin); with lines skipped, of the lines i kept on both sides."""

    name: str
    src: str
    trg: str
    x: SideVectors
    y: SideVectors
    fwd_means: tuple[str, ...]
    bwd_means: tuple[str, ...]
    kind: str
    output: str

    def run(self) -> dict:
        from ..mining.mine import aligned_similarities
        src, trg = SplitSideFiles.read(self.src).corpus(), SplitSideFiles.read(self.trg).corpus()
        x, y = self.x.open(), self.y.open()
        fwd_mean, bwd_mean = stacked(self.fwd_means), stacked(self.bwd_means)

        def found() -> Iterator[Pairs]:
            lines = min(src.input_lines, trg.input_lines)
            for start in range(0, lines, LINES_AT_ONCE):
                numbers = np.arange(start, min(lines, start + LINES_AT_ONCE))
                (src_kept, src_lines), (trg_kept, trg_lines) = src.kept(numbers), trg.kept(numbers)
                both = src_kept & trg_kept
                u = np.asarray(src.line_sentence[src_lines[both]])
                v = np.asarray(trg.line_sentence[trg_lines[both]])
                scores = margin(aligned_similarities(x, y, u, v),
                                np.asarray(fwd_mean[u])[:, 0], np.asarray(bwd_mean[v])[:, 0],
                                self.kind)
                yield Pairs(np.asarray(src.first_line[u]), np.asarray(trg.first_line[v]), scores)
        return {"pairs": write_pair_file(self.output, found())}


def read_pairs(path: str) -> np.memmap:
    """The retrieved pairs, memory-mapped."""
    checked_file(path, "retrieved pairs")
    if os.path.getsize(path) == 0:
        return np.zeros(0, dtype=PAIR)
    return np.memmap(path, dtype=PAIR, mode="r")

