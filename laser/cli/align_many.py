"""What `laser align` adds for many documents: `--pairs LIST` or two folders of same-named
files (each pair a task of a resumable work directory, in this process or on Ray), and
`--pair-documents`, which finds which document of one collection (a folder of files, or WARC,
WET and JSON-lines files) is the translation of which of the other before aligning them. The
`laser align` command (laser/cli/align.py) hands over to `align_many` when
`ManyDocuments.wanted` says so."""
from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from ..errors import LaserError

if TYPE_CHECKING:
    from ..align.pairing import PairingOptions
    from ..distributed.align_tasks import PairSettings
    from ..distributed.ray_runner import RayOptions
    from ..io.documents import DocumentOptions

WORK_DIR = ".laser-align.work"


@dataclass(frozen=True)
class ManyDocuments:
    """The options of many-documents runs."""

    pairs: Optional[str] = None
    pair_documents: bool = False
    pairs_out: Optional[str] = None
    pair_threshold: Optional[float] = None  # PairingOptions' default
    pair_cache_mb: Optional[float] = None  # PairingOptions' default
    distributed: Optional[RayOptions] = None
    work_dir: Optional[str] = None

    def wanted(self, src: Optional[str], trg: Optional[str]) -> bool:
        """Whether the command aligns many documents: a list, pairing, or two folders."""
        folders = bool(src and trg and os.path.isdir(src) and os.path.isdir(trg))
        if self.pairs and (src or trg):
            raise LaserError("--pairs LIST replaces SRC and TRG: give one or the other")
        if not self.pair_documents and (self.pairs_out or self.pair_threshold is not None
                                        or self.pair_cache_mb is not None):
            raise LaserError("--pairs-out, --pair-threshold and --pair-cache-mb go with "
                             "--pair-documents")
        if not (self.pairs or self.pair_documents or folders):
            if self.distributed or self.work_dir:
                raise LaserError("--ray and --work-dir go with --pairs or two folders")
            return False
        if self.pair_documents and not (src and trg):
            raise LaserError("--pair-documents needs SRC and TRG, two collections (folders or "
                             "files)")
        return True

    def pairing(self) -> PairingOptions:
        """How documents are paired: PairingOptions' defaults, but for the options given."""
        from ..align.pairing import PairingOptions
        given = {"threshold": self.pair_threshold, "cache_mb": self.pair_cache_mb}
        return PairingOptions(**{name: value for name, value in given.items()
                                 if value is not None})


def many_documents_options(command):
    """--pairs, --pair-documents, --pairs-out, --pair-threshold, --pair-cache-mb, --ray,
    --ray-workers and --work-dir, passed on as one `many` ManyDocuments."""
    @click.option("--pairs", "pairs_list", type=click.Path(dir_okay=False), default=None,
                  help="Align many document pairs: a file of SRC<TAB>TRG<TAB>OUT lines (instead "
                       "of SRC and TRG). Two folders as SRC and TRG align their same-named "
                       "files into -o OUT_DIR.")
    @click.option("--pair-documents", is_flag=True,
                  help="SRC and TRG are two collections of documents (a folder of files, one "
                       "sentence a line; or WARC, WET, JSON-lines files, a document a record): "
                       "find which document is the translation of which (one-to-one), then "
                       "align each pair's sentences into -o OUT, one file of every pair's beads "
                       "with their documents.")
    @click.option("--pairs-out", type=click.Path(dir_okay=False), default=None,
                  help="With --pair-documents: write the pairs found, "
                       "SRC_NAME<TAB>TRG_NAME<TAB>SCORE a line (a document's file name relative "
                       "to its folder, or its URL or record id).")
    @click.option("--pair-threshold", type=float, default=None,
                  help="With --pair-documents: the least share of both documents' sentences "
                       "in well-matched beads for them to be a pair (0-1, default 0.3).")
    @click.option("--pair-cache-mb", type=click.FloatRange(min=0), default=None,
                  help="With --pair-documents: MiB of documents' embeddings kept for the "
                       "candidate pairs that come back to them (default 1024; less memory, "
                       "more embedding).")
    @click.option("--ray", "address", metavar="ADDRESS", default=None,
                  help="Align the pairs on Ray (the ray extra): 'local', 'auto' or "
                       "ray://HOST:PORT; inputs, outputs and models on paths every node sees.")
    @click.option("--ray-workers", type=click.IntRange(min=1), default=None,
                  help="With --ray: pairs aligned at once (default: one per CPU).")
    @click.option("--work-dir", type=click.Path(file_okay=False), default=None,
                  help="Record finished pairs here: the same command with the same --work-dir "
                       "aligns only the pairs it lacks. Default: a hidden folder beside the "
                       "outputs, kept only when a run stops early.")
    @functools.wraps(command)
    def wrapper(*args, pairs_list, pair_documents, pairs_out, pair_threshold, pair_cache_mb,
                address, ray_workers, work_dir, **kwargs):
        if ray_workers and not address:
            raise LaserError("--ray-workers goes with --ray")
        distributed = None
        if address:
            from ..distributed.ray_runner import RayOptions, require_ray
            require_ray()
            distributed = RayOptions(address, ray_workers)
        many = ManyDocuments(pairs_list, pair_documents, pairs_out, pair_threshold,
                             pair_cache_mb, distributed, work_dir)
        return command(*args, many=many, **kwargs)
    return wrapper


