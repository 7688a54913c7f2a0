"""Option groups shared by several commands (raw embedding layout, progress, approximate k-NN,
the two sides of a bitext) and what they say alike (sizes, kept work)."""
from __future__ import annotations

import functools
import os

import click

from ..errors import LaserError
from ..io.bad_lines import BAD_LINE_POLICIES, BadLines
from .common import human_size

dim_option = click.option("--dim", type=click.IntRange(min=1), default=None,
                          help="Dimension of raw headerless embeddings (default: from their .json "
                               "sidecar; .npy files carry their shape).")
fp16_option = click.option("--fp16", is_flag=True,
                           help="Raw embeddings are float16 (default: from their .json sidecar).")
quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bars.")


def approximate_options(command):
    """--index, --nprobe and --refine, passed on as one `approximate` (None: exact k-NN)."""
    @click.option("--index", "factory", default=None,
                  help="Approximate k-NN through a FAISS index of each side, e.g. IVF4096,Flat or "
                       "IVF1024,PQ64x4fs (default: exact search).")
    @click.option("--nprobe", type=click.IntRange(min=1), default=None,
                  help="IVF lists visited per query with --index.")
    @click.option("--refine", type=click.IntRange(min=1), default=4, show_default=True,
                  help="With --index: the index proposes refine x k candidates, re-scored with "
                       "exact cosines.")
    @functools.wraps(command)
    def wrapper(*args, factory, nprobe, refine, **kwargs):
        if not factory and nprobe is not None:
            raise LaserError("--nprobe goes with --index")
        approximate = None
        if factory:
            from ..search.approximate import ApproximateSearch  # not on `laser embed`'s start-up
            approximate = ApproximateSearch(factory, nprobe, refine)
        return command(*args, approximate=approximate, **kwargs)
    return wrapper


def side_model_options(command):
    """--src-model and --trg-model: each side's own model, instead of --model or the choice by
    its language."""
    for side in ("trg", "src"):
        command = click.option(
            f"--{side}-model", metavar="DIR|NAME",
            help=f"Model of the {side.upper()} side (as --model). Default: --model, else the "
                 "official model of its language when downloaded and in one embedding space with "
                 "the other side's, else the shipped model.")(command)
    return command


def bitext_inputs(command):
    """SRC and TRG text files with their embeddings or languages (the inputs of mine and score),
    passed on as `src`/`trg` EmbeddingSource values."""
    @click.argument("src_path", metavar="SRC")
    @click.argument("trg_path", metavar="TRG")
    @click.option("--src-embeddings", help="Embeddings of SRC, one row per line (.npy or raw).")
    @click.option("--trg-embeddings", help="Embeddings of TRG, one row per line (.npy or raw).")
    @click.option("--src-lang", help="Language of SRC; without --src-embeddings SRC is embedded now.")
    @click.option("--trg-lang", help="Language of TRG; without --trg-embeddings TRG is embedded now.")
    @side_model_options
    @dim_option
    @fp16_option
    @functools.wraps(command)
    def wrapper(*args, src_path, trg_path, src_embeddings, trg_embeddings, src_lang, trg_lang,
                src_model, trg_model, dim, fp16, **kwargs):
        from ..search.inputs import EmbeddingSource  # not on `laser embed`'s start-up
        src = EmbeddingSource(src_path, src_embeddings, src_lang, dim, fp16, "--src-", src_model)
        trg = EmbeddingSource(trg_path, trg_embeddings, trg_lang, dim, fp16, "--trg-", trg_model)
        return command(*args, src=src, trg=trg, **kwargs)
    return wrapper


