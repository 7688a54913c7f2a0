"""`laser knn build|search|info|graph`: FAISS indexes of sentence embeddings, k-NN graphs."""
from __future__ import annotations

import json
from contextlib import nullcontext
from typing import Optional

import click

from ..errors import LaserError
from ..search.index import METRICS
from .common import encoder_loader, examples, main, model_options
from .document_options import document_options, sentences_out_option
from .options import approximate_options, dim_option, fp16_option, quiet_option, ray_options


@main.group(epilog=examples(
    "laser knn build en.npy -o en.index",
    "laser knn search en.index de.npy -k 5 -o neighbours.tsv",
    "laser knn graph en.npy -k 10 -o en.graph.npz"))
def knn() -> None:
    """Build, inspect and search FAISS indexes of sentence embeddings; k-NN graphs."""


@knn.command(epilog=examples(
    "laser knn build en.npy -o en.index --index IVF4096,Flat",
    "laser knn build en.txt --lang en -o en.index --index HNSW32",
    "laser knn build en.raw --dim 1024 -o en.index --metric ip"))
@click.argument("source", metavar="INPUT")
@click.option("--output", "-o", required=True,
              help="Index file; its metadata goes to INDEX.json ('-': the index to standard "
                   "output, no metadata).")
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
@document_options()
@sentences_out_option
@ray_options
def build(source, output, factory, metric, train_size, dim, fp16, lang, quiet, documents,
          sentences_out, distributed, model):
    """Index the embeddings INPUT (.npy or raw), or the sentences of INPUT with --lang.

    INPUT may be several files, their rows (lines) one after another: a directory, a quoted
    glob or @LIST (a file of paths, one a line); text files may be compressed. With --lang,
    WARC/WET and JSON-lines files are documents: a row for each paragraph, or with
    --split-sentences each sentence (the index then records no text: --sentences-out keeps it).
    """
    from ..cleaning.sentences import sentence_input
    from ..io.outputs import check_outputs
    from ..io.sidecar import sidecar_outputs
    from ..io.sources import absolute_spec
    from ..io.terminal import check_binary_output
    from ..search.index import IndexMeta, build_index, save_index
    from ..search.inputs import EmbeddingSource, sentence_embeddings, work_dir
    from ..search.vectors import Vectors
    check_outputs({"--output": output, **sidecar_outputs("--output", output),
                   "--sentences-out": sentences_out})
    check_binary_output(output, "FAISS indexes")
    encoder = encoder_loader(model, lang, source=source) if lang else None
    if not lang and (documents.split or sentences_out):
        raise LaserError("--split-sentences and --sentences-out go with --lang (text input)")
    with sentence_input(source, documents.in_language(lang), work_dir(output),
                        sentences_out) if lang else nullcontext(source) as sentences:
        inputs = EmbeddingSource(sentences, None if lang else source, lang, dim, fp16)
        with sentence_embeddings(inputs, encoder, work_dir(output)) as (matrix, name):
            vectors = Vectors(matrix, name=name, normalize=metric == "cosine")
            if distributed:
                from ..distributed.knn import ray_build_index
                index = ray_build_index(vectors, factory, metric, train_size, distributed)
            else:
                index = build_index(vectors, factory, metric, train_size, progress=not quiet)
        origin = inputs.origin(encoder)
    text = absolute_spec(source) if lang and sentences == source else None
    meta = IndexMeta(dim=vectors.dim, metric=metric, count=index.ntotal, factory=factory,
                     model=origin.sha256, source=absolute_spec(source), text=text,
                     model_name=origin.model, model_space=origin.space)
    save_index(index, meta, output)
    if not quiet:
        click.echo(f"indexed {meta.count} x {meta.dim} vectors ({factory}, {metric}) in {output}",
                   err=True)


@knn.command("search", epilog=examples(
    "laser knn search en.index de.npy -k 5 -o neighbours.tsv",
    "laser knn search en.index queries.fr --lang fr -k 3",
    "laser knn search en.index en.npy --exclude-self --nprobe 32"))
@click.argument("index_path", metavar="INDEX")
@click.argument("queries", metavar="QUERIES")
@click.option("--output", "-o", default="-", show_default=True,
              help="TSV: query_id rank target_id score [query_text target_text] ('-': standard "
                   "output).")
@click.option("-k", type=click.IntRange(min=1), default=4, show_default=True,
              help="Neighbours per query.")
@click.option("--nprobe", type=click.IntRange(min=1), help="IVF lists visited per query.")
@click.option("--ef-search", type=click.IntRange(min=1), help="HNSW search breadth.")
@click.option("--exclude-self", is_flag=True,
              help="QUERIES are the indexed rows themselves: leave each one's own id out.")
@click.option("--query-text", help="Sentences of QUERIES, one a line, to add as a column "
                                   "(default with --lang: QUERIES itself).")
@click.option("--target-text", help="Sentences of the indexed rows, one a line, to add as a "
                                    "column (default: those the index was built from, if any).")
@dim_option
@fp16_option
@click.option("--lang", "-l", help="QUERIES is a text file in this language: embed it now, with "
                                   "--model, else a model of the index's embedding space chosen "
                                   "by the language (its official model when downloaded).")
