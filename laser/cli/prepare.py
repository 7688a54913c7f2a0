"""`laser prepare`: the cleaning stage before mining, as a command of its own."""
from __future__ import annotations

import dataclasses
import shutil

import click

from ..errors import LaserError
from ..mining.unify import UNIFY_KEYS
from .common import examples, hold_work_dir_until_done, main
from .document_options import cleaning_options, document_options
from .mine import ray_held, shard_runner
from .options import bad_lines_option, lid_model_option, say_bad_lines, staged_ray_options


@main.command(epilog=examples(
    "laser prepare CC-MAIN-fr.warc.wet.gz --lang fr -o fr.txt",
    "laser prepare 'dump/*.jsonl.gz' --lang de --text-field content --unify -o de.txt",
    "laser prepare book.txt --lang en --input-format paragraphs --provenance -o book.tsv"))
@click.argument("input_path", metavar="INPUT")
@click.option("--lang", "-l", required=True, help="Language of the text (a FLORES-200 or ISO "
                                                  "639 code, or an English name).")
@click.option("--output", "-o", required=True, help="Output text file: a sentence a line "
                                                    "('-': standard output; no OUTPUT.json).")
@document_options(split_default=True)
@cleaning_options
@lid_model_option
@click.option("--unify", is_flag=True, help="Drop duplicate sentences (keep the first).")
@click.option("--unify-by", type=click.Choice(UNIFY_KEYS), default="line", show_default=True,
              help="With --unify, what makes sentences duplicates, as `laser mine --unify-by`.")
@click.option("--provenance", is_flag=True,
              help="Follow each sentence with its file, document (URL or record id), paragraph "
                   "and sentence number, tab-separated.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars or summary.")
@bad_lines_option()
@staged_ray_options
def prepare(input_path, lang, output, documents, cleaning, lid_model, unify, unify_by,
            provenance, quiet, bad_lines, distributed, shard_lines, work_dir):
    """Split INPUT's documents into sentences, normalise them and filter them for mining.

    INPUT is a WARC/WET file, JSON lines, plain text, a directory, a quoted glob or @LIST, each
    file compressed or not. The counts of what each filter removed go to stderr and OUTPUT.json,
    and so do the lines --bad-lines skip or replace (a WARC record is decoded by its charset).
    """
    from ..cleaning.filters import CleaningOptions
    from ..distributed.prepare import PrepareOptions, prepare as prepare_input
    from ..distributed.workdir import SHARD_LINES, WorkOptions
    from ..distributed.ray_runner import default_work_dir
    from ..distributed.workdir import holds_finished_tasks
    from ..io.atomic import check_output_path
    from ..io.sources import STDIN, check_input
    from ..mining.unify import UnifyOptions
    if unify_by != "line" and not unify:
        raise LaserError("--unify-by goes with --unify")
    if input_path == STDIN:
        raise LaserError("laser prepare reads files (it may read them twice): pass a file, not "
                         "'-' (stdin)")
    check_input(input_path)
    check_output_path(output)
    documents = dataclasses.replace(documents, bad_lines=bad_lines.policy)
    options = PrepareOptions(documents.in_language(lang),
                             CleaningOptions(lang, lid_model=lid_model, **cleaning),
                             UnifyOptions(unify_by) if unify else None, provenance)
    work = WorkOptions(str(work_dir or default_work_dir(output)), shard_lines or SHARD_LINES,
                       shard_runner(distributed), not quiet)
    hold_work_dir_until_done(work.work_dir)  # before `try`: a refused run removes nothing
    try:
        with ray_held(distributed):
            summary = prepare_input(input_path, output, options, work, bad_lines)
    except LaserError:
        if not work_dir and not holds_finished_tasks(work.work_dir):
            shutil.rmtree(work.work_dir, ignore_errors=True)
        raise
    if not work_dir:
        shutil.rmtree(work.work_dir, ignore_errors=True)
    say_bad_lines(bad_lines)
    if not quiet:
        click.echo(summary.line(), err=True)
