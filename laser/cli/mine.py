"""`laser mine`: the official `mine_bitexts.py` options and results, with exact blocked k-NN."""
from __future__ import annotations

import contextlib
import dataclasses
import shutil
import time
from typing import Optional

import click

from ..errors import LaserError
from ..mining.margins import MARGINS
from ..mining.mine import MODES
from ..mining.output import OUTPUT_FORMATS
from ..mining.retrieval import RETRIEVALS
from ..mining.unify import UNIFY_KEYS
from .common import examples, hold_work_dir_until_done, main, model_options, side_loaders
from .document_options import cleaning_options, document_options
from .options import (approximate_options, bad_lines_option, bitext_inputs, lid_min_prob_option,
                      lid_model_option, say_bad_lines, say_kept_work, staged_ray_options)


def _warn(message: str) -> None:
    click.echo(f"laser: warning: {message}", err=True)


def _check_options(mode: str, retrieval: str, threshold: float, candidates: bool,
                   encoding: str) -> None:
    if encoding.lower().replace("-", "") != "utf8":
        raise LaserError(f"--encoding {encoding}: only UTF-8 is supported")
    if mode == "mine" and threshold and (retrieval != "max" or candidates):
        _warn("--threshold is applied only to the pairs of --retrieval max, "
              "as in the official tool")


def _language_pair(lid_filter: bool, mode: str, src, trg, lid_model: Optional[str],
                   lid_min_prob: float, cleaned: bool = False):
    """The languages --lid-filter checks the pairs against (None without it)."""
    if not lid_filter:
        if lid_model and not cleaned:
            raise LaserError("--lid-model goes with --lid-filter or documents")
        if lid_min_prob:
            raise LaserError("--lid-min-prob goes with --lid-filter")
        return None
    if mode != "mine":
        raise LaserError("--lid-filter goes with --mode mine")
    from ..lid.check import LanguagePair
    return LanguagePair.of(src.lang, trg.lang, lid_model, lid_min_prob)


def _counts(name: str, corpus) -> str:
    """`NAME: L lines[ in F files], S sentences searched`."""
    files = f" in {len(corpus.files)} files" if len(corpus.files) > 1 else ""
    return f"{name}: {corpus.lines} lines{files}, {corpus.sentences} sentences searched"


def _encoder_specs(model, sides, encoders) -> tuple:
    """How any process loads each side's model (None for precomputed embeddings)."""
    from ..distributed.work import EncoderSpec
    from ..search.inputs import loader_files
    return tuple(None if side.embeddings else EncoderSpec(loader_files(encoder), **model.running())
                 for side, encoder in zip(sides, encoders))


def ray_held(distributed):
    """Ray's runtime held for every stage with --ray."""
    if not distributed:
        return contextlib.nullcontext()
    from ..distributed.ray_runner import ray_runtime
    return ray_runtime(distributed.address)


def shard_runner(distributed):
    """Where the shard tasks run: in this process, or on Ray with --ray."""
    if not distributed:
        from ..distributed.workdir import in_process
        return in_process
    from ..distributed.ray_tasks import ray_runner
    return ray_runner(distributed)


def _side_cleaning(sides, documents, cleaning: dict, lid_model: Optional[str],
                   bad_lines: str) -> tuple:
    """How each side is read and cleaned when it holds documents or --split-sentences is on
    (None: a side of sentence files, read as today), its lines that are not UTF-8 text as
    `bad_lines` says."""
    from ..cleaning.filters import CleaningOptions
    from ..distributed.mine_stages import SideCleaning
    from ..io.documents import is_document_input
    from ..mining.corpus import check_side_input
    found = []
    for side in sides:
        check_side_input(side.text)
        if not is_document_input(side.text, documents):
            found.append(None)
            continue
        if side.embeddings:
            raise LaserError(f"{side.text}: documents are split and cleaned before they are "
                             f"embedded; drop {side.option}embeddings")
        if not side.lang:
            raise LaserError(f"{side.text}: documents are cleaned in their language; pass "
                             f"{side.option}lang")
        read = dataclasses.replace(documents, bad_lines=bad_lines)
        found.append(SideCleaning(read.in_language(side.lang, f"{side.option}lang"),
                                  CleaningOptions(side.lang, lid_model=lid_model, **cleaning)))
    return tuple(found)


def _pair_texts(mined, provenance: bool):
    """The texts of both sides' lines, and with --provenance the documents of a side read from
    documents."""
    from ..mining.output import PairTexts, document_origins, line_origins
    origins = None
    if provenance:
        origins = tuple(document_origins(corpus, cleaned.origins_of) if cleaned
                        else line_origins(corpus)
                        for corpus, cleaned in zip((mined.src, mined.trg), mined.cleaned))
    return PairTexts(mined.src_files.texts(), mined.trg_files.texts(), origins)