@model_options
@quiet_option
def search_command(index_path, queries, output, k, nprobe, ef_search, exclude_self, query_text,
                   target_text, dim, fp16, lang, quiet, model):
    """The k nearest indexed rows of every query (embeddings, or sentences with --lang)."""
    from ..io.atomic import check_output_path
    from ..models.spaces import check_same_space
    from ..search.index import check_query_dim, load_index, search
    from ..search.inputs import EmbeddingSource, sentence_embeddings, work_dir
    from ..search.results import write_neighbours
    from ..search.vectors import Vectors
    check_output_path(output)
    index, meta = load_index(index_path)
    query_text, target_text = _text_columns(query_text, target_text, queries if lang else None,
                                            meta.text)
    encoder = encoder_loader(model, lang, meta.origin(index_path), queries) if lang else None
    inputs = EmbeddingSource(queries, None if lang else queries, lang, dim, fp16)
    check_same_space(meta.origin(index_path), inputs.origin(encoder))
    with sentence_embeddings(inputs, encoder, work_dir(output)) as (matrix, name):
        check_query_dim(index_path, meta, matrix.shape[1])
        if exclude_self and matrix.shape[0] != meta.count:
            raise LaserError(f"--exclude-self: {name} holds {matrix.shape[0]} rows but the index "
                             f"holds {meta.count}")
        _check_text(query_text, matrix.shape[0], "queries")
        _check_text(target_text, meta.count, "indexed rows")
        vectors = Vectors(matrix, name=name, normalize=meta.metric == "cosine")
        found = search(index, vectors, k, nprobe, ef_search, exclude_self, progress=not quiet)
    write_neighbours(output, found, query_text, target_text)


def _text_columns(query_text: Optional[str], target_text: Optional[str],
                  implied_query_text: Optional[str],
                  indexed_text: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """The sentence files of both text columns, or neither: explicit ones, else the query file
    of --lang and the text the index was built from."""
    if query_text and not (target_text or indexed_text):
        raise LaserError("--query-text needs --target-text: the index was built from embeddings, "
                         "so it records no sentences")
    if target_text and not (query_text or implied_query_text):
        raise LaserError("--target-text needs --query-text (or QUERIES as text with --lang)")
    query_text = query_text or implied_query_text
    target_text = target_text or indexed_text
    if not (query_text and target_text):
        return None, None
    return query_text, target_text


def _check_text(path: Optional[str], rows: int, what: str) -> None:
    from ..io.text import count_lines
    if path and (lines := count_lines(path)) is not None and lines != rows:
        raise LaserError(f"{path} has {lines} lines but there are {rows} {what}")


@knn.command(epilog=examples("laser knn info en.index"))
@click.argument("index_path", metavar="INDEX")
def info(index_path):
    """Print an index's metadata (dim, metric, count, factory, model) as JSON."""
    from ..search.index import load_index
    index, meta = load_index(index_path)
    record = dict(vars(meta), faiss_class=type(index).__name__, trained=bool(index.is_trained))
    click.echo(json.dumps(record, indent=2))


@knn.command(epilog=examples(
    "laser knn graph en.npy -k 10 -o en.graph.npz",
    "laser knn graph en.txt --lang en -k 5 -o en.graph.npz",
    "laser knn graph big.npy -k 10 --index IVF4096,Flat --nprobe 64 -o big.graph.npz"))
@click.argument("source", metavar="INPUT")
@click.option("--output", "-o", required=True,
              help="Graph file: a scipy.sparse CSR matrix (.npz), metadata in OUTPUT.json ('-': "
                   "the graph to standard output, no metadata).")
@click.option("-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Neighbours per row.")
@approximate_options
@dim_option
@fp16_option
@click.option("--lang", "-l", help="INPUT is a text file in this language: embed it now.")
@model_options
@quiet_option
def graph(source, output, k, approximate, dim, fp16, lang, quiet, model):
    """The k-NN graph of the embeddings INPUT (or the sentences of INPUT with --lang): row i holds
    the k rows most similar to row i (cosine, i itself left out) and their scores."""
    from ..apps.graph import knn_graph, save_graph
    from ..io.outputs import check_outputs
    from ..io.sidecar import sidecar_outputs
    from ..io.sources import absolute_spec
    from ..io.terminal import check_binary_output
    from ..search.inputs import EmbeddingSource, sentence_embeddings, work_dir
    from ..search.vectors import Vectors
    check_outputs({"--output": output, **sidecar_outputs("--output", output)})
    check_binary_output(output, "k-NN graphs (.npz)")
    inputs = EmbeddingSource(source, None if lang else source, lang, dim, fp16)
    encoder = encoder_loader(model, lang, source=source) if lang else None
    origin = inputs.origin(encoder)
    with sentence_embeddings(inputs, encoder, work_dir(output)) as (matrix, name):
        result = knn_graph(Vectors(matrix, name=name), k, approximate, progress=not quiet)
    save_graph(result, output, dict(
        rows=result.shape[0], k=k, edges=int(result.nnz), metric="cosine",
        search=approximate.factory if approximate else "exact", source=absolute_spec(source),
        model=origin.sha256, model_name=origin.model, model_space=origin.space))
    if not quiet:
        click.echo(f"wrote the {k}-NN graph of {result.shape[0]} rows ({result.nnz} edges) to "
                   f"{output}", err=True)
