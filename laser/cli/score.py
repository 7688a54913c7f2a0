"""`laser score`: one score per line of a line-aligned bitext, and their histogram."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import LaserError
from ..search.knn import replace_atomically
from ..mining.mine import MARGINS, scan_corpus
from ..mining.scoring import METHODS, Histogram, score_bitext, write_scores
from ..io.text import atomic_text_output
from .common import main, model_options
from .knn import approximate_options, bitext_inputs, bitext_vectors, quiet_option


@main.command("score")
@bitext_inputs
@click.option("--method", type=click.Choice(METHODS), default="margin", show_default=True,
              help="cosine; margin (the official score mode); csls.")
@click.option("--margin", "kind", type=click.Choice(MARGINS), default="ratio", show_default=True,
              help="Margin of --method margin.")
@click.option("-k", "--neighborhood", "k", type=click.IntRange(min=1), default=4,
              show_default=True, help="Neighbourhood size of margin and CSLS.")
@approximate_options
@click.option("--output", "-o", default="-", show_default=True, help="Scores, one a line.")
@click.option("--with-text", is_flag=True, help="Write score<TAB>src<TAB>trg lines.")
@click.option("--histogram", "histogram_path", default=None,
              help="Write the text histogram here (default: stderr, unless --quiet).")
@click.option("--png", "png_path", default=None, help="Write the histogram as a PNG bar chart.")
@click.option("--bins", type=click.IntRange(min=1), default=20, show_default=True,
              help="Histogram bins.")
@model_options
@quiet_option
def score_command(src_path, trg_path, src_embeddings, trg_embeddings, src_lang, trg_lang, dim,
                  fp16, method, kind, k, approximate, output, with_text, histogram_path,
                  png_path, bins, quiet, **model):
    """Score every line pair of the aligned files SRC and TRG."""
    src, trg = scan_corpus(src_path), scan_corpus(trg_path)
    if src.lines != trg.lines:
        raise LaserError(f"{src_path} has {src.lines} lines but {trg_path} has {trg.lines}: "
                         "a bitext must be line-aligned")
    with bitext_vectors(src, trg, src_embeddings, trg_embeddings, src_lang, trg_lang, dim, fp16,
                        model, output) as (x, y):
        scores = score_bitext(x, y, method, k, kind, approximate, progress=not quiet)
    histogram = Histogram.of(scores, bins)
    write_scores(output, scores, src_path if with_text else None, trg_path if with_text else None)
    if histogram_path:
        with atomic_text_output(histogram_path) as out:
            out.write(histogram.text())
    elif not quiet:
        click.echo(histogram.text(), err=True, nl=False)
    if png_path:
        replace_atomically(png_path, lambda tmp: Path(tmp).write_bytes(histogram.png()))
