"""`laser prepare` as a library call: an input's documents split, normalised and filtered by the
cleaning stage (`laser.distributed.clean_stages`), duplicates removed with `unify`, written one
sentence a line (with `provenance`: then its file, document, paragraph and sentence, tab-
separated), with the counts in OUTPUT.json."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Iterator, Optional

import numpy as np

from ..io.atomic import atomic_text_output
from ..io.documents import DocumentOptions
from ..io.sidecar import write_sidecar
from ..io.sources import absolute_spec, file_lines
from ..mining.unify import UnifyOptions
from ..version import __version__
from .filters import CleaningOptions
from .summary import CleaningSummary


@dataclass(frozen=True)
class PrepareOptions:
    """How the input is read (`documents`) and cleaned (`cleaning`), duplicates removed by
    `unify` (None: kept), each sentence followed by its provenance (`provenance`)."""

    documents: DocumentOptions
    cleaning: CleaningOptions
    unify: Optional[UnifyOptions] = None
    provenance: bool = False


def prepare(spec: str, output: str, options: PrepareOptions, work) -> CleaningSummary:
    """Clean `spec` into `output` in the work directory of `work` (a mine_stages WorkOptions)."""
    from ..distributed.clean_stages import clean_in_stages
    from ..distributed.mine_stages import CorpusOptions, StagedMine
    started = time.perf_counter()
    staged = StagedMine(work)
    cleaned = clean_in_stages(staged, "input", spec, options.documents, options.cleaning)
    counts = dict(cleaned.counts)
    first = None
    if options.unify and counts.get("kept"):
        _, files = staged.split("input", cleaned.spec, CorpusOptions(True, options.unify.key))
        corpus = files.corpus()
        first = np.asarray(corpus.first_line)[np.asarray(corpus.line_sentence)] == \
            np.arange(corpus.lines)
        counts["removed_duplicates"] = int(corpus.lines - corpus.sentences)
        counts["kept"] = int(corpus.sentences)
    with atomic_text_output(output) as out:
        out.writelines(_output_lines(cleaned.files, cleaned.origins, first, options.provenance))
    summary = CleaningSummary(spec, counts)
    write_sidecar(output, {"input": absolute_spec(spec), **summary.record(),
                           "documents_options": asdict(options.documents),
                           "cleaning": options.cleaning.record(),
                           "unify": options.unify.key if options.unify else None,
                           "seconds": round(time.perf_counter() - started, 3),
                           "laser_version": __version__})
    return summary


def _output_lines(files: tuple[str, ...], origins: tuple[str, ...], first: Optional[np.ndarray],
                  provenance: bool) -> Iterator[str]:
    """The kept sentences, in order (the first of duplicates only, with `first`)."""
    line = 0
    for text_file, origin_file in zip(files, origins):
        for text, origin in zip(file_lines(text_file), file_lines(origin_file)):
            if first is None or first[line]:
                yield f"{text}\t{origin}\n" if provenance else f"{text}\n"
            line += 1