def many_settings(model, langs: tuple[str, str], own_models: tuple[Optional[str], Optional[str]],
                  sources: tuple[str, str], options, output) -> PairSettings:
    """What every pair shares: the languages, each side's model as any process loads it, the
    aligner's `options` and the `output` options."""
    from ..distributed.align_tasks import PairSettings, side_specs
    sources = tuple(source or name for source, name in zip(sources, ("SRC", "TRG")))
    return PairSettings(*langs, *side_specs(model, langs, own_models, sources), options, output)


def _say(line: str, quiet: bool) -> None:
    if not quiet:
        click.echo(f" - {line}", err=True)


def align_many(src: Optional[str], trg: Optional[str], output: Optional[str],
               settings: PairSettings, many: ManyDocuments, documents: DocumentOptions,
               quiet: bool) -> None:
    """Align a list of pairs, two folders' same-named files, or the documents paired across two
    collections (--pair-documents, read as `documents` say); progress and a summary on stderr
    unless `quiet`."""
    if many.pair_documents:
        return pair_and_align(src, trg, output, settings, many, documents, quiet)
    if documents.split:
        raise LaserError("--split-sentences goes with one document pair (SRC and TRG files) "
                         "or --pair-documents")
    from ..align.batch import pairs_from_folders, pairs_from_list
    from ..distributed.align_tasks import align_pairs
    from .mine import shard_runner
    if not output and not many.pairs:
        raise LaserError("two folders need -o OUT_DIR, the folder of the aligned pairs")
    if many.pairs:
        if output:
            raise LaserError("--pairs LIST names each pair's output: drop -o")
        pairs = pairs_from_list(many.pairs)
        default_dir = Path(many.pairs).parent / f".{Path(many.pairs).name}.work"
    else:
        found = pairs_from_folders(src, trg, output)
        for side, names in ((src, found.src_only), (trg, found.trg_only)):
            if names:
                files = "1 file of" if len(names) == 1 else f"{len(names)} files of"
                _say(f"{files} {side} {'has' if len(names) == 1 else 'have'} no same-named "
                     f"file on the other side (skipped): {', '.join(names[:3])}"
                     f"{', ...' if len(names) > 3 else ''}", quiet)
        pairs = found.pairs
        default_dir = Path(output) / WORK_DIR
    work_dir = Path(many.work_dir or default_dir)
    summary = align_pairs(pairs, settings, str(work_dir), shard_runner(many.distributed),
                          progress=not quiet)
    if not many.work_dir:
        shutil.rmtree(work_dir, ignore_errors=True)
    _say(summary.line(), quiet)


def pair_and_align(src: str, trg: str, output: Optional[str], settings: PairSettings,
                   many: ManyDocuments, documents: DocumentOptions, quiet: bool) -> None:
    """--pair-documents: the pairs of two collections' documents (to --pairs-out), and the beads
    of every pair, with their documents and sentence indices, to -o."""
    from ..align.collection import read_collection
    from ..align.pairing import pair_documents
    from ..align.provenance import write_document_beads, write_document_pairs
    from ..io.atomic import check_output_path
    from ..search.inputs import work_dir
    if many.distributed or many.work_dir:
        raise LaserError("--ray and --work-dir go with --pairs or two folders, not "
                         "--pair-documents")
    if not output:
        raise LaserError("--pair-documents needs -o OUT, the file of the aligned sentences")
    options = many.pairing()
    check_output_path(output)
    if many.pairs_out:
        check_output_path(many.pairs_out)
    for spec in (src, trg):
        if not os.path.exists(spec):
            raise LaserError(f"{spec}: no such file or folder")
    collections = (read_collection(src, documents.in_language(settings.src_lang, "--src-lang")),
                   read_collection(trg, documents.in_language(settings.trg_lang, "--trg-lang")))
    with pair_documents(*collections, *settings.embedders(), settings.options, options,
                        progress=not quiet, workdir=work_dir(output)) as pairing:
        written = write_document_beads(output, pairing.aligned_pairs(),
                                       settings.output)
        if many.pairs_out:
            write_document_pairs(many.pairs_out, pairing)
        counts = len(pairing.src), len(pairing.trg), len(pairing.matches)
    _say(f"{counts[0]} documents in {src}, {counts[1]} in {trg}: {counts[2]} pairs found; "
         f"{written.beads} beads written to {output}"
         + (f", {written.dropped} dropped under --min-score" if written.dropped else ""), quiet)
