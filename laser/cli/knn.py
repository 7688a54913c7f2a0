"""`laser knn build|search|info`, and how the search and mining commands get their embeddings."""
from __future__ import annotations

import functools
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional

import click
import numpy as np

from ..io.embeddings import NPY_MAGIC, open_embeddings
from ..errors import LaserError
from ..search.knn import (METRICS, ApproximateSearch, IndexMeta, Vectors, build_index, check_queries,
                   count_lines, embedded_text, embeddings_model, load_index, save_index, search,
                   write_neighbours)
from ..mining.mine import Corpus, corpus_vectors
from .common import load_encoder, main, model_options

OFFICIAL_DIM = 1024


def open_input_embeddings(path: str, dim: Optional[int], fp16: bool) -> np.ndarray:
    """Memory-map embeddings; a raw file without --dim is 1024-d, as in the official tools."""
    if dim is None and Path(path).is_file():
        with open(path, "rb") as f:
            if f.read(6) != NPY_MAGIC[:6]:
                dim = OFFICIAL_DIM
    return open_embeddings(path, dim, fp16)


def encoder_loader(model: dict) -> Callable:
    """The model of `model_options`, loaded on first use only."""
    return functools.cache(lambda: load_encoder(**model))


def work_dir(output: str) -> Optional[str]:
    """Where temporary embeddings go: beside the output file (stdout: the system temp dir)."""
    return None if output == "-" else os.path.dirname(os.path.abspath(output))


@contextmanager
def sentence_embeddings(text: Optional[str], embeddings: Optional[str], lang: Optional[str],
                        dim: Optional[int], fp16: bool, encoder: Callable, workdir: Optional[str],
                        side: str = "") -> Iterator[tuple[np.ndarray, str]]:
    """(matrix, name) of a sentence file's embeddings: precomputed, or made now from `lang`."""
    prefix = f"--{side}-" if side else "--"
    if embeddings:
        yield open_input_embeddings(embeddings, dim, fp16), embeddings
        return
    if not (text and lang):
        raise LaserError(f"{text or 'input'}: pass {prefix}embeddings, or {prefix}lang to embed "
                         "it with the model")
    with embedded_text(encoder(), text, lang, workdir) as matrix:
        yield matrix, text


@contextmanager
def bitext_vectors(src: Corpus, trg: Corpus, src_embeddings: Optional[str],
                   trg_embeddings: Optional[str], src_lang: Optional[str],
                   trg_lang: Optional[str], dim: Optional[int], fp16: bool, model: dict,
                   output: str) -> Iterator[tuple[Vectors, Vectors]]:
    """The rows of both sides of a bitext command (`bitext_inputs`), precomputed or made now."""
    encoder, workdir = encoder_loader(model), work_dir(output)
    with sentence_embeddings(src.path, src_embeddings, src_lang, dim, fp16, encoder, workdir,
                             "src") as (x_matrix, x_name), \
            sentence_embeddings(trg.path, trg_embeddings, trg_lang, dim, fp16, encoder, workdir,
                                "trg") as (y_matrix, y_name):
        yield corpus_vectors(src, x_matrix, x_name), corpus_vectors(trg, y_matrix, y_name)


def input_model(embeddings: Optional[str], lang: Optional[str], encoder: Callable) -> Optional[str]:
    """sha256 of the model behind some embeddings, when it is known."""
    return encoder().files.sha256() if lang else embeddings_model(embeddings)


dim_option = click.option("--dim", type=click.IntRange(min=1), default=None,
                          help="Dimension of raw headerless embeddings (default 1024; .npy files "
                               "carry their shape).")
fp16_option = click.option("--fp16", is_flag=True, help="Raw embeddings are float16.")
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
        approximate = ApproximateSearch(factory, nprobe, refine) if factory else None
        return command(*args, approximate=approximate, **kwargs)
    return wrapper


def bitext_inputs(command):
    """SRC and TRG text files with their embeddings or languages: the inputs of mine and score."""
    for option in reversed([
        click.argument("src_path", metavar="SRC"),
        click.argument("trg_path", metavar="TRG"),
        click.option("--src-embeddings", help="Embeddings of SRC, one row per line (.npy or raw)."),
        click.option("--trg-embeddings", help="Embeddings of TRG, one row per line (.npy or raw)."),
        click.option("--src-lang", help="Language of SRC; without --src-embeddings SRC is embedded now."),
        click.option("--trg-lang", help="Language of TRG; without --trg-embeddings TRG is embedded now."),
        dim_option, fp16_option]):
        command = option(command)
    return command


@main.group()
def knn() -> None:
    """Build, inspect and search FAISS indexes of sentence embeddings."""


