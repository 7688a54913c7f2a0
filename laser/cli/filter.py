"""`laser filter train|score`: a learned pair filter over the embeddings of both sides."""
from __future__ import annotations

import functools

import click

from .common import encoder_loader, examples, main, model_options, side_loaders
from .options import (dim_option, fp16_option, lid_min_prob_option, lid_model_option,
                      quiet_option, side_model_options)


@main.group("filter", epilog=examples(
    "laser filter train de-en.tsv --src-lang de --trg-lang en -o de-en.filter",
    "laser filter score mined.tsv de-en.filter --src-lang de --trg-lang en -o scored.tsv"))
def filter_group() -> None:
    """Learn which sentence pairs are translations, and score candidate pairs with it."""


def pair_sides(command):
    """Languages or precomputed embeddings of the two columns of PAIRS, passed on as `src`/`trg`
    EmbeddingSource values."""
    @click.argument("pairs", metavar="PAIRS")
    @click.option("--src-lang", help="Language of the source column: embed it with the model.")
    @click.option("--trg-lang", help="Language of the target column: embed it with the model.")
    @click.option("--src-embeddings", help="Embeddings of the source column, one row per line "
                                           "(.npy or raw), instead of --src-lang.")
    @click.option("--trg-embeddings", help="Embeddings of the target column, one row per line "
                                           "(.npy or raw), instead of --trg-lang.")
    @side_model_options
    @dim_option
    @fp16_option
    @functools.wraps(command)
    def wrapper(*args, pairs, src_lang, trg_lang, src_embeddings, trg_embeddings, src_model,
                trg_model, dim, fp16, **kwargs):
        from ..search.inputs import EmbeddingSource
        src = EmbeddingSource(pairs, src_embeddings, src_lang, dim, fp16, "--src-", src_model)
        trg = EmbeddingSource(pairs, trg_embeddings, trg_lang, dim, fp16, "--trg-", trg_model)
        return command(*args, pairs=pairs, src=src, trg=trg, **kwargs)
    return wrapper


def column_name(side) -> str:
    """How messages name a column of text (as `laser.apps.pair_files` does)."""
    return f"{side.text} ({side.option}lang)"


@filter_group.command("train", epilog=examples(
    "laser filter train de-en.tsv --src-lang de --trg-lang en -o de-en.filter",
    "laser filter train pairs.tsv --src-embeddings src.npy --trg-embeddings trg.npy -o my.filter "
    "--hard-negatives 2 --seed 3"))
@pair_sides
@click.option("--output", "-o", "filter_dir", required=True,
              help="Folder for the filter: weights.npz and filter.json (model sha256, options, "
                   "training record).")
@click.option("--random-negatives", type=click.IntRange(min=0), default=1, show_default=True,
              help="Random negatives per positive (the source with another pair's target).")
@click.option("--hard-negatives", type=click.IntRange(min=0), default=1, show_default=True,
              help="Hard negatives per positive and direction: the nearest non-partners by cosine "
                   "(source -> targets and target -> sources).")
@click.option("--hidden", type=click.IntRange(min=1), default=128, show_default=True,
              help="Hidden units of the MLP.")
@click.option("--epochs", type=click.IntRange(min=1), default=40, show_default=True,
              help="At most this many passes (early stopping on the dev loss).")
@click.option("--patience", type=click.IntRange(min=1), default=3, show_default=True,
              help="Stop after this many epochs without a better dev loss.")
@click.option("--dev-share", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.1, show_default=True,
              help="Share of the pairs held out for early stopping.")
@click.option("--learning-rate", type=click.FloatRange(0, min_open=True), default=1e-3,
              show_default=True)
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed of the split, the negatives and the network: same seed, same filter.")
@model_options
@quiet_option
def train_command(pairs, src, trg, filter_dir, random_negatives, hard_negatives, hidden, epochs,
                  patience, dev_share, learning_rate, seed, quiet, model):
    """Train a pair filter on the parallel pairs of PAIRS (src<TAB>trg lines)."""
    from ..apps.pair_files import train_from_file
    from ..apps.pair_filter import FilterOptions, check_filter_dir
    from ..pipeline import duration_text
    check_filter_dir(filter_dir)
    options = FilterOptions(hidden=hidden, random_negatives=random_negatives,
                            hard_negatives=hard_negatives, dev_share=dev_share, epochs=epochs,
                            patience=patience, learning_rate=learning_rate, seed=seed)
    encoders = side_loaders(model, src, trg, (column_name(src), column_name(trg)))
    pair_filter = train_from_file(pairs, src, trg, encoders, options, progress=not quiet)
    pair_filter.save(filter_dir)
    if not quiet:
        training = pair_filter.record["training"]
        dev = training["dev"]
        click.echo(f"trained on {training['pairs']} pairs in "
                   f"{duration_text(training['seconds'])} "
                   f"(best epoch {training['best_epoch']} of {training['epochs_run']}): dev "
                   f"accuracy {dev['accuracy']:.4f}, AUC {dev['auc']:.4f}; saved in {filter_dir}",
                   err=True)


@filter_group.command("score", epilog=examples(
    "laser filter score mined.tsv de-en.filter --src-lang de --trg-lang en -o scored.tsv",
    "laser filter score mined.tsv de-en.filter --src-lang de --trg-lang en --threshold 0.5 "
    "-o kept.tsv"))
@pair_sides
@click.argument("filter_dir", metavar="FILTER_DIR")
@click.option("--output", "-o", default="-", show_default=True,
              help="prob<TAB>src<TAB>trg lines, in input order ('-': standard output).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=None,
              help="Write only the pairs whose probability is above this (default: every pair).")
@click.option("--lid-filter", is_flag=True,
              help="Also drop the pairs whose source is not identified as --src-lang or whose "
                   "target is not identified as --trg-lang (language ID).")
@lid_model_option
@lid_min_prob_option
@model_options
@quiet_option
def score_command(pairs, src, trg, filter_dir, output, threshold, lid_filter, lid_model,
                  lid_min_prob, quiet, model):
    """Score the pairs of PAIRS (src<TAB>trg, or score<TAB>src<TAB>trg as `laser mine` writes)."""
    from ..apps.pair_files import score_file
    from ..apps.pair_filter import PairFilter
    from ..io.atomic import check_output_path
    from ..lid.check import LanguagePair
    check_output_path(output)
    languages = LanguagePair.of(src.lang, trg.lang, lid_model, lid_min_prob) if lid_filter \
        else None
    pair_filter = PairFilter.load(filter_dir)
    against = pair_filter.model.origin("the pair filter")
    encoders = tuple(None if side.embeddings else
                     encoder_loader(model, side.lang, against, column_name(side), side.model)
                     for side in (src, trg))
    report = score_file(pair_filter, pairs, output, src, trg, encoders, threshold,
                        progress=not quiet, languages=languages)
    if not quiet:
        dropped = (f" ({report.wrong_language} dropped by --lid-filter)" if languages else "")
        click.echo(f"scored {report.pairs} pairs, wrote {report.kept} to {output}{dropped}",
                   err=True)
