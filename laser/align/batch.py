"""Aligning many document pairs: from a list (`SRC<TAB>TRG<TAB>OUT` a line) or two folders of
same-named files, each pair a task of a work directory (`laser.distributed.workdir`) that runs
in this process or on Ray and writes its output atomically. A re-run with the same work
directory skips the pairs it finished (their inputs, the model and the options unchanged), so an
interrupted run resumes where it stopped."""
from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..errors import LaserError, located
from ..io.sources import read_lines
from ..distributed.workdir import Runner, Stage, fingerprint, in_process, key_of, run_stage
from ..models.options import ModelOptions
from .beads import AlignOptions
from .collection import folder_names
from .files import OutputOptions, align_files
from .models import side_loaders
from .overlaps import Embed

if TYPE_CHECKING:
    from ..distributed.work import EncoderSpec
    from ..encoder import Encoder

STAGE = "align"


@dataclass(frozen=True)
class DocumentPair:
    """Two documents to align (one sentence a line each) and the file of their beads."""

    src: str
    trg: str
    out: str


@dataclass
class FolderPairs:
    """The pairs of two folders' same-named files, and the names found on one side only."""

    pairs: list[DocumentPair]
    src_only: list[str] = field(default_factory=list)
    trg_only: list[str] = field(default_factory=list)


def pairs_from_list(path: str) -> list[DocumentPair]:
    """The pairs of a list file, one `SRC<TAB>TRG<TAB>OUT` a line (blank lines skipped); paths
    relative to the current directory. Each output once, never one of the inputs, in an existing
    directory: else one line naming the list's line."""
    pairs, seen = [], {}
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not all(fields):
            raise located(path, number, f"{len(fields)} column(s); expected SRC<TAB>TRG<TAB>OUT")
        pair = DocumentPair(*fields)
        out = os.path.abspath(pair.out)
        if out in seen:
            raise located(path, number, f"output {pair.out} is also the output of line "
                                        f"{seen[out]}")
        if out in (os.path.abspath(pair.src), os.path.abspath(pair.trg)):
            raise located(path, number, f"output {pair.out} is one of the pair's inputs")
        if not os.path.isdir(os.path.dirname(out)):
            raise located(path, number, f"{pair.out}: output directory does not exist")
        seen[out] = number
        pairs.append(pair)
    if not pairs:
        raise LaserError(f"{path}: no document pairs")
    return pairs


def pairs_from_folders(src_dir: str, trg_dir: str, out_dir: str) -> FolderPairs:
    """The pairs of the files of `src_dir` and `trg_dir` with the same relative name, each
    written to the same name under `out_dir` (created, with its subfolders)."""
    src_names, trg_names = folder_names(src_dir), folder_names(trg_dir)
    common = sorted(set(src_names) & set(trg_names))
    if not common:
        raise LaserError(f"{src_dir} and {trg_dir} hold no files of the same name")
    if os.path.abspath(out_dir) in (os.path.abspath(src_dir), os.path.abspath(trg_dir)):
        raise LaserError(f"{out_dir}: the output folder is an input folder")
    for name in common:
        (Path(out_dir) / name).parent.mkdir(parents=True, exist_ok=True)
    pairs = [DocumentPair(os.path.join(src_dir, name), os.path.join(trg_dir, name),
                          os.path.join(out_dir, name)) for name in common]
    return FolderPairs(pairs, sorted(set(src_names) - set(trg_names)),
                       sorted(set(trg_names) - set(src_names)))


@dataclass(frozen=True)
class PairSettings:
    """What every pair's alignment shares: each side's language and model (how any process
    loads it), the aligner's options and how beads are written."""

    src_lang: str
    trg_lang: str
    src_spec: EncoderSpec
    trg_spec: EncoderSpec
    options: AlignOptions = AlignOptions()
    output: OutputOptions = OutputOptions()

    def key(self) -> dict:
        """What the outputs depend on besides the documents."""
        return {"src_lang": self.src_lang, "trg_lang": self.trg_lang,
                "src_model": self.src_spec.key(), "trg_model": self.trg_spec.key(),
                "options": asdict(self.options), "output": asdict(self.output)}

    def embedders(self) -> tuple[Embed, Embed]:
        return embedder(self.src_spec, self.src_lang), embedder(self.trg_spec, self.trg_lang)