@knn.command()
@click.argument("source", metavar="INPUT")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="Index file; its metadata goes to INDEX.json.")
@click.option("--index", "factory", default="Flat", show_default=True,
              help="FAISS factory string: Flat, IVF4096,Flat, IVF16384,PQ64, OPQ32,IVF16384,PQ32, "
                   "HNSW32...")
@click.option("--metric", type=click.Choice(METRICS), default="cosine", show_default=True,
              help="cosine: inner product of L2-normalised rows; ip: raw inner product; "
                   "l2: squared Euclidean distance.")
@click.option("--train-size", type=click.IntRange(min=1), default=None,
              help="Rows sampled to train IVF/PQ indexes (default: 64 per list, at least 50,000).")
@dim_option
@fp16_option
@click.option("--lang", "-l", help="INPUT is a text file in this language: embed it now.")
@model_options
@quiet_option
def build(source, output, factory, metric, train_size, dim, fp16, lang, quiet, **model):
    """Index the embeddings INPUT (.npy or raw), or the sentences of INPUT with --lang."""
    encoder = encoder_loader(model)
    with sentence_embeddings(source, None if lang else source, lang, dim, fp16, encoder,
                             work_dir(output)) as (matrix, name):
        vectors = Vectors(matrix, name=name, normalize=metric == "cosine")
        index = build_index(vectors, factory, metric, train_size, progress=not quiet)
    meta = IndexMeta(dim=vectors.dim, metric=metric, count=index.ntotal, factory=factory,
                     model=input_model(source, lang, encoder), source=os.path.abspath(source))
    save_index(index, meta, output)
    if not quiet:
        click.echo(f"indexed {meta.count} x {meta.dim} vectors ({factory}, {metric}) in {output}",
                   err=True)


@knn.command("search")
@click.argument("index_path", metavar="INDEX")
@click.argument("queries", metavar="QUERIES")
@click.option("--output", "-o", default="-", show_default=True,
              help="TSV: query_id rank target_id score [query_text target_text].")
@click.option("-k", type=click.IntRange(min=1), default=4, show_default=True,
              help="Neighbours per query.")
@click.option("--nprobe", type=click.IntRange(min=1), help="IVF lists visited per query.")
@click.option("--ef-search", type=click.IntRange(min=1), help="HNSW search breadth.")
@click.option("--exclude-self", is_flag=True,
              help="QUERIES are the indexed rows themselves: leave each one's own id out.")
@click.option("--query-text", help="Sentences of QUERIES, one a line, to add as a column.")
@click.option("--target-text",
              help="Sentences of the indexed rows, one a line, to add as a column.")
@dim_option
@fp16_option
@click.option("--lang", "-l", help="QUERIES is a text file in this language: embed it now.")
@model_options
@quiet_option
def search_command(index_path, queries, output, k, nprobe, ef_search, exclude_self, query_text,
                   target_text, dim, fp16, lang, quiet, **model):
    """The k nearest indexed rows of every query (embeddings, or sentences with --lang)."""
    query_text = query_text or (queries if lang else None)
    if bool(query_text) != bool(target_text):
        raise LaserError("text columns need both --query-text and --target-text")
    index, meta = load_index(index_path)
    encoder = encoder_loader(model)
    with sentence_embeddings(queries, None if lang else queries, lang, dim, fp16, encoder,
                             work_dir(output)) as (matrix, name):
        check_queries(index_path, meta, matrix.shape[1], input_model(queries, lang, encoder))
        if exclude_self and matrix.shape[0] != meta.count:
            raise LaserError(f"--exclude-self: {name} holds {matrix.shape[0]} rows but the index "
                             f"holds {meta.count}")
        _check_text(query_text, matrix.shape[0], "queries")
        _check_text(target_text, meta.count, "indexed rows")
        vectors = Vectors(matrix, name=name, normalize=meta.metric == "cosine")
        found = search(index, vectors, k, nprobe, ef_search, exclude_self, progress=not quiet)
    write_neighbours(output, found, query_text, target_text)


def _check_text(path: Optional[str], rows: int, what: str) -> None:
    if path and (lines := count_lines(path)) != rows:
        raise LaserError(f"{path} has {lines} lines but there are {rows} {what}")


@knn.command()
@click.argument("index_path", metavar="INDEX")
def info(index_path):
    """Print an index's metadata (dim, metric, count, factory, model) as JSON."""
    index, meta = load_index(index_path)
    record = dict(vars(meta), faiss_class=type(index).__name__, trained=bool(index.is_trained))
    click.echo(json.dumps(record, indent=2))