def ray_options(command, staged: bool = False):
    """--ray ADDRESS with its --ray-workers, --shard-lines and --work-dir, passed on as one
    `distributed` RayOptions (None: run in this process). `staged` commands (laser mine) keep
    shards in a work directory with or without Ray: they take --shard-lines and --work-dir as
    `shard_lines` and `work_dir` of their own."""
    @click.option("--ray", "address", metavar="ADDRESS", default=None,
                  help="Run on Ray (the ray extra: pip install 'laser-toolkit[ray]'): 'local' "
                       "(this machine's cores), 'auto' (the running cluster) or ray://HOST:PORT. "
                       "Inputs, outputs and models must be on a path every "
                       "node sees (docs/distributed.md).")
    @click.option("--ray-workers", type=click.IntRange(min=1), default=None,
                  help=("With --ray: shard tasks running at once (default: as many as the "
                        "cluster's CPUs take)." if staged else
                        "With --ray: actors to start (default: one per CPU of the cluster)."))
    @click.option("--shard-lines", type=click.IntRange(min=1), default=None,
                  help=("Lines (sentences, to embed and search) per shard task (default: 100000)."
                        if staged else
                        "With --ray: lines (embeddings to search or index) per task "
                        "(default: 10000 lines, the embedding chunk; 32768 rows)."))
    @click.option("--work-dir", type=click.Path(file_okay=False), default=None,
                  help=("Keep every stage's shards here: the same command with the same "
                        "--work-dir resumes at the first missing shard, and recomputes only "
                        "what a changed input or option changes. Default: a hidden folder "
                        "beside the output, removed on success." if staged else
                        "With --ray: keep finished shards here (embed): the same command with "
                        "the same --work-dir resumes, computing only missing shards; temporary "
                        "indexes go here. Default: beside the output."))
    @functools.wraps(command)
    def wrapper(*args, address, ray_workers, shard_lines, work_dir, **kwargs):
        alone = (ray_workers,) if staged else (ray_workers, shard_lines, work_dir)
        if not address and any(alone):
            raise LaserError("--ray-workers goes with --ray" if staged else
                             "--ray-workers, --shard-lines and --work-dir go with --ray")
        distributed = None
        if address:
            from ..distributed.ray_runner import RayOptions, require_ray
            require_ray()
            distributed = RayOptions(address, ray_workers, shard_lines=shard_lines,
                                     work_dir=work_dir)
        if staged:
            kwargs.update(shard_lines=shard_lines, work_dir=work_dir)
        return command(*args, distributed=distributed, **kwargs)
    return wrapper


staged_ray_options = functools.partial(ray_options, staged=True)


lid_model_option = click.option(
    "--lid-model", type=click.Path(dir_okay=False), default=None,
    help="A fastText language-ID model (labels __label__xxx_Scrp: GlotLID, OpenLID, NLLB's "
         "LID-218) instead of the shipped one.")
lid_min_prob_option = click.option(
    "--lid-min-prob", type=click.FloatRange(0, 1), default=0.0, show_default=True, metavar="P",
    help="With --lid-filter: a side whose language is identified with a probability below P "
         "counts as not identified (its pair is dropped).")


def say_kept_work(root: str | os.PathLike) -> bool:
    """After an interrupt or an error: one line on stderr saying that the finished work in
    `root` was kept, how big it is, and how to resume or remove it; False (nothing said) when
    it holds none."""
    from ..distributed.workdir import directory_bytes, holds_finished_tasks
    if not (os.path.isdir(root) and holds_finished_tasks(root)):
        return False
    click.echo(f"laser: kept the finished work in {root} ({human_size(directory_bytes(root))}): "
               f"the same command resumes from it; rm -r {root} removes it", err=True)
    return True


BAD_LINE_HELP = {"fail": "fail: stop with an error naming the file and line",
                 "skip": "skip: drop such lines (counted, the first few named)",
                 "replace": "replace: decode them with U+FFFD for each bad byte"}


def bad_lines_option(*choices: str):
    """--bad-lines (fail by default, else one of `choices`: skip, replace) for lines that are
    not UTF-8 text, passed on as `bad_lines`, a BadLines that counts the lines it skips or
    replaces for the command to report (`say_bad_lines`)."""
    offered = ("fail", *(choices or BAD_LINE_POLICIES[1:]))

    def decorate(command):
        @click.option("--bad-lines", type=click.Choice(BAD_LINE_POLICIES), default="fail",
                      show_default=True,
                      help="Lines that are not UTF-8 text (invalid UTF-8, a NUL byte). "
                           + "; ".join(BAD_LINE_HELP[choice] for choice in offered) + ".")
        @functools.wraps(command)
        def wrapper(*args, bad_lines, **kwargs):
            if bad_lines not in offered:
                raise LaserError(f"--bad-lines {bad_lines}: not here, where every line keeps "
                                 f"its place (one row a line); choose {' or '.join(offered)}")
            return command(*args, bad_lines=BadLines(bad_lines, "--bad-lines", offered),
                           **kwargs)
        return wrapper
    return decorate


def say_bad_lines(bad_lines: BadLines) -> None:
    """One warning line on stderr of the lines skipped or replaced, if any."""
    if summary := bad_lines.summary():
        click.echo(f"laser: warning: {summary}", err=True)
