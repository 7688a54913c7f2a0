"""`laser dedup`: near-duplicate removal by cosine similarity, keeping the first of each group."""
from __future__ import annotations

import click

from ..errors import LaserError
from .common import encoder_loader, examples, main, model_options
from .options import (approximate_options, bad_lines_option, dim_option, fp16_option,
                      quiet_option, say_bad_lines)


@main.command(epilog=examples(
    "laser dedup corpus.en --lang en -o corpus.dedup.en",
    "laser dedup corpus.en --embeddings corpus.en.npy --threshold 0.9 -o kept.en "
    "--kept-ids kept.ids --report dropped.tsv",
    "laser dedup big.en --embeddings big.npy --index IVF4096,Flat --nprobe 64 -o kept.en"))
@click.argument("text", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option("--embeddings", help="Embeddings of INPUT, one row per line (.npy or raw).")
@click.option("--lang", "-l", help="Language of INPUT; without --embeddings INPUT is embedded now.")
@click.option("--output", "-o", required=True, help="The kept lines ('-': standard output).")
@click.option("--threshold", "-t", type=click.FloatRange(-1.0, 1.0), default=0.95,
              show_default=True, help="Cosine at or above which a line duplicates an earlier one.")
@click.option("-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Neighbours looked at per line.")
@click.option("--kept-ids", help="Also write the 0-based line numbers of the kept lines.")
@click.option("--report", help="Also write a TSV of the dropped lines: dropped_id original_id "
                               "score dropped_text original_text.")
@approximate_options
@dim_option
@fp16_option
@model_options
@bad_lines_option()
@quiet_option
def dedup(text, embeddings, lang, output, threshold, k, kept_ids, report, approximate, dim, fp16,
          bad_lines, quiet, model):
    """Remove near-duplicate lines of INPUT: a line goes when an earlier line among its k nearest
    neighbours has a cosine of at least --threshold with it, so the first of each group stays."""
    from ..apps.dedup import (DedupOptions, DedupOutputs, check_lines, deduplicate,
                              kept_line_numbers, write_deduplicated)
    from ..io.outputs import check_outputs
    from ..io.text import check_input, is_regular_file
    from ..search.inputs import EmbeddingSource, sentence_embeddings, work_dir
    from ..search.vectors import Vectors
    check_input(text)
    if not is_regular_file(text):
        raise LaserError(f"{text}: dedup reads INPUT twice, so it must be a regular file")
    outputs = DedupOutputs(output, kept_ids, report)
    check_outputs({"--output": output, "--kept-ids": kept_ids, "--report": report})
    source = EmbeddingSource(text, embeddings, lang, dim, fp16)
    encoder = None if embeddings else encoder_loader(model, lang, source=text)
    skip = bad_lines.policy == "skip"
    with sentence_embeddings(source, encoder, work_dir(output), bad_lines.again()) as \
            (matrix, name):
        if embeddings or not skip:  # a row a line of INPUT
            check_lines(text, matrix.shape[0])
        # a skipped line's row is left out with it
        rows = kept_line_numbers(text, bad_lines.again()) if embeddings and skip else None
        duplicates = deduplicate(Vectors(matrix, name=name, rows=rows),
                                 DedupOptions(threshold, k, approximate), progress=not quiet)
    write_deduplicated(text, duplicates, outputs, bad_lines)  # counts the lines, once
    say_bad_lines(bad_lines)
    if duplicates.unsure:
        click.echo(f"laser: warning: {duplicates.unsure} kept lines have all {k} neighbours at or "
                   f"above the threshold, so an earlier duplicate may lie beyond them; raise -k",
                   err=True)
    if not quiet:
        click.echo(f"kept {len(duplicates.original) - duplicates.dropped} of "
                   f"{len(duplicates.original)} lines ({duplicates.dropped} near-duplicates "
                   f"dropped at cosine >= {threshold})", err=True)
