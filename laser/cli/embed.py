"""`laser embed` and `laser preprocess`."""
from __future__ import annotations

import dataclasses

import click

from ..apps.documents import POOLINGS
from ..errors import LaserError
from .common import encoder_spec, examples, load_encoder, main, model_options
from .document_options import document_options, sentences_out_option
from .options import bad_lines_option, ray_options, say_bad_lines, say_kept_work


@main.command(epilog=examples(
    "laser embed <(zcat corpus.de.gz) -o de.npy --lang de --model laser2",
    "laser embed paragraphs.en -o paragraphs.npy --lang en --documents --pooling max",
    "laser embed mixed.txt -o mixed.npy --lang auto --lang-out mixed.lang"))
@click.argument("input_path", metavar="INPUT", type=click.Path(allow_dash=True))
@click.option("--output", "-o", required=True,
              help="Output file (.npy, or headerless with --format raw); '-': standard output "
                   "(then no OUTPUT.json).")
@click.option("--lang", "-l", required=True,
              help="Language: FLORES-200 code, ISO 639-1 or 639-3 code or English name "
                   "(ibo_Latn, en, eng, igbo...). Without --model it also picks the model. "
                   "auto: each line's language identified (docs/language-id.md), the line "
                   "preprocessed as it and, with --model laser2, embedded by its language's "
                   "LASER3 encoder when downloaded.")
@click.option("--lang-out", default=None,
              help="With --lang auto: write each line's identified language here, one per line "
                   "(as `laser lid` prints it).")
@model_options
@click.option("--fp16", is_flag=True, help="Store float16 instead of float32.")
@click.option("--format", "fmt", type=click.Choice(["npy", "raw"]), default="npy",
              show_default=True, help="raw: headerless row-major floats, the layout of the "
                                      "official tools.")
@click.option("--provenance/--no-provenance", default=True, show_default=True,
              help="Write OUTPUT.json with the model's sha256, language, shape and options.")
@click.option("--documents", is_flag=True,
              help="Each line is a document (paragraph): split it into sentences, embed them and "
                   "pool their rows into the line's row. An empty line gets the row of the empty "
                   "string.")
@click.option("--pooling", type=click.Choice(POOLINGS), default="mean", show_default=True,
              help="With --documents: how the sentence rows of a line are pooled.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, note or summary.")
@document_options(into="inputs")
@sentences_out_option
@bad_lines_option("replace")
@ray_options
def embed(input_path, output, lang, lang_out, fp16, fmt, provenance, documents, pooling, quiet,
          inputs, sentences_out, bad_lines, distributed, model):
    """Embed each line of INPUT ('-' for stdin, pipes welcome): exactly one row per line.

    INPUT may also be a directory, a quoted glob or @LIST (a file of paths, one a line): the
    lines of its files in order. Files compressed with gzip, xz, zstd or bzip2 are read as such.
    WARC/WET and JSON-lines files are documents: a row for each of their paragraphs, or with
    --split-sentences for each sentence (docs/documents.md).

    Rows are not unit length; normalise them for cosine similarity (the search and mining
    commands do).
    """
    from ..cleaning.sentences import sentence_input
    from ..io.terminal import check_binary_output
    from ..pipeline import EmbedOptions, check_embed_job, embed_file
    from ..search.inputs import work_dir
    if pooling != "mean" and not documents:
        raise LaserError("--pooling goes with --documents")
    embed_options = EmbedOptions(lang, fmt, fp16, progress=not quiet, provenance=provenance,
                                 lang_out=lang_out, bad_lines=bad_lines)
    check_embed_job(input_path, output, embed_options, sentences_out)
    check_binary_output(output, f"embeddings ({fmt})")
    with sentence_input(input_path, inputs.in_language(lang), work_dir(output),
                        sentences_out, bad_lines) as sentences:
        if distributed:
            if documents:
                raise LaserError("--documents does not run on --ray yet; embed documents in one "
                                 "process")
            from ..distributed.ray_runner import default_work_dir, embed_file_on_ray
            try:
                report, run = embed_file_on_ray(encoder_spec(model, lang, quiet), sentences,
                                                output, embed_options, distributed)
            except (LaserError, KeyboardInterrupt):
                say_kept_work(distributed.work_dir or default_work_dir(output))
                raise
            summary = f"{report.summary()}; {run.summary()}"
        else:
            if documents:
                from ..apps.documents import DocumentEncoder
                splitter = DocumentEncoder(pooling)
                embed_options = dataclasses.replace(embed_options, encode=splitter,
                                                    rows=splitter.rows)
            report = embed_file(load_encoder(model, lang, quiet), sentences, output,
                                embed_options)
            summary = report.summary()
            if documents:
                summary += (f"\npooled {splitter.sentences} sentences into {report.rows} "
                            f"document rows ({pooling})")
    say_bad_lines(bad_lines)
    if not quiet:
        click.echo(summary, err=True)


@main.command(epilog=examples(
    "laser preprocess sentences.ja --lang ja --stage tok",
    "laser preprocess sentences.de --lang de -o sentences.bpe",
    "laser preprocess sentences.fr --lang fr --model laser2 --stage spm"))
@click.argument("input_path", metavar="INPUT", type=click.Path(allow_dash=True))
@click.option("--output", "-o", default="-", show_default=True, type=click.Path(allow_dash=True),
              help="Output text file ('-': standard output).")
@click.option("--lang", "-l", required=True, help="Language code.")
@click.option("--stage", type=click.Choice(["tok", "bpe", "pre", "spm"]), default=None,
              help="LASER1 models: tok (after tokenisation) or bpe (after BPE); LASER2 models: "
                   "pre (normalised, lower-cased text) or spm (SentencePiece pieces). "
                   "Default: bpe or spm, what the encoder reads.")
@model_options
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no note.")
def preprocess(input_path, output, lang, stage, quiet, model):
    """Write INPUT after one of the model's preprocessing stages, line for line."""
    from ..pipeline import check_job, preprocess_file
    check_job(input_path, output)
    encoder = load_encoder(model, lang, quiet)
    preprocess_file(encoder, input_path, output, lang, stage, progress=not quiet and output != "-")
