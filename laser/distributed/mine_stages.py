"""`laser mine` as stages of shard tasks over a work directory (`laser.distributed.mine_tasks`): a
process holds one shard plus, with --index, one side's index, never a whole side's arrays; a
re-run resumes at the first missing shard, and a changed input or option recomputes only the
stages that depend on it (`laser.distributed.workdir`). One file a side in one shard is the
in-memory case: the same stages, the same bytes."""
from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from ..cleaning.filters import CleaningOptions
from ..errors import LaserError
from ..io.documents import DocumentOptions
from ..io.atomic import atomic_text_output
from ..io.embeddings import open_embeddings
from ..search.inputs import EmbeddingSource
from ..search.vectors import check_same_dim
from ..mining.corpus import Corpus, check_not_empty, check_side_input, corpus_vectors
from ..mining.mine import MineOptions
from ..mining.retrieval import CHUNK_PAIRS, Pairs
from ..io.bad_lines import BadLines
from ..io.sources import expand
from ..mining.unify import FANOUT_BITS
from .mine_tasks import (ApproximateShard, EmbedSentences, ExactShard, MarginShard,
                         MergeBackward, MergeRuns, NumberLines, PopulateIndex, ReadFile,
                         RecordSplit, ResolvePartition, RunShard, ScoreLines, SearchLines,
                         SideVectors, SplitPlan, SplitSideFiles, TrainIndex, WriteTextShard,
                         read_pairs, text_shard_pieces)
from .clean_stages import clean_in_stages
from .work import EncoderSpec
from .workdir import Stage, WorkOptions, fingerprint, key_of, run_stage

SIDES = ("src", "trg")


@dataclass(frozen=True)
class CorpusOptions:
    """How lines become sentences: --unify (by `unify_by`) or the legacy line map, and what
    becomes of lines that are not UTF-8 text (`bad_lines`: fail, skip or replace)."""

    unify: bool = False
    unify_by: str = "line"
    legacy_line_map: bool = False
    bad_lines: str = "fail"


@dataclass(frozen=True)
class SideCleaning:
    """How a side's documents are read and cleaned before mining (`laser.distributed.
    clean_stages`)."""

    documents: DocumentOptions
    cleaning: CleaningOptions


@dataclass
class Mined:
    """What the stages produced: both corpora, the retrieved pairs file and the split records,
    and what the cleaning stage kept of each side read from documents (None: a sentence file)."""

    src: Corpus
    trg: Corpus
    pairs: str
    src_files: SplitSideFiles
    trg_files: SplitSideFiles
    cleaned: tuple = (None, None)

    def chunks(self, size: int = CHUNK_PAIRS) -> Iterator[Pairs]:
        """The retrieved pairs (line numbers), read a chunk at a time."""
        pairs = read_pairs(self.pairs)
        for start in range(0, len(pairs), size):
            part = np.array(pairs[start:start + size])
            yield Pairs(part["src"], part["trg"], part["score"])


def _ranges(rows: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, rows)) for start in range(0, rows, size)]


@dataclass
class ResumeNote:
    """What a re-run found done in the work directory (tasks kept of all, by stage), said in one
    line on stderr before its first new task, or at the end when nothing was left to do."""

    work_dir: str
    show: bool = True
    stages: dict[str, list[int]] = field(default_factory=dict)
    said: bool = False

    def found(self, stage: str, kept: int, total: int) -> None:
        counts = self.stages.setdefault(stage, [0, 0])
        counts[0] += kept
        counts[1] += total

    def say(self) -> None:
        if self.show and not self.said and any(kept for kept, _ in self.stages.values()):
            print(self.line(), file=sys.stderr, flush=True)
        self.said = True

    def line(self) -> str:
        kept = [name if kept == total else f"{name} ({kept} of {total} tasks)"
                for name, (kept, total) in self.stages.items() if kept]
        return f"laser: mine: resuming in {self.work_dir}: already done: {', '.join(kept)}"


