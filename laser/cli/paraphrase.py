"""`laser paraphrase`: the nearest sentences of a monolingual index, less copies and near-copies."""
from __future__ import annotations

import click

from ..errors import LaserError
from .common import encoder_loader, examples, main, model_options
from .options import dim_option, fp16_option, quiet_option


@main.command(epilog=examples(
    "laser paraphrase corpus.index queries.en --lang en -k 4 -o paraphrases.tsv",
    "laser paraphrase corpus.index queries.en --embeddings queries.npy --max-overlap 0.5"))
@click.argument("index_path", metavar="INDEX")
@click.argument("queries", metavar="QUERIES", type=click.Path(dir_okay=False))
@click.option("--lang", "-l", help="Language of QUERIES; without --embeddings they are embedded "
                                   "now.")
@click.option("--embeddings", help="Embeddings of QUERIES, one row per line (.npy or raw).")
@click.option("--output", "-o", default="-", show_default=True,
              help="TSV: query_id rank target_id score query_text paraphrase_text ('-': "
                   "standard output).")
@click.option("-k", type=click.IntRange(min=1), default=4, show_default=True,
              help="Paraphrases per query (fewer when filtering leaves fewer).")
@click.option("--max-overlap", type=click.FloatRange(0.0, 1.0), default=0.8, show_default=True,
              help="Leave out near-copies: candidates whose word overlap with the query "
                   "(Jaccard index of lower-cased word sets) is above this.")
@click.option("--min-score", type=float, default=None,
              help="Leave out candidates scoring below this (cosine for cosine indexes).")
@click.option("--candidates", type=click.IntRange(min=1), default=4, show_default=True,
              help="Ask the index for this many times k neighbours, of which the filters keep "
                   "up to k.")
@click.option("--nprobe", type=click.IntRange(min=1), help="IVF lists visited per query.")
@click.option("--index-text", help="Sentences of the indexed rows, one a line (default: the "
                                   "text the index was built from).")
@dim_option
@fp16_option
@model_options
@quiet_option
def paraphrase(index_path, queries, lang, embeddings, output, k, max_overlap, min_score,
               candidates, nprobe, index_text, dim, fp16, quiet, model):
    """Paraphrases of each sentence of QUERIES: its nearest sentences in INDEX (built by
    `laser knn build TEXT --lang L`), leaving out exact copies and near-copies."""
    from ..apps.paraphrase import ParaphraseOptions, check_paraphrase_index, find_paraphrases
    from ..io.atomic import check_output_path
    from ..io.text import check_input, is_regular_file, read_lines
    from ..models.spaces import check_same_space
    from ..search.index import check_query_dim, load_index
    from ..search.inputs import EmbeddingSource, sentence_embeddings, work_dir
    from ..search.results import write_neighbours
    from ..search.vectors import Vectors
    check_input(queries)
    if not is_regular_file(queries):
        raise LaserError(f"{queries}: paraphrase reads QUERIES twice, so it must be a regular file")
    check_output_path(output)
    index, meta = load_index(index_path)
    index_text = check_paraphrase_index(index_path, meta, index_text)
    source = EmbeddingSource(queries, embeddings, lang, dim, fp16)
    encoder = None if embeddings else encoder_loader(model, lang, meta.origin(index_path), queries)
    options = ParaphraseOptions(k, max_overlap, min_score, candidates, nprobe)
    check_same_space(meta.origin(index_path), source.origin(encoder))
    with sentence_embeddings(source, encoder, work_dir(output)) as (matrix, name):
        check_query_dim(index_path, meta, matrix.shape[1])
        vectors = Vectors(matrix, name=name, normalize=meta.metric == "cosine")
        found = find_paraphrases(index, vectors, read_lines(queries), index_text, options,
                                 progress=not quiet)
    write_neighbours(output, found, queries, index_text)
    if not quiet:
        click.echo(f"wrote {int((found.ids >= 0).sum())} paraphrases of {len(found.ids)} "
                   f"sentences to {output}", err=True)
