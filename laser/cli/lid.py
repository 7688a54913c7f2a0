"""`laser lid`: which language each line is in."""
from __future__ import annotations

import click

from .common import examples, main
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
@lid_model_option
@bad_lines_option()
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or summary.")
def lid(input_path, output, top, lid_model, bad_lines, quiet):
    """Identify the language of each line of INPUT ('-' for stdin): one line out per line in,
    CODE<TAB>PROBABILITY (a FLORES-200 code such as fra_Latn; `und` with 0 for an empty line).
    With --bad-lines skip, a line that is not UTF-8 text has no line out.
    """
    from ..lid.files import LidOptions, identify_file
    report = identify_file(input_path, output, LidOptions(lid_model, top, progress=not quiet,
                                                          bad_lines=bad_lines))
    say_bad_lines(bad_lines)
    if not quiet:
        click.echo(report.summary(), err=True)
