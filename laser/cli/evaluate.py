"""`laser eval xsim|tatoeba|bucc`: similarity search error and BUCC mining F1."""
from __future__ import annotations

import os
from typing import Optional

import click
import numpy as np

from ..errors import LaserError
from ..eval.xsim import Embedder
from ..mining.margins import MARGINS
from ..models.options import ModelOptions
from .common import encoder_loader, examples, main, model_options
from .options import dim_option, fp16_option

margins_option = click.option("--margin", "kinds", type=click.Choice(MARGINS), multiple=True,
                              default=("absolute", "ratio"), show_default=True,
                              help="Variants to report (repeat): absolute is plain cosine.")
k_option = click.option("-k", "--neighborhood", "k", type=click.IntRange(min=1), default=4,
                        show_default=True, help="Candidates considered by the margin variants.")
embeddings_dir_option = click.option(
    "--embeddings-dir", help="Precomputed embeddings: DIR/NAME.npy for every text file NAME "
                             "(default: embed with the model).")


def _embedder(embeddings_dir: Optional[str], model: ModelOptions) -> Embedder:
    """Embeddings of a task's text file: DIR/NAME.npy, or made with the model; precomputed files
    must all be of one embedding space."""
    from ..models.spaces import OneSpace, embeddings_origin
    from ..search.inputs import EmbeddingSource, sentence_embeddings
    encoder = None if embeddings_dir else encoder_loader(model)
    one_space = OneSpace()

    def embed(text: str, lang: str):
        precomputed = (os.path.join(embeddings_dir, os.path.basename(text) + ".npy")
                       if embeddings_dir else None)
        if precomputed:
            one_space.check(embeddings_origin(precomputed))
        return sentence_embeddings(EmbeddingSource(text, precomputed, lang), encoder)
    return embed


def _percent(value: float) -> str:
    return "-" if value != value else f"{100 * value:.2f}"


@main.group("eval", epilog=examples(
    "laser eval xsim de.npy en.npy",
    "laser eval tatoeba tatoeba/v1 --model 93langs",
    "laser eval bucc bucc2018 --pair de-en --model 93langs"))
def evaluate() -> None:
    """Similarity search error (xsim, Tatoeba) and BUCC mining F1."""


@evaluate.command(epilog=examples(
    "laser eval xsim de.npy en.npy",
    "laser eval xsim de.npy fr.npy en.npy --names de,fr,en --margin ratio"))
@click.argument("embeddings", nargs=-1, required=True)
@click.option("--names", help="Comma-separated names of the sets (default: file names).")
@click.option("--texts", multiple=True,
              help="Sentences of each set, in the same order (repeat): a retrieved sentence "
                   "identical to the reference counts as correct.")
@margins_option
@k_option
@dim_option
@fp16_option
def xsim(embeddings, names, texts, kinds, k, dim, fp16):
    """xsim error (%) between aligned EMBEDDINGS files (row i of each translates row i): both
    directions for two files, the N x N matrix for more (row searched in column)."""
    from ..eval.xsim import xsim_matrix
    from ..io.embeddings import open_embeddings
    from ..io.text import read_lines
    from ..models.spaces import check_same_space, embeddings_origin
    from ..search.vectors import Vectors
    if len(embeddings) < 2:
        raise LaserError("xsim needs at least two embedding files")
    labels = names.split(",") if names else [os.path.basename(path) for path in embeddings]
    if len(labels) != len(embeddings) or (texts and len(texts) != len(embeddings)):
        raise LaserError("give one name (and one --texts file) per embedding file")
    sets = [Vectors(open_embeddings(path, dim, fp16), name=path) for path in embeddings]
    first = embeddings_origin(embeddings[0])
    for path in embeddings[1:]:
        check_same_space(first, embeddings_origin(path))
    sentences = [list(read_lines(path)) for path in texts] if texts else None
    width = max(8, *(len(label) for label in labels))
    for kind in kinds:
        matrix = xsim_matrix(sets, kind, k, sentences)
        click.echo(f"# xsim error (%), margin {kind}, k={k}: row searched in column")
        click.echo(" " * width + "".join(f"{label:>{width + 1}}" for label in labels))
        for label, row in zip(labels, matrix):
            click.echo(f"{label:<{width}}" + "".join(f"{_percent(v):>{width + 1}}" for v in row))
        click.echo(f"average {_percent(float(np.nanmean(matrix)))}")


@evaluate.command(epilog=examples(
    "laser eval tatoeba tatoeba/v1 --model 93langs",
    "laser eval tatoeba tatoeba/v1 --embeddings-dir embeddings/"))
@click.argument("directory")
@embeddings_dir_option
@margins_option
@k_option
@model_options
def tatoeba(directory, embeddings_dir, kinds, k, model):
    """xsim error (%) of every tatoeba.xxx-eng.xxx / .eng pair in DIRECTORY, both directions."""
    from ..eval.tatoeba import tatoeba_errors
    rows = tatoeba_errors(directory, _embedder(embeddings_dir, model), kinds, k)
    click.echo("lang\tmargin\txxx->eng\teng->xxx")
    for lang, kind, forward, backward in rows:
        click.echo(f"{lang}\t{kind}\t{_percent(forward)}\t{_percent(backward)}")
    for kind in kinds:
        chosen = np.array([(f, b) for _, m, f, b in rows if m == kind])
        click.echo(f"average\t{kind}\t{_percent(chosen[:, 0].mean())}\t"
                   f"{_percent(chosen[:, 1].mean())}")


@evaluate.command(epilog=examples(
    "laser eval bucc bucc2018 --pair de-en --model 93langs",
    "laser eval bucc bucc2018 --pair fr-en --test-split test --extracted fr-en.pairs"))
@click.argument("directory")
@click.option("--pair", required=True, help="Language pair as in the file names, e.g. de-en.")
@click.option("--train-split", default="training", show_default=True,
              help="Split whose gold pairs choose the threshold.")
@click.option("--test-split", default="test", show_default=True,
              help="Split mined with that threshold and scored when it has a gold file.")
@click.option("--extracted", help="Write the test pairs kept (src_id<TAB>en_id) here.")
@embeddings_dir_option
@k_option
@model_options
def bucc(directory, pair, train_split, test_split, extracted, embeddings_dir, k, model):
    """BUCC mining F1 on the official layout DIRECTORY/PAIR/PAIR.SPLIT.{xx,en,gold}."""
    from ..eval.bucc import bucc_evaluate
    from ..io.atomic import STDOUT, atomic_text_output
    from ..io.outputs import check_outputs
    check_outputs({"the scores": STDOUT, "--extracted": extracted})
    report = bucc_evaluate(directory, pair, _embedder(embeddings_dir, model), train_split,
                           test_split, k)
    click.echo(f"threshold\t{report.threshold:.6f}")
    for split, scores in ((train_split, report.train), (test_split, report.test)):
        if scores is None:
            click.echo(f"{split}\tno gold file: {len(report.extracted)} pairs extracted")
        else:
            click.echo(f"{split}\tprecision {_percent(scores.precision)}\t"
                       f"recall {_percent(scores.recall)}\tF1 {_percent(scores.f1)}")
    if extracted:
        with atomic_text_output(extracted) as out:
            out.writelines(f"{src}\t{trg}\n" for src, trg in sorted(report.extracted))