@main.command("mine", epilog=examples(
    "laser mine de.txt en.txt --src-lang de --trg-lang en -o mined.tsv --threshold 1.04",
    "laser mine de.warc.wet.gz en.warc.wet.gz --src-lang de --trg-lang en --split-sentences "
    "--provenance -o mined.tsv",
    "laser mine 'crawl/de/*.txt.gz' @en-shards.list --src-lang de --trg-lang en --unify "
    "--provenance --index IVF1024,PQ64x4fs --nprobe 64 -o mined.tsv"))
@bitext_inputs
@click.option("--mode", type=click.Choice(MODES), default="mine", show_default=True,
              help="search: best target of each source line; score: margin of line i with line "
                   "i; mine: parallel pairs.")
@click.option("-k", "--neighborhood", "k", type=click.IntRange(min=1), default=4, show_default=True,
              help="Neighbourhood size of the margin.")
@click.option("--margin", type=click.Choice(MARGINS), default="ratio", show_default=True,
              help="ratio: cos / mean; distance: cos - mean; absolute: cos.")
@click.option("--retrieval", type=click.Choice(RETRIEVALS), default="max", show_default=True,
              help="fwd: best target of each source; bwd: best source of each target; "
                   "intersect: pairs found both ways; max: best-first union of both.")
@click.option("--threshold", type=float, default=0.0, show_default=True,
              help="Keep pairs scoring above this (--retrieval max only, as officially). "
                   "docs/search-and-mining.md gives calibrated values per model.")
@click.option("--unify", is_flag=True,
              help="Merge duplicate lines (over all files of a side) before searching; in "
                   "bounded memory, spilling to files beside the output (or in --work-dir).")
@click.option("--unify-by", type=click.Choice(UNIFY_KEYS), default="line", show_default=True,
              help="With --unify, what makes lines duplicates. line: identical text, as the "
                   "official tool; normalized: identical once lower-cased, digits as 0 and "
                   "typographic punctuation and control characters removed (CCNet, stopes).")
@click.option("--output", "-o", required=True, help="Output file ('-': standard output).")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="tsv",
              show_default=True,
              help="tsv: as the official tool; ids: score and 0-based line numbers; "
                   "jsonl: records.")
@click.option("--provenance", is_flag=True,
              help="Add each pair's source file and line and target file and line (1-based) to "
                   "the output: four more columns, or src_file, src_file_line, trg_file and "
                   "trg_file_line in JSON lines. A side read from documents gives its file, "
                   "document (URL or record id), paragraph and sentence instead "
                   "(src_document...).")
@click.option("--candidates", is_flag=True,
              help="Write every one of the k candidates of each sentence with its score (both "
                   "directions unless fwd/bwd), not only the retrieved pairs.")
@approximate_options
@click.option("--legacy-line-map", is_flag=True,
              help="search/score without --unify: look rows up as the official tool does, which "
                   "shifts every line after the first duplicated one (for bit-compatibility).")
@click.option("--encoding", default="utf-8", show_default=True,
              help="Text encoding (only UTF-8; accepted for compatibility).")
@click.option("--gpu", is_flag=True, hidden=True, help="Accepted for compatibility; ignored.")
@click.option("--verbose", is_flag=True,
              help="Also say each side's model and space, and the distribution of the written "
                   "scores, on stderr.")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress, resume note or summary on stderr.")
@click.option("--lid-filter", is_flag=True,
              help="Drop mined pairs whose source is not identified as --src-lang or whose "
                   "target is not identified as --trg-lang (language ID; --mode mine).")