class StagedMine:
    """The stages of one `laser mine` in `work.work_dir`."""

    def __init__(self, work: WorkOptions):
        self.work = work
        self.root = Path(work.work_dir)
        self.resumed = ResumeNote(work.work_dir, work.progress)

    def stage(self, name: str, depends: dict) -> Stage:
        return Stage.open(self.root / name, depends)

    def run(self, stage: Stage, tasks: list) -> None:
        missing = sum(1 for task in tasks if not stage.is_done(task))
        self.resumed.found(stage.directory.name, len(tasks) - missing, len(tasks))
        if missing:
            self.resumed.say()
        run_stage(stage, tasks, self.work.runner, self.work.progress,
                  f"mine {stage.directory.name}")

    def split(self, side: str, spec: str, corpus: CorpusOptions) -> tuple[Stage, SplitSideFiles]:
        stage = self.stage(f"{side}-split", {"input": fingerprint(spec), **asdict(corpus),
                                             "shard_lines": self.work.shard_lines})
        plan = SplitPlan(str(stage.directory), self.work.shard_lines, corpus.unify,
                         corpus.legacy_line_map, corpus.unify_by, corpus.bad_lines)
        if stage.is_done(RecordSplit("record", {}, plan.directory, ())):
            self.resumed.found(stage.directory.name, 1, 1)
        else:
            self._split(stage, spec, plan)
        return stage, SplitSideFiles.read(str(stage.directory))

    def _split(self, stage: Stage, spec: str, plan: SplitPlan) -> None:
        """Split a side by tasks: read each file (its lines grouped into partitions with
        --unify), resolve each partition over the files, number the sentences, write the text
        shards, then the record."""
        paths = expand(spec)
        reads = [ReadFile(f"read-{index:06d}", path, plan.part(index), plan)
                 for index, path in enumerate(paths)]
        self.run(stage, reads)
        lines = [stage.done[task.name]["lines"] for task in reads]
        starts = np.cumsum([0] + lines).tolist()
        check_not_empty(spec, starts[-1])
        skipped = [stage.done[task.name].get("bad_lines", 0) if plan.bad_lines == "skip" else 0
                   for task in reads]
        inputs = [kept + left_out for kept, left_out in zip(lines, skipped)]  # lines read
        input_starts = np.cumsum([0] + inputs).tolist()
        resolves = [ResolvePartition(f"resolve-{part:x}",
                                     tuple((f"{task.prefix}part-{part:x}", start)
                                           for task, start in zip(reads, starts)),
                                     plan.path(f"resolved-{part:x}"), plan)
                    for part in range(1 << FANOUT_BITS)] if plan.grouped else []
        self.run(stage, resolves)
        number = NumberLines("number", tuple((f"{task.prefix}chunk-first", start)
                                             for task, start in zip(reads, starts)),
                             tuple(task.output for task in resolves), starts[-1], plan,
                             tuple((f"{task.prefix}skipped", count, first) for task, count, first
                                   in zip(reads, inputs, input_starts)) if any(skipped) else ())
        self.run(stage, [number])
        texts = [WriteTextShard(f"text-{index:06d}", pieces, index, plan.directory)
                 for index, pieces in enumerate(text_shard_pieces(
                     [task.prefix for task in reads], lines, plan.shard_lines))]
        self.run(stage, texts)
        shards = [{key: stage.done[task.name][key] for key in ("lines", "size", "digest")}
                  for task in texts]
        bad = BadLines(plan.bad_lines)
        for task in reads:
            bad.merge(stage.done[task.name].get("bad_lines", 0),
                      stage.done[task.name].get("bad_named", []))
        record = {"spec": spec, "lines": starts[-1], "bad_lines": bad.record(),
                  "skipped": sum(skipped), "sentences": stage.done[number.name]["sentences"],
                  "files": [path for path, count in zip(paths, inputs) if count],
                  "file_starts": [start for start, count in zip(input_starts, inputs) if count],
                  "shards": shards}
        scratch = [path for task in reads
                   for path in (*task.outputs(), *(f"{task.prefix}part-{part:x}"
                                                   for part in range(1 << FANOUT_BITS)))]
        self.run(stage, [RecordSplit("record", record, plan.directory,
                                     tuple(scratch + [task.output for task in resolves]))])

    def vectors(self, side: str, source: EmbeddingSource, spec: Optional[EncoderSpec],
                split: Stage, files: SplitSideFiles) -> tuple[str, SideVectors]:
        """The key and the vectors of a side: its precomputed embeddings (one row per line,
        checked before any search), or its sentences embedded now."""
        if not source.embeddings:
            return self.embedded(side, source, spec, split, files)
        corpus = files.corpus()
        rows = (files.path("embedding_line") if files.skipped else
                files.path("embedding_row") if corpus.sentences != corpus.lines else None)
        vectors = SideVectors(source.embeddings, source.embeddings, rows, source.dim, source.fp16)
        corpus_vectors(corpus, open_embeddings(vectors.embeddings, vectors.dim, vectors.fp16),
                       vectors.name)
        return key_of({"split": split.key, "embeddings": fingerprint(source.embeddings),
                       "dim": source.dim, "fp16": source.fp16}), vectors

    def embedded(self, side: str, source: EmbeddingSource, spec: EncoderSpec, split: Stage,
                 files: SplitSideFiles) -> tuple[str, SideVectors]:
        """A side's distinct sentences embedded by shards of sentences, one row each in
        sentence order: with --unify a repeated line is embedded once."""
        if not (source.text and source.lang):
            raise LaserError(f"{source.name}: pass {source.option}embeddings, or "
                             f"{source.option}lang to embed it with the model")
        stage = self.stage(f"{side}-embed", {"split": split.key, "model": spec.key(),
                                              "lang": source.lang, "rows": "sentences",
                                              "chunk_lines": self.work.chunk_lines})
        sentences = files.record["sentences"]
        tasks = [EmbedSentences(f"embed-{index:06d}", files.directory, start, stop,
                                stage.path(f"embeddings-{index:06d}.npy"), source.lang, spec,
                                self.work.chunk_lines)
                 for index, (start, stop) in enumerate(_ranges(sentences,
                                                               self.work.shard_lines))]
        self.run(stage, tasks)
        listing = stage.path("embeddings.list")
        with atomic_text_output(listing) as out:
            out.writelines(f"{os.path.abspath(task.output)}\n" for task in tasks)
        vectors = SideVectors(f"@{listing}", source.text)
        rows = len(vectors.open())
        if rows != sentences:  # a shard file shortened or replaced since it was written
            raise LaserError(f"{stage.directory}: {rows} embeddings for the {sentences} "
                             f"sentences of {source.text}; remove it and run the command again")
        return key_of({"embed": stage.key}), vectors

    def index(self, side: str, key: str, base: SideVectors, factory: str) -> str:
        """The path of a side's index: trained on a sample, then populated."""
        stage = self.stage(f"{side}-index", {"vectors": key, "factory": factory})
        trained, output = stage.path("trained.index"), stage.path("side.index")
        self.run(stage, [TrainIndex("train", base, factory, trained)])
        self.run(stage, [PopulateIndex("populate", base, trained, output)])
        return output


