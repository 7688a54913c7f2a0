"""The tasks of many-pairs `laser align` (`laser.align.batch`): each pair a task of a work
directory (`laser.distributed.workdir`), idempotent, picklable and free of Ray, that writes its
output atomically with the bytes `laser align SRC TRG -o OUT` writes, in this process or on Ray
(`laser.distributed.ray_tasks`). A re-run with the same work directory skips the pairs it
finished (their documents, the model and the options unchanged), so an interrupted run resumes
where it stopped."""
from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..align.batch import BatchSummary, DocumentPair
from ..align.beads import AlignOptions
from ..align.files import OutputOptions, align_files
from ..align.models import side_loaders
from ..align.overlaps import Embed
from ..models.options import ModelOptions
from .work import EncoderSpec
from .workdir import Runner, Stage, fingerprint, in_process, key_of, run_stage

if TYPE_CHECKING:
    from ..encoder import Encoder

STAGE = "align"


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