@lid_model_option
@lid_min_prob_option
@document_options()
@cleaning_options
@bad_lines_option()
@model_options
@staged_ray_options
def mine_command(src, trg, mode, k, margin, retrieval, threshold, unify, unify_by, output,
                 output_format, provenance, candidates, approximate, legacy_line_map, encoding,
                 gpu, verbose, quiet, lid_filter, lid_model, lid_min_prob, documents, cleaning,
                 bad_lines, distributed, shard_lines, work_dir, model):
    """Search, score or mine parallel sentences of SRC and TRG, as mine_bitexts.py does.

    SRC and TRG are each a text file, a directory (its files by name), a quoted glob or @LIST
    (a file of paths, one a line); files may be compressed (.gz, .xz, .zst, .bz2). The lines of
    a side's files are its lines, in order; so are the rows of several embedding files.

    A side of documents (WARC/WET files, JSON lines; plain text with --input-format
    paragraphs), or any side with --split-sentences, is first split into sentences and cleaned
    (as `laser prepare`; docs/documents.md), in the work directory.

    The output is the same bytes whatever the number of threads (OMP_NUM_THREADS and the
    like): every similarity is re-scored in one fixed order. With --index, which candidates
    FAISS proposes may depend on the thread count (docs/search-and-mining.md#laser-mine).
    """
    from ..distributed.ray_runner import default_work_dir
    from ..io.atomic import check_output_path
    from ..mining.inputs import warn_unchecked
    from ..mining.mine import MineOptions
    from ..mining.output import PairFormat, WrittenPairs, write_pair_chunks
    from ..distributed.mine_stages import CorpusOptions, mine_in_stages
    from ..distributed.workdir import SHARD_LINES, WorkOptions
    from ..mining.unify import UnifyOptions
    _check_options(mode, retrieval, threshold, candidates, encoding)
    side_cleaning = _side_cleaning((src, trg), documents, cleaning, lid_model, bad_lines.policy)
    languages = _language_pair(lid_filter, mode, src, trg, lid_model, lid_min_prob,
                               any(side_cleaning))
    options = MineOptions(mode, k, margin, retrieval, threshold, candidates, approximate)
    how = PairFormat(output_format, mode, provenance)
    check_output_path(output)
    if unify_by != "line" and not unify:
        raise LaserError("--unify-by goes with --unify")
    UnifyOptions(unify_by)
    encoders = side_loaders(model, src, trg)
    warn_unchecked((src, trg), encoders)
    if verbose and not quiet:
        for side, encoder in zip((src, trg), encoders):
            click.echo(f" - {side.text}: {side.origin(encoder).describe()}", err=True)
    work = WorkOptions(str(work_dir or default_work_dir(output)), shard_lines or SHARD_LINES,
                       shard_runner(distributed), not quiet)
    hold_work_dir_until_done(work.work_dir)  # before `try`: a refused run removes nothing
    started = time.perf_counter()
    try:
        with ray_held(distributed):
            mined = mine_in_stages((src, trg), _encoder_specs(model, (src, trg), encoders),
                                   options, CorpusOptions(unify, unify_by, legacy_line_map,
                                                          bad_lines.policy), work,
                                   side_cleaning)
        keep = None
        if languages:
            from ..mining.language_filter import language_filter
            keep = language_filter(languages)
        written = write_pair_chunks(output, mined.chunks(), _pair_texts(mined, provenance),
                                    mined.src, mined.trg, how, keep, WrittenPairs(verbose))
    except (LaserError, KeyboardInterrupt):
        _keep_or_remove(work.work_dir, removable=not work_dir)
        raise
    if not work_dir:
        shutil.rmtree(work.work_dir, ignore_errors=True)
    for files, cleaned in zip((mined.src_files, mined.trg_files), mined.cleaned):
        found = (cleaned.bad_lines if cleaned else files.record.get("bad_lines")) or {}
        bad_lines.merge(found.get("count", 0), found.get("named", []))
    say_bad_lines(bad_lines)
    if not quiet:
        _summary(src, trg, mined, written, output, time.perf_counter() - started,
                 bool(languages), verbose)


def _keep_or_remove(work_dir: str, removable: bool) -> None:
    """After an error or an interrupt: say that the finished work in `work_dir` was kept, or
    remove the folder when it holds none and is laser's own (`removable`)."""
    if not say_kept_work(work_dir) and removable:
        shutil.rmtree(work_dir, ignore_errors=True)  # nothing a re-run would reuse


def _summary(src, trg, mined, written, output: str, seconds: float, filtered: bool,
             verbose: bool) -> None:
    """What was read and written, on stderr (with `verbose`, the scores' distribution too)."""
    from ..mining.summary import ScoreSummary
    from ..cleaning.summary import CleaningSummary
    from ..pipeline import duration_text
    for side, cleaned in zip((src, trg), mined.cleaned):
        if cleaned:
            click.echo(f"cleaned {CleaningSummary(side.text, cleaned.counts).line()}", err=True)
    click.echo(f"{_counts(src.text, mined.src)}; {_counts(trg.text, mined.trg)}", err=True)
    if filtered:
        click.echo(f"dropped {written.dropped} pairs whose source or target is identified as "
                   "another language (--lid-filter)", err=True)
    target = "standard output" if output == "-" else output
    click.echo(f"wrote {written.count} lines to {target} in {duration_text(seconds)}", err=True)
    if verbose:
        click.echo(f" - {ScoreSummary.of(written.all_scores()).line()}", err=True)
