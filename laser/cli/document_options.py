"""Option groups of the commands that read documents: how an input is read (--input-format,
--text-field, --split-sentences) and the cleaning stage's filters."""
from __future__ import annotations

import dataclasses
import functools
from typing import Optional

import click

from ..cleaning.filters import CleaningOptions
from ..io.documents import FORMATS, DocumentOptions

INPUT_FORMAT_HELP = (
    "How each input file is read. auto: a WARC or WET file (by its WARC/1.x version line) is a "
    "document a record, a JSON-lines file (by a first line that parses as an object) a "
    "document a record, plain text one sentence (or paragraph) a line; paragraphs: plain text "
    "whose documents are separated by blank lines. A document's lines are its paragraphs.")


def document_options(split_default: Optional[bool] = False, into: str = "documents"):
    """--input-format, --text-field and --split-sentences (none when `split_default` is None:
    a command that always splits), passed on as one DocumentOptions named `into` (its language
    set by the command: `in_language`)."""
    def decorate(command):
        @functools.wraps(command)
        def wrapper(*args, input_format, text_field, split_sentences=bool(split_default),
                    **kwargs):
            documents = DocumentOptions(input_format, text_field, split_sentences)
            return command(*args, **{into: documents}, **kwargs)
        if split_default is not None:
            wrapper = click.option(
                "--split-sentences/--no-split-sentences", default=split_default,
                show_default=True,
                help="Split each paragraph (line) into sentences (docs/documents.md).")(wrapper)
        wrapper = click.option("--text-field", default="text", show_default=True,
                               help="The field of a JSON-lines record that holds its text."
                               )(wrapper)
        return click.option("--input-format", "input_format", type=click.Choice(FORMATS),
                            default="auto", show_default=True, help=INPUT_FORMAT_HELP)(wrapper)
    return decorate


sentences_out_option = click.option(
    "--sentences-out", type=click.Path(dir_okay=False), default=None,
    help="With documents or --split-sentences: write each sentence read, with its file, "
         "document (URL or record id), paragraph and sentence number (TSV), a line per row.")


# The defaults of the filters, as CleaningOptions has them.
DEFAULTS = {field.name: field.default for field in dataclasses.fields(CleaningOptions)}
CLEANING_FIELDS = ("min_chars", "max_chars", "min_words", "max_words", "min_script_share",
                   "max_digits_punctuation", "boilerplate", "lid", "min_lid_prob")


def cleaning_options(command):
    """The cleaning filters' options, passed on as one `cleaning` dict of CleaningOptions
    fields (the command adds the language and the language-ID model)."""
    share = click.FloatRange(0.0, 1.0)
    options = [
        click.option("--min-chars", type=click.IntRange(min=0), default=DEFAULTS["min_chars"],
                     show_default=True, help="Cleaning: fewest characters a sentence keeps."),
        click.option("--max-chars", type=click.IntRange(min=1), default=DEFAULTS["max_chars"],
                     show_default=True, help="Cleaning: most characters a sentence keeps."),
        click.option("--min-words", type=click.IntRange(min=0), default=DEFAULTS["min_words"],
                     show_default=True,
                     help="Cleaning: fewest words (runs of non-space characters; a sentence of a "
                          "script written without spaces is mostly one)."),
        click.option("--max-words", type=click.IntRange(min=1), default=DEFAULTS["max_words"],
                       show_default=True, help="Cleaning: most words."),
        click.option("--min-script-share", type=share, default=DEFAULTS["min_script_share"],
                     show_default=True,
                     help="Cleaning: least share of a sentence's letters in the script(s) of "
                          "its language (0: no check)."),
        click.option("--max-digits-punctuation", type=share,
                     default=DEFAULTS["max_digits_punctuation"], show_default=True,
                     help="Cleaning: most share of a sentence's characters that are digits, "
                          "punctuation or symbols."),
        click.option("--boilerplate", type=click.IntRange(min=0), default=DEFAULTS["boilerplate"],
                     show_default=True,
                     help="Cleaning: drop paragraphs found in this many documents of one site "
                          "(URL host) or more (0: keep them)."),
        click.option("--lid/--no-lid", default=True, show_default=True,
                     help="Cleaning: drop sentences language ID does not find in their language."),
        click.option("--min-lid-prob", type=share, default=DEFAULTS["min_lid_prob"],
                     show_default=True,
                     help="Cleaning: least probability of the sentence's language."),
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        cleaning = {name: kwargs.pop(name) for name in CLEANING_FIELDS}
        return command(*args, cleaning=cleaning, **kwargs)
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper
