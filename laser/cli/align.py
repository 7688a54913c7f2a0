"""`laser align`: the sentences of two documents that translate each other, aligned."""
from __future__ import annotations

import click

from ..align.beads import AlignOptions
from ..errors import LaserError
from .align_many import align_many, many_documents_options, many_settings
from .common import examples, main, model_options
from .document_options import document_options
from .options import quiet_option, side_model_options


@main.command("align", epilog=examples(
    "laser align book.de book.fr --src-lang de --trg-lang fr -o book.tsv",
    "laser align page.en page.xx --src-lang en --trg-lang auto --format vecalign -o page.ladder",
    "laser align fr.warc.wet.gz en/ --pair-documents --src-lang fr --trg-lang en "
    "--pairs-out pairs.tsv -o beads.tsv"))
@click.argument("src_path", metavar="SRC", required=False, type=click.Path(allow_dash=True))
@click.argument("trg_path", metavar="TRG", required=False, type=click.Path(allow_dash=True))
@click.option("--src-lang", required=True,
              help="Language of SRC (a code such as de or deu_Latn, or auto: each sentence's "
                   "identified). Without --model it also picks the model.")
@click.option("--trg-lang", required=True, help="Language of TRG (as --src-lang).")
@side_model_options
@click.option("--output", "-o", default=None, type=click.Path(),
              help="The beads ('-', the default: standard output); a file appears only when "
                   "complete. With two folders: the folder of each pair's file.")
@click.option("--format", "format_", type=click.Choice(["tsv", "vecalign", "jsonl"]),
              default="tsv", show_default=True,
              help="tsv: source text, target text, score a bead; vecalign: Vecalign's ladder "
                   "[i, j]:[k]:COST (0-based); jsonl: indices, texts and score.")
@click.option("--max-bead", type=click.IntRange(min=2, max=10), default=AlignOptions.max_bead,
              show_default=True,
              help="The most sentences of a bead, both sides together (5: up to 1-4, 2-3, 3-2, "
                   "4-1); each run of up to MAX_BEAD - 1 sentences is embedded.")
@click.option("--min-score", type=click.FloatRange(-1.0, 1.0), default=None,
              help="Leave beads of a lower score (cosine) out of tsv and jsonl, and count them.")
@many_documents_options
@document_options()
@model_options
@quiet_option
def align_command(src_path, trg_path, src_lang, trg_lang, src_model, trg_model, output, format_,
                  max_bead, min_score, quiet, many, documents, model):
    """Align the sentences of SRC and TRG, two documents that translate each other (one sentence
    a line; with --split-sentences, one paragraph a line): monotone beads of 1-1, 1-N, N-1 and
    N-M sentences, insertions and deletions (docs/alignment.md)."""
    from ..align.files import OutputOptions, align_files
    from ..align.models import side_embedders
    if many.wanted(src_path, trg_path):
        return align_many(src_path, trg_path, output, many_settings(
            model, (src_lang, trg_lang), (src_model, trg_model), (src_path, trg_path),
            AlignOptions(max_bead=max_bead), OutputOptions(format_, min_score)), many,
            documents, quiet)
    if not (src_path and trg_path):
        raise LaserError("give SRC and TRG (two documents or two folders), or --pairs LIST")
    output = output or "-"
    embedders = side_embedders(model, (src_lang, trg_lang), (src_model, trg_model),
                               (src_path, trg_path), notes=not quiet)
    from ..cleaning.sentences import sentence_input
    with sentence_input(src_path, documents.in_language(src_lang)) as src_sentences, \
            sentence_input(trg_path, documents.in_language(trg_lang)) as trg_sentences:
        report = align_files(src_sentences, trg_sentences, output, embedders,
                             AlignOptions(max_bead=max_bead), OutputOptions(format_, min_score))
    if not quiet:
        click.echo(f"laser align: {report.summary()}", err=True)
