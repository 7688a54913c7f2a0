"""The cleaning stage as shard tasks over `laser mine`'s work directory (`clean_tasks`): a task a
file to read and filter it, a task a partition to find the boilerplate, a task a file to drop
it and run language ID. A re-run resumes at the first missing task; a changed input or option
starts the stage again (`laser.distributed.workdir`)."""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..cleaning.filters import CleaningOptions
from ..io.atomic import atomic_text_output
from ..io.bad_lines import BadLines
from ..io.documents import DocumentOptions
from ..io.sources import expand
from .clean_tasks import (BAD_LINES, BAD_NAMED, PARTITIONS, CleanFile, FilterFile,
                          ResolveBoilerplate, origins_path, sentences_path)
from .workdir import Stage, WorkOptions, fingerprint, run_stage

# Bumped when the stage's outputs change for the same inputs and options.
CLEANING_VERSION = 1


@dataclass(frozen=True)
class CleanedSide:
    """What the cleaning stage kept of an input: its sentence files (listed in `listing`, the
    @LIST `laser mine` reads), the provenance file of each, line for line, the counts of the
    stage (documents, sentences, removed_FILTER, kept), and the lines read that were not UTF-8
    text, skipped or replaced (`bad_lines`: count and the first few named, in file order)."""

    listing: str
    files: tuple[str, ...]
    origins: tuple[str, ...]
    counts: dict
    bad_lines: dict = field(default_factory=lambda: {"count": 0, "named": []})

    @property
    def spec(self) -> str:
        return f"@{self.listing}"

    def origins_of(self, file: str) -> str:
        """The provenance file of one of the sentence files."""
        return self.origins[self.files.index(file)]


def clean_in_stages(work: WorkOptions, side: str, spec: str, documents: DocumentOptions,
                    cleaning: CleaningOptions) -> CleanedSide:
    """Run (or resume) the cleaning stage of one input (`side` names its folder) in the work
    directory."""
    paths = expand(spec)
    stage = Stage.open(Path(work.work_dir) / f"{side}-clean",
                       {"input": fingerprint(spec), "documents": asdict(documents),
                        "cleaning": cleaning.record(), "version": CLEANING_VERSION})

    def run(tasks: list) -> None:
        run_stage(stage, tasks, work.runner, work.progress, stage.directory.name)
    reads = [CleanFile(f"read-{index:06d}", path, stage.path(f"file-{index:06d}."), documents,
                       cleaning) for index, path in enumerate(paths)]
    run(reads)
    resolves = [ResolveBoilerplate(f"boilerplate-{part:x}",
                                   tuple(task.keys_path(part) for task in reads),
                                   cleaning.boilerplate, stage.path(f"boilerplate-{part:x}.npy"))
                for part in range(PARTITIONS)] if cleaning.boilerplate else []
    run(resolves)
    directory = str(stage.directory)
    filters = [FilterFile(f"filter-{index:06d}", f"{task.prefix}candidates.tsv",
                          tuple(resolve.output for resolve in resolves), cleaning, directory,
                          index) for index, task in enumerate(reads)]
    run(filters)
    files = tuple(os.path.abspath(sentences_path(directory, index)) for index in range(len(paths)))
    listing = stage.path("sentences.list")
    text = "".join(f"{path}\n" for path in files)
    if not os.path.isfile(listing) or Path(listing).read_text(encoding="utf-8") != text:
        with atomic_text_output(listing) as out:
            out.write(text)
    counts, bad = Counter(), BadLines(documents.bad_lines)
    for task in (*reads, *filters):
        done = stage.done[task.name]
        counts.update({key: value for key, value in done.items()
                       if key not in ("node", BAD_LINES, BAD_NAMED)})
        bad.merge(done.get(BAD_LINES, 0), done.get(BAD_NAMED, []))
    return CleanedSide(listing, files, tuple(os.path.abspath(origins_path(directory, index))
                                             for index in range(len(paths))), dict(counts),
                       {"count": bad.count, "named": bad.named})