def mine_in_stages(sources: tuple[EmbeddingSource, EmbeddingSource],
                   specs: tuple[Optional[EncoderSpec], Optional[EncoderSpec]],
                   options: MineOptions, corpus: CorpusOptions, work: WorkOptions,
                   cleaning: tuple[Optional[SideCleaning], ...] = (None, None)) -> Mined:
    """Run (or resume) every stage of `laser mine` up to the retrieved pairs; a side with
    `cleaning` is first read as documents and cleaned."""
    staged = StagedMine(work)
    for source in sources:  # before any work: a missing file, a glob matching nothing,
        check_side_input(source.text)  # damaged precomputed embeddings
        if source.embeddings:
            open_embeddings(source.embeddings, source.dim, source.fp16)
    cleaned = [_cleaned(staged, side, source.text, how)
               for side, source, how in zip(SIDES, sources, cleaning)]
    splits = [staged.split(side, done.spec if done else source.text, corpus)
              for side, source, done in zip(SIDES, sources, cleaned)]
    found = [staged.vectors(side, source, spec, *split)
             for side, source, spec, split in zip(SIDES, sources, specs, splits)]
    (x_key, x), (y_key, y) = found
    check_same_dim(x.open(), y.open())
    sizes = [files.record["sentences"] for _, files in splits]
    knn_key, lists = _neighbours(staged, options, (x_key, x), (y_key, y), sizes)
    src_dir, trg_dir = (str(stage.directory) for stage, _ in splits)
    if options.mode == "score":
        stage = staged.stage("retrieve", {"knn": knn_key, "mode": "score",
                                          "margin": options.margin})
        task = ScoreLines("score", src_dir, trg_dir, x, y,
                          tuple(f"{prefix}.mean.npy" for prefix in lists[0]),
                          tuple(f"{prefix}.mean.npy" for prefix in lists[1]), options.margin,
                          stage.path("pairs.bin"))
    else:
        margins_key, margins = _margins(staged, options, knn_key, lists)
        if options.mode == "search":
            stage = staged.stage("retrieve", {"margins": margins_key, "mode": "search"})
            task = SearchLines("search", src_dir, trg_dir, tuple(margins[0]),
                               stage.path("pairs.bin"))
        else:
            runs_key, runs = _runs(staged, options, margins_key, lists, margins, sizes)
            greedy = options.retrieval == "max" and not options.candidates
            stage = staged.stage("retrieve", {"runs": runs_key,
                                              "threshold": options.threshold if greedy else None})
            task = MergeRuns("merge", tuple(runs), greedy, options.threshold, src_dir, trg_dir,
                             stage.path("pairs.bin"))
    staged.run(stage, [task])
    staged.resumed.say()
    return Mined(splits[0][1].corpus(), splits[1][1].corpus(), task.output, splits[0][1],
                 splits[1][1], tuple(cleaned))