def side_specs(model: ModelOptions, langs: tuple[str, str],
               own_models: tuple[Optional[str], Optional[str]],
               sources: tuple[str, str]) -> tuple[EncoderSpec, EncoderSpec]:
    """How any process (a Ray worker too) loads each side's model: the models `laser align`
    chooses for one pair (`laser.align.models.side_loaders`), by their files."""
    from ..distributed.work import EncoderSpec
    from ..search.inputs import loader_files
    loaders = side_loaders(model, langs, own_models, sources, notes=False)
    return tuple(EncoderSpec(loader_files(loader), **model.running()) for loader in loaders)


@functools.lru_cache(maxsize=2)
def _encoder(spec: EncoderSpec) -> Encoder:
    """One encoder per model and process, loaded on its first pair."""
    return spec.load()


def embedder(spec: EncoderSpec, lang: str) -> Embed:
    """The embedding function of a side: its texts' rows by its model, in its language."""
    return lambda texts: _encoder(spec).encode(list(texts), lang)


@dataclass(frozen=True)
class AlignPair:
    """The task of one document pair: idempotent, picklable, free of Ray; its output is the
    bytes `laser align SRC TRG -o OUT` writes."""

    name: str
    pair: DocumentPair
    settings: PairSettings

    def outputs(self) -> list[str]:
        return [self.pair.out]

    def run(self) -> dict:
        settings = self.settings
        report = align_files(self.pair.src, self.pair.trg, self.pair.out, settings.embedders(),
                             settings.options, settings.output)
        return {"src_sentences": report.src_sentences, "trg_sentences": report.trg_sentences,
                "beads": report.beads - report.dropped, "dropped": report.dropped}


def pair_task(pair: DocumentPair, settings: PairSettings) -> AlignPair:
    """The task of a pair, named by what its output depends on: its inputs' paths, sizes and
    modification times, and its output's path (a changed document is aligned again)."""
    depends = {"src": fingerprint(pair.src), "trg": fingerprint(pair.trg),
               "out": os.path.abspath(pair.out)}
    return AlignPair(f"pair-{key_of(depends)}", pair, settings)


@dataclass
class BatchSummary:
    """What a run of many pairs did: pairs aligned now and reused from an earlier run, the
    sentences of both sides, the beads written and those dropped under --min-score."""

    computed: int = 0
    reused: int = 0
    src_sentences: int = 0
    trg_sentences: int = 0
    beads: int = 0
    dropped: int = 0

    def add(self, record: dict) -> None:
        self.src_sentences += record["src_sentences"]
        self.trg_sentences += record["trg_sentences"]
        self.beads += record["beads"]
        self.dropped += record["dropped"]

    def line(self) -> str:
        dropped = f", {self.dropped} dropped under --min-score" if self.dropped else ""
        return (f"aligned {self.computed + self.reused} document pairs ({self.computed} now, "
                f"{self.reused} reused from an earlier run): {self.src_sentences} source and "
                f"{self.trg_sentences} target sentences, {self.beads} beads written{dropped}")


def align_pairs(pairs: list[DocumentPair], settings: PairSettings, work_dir: str,
                runner: Runner = in_process, progress: bool = False) -> BatchSummary:
    """Align every pair into its output, the pairs finished by an earlier run with the same
    work directory skipped."""
    stage = Stage.open(Path(work_dir) / STAGE, settings.key())
    tasks = [pair_task(pair, settings) for pair in pairs]
    summary = BatchSummary(reused=sum(stage.is_done(task) for task in tasks))
    run_stage(stage, tasks, runner, progress, "document pairs")
    summary.computed = len(tasks) - summary.reused
    for task in tasks:
        summary.add(stage.done[task.name])
    return summary
