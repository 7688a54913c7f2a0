"""`laser train`: train a LASER-format encoder on a folder of XXX-eng.tsv(.gz) pair files."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import LaserError
from ..training.config import BPEConfig, TrainConfig, check_bf16, read_recipe, recipe_file
from .common import examples, hold_work_dir_until_done, main

DIR = click.Path(file_okay=False, path_type=Path)
OPTION_OF_FIELD = {"num_layers": "layers", "init": "init_dir"}  # TrainConfig field -> parameter


def apply_recipe(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--recipe: the file's settings become the defaults of the other options."""
    if value is None:
        return None
    path = recipe_file(value)
    options = {p.name for p in ctx.command.params}
    defaults = {}
    for field, setting in read_recipe(path).items():
        option = OPTION_OF_FIELD.get(field, field)
        if option not in options:
            raise LaserError(f"{path}: {field} is not a setting of laser train")
        defaults[option] = setting
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return value


@main.command(epilog=examples(
    "laser train corpus/ -o my-model --work-dir work",
    "laser train corpus/ -o my-model --work-dir work --steps 36000   # resume, longer schedule",
    "laser train corpus/ -o v2b --work-dir w2 --init default --recipe v2 --seed 10"
    "   # one more step of the shipped model's recipe, from it"))
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--output", "-o", type=DIR, required=True,
              help="Model directory to write (NAME.pt, NAME.fcodes, NAME.fvocab).")
@click.option("--work-dir", type=DIR, required=True,
              help="Caches and the resumable checkpoint; rerun with it to resume.")
@click.option("--name", default="laser", show_default=True, help="File name stem of the model.")
@click.option("--recipe", metavar="FILE|NAME", callback=apply_recipe, is_eager=True,
              expose_value=False,
              help="Take the settings of this recipe (a JSON object of settings, or the name of "
                   "a shipped one: v2); options given here win over it.")
@click.option("--dev", "dev_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Dev pair files (default: CORPUS/dev when CORPUS has train/ and dev/).")
@click.option("--languages", help="Comma-separated languages to train on (default: all).")
@click.option("--merges", type=click.IntRange(min=1), default=BPEConfig.merges, show_default=True,
              help="Joint BPE merge operations.")
@click.option("--bpe-alpha", type=click.FloatRange(0, 1), default=BPEConfig.alpha, show_default=True,
              help="BPE language balance: weight ~ size**alpha.")
@click.option("--alpha", type=click.FloatRange(0, 1), default=TrainConfig.alpha, show_default=True,
              help="Training language sampling: probability ~ size**alpha.")
@click.option("--embed-dim", type=click.IntRange(min=1), default=TrainConfig.embed_dim, show_default=True)
@click.option("--hidden-size", type=click.IntRange(min=1), default=TrainConfig.hidden_size, show_default=True,
              help="LSTM units per direction (embeddings are twice this).")
@click.option("--layers", type=click.IntRange(min=1), default=TrainConfig.num_layers, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=2), default=TrainConfig.batch_size, show_default=True,
              help="Pairs per batch (the in-batch negatives).")
@click.option("--topic-clusters", type=click.IntRange(min=0), default=TrainConfig.topic_clusters,
              show_default=True,
              help="Harder in-batch negatives: cluster the English sides by the --teacher's "
                   "embeddings into this many topics and batch pairs of a topic together "
                   "(0: batches by length only).")
@click.option("--topic-band", type=click.IntRange(min=1), default=TrainConfig.topic_band,
              show_default=True,
              help="With --topic-clusters: this many batches of length-sorted pairs are "
                   "regrouped by topic together (more: harder batches, more padding).")
@click.option("--pool-batches", type=click.IntRange(min=1), default=TrainConfig.pool_batches,
              show_default=True,
              help="Batches drawn and sorted by length together: a larger pool gives each batch "
                   "(and each --topic-band) a narrower range of lengths, so less padding.")
@click.option("--chunk-sentences", type=click.IntRange(min=0),
              default=TrainConfig.chunk_sentences, show_default=True,
              help="Embed each batch this many sentences at a time (a gradient cache: the "
                   "whole batch's gradients for one extra forward pass, holding one chunk's "
                   "activations), so that a larger --batch-size fits; 0: all at once.")
@click.option("--piece-sentences", type=click.IntRange(min=0), default=None,
              help="Run each batch through the network in length-sorted pieces of this many "
                   "sentences, each padded only to its own longest (the same embeddings with "
                   "less padding); 0: the whole batch as one piece.  [default: 256 on a CPU, "
                   "0 on a GPU]")
@click.option("--dropout", type=click.FloatRange(0, 1, max_open=True), default=TrainConfig.dropout,
              show_default=True,
              help="Dropout on the input of each BiLSTM layer (token embeddings and lower "
                   "layers' outputs) while training; the exported model has none.")
@click.option("--embedding-dropout", type=click.FloatRange(0, 1, max_open=True), default=None,
              help="Dropout on the token embeddings instead of --dropout's rate (0: only the "
                   "upper layers' inputs get dropout).  [default: --dropout]")
@click.option("--steps", type=click.IntRange(min=1), default=TrainConfig.steps, show_default=True,
              help="Total optimiser steps (raise it and rerun to train longer).")
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=TrainConfig.lr,
              show_default=True)
@click.option("--warmup", type=click.IntRange(min=1), default=TrainConfig.warmup, show_default=True)
@click.option("--scale", type=float, default=TrainConfig.scale, show_default=True,
              help="Softmax scale of the cosine similarities.")
