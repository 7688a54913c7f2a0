"""`laser prepare` as a library call: an input's documents split, normalised and filtered by the
cleaning stage (`clean_stages`), duplicates removed with `unify`, written one
sentence a line (with `provenance`: then its file, document, paragraph and sentence, tab-
separated), with the counts in OUTPUT.json."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Iterator, Optional

import numpy as np

from ..cleaning.filters import CleaningOptions
from ..cleaning.summary import CleaningSummary
from ..io.atomic import atomic_text_output
from ..io.bad_lines import BadLines
from ..io.documents import DocumentOptions
from ..io.sidecar import write_sidecar
from ..io.sources import absolute_spec, file_lines
from ..mining.unify import UnifyOptions
from ..version import __version__
from .clean_stages import clean_in_stages
from .mine_stages import CorpusOptions, StagedMine
from .workdir import WorkOptions


@dataclass(frozen=True)
class PrepareOptions:
    """How the input is read (`documents`) and cleaned (`cleaning`), duplicates removed by
    `unify` (None: kept), each sentence followed by its provenance (`provenance`)."""

    documents: DocumentOptions
    cleaning: CleaningOptions
    unify: Optional[UnifyOptions] = None
    provenance: bool = False


def prepare(spec: str, output: str, options: PrepareOptions, work: WorkOptions,
            bad: Optional[BadLines] = None) -> CleaningSummary:
    """Clean `spec` into `output`, the stages' shards in `work`'s directory; the lines that
    are not UTF-8 text, skipped or replaced as `options.documents.bad_lines` says, are counted
    in `bad` (and recorded in OUTPUT.json)."""
    started = time.perf_counter()
    cleaned = clean_in_stages(work, "input", spec, options.documents, options.cleaning)
    bad = bad or BadLines(options.documents.bad_lines)
    bad.merge(cleaned.bad_lines["count"], cleaned.bad_lines["named"])
    counts = dict(cleaned.counts)
    first = None
    if options.unify and counts.get("kept"):
        _, files = StagedMine(work).split("input", cleaned.spec,
                                          CorpusOptions(True, options.unify.key))
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
                           "bad_lines": bad.record() if bad.policy != "fail" else None,
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
