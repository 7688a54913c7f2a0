"""`laser mine`: the official `mine_bitexts.py` options and results, with exact blocked k-NN."""
from __future__ import annotations

import click

from ..errors import LaserError
from ..mining.mine import MARGINS, MODES, OUTPUT_FORMATS, RETRIEVALS, mine, scan_corpus, write_pairs
from .common import main, model_options
from .knn import approximate_options, bitext_inputs, bitext_vectors


def _warn(message: str) -> None:
    click.echo(f"laser: warning: {message}", err=True)


def _check_options(mode: str, retrieval: str, threshold: float, candidates: bool,
                   encoding: str) -> None:
    if encoding.lower().replace("-", "") != "utf8":
        raise LaserError(f"--encoding {encoding}: only UTF-8 is supported")
    if candidates and mode != "mine":
        raise LaserError("--candidates goes with --mode mine")
    if mode == "mine" and threshold and (retrieval != "max" or candidates):
        _warn("--threshold is applied only to the pairs of --retrieval max, "
              "as in the official tool")


@main.command("mine")
@bitext_inputs
@click.option("--mode", type=click.Choice(MODES), required=True,
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
              help="Keep pairs scoring above this (--retrieval max only, as officially).")
@click.option("--unify", is_flag=True, help="Merge identical lines before searching.")
@click.option("--output", "-o", required=True, help="Output file ('-' for stdout).")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="tsv",
              show_default=True,
              help="tsv: as the official tool; ids: score and 0-based line numbers; "
                   "jsonl: records.")
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
@click.option("--verbose", is_flag=True, help="Progress bars and counts on stderr.")
@model_options
def mine_command(src_path, trg_path, src_embeddings, trg_embeddings, src_lang, trg_lang, dim,
                 fp16, mode, k, margin, retrieval, threshold, unify, output, output_format,
                 candidates, approximate, legacy_line_map, encoding, gpu, verbose, **model):
    """Search, score or mine parallel sentences of SRC and TRG, as mine_bitexts.py does."""
    _check_options(mode, retrieval, threshold, candidates, encoding)
    src = scan_corpus(src_path, unify, legacy_line_map)
    trg = scan_corpus(trg_path, unify, legacy_line_map)
    with bitext_vectors(src, trg, src_embeddings, trg_embeddings, src_lang, trg_lang, dim, fp16,
                        model, output) as (x, y):
        pairs = mine(src, trg, x, y, mode, k, margin, retrieval, threshold, candidates,
                     approximate, progress=verbose)
    write_pairs(output, pairs, src, trg, output_format, mode)
    if verbose:
        click.echo(f" - {src_path}: {src.lines} lines, {src.sentences} sentences searched; "
                   f"{trg_path}: {trg.lines} lines, {trg.sentences} sentences searched", err=True)
        click.echo(f" - wrote {len(pairs)} lines to {output}", err=True)