@click.option("--margin", type=float, default=TrainConfig.margin, show_default=True,
              help="Additive margin subtracted from the true pair's cosine.")
@click.option("--max-length", type=click.IntRange(min=2), default=TrainConfig.max_length, show_default=True,
              help="Training sentences are cut to this many tokens.")
@click.option("--bow-steps", type=click.IntRange(min=0), default=TrainConfig.bow_steps, show_default=True,
              help="Bag-of-subwords steps that align the token embeddings first (0: none).")
@click.option("--bow-lr", type=click.FloatRange(min=0, min_open=True), default=TrainConfig.bow_lr,
              show_default=True)
@click.option("--init", "init_dir", metavar="DIR|NAME",
              help="Start from this trained model (a LASER1-family directory, or `default`: the "
                   "shipped model): its BPE files, its "
                   "token embeddings and its LSTM layers (a deeper network adds fresh layers on "
                   "top; a smaller --hidden-size keeps each layer's most useful units). Replaces "
                   "the bag-of-subwords stage.")
@click.option("--grow-vocab", is_flag=True,
              help="With --init: learn --merges joint BPE merges on CORPUS (more than the init "
                   "model has) instead of taking its BPE; each token it lacks starts at the mean "
                   "embedding of the pieces its own BPE cuts it into.")
@click.option("--teacher", default=None,
              help="Distil from this teacher: use = Universal Sentence Encoder multilingual v3, "
                   "e5 = multilingual-e5-small (both need the `train` extra), or a trained LASER "
                   "model (a directory or a name) whose English embeddings the student learns; "
                   "join parts with + (use+e5).")
@click.option("--distill-weight", type=click.FloatRange(min=0), default=TrainConfig.distill_weight,
              show_default=True, help="Weight of the distillation loss beside the ranking loss.")
@click.option("--eval-every", type=click.IntRange(min=1), default=TrainConfig.eval_every, show_default=True)
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=TrainConfig.checkpoint_every,
              show_default=True, help="Steps between resumable checkpoints.")
@click.option("--eval-languages", type=click.IntRange(min=1), default=20, show_default=True,
              help="Dev xsim over this many languages with the most training pairs.")
@click.option("--keep", type=click.Choice(["best", "last"]), default="best", show_default=True,
              help="The model --output receives: the best on the dev evaluation, or the last "
                   "step's (when the dev languages do not show what the run is for).")
@click.option("--seed", type=int, default=TrainConfig.seed, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Processes for tokenisation and BPE.")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Torch threads (default: torch's choice).")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N.")
@click.option("--bf16", is_flag=True,
              help="Run the forward pass in bfloat16 (torch autocast; weights, loss and optimiser "
                   "stay float32): 2.1-2.6x faster on a CPU with AMX; CPU only "
                   "(docs/training.md).")
def train(corpus, output, work_dir, name, dev_dir, languages, merges, bpe_alpha, alpha, embed_dim,
          hidden_size, layers, batch_size, topic_clusters, topic_band, pool_batches,
          chunk_sentences, piece_sentences, dropout, embedding_dropout, steps, lr, warmup, scale,
          margin, max_length, bow_steps, bow_lr, init_dir, grow_vocab, teacher, distill_weight,
          eval_every, checkpoint_every, eval_languages, keep, seed, workers, threads, device,
          bf16):
    """Train an encoder on CORPUS (a folder of XXX-eng.tsv.gz, or one with train/ and dev/).

    The best model on the dev split (cosine xsim error averaged over both directions and the
    --eval-languages largest languages), or with --keep last the last step's, is written to
    --output in the official LASER format.
    """
    from ..encoder import check_device
    from ..training.run import set_threads, train as run_training
    from ..training.teachers import check_teacher
    check_bf16(bf16, device)
    check_device(device)
    if teacher:
        check_teacher(teacher)
    set_threads(threads)
    hold_work_dir_until_done(work_dir)
    config = TrainConfig(embed_dim=embed_dim, hidden_size=hidden_size, num_layers=layers,
                         batch_size=batch_size, steps=steps, lr=lr, warmup=warmup, scale=scale,
                         margin=margin, max_length=max_length, alpha=alpha, seed=seed,
                         bow_steps=bow_steps, bow_lr=bow_lr, eval_every=eval_every,
                         checkpoint_every=checkpoint_every, teacher=teacher or "",
                         distill_weight=distill_weight, init=str(init_dir or ""), bf16=bf16,
                         topic_clusters=topic_clusters, topic_band=topic_band,
                         pool_batches=pool_batches, chunk_sentences=chunk_sentences,
                         piece_sentences=piece_sentences,
                         dropout=dropout, embedding_dropout=embedding_dropout)
    bpe = BPEConfig(merges, bpe_alpha, grow=grow_vocab)
    trainer = run_training(corpus, output, work_dir, config, bpe,
                           languages.split(",") if languages else None, dev_dir, eval_languages,
                           workers=workers, device=device, name=name,
                           teacher_threads=threads or 1, keep_last=keep == "last")
    if not trainer.dev:
        click.echo(f"step {trainer.step}: no dev evaluation; the last step's model in {output}",
                   err=True)
        return
    kept = "the last step's model" if keep == "last" else "model"
    click.echo(f"step {trainer.step}: best dev xsim error {100 * trainer.best_error:.2f}%; "
               f"{kept} in {output}", err=True)
