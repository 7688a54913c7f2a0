"""`laser split`: each line (a paragraph or a document) as its sentences, one a line."""
from __future__ import annotations

from dataclasses import replace

import click

from ..errors import LaserError
from .common import examples, main
from .document_options import document_options
from .options import bad_lines_option, lid_model_option, say_bad_lines


@main.command(epilog=examples(
    "laser split paragraphs.txt --lang de -o sentences.txt",
    "laser split web.txt --lang auto --with-line -o sentences.tsv",
    "laser split - --lang th < thai.txt"))
@click.argument("input_path", metavar="INPUT", type=click.Path(allow_dash=True))
@click.option("--lang", "-l", required=True,
              help="Language of INPUT (an ISO 639 or FLORES-200 code, or a name), or 'auto': "
                   "each line's own, identified.")
@click.option("--output", "-o", default="-", show_default=True, type=click.Path(dir_okay=False),
              help="Output file ('-': standard output); a file appears only when complete.")
@click.option("--with-line", is_flag=True,
              help="Prefix each sentence with the number of its input line (from 1) and a tab.")
@lid_model_option
@bad_lines_option()
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or summary.")
@document_options(split_default=None)
@click.option("--provenance", is_flag=True,
              help="Follow each sentence with its file, document (URL or record id), paragraph "
                   "and sentence number, tab-separated (docs/documents.md).")
def split(input_path, lang, output, with_line, lid_model, bad_lines, quiet, documents,
          provenance):
    """Split each line of INPUT ('-' for stdin) into its sentences, one a line, in order; a
    sentence keeps its text exactly (the spaces between sentences go). A blank line gives no
    sentence (with --with-line, the numbers show which lines gave which sentences).

    WARC/WET and JSON-lines files are documents: their paragraphs are split (docs/documents.md).
    """
    from ..io.documents import is_document_input
    if provenance or is_document_input(input_path, documents):
        if with_line:
            raise LaserError("--with-line numbers the lines of plain text; documents take "
                             "--provenance")
        from ..cleaning.sentences import write_sentences
        count = write_sentences(input_path, output, replace(documents.in_language(lang),
                                                            split=True), provenance, bad_lines)
        say_bad_lines(bad_lines)
        if not quiet:
            click.echo(f"wrote {count} sentences of {input_path}'s documents", err=True)
        return
    from ..apps.split import SplitOptions, split_file
    report = split_file(input_path, output, SplitOptions(lang, with_line, lid_model,
                                                         progress=not quiet,
                                                         bad_lines=bad_lines))
    say_bad_lines(bad_lines)
    if not quiet:
        click.echo(report.summary(), err=True)