def _cleaned(staged: StagedMine, side: str, spec: str, how: Optional[SideCleaning]):
    """The cleaning stage's sentences of a side read from documents (None: a sentence file)."""
    if how is None:
        return None
    done = clean_in_stages(staged.work, side, spec, how.documents, how.cleaning)
    if not done.counts.get("kept"):
        raise LaserError(f"{spec}: no sentence left after cleaning ({side} side: "
                         f"{done.counts.get('sentences', 0)} sentences read)")
    return done


def _neighbours(staged: StagedMine, options: MineOptions, x: tuple[str, SideVectors],
                y: tuple[str, SideVectors], sizes: list[int]) -> tuple[str, list[list[str]]]:
    """Both directions' k-NN lists by shard: (the stage key, [fwd prefixes, bwd prefixes])."""
    ranges = [_ranges(size, staged.work.shard_lines) for size in sizes]
    approximate = options.approximate
    depends = {"x": x[0], "y": y[0], "k": options.k, "shard_lines": staged.work.shard_lines,
               "index": asdict(approximate) if approximate else None}
    if approximate:
        depends["indexes"] = [staged.index("trg", y[0], y[1], approximate.factory),
                              staged.index("src", x[0], x[1], approximate.factory)]
    stage = staged.stage("knn", depends)
    fwd = [stage.path(f"fwd-{i:06d}") for i in range(len(ranges[0]))]
    if approximate:
        bwd = [stage.path(f"bwd-{j:06d}") for j in range(len(ranges[1]))]
        tasks = [ApproximateShard(os.path.basename(prefix), queries[1], base[1], index,
                                  start, stop, options.k, approximate, prefix)
                 for prefixes, own, queries, base, index in
                 ((fwd, ranges[0], x, y, depends["indexes"][0]),
                  (bwd, ranges[1], y, x, depends["indexes"][1]))
                 for prefix, (start, stop) in zip(prefixes, own)]
        staged.run(stage, tasks)
        return stage.key, [fwd, bwd]
    parts = [[stage.path(f"bwd-part-{j:06d}-{i:06d}") for j in range(len(ranges[1]))]
             for i in range(len(ranges[0]))]
    staged.run(stage, [ExactShard(os.path.basename(prefix), x[1], y[1], start, stop,
                                  tuple(ranges[1]), options.k, prefix, tuple(parts[i]))
                       for i, (prefix, (start, stop)) in enumerate(zip(fwd, ranges[0]))])
    merge = staged.stage("bwd", {"knn": stage.key})
    bwd = [merge.path(f"bwd-{j:06d}") for j in range(len(ranges[1]))]
    staged.run(merge, [MergeBackward(os.path.basename(prefix), tuple(row[j] for row in parts),
                                     stop - start, min(options.k, sizes[0]), prefix)
                       for j, (prefix, (start, stop)) in enumerate(zip(bwd, ranges[1]))])
    return merge.key, [fwd, bwd]


