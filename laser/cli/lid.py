"""`laser lid`: which language each line is in."""
from __future__ import annotations

import click

from ..text.languages import AUTO
from .common import examples, main
from .document_options import document_options, sentences_out_option
from .options import bad_lines_option, lid_model_option, say_bad_lines


@main.command(epilog=examples(
    "laser lid mixed.txt -o languages.tsv",
    "laser lid - --top 3 < web.txt",
    "laser lid tweets.txt --lid-model openlid.bin -o languages.tsv"))
@click.argument("input_path", metavar="INPUT", type=click.Path(allow_dash=True))
@click.option("--output", "-o", default="-", show_default=True,
              help="Output file ('-': standard output); a file appears only when complete.")
@click.option("--top", "-k", type=click.IntRange(min=1), default=1, show_default=True,
              help="Guesses per line, likeliest first, each CODE<TAB>PROBABILITY.")
@click.option("--min-prob", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              metavar="P", help="Only guesses of probability P or more; a line left without "
                                "one is `und`.")
@lid_model_option
@bad_lines_option()
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or summary.")
@document_options()
@sentences_out_option
def lid(input_path, output, top, min_prob, lid_model, bad_lines, quiet, documents,
        sentences_out):
    """Identify the language of each line of INPUT ('-' for stdin): one line out per line in,
    CODE<TAB>PROBABILITY (a FLORES-200 code such as fra_Latn; `und` with 0 for a line without
    letters, such as an empty line, numbers or emoji).

    WARC/WET and JSON-lines files are documents: a line out for each of their paragraphs, or
    with --split-sentences for each sentence (each paragraph split in its identified language).
    With --bad-lines skip, a line that is not UTF-8 text has no line out.
    """
    from ..cleaning.sentences import sentence_input
    from ..lid.files import LidOptions, identify_file
    from ..search.inputs import work_dir
    with sentence_input(input_path, documents.in_language(AUTO), work_dir(output),
                        sentences_out, bad_lines) as sentences:
        report = identify_file(sentences, output, LidOptions(lid_model, top, not quiet,
                                                             min_prob, bad_lines))
    say_bad_lines(bad_lines)
    if not quiet:
        click.echo(report.summary(), err=True)
