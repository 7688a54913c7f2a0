"""`laser score`: one score per line of a line-aligned bitext, and their histogram."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import LaserError
from ..mining.margins import MARGINS
from ..mining.scoring import METHODS
from .common import examples, main, model_options, side_loaders
from .options import approximate_options, bitext_inputs, quiet_option


@main.command("score", epilog=examples(
    "laser score corpus.de corpus.en --src-lang de --trg-lang en -o scores.txt",
    "laser score corpus.de corpus.en --src-embeddings de.npy --trg-embeddings en.npy "
    "--method cosine --with-text -o scored.tsv --png histogram.png"))
@bitext_inputs
@click.option("--method", type=click.Choice(METHODS), default="margin", show_default=True,
              help="cosine; margin (the official score mode); csls.")
@click.option("--margin", "kind", type=click.Choice(MARGINS), default="ratio", show_default=True,
              help="Margin of --method margin.")
@click.option("-k", "--neighborhood", "k", type=click.IntRange(min=1), default=4,
              show_default=True, help="Neighbourhood size of margin and CSLS.")
@approximate_options
@click.option("--output", "-o", default="-", show_default=True,
              help="Scores, one a line ('-': standard output).")
@click.option("--with-text", is_flag=True, help="Write score<TAB>src<TAB>trg lines.")
@click.option("--histogram", "histogram_path", default=None,
              help="Write the text histogram here (default: stderr, unless --quiet).")
@click.option("--png", "png_path", default=None, help="Write the histogram as a PNG bar chart.")
@click.option("--bins", type=click.IntRange(min=1), default=20, show_default=True,
              help="Histogram bins.")
@model_options
@quiet_option
def score_command(src, trg, method, kind, k, approximate, output, with_text, histogram_path,
                  png_path, bins, quiet, model):
    """Score every line pair of the aligned files SRC and TRG."""
    from ..io.atomic import atomic_text_output, replace_atomically
    from ..io.outputs import check_outputs
    from ..mining.corpus import scan_corpus
    from ..mining.inputs import bitext_vectors
    from ..mining.scoring import Histogram, score_bitext, write_scores
    from ..search.inputs import work_dir
    check_outputs({"--output": output, "--histogram": histogram_path, "--png": png_path})
    src_corpus, trg_corpus = scan_corpus(src.text), scan_corpus(trg.text)
    if src_corpus.lines != trg_corpus.lines:
        raise LaserError(f"{src.text} has {src_corpus.lines} lines but {trg.text} has "
                         f"{trg_corpus.lines}: a bitext must be line-aligned")
    with bitext_vectors(src_corpus, trg_corpus, src, trg, side_loaders(model, src, trg),
                        work_dir(output)) as (x, y):
        scores = score_bitext(x, y, method, k, kind, approximate, progress=not quiet)
    histogram = Histogram.of(scores, bins)
    write_scores(output, scores, src.text if with_text else None, trg.text if with_text else None)
    if histogram_path:
        with atomic_text_output(histogram_path) as out:
            out.write(histogram.text())
    elif not quiet:
        click.echo(histogram.text(), err=True, nl=False)
    if png_path:
        replace_atomically(png_path, lambda tmp: Path(tmp).write_bytes(histogram.png()))