def _margins(staged: StagedMine, options: MineOptions, knn_key: str,
             lists: list[list[str]]) -> tuple[str, list[list[str]]]:
    stage = staged.stage("margins", {"knn": knn_key, "margin": options.margin})
    margins = [[stage.path(os.path.basename(prefix)) for prefix in side] for side in lists]
    tasks = [MarginShard(os.path.basename(prefix), prefix,
                         tuple(f"{other}.mean.npy" for other in lists[1 - direction]),
                         options.margin, output)
             for direction in (0, 1)
             for prefix, output in zip(lists[direction], margins[direction])]
    staged.run(stage, tasks)
    return stage.key, margins


def _runs(staged: StagedMine, options: MineOptions, margins_key: str, lists: list[list[str]],
          margins: list[list[str]], sizes: list[int]) -> tuple[str, list[str]]:
    """Each shard's pairs sorted best first, for the directions `retrieval` looks at."""
    retrieval, every = options.retrieval, options.candidates
    stage = staged.stage("runs", {"margins": margins_key, "retrieval": retrieval,
                                  "candidates": every})
    directions = [0, 1] if retrieval in ("max", "intersect") and every else \
        {"fwd": [0], "bwd": [1], "intersect": [0], "max": [0, 1]}[retrieval]
    starts = [list(range(0, size, staged.work.shard_lines)) for size in sizes]
    k_fwd = _width(lists[0][0]) if every else 1
    tasks = []
    for direction in directions:
        base = 0 if direction == 0 or retrieval == "bwd" else sizes[0] * k_fwd
        for prefix, margin_prefix, first in zip(lists[direction], margins[direction],
                                                starts[direction]):
            name = f"{('fwd', 'bwd')[direction]}-{first:012d}"
            tasks.append(RunShard(
                name, direction == 0, prefix, margin_prefix, first, base, every,
                stage.path(f"{name}.npy"),
                mutual_with=(tuple(f"{path}.best.npy" for path in margins[1])
                             if retrieval == "intersect" and not every else ()),
                fwd_ids=(tuple(f"{path}.ids.npy" for path in lists[0])
                         if every and direction == 1 and retrieval != "bwd" else ())))
    staged.run(stage, tasks)
    return stage.key, [task.output for task in tasks]


def _width(prefix: str) -> int:
    from .mine_tasks import load
    return load(f"{prefix}.ids.npy").shape[1]

