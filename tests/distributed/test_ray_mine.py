"""`laser mine --ray` and `laser knn build --ray` on a real local Ray runtime (2 CPUs): k-NN
from shards on 2 workers equals the single-process search bit for bit, exact and approximate.

Workers have one core each, and BLAS rounds the last bit of a product by its thread count, so
the single-process references run on one thread too (`one_thread`)."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from threadpoolctl import threadpool_limits

from conftest import MINING_FIXTURES
from laser.cli import main
from laser.distributed.knn import ray_knn, ray_neighbourhoods
from laser.distributed.ray_runner import RayOptions
from laser.io.embeddings import open_embeddings
from laser.mining.corpus import corpus_vectors, scan_corpus
from laser.mining.margins import Neighbourhoods
from laser.mining.mine import MineOptions, mine
from laser.search.approximate import ApproximateSearch, approximate_knn
from laser.search.exact import exact_knn
from laser.search.vectors import Vectors

pytestmark = pytest.mark.slow

MAIN = MINING_FIXTURES / "main"  # 600 x 700 sentences, 64-d
BLOCK = 64  # small blocks, so that 600 rows make 5 shards of 128 rows
TWO_WORKERS = RayOptions(workers=2, shard_lines=2 * BLOCK)


def one_thread():
    """BLAS and OpenMP on one thread, as in a one-core worker."""
    return threadpool_limits(1)


def _side(name: str, unify: bool):
    corpus = scan_corpus(str(MAIN / f"{name}.txt"), unify)
    return corpus, corpus_vectors(corpus, open_embeddings(MAIN / f"{name}.npy"), name)


def _same(found, expected) -> bool:
    return all(np.array_equal(a.sims, b.sims) and np.array_equal(a.ids, b.ids)
               for a, b in zip(found, expected))


def test_exact_knn_from_shards_equals_one_process(ray_runtime, k=4):
    x = Vectors(open_embeddings(MAIN / "src.npy"), "src")
    y = Vectors(open_embeddings(MAIN / "trg.npy"), "trg")
    with one_thread():
        expected = exact_knn(x, y, k, block=BLOCK)
    assert _same(ray_knn(x, y, k, TWO_WORKERS, block=BLOCK), expected)


def test_mined_pairs_from_shards_equal_one_process(ray_runtime):
    (src, x), (trg, y) = _side("src", True), _side("trg", True)
    options = MineOptions(k=4, threshold=1.0)
    with one_thread():
        alone = mine(src, trg, x, y, options,
                     search=lambda x, y: Neighbourhoods(*exact_knn(x, y, 4, block=BLOCK)))
    shards = mine(src, trg, x, y, options,
                  search=ray_neighbourhoods(TWO_WORKERS, 4, block=BLOCK))
    assert len(alone.score) > 100
    for field in ("src", "trg", "score"):
        assert np.array_equal(getattr(shards, field), getattr(alone, field))


def test_approximate_knn_from_shards_equals_one_process(ray_runtime, tmp_path):
    x = Vectors(open_embeddings(MAIN / "src.npy"), "src")
    y = Vectors(open_embeddings(MAIN / "trg.npy"), "trg")
    approximate = ApproximateSearch("IVF8,Flat", nprobe=3, refine=2)
    found = ray_knn(x, y, 4, TWO_WORKERS, approximate, scratch=str(tmp_path))
    with one_thread():
        expected = approximate_knn(x, y, 4, approximate)
    assert _same(found, expected)
    assert list(tmp_path.iterdir()) == []  # the shared indexes are gone


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_mine_and_knn_build_commands_on_ray_equal_one_process(ray_runtime, tmp_path):
    inputs = (str(MAIN / "src.txt"), str(MAIN / "trg.txt"), "--src-embeddings",
              str(MAIN / "src.npy"), "--trg-embeddings", str(MAIN / "trg.npy"), "--unify")
    with one_thread():
        _run("mine", *inputs, "-o", str(tmp_path / "alone.tsv"))
    _run("mine", *inputs, "-o", str(tmp_path / "ray.tsv"), "--ray", "local")
    assert (tmp_path / "ray.tsv").read_bytes() == (tmp_path / "alone.tsv").read_bytes()

    build = ("knn", "build", str(MAIN / "src.npy"), "--index", "IVF8,Flat", "-q")
    with one_thread():
        _run(*build, "-o", str(tmp_path / "alone.index"))
    _run(*build, "-o", str(tmp_path / "ray.index"), "--ray", "local", "--shard-lines", "150")
    assert (tmp_path / "ray.index").read_bytes() == (tmp_path / "alone.index").read_bytes()


def test_mine_on_ray_embeds_each_side_with_the_encoder_of_its_language(ray_runtime,
                                                                       official_models, tmp_path):
    """--ray follows the per-side choice of one process: Igbo with laser3-ibo_Latn, Amharic with
    laser3-amh_Ethi (LASER3 fixtures installed under those names), the same pairs."""
    text = tmp_path / "text.txt"
    text.write_text("Hello world.\nThe book is on the table!\nWhere is the station?\n"
                    "I like green tea.\n", encoding="utf-8")
    sides = (str(text), str(text), "--src-lang", "ig", "--trg-lang", "am", "--verbose")
    with one_thread():
        alone = CliRunner().invoke(main, ["mine", *sides, "-o", str(tmp_path / "alone.tsv")])
    on_ray = CliRunner().invoke(main, ["mine", *sides, "-o", str(tmp_path / "ray.tsv"),
                                       "--ray", "local"])
    assert alone.exit_code == 0 and on_ray.exit_code == 0, on_ray.output
    for result in (alone, on_ray):
        assert f" - {text}: laser3-ibo_Latn, space laser2" in result.stderr.splitlines()
        assert f" - {text}: laser3-amh_Ethi, space laser2" in result.stderr.splitlines()
    assert (tmp_path / "ray.tsv").read_bytes() == (tmp_path / "alone.tsv").read_bytes()


def test_embeddings_in_several_files_on_ray_equal_one_file(ray_runtime, tmp_path):
    """Each side's rows split over .npy files (one empty), given as a glob and as @LIST: the same
    k-NN and the same mined pairs as the rows in one file, exact and approximate."""
    for name, cuts in (("src", (0, 250, 250, 600)), ("trg", (0, 333, 700))):
        rows = np.load(MAIN / f"{name}.npy")
        for part, (start, stop) in enumerate(zip(cuts, cuts[1:])):
            np.save(tmp_path / f"{name}-{part}.npy", rows[start:stop])
    (tmp_path / "trg.list").write_text("trg-0.npy\ntrg-1.npy\n")
    x = Vectors(open_embeddings(tmp_path / "src-*.npy"), "src")
    y = Vectors(open_embeddings(f"@{tmp_path / 'trg.list'}"), "trg")
    with one_thread():
        expected = exact_knn(Vectors(open_embeddings(MAIN / "src.npy"), "src"),
                             Vectors(open_embeddings(MAIN / "trg.npy"), "trg"), 4, block=BLOCK)
    assert _same(ray_knn(x, y, 4, TWO_WORKERS, block=BLOCK), expected)

    approximate = ("--index", "IVF8,Flat", "--nprobe", "3", "--unify")
    texts = (str(MAIN / "src.txt"), str(MAIN / "trg.txt"))
    _run("mine", *texts, "--src-embeddings", str(MAIN / "src.npy"), "--trg-embeddings",
         str(MAIN / "trg.npy"), *approximate, "-o", str(tmp_path / "one.tsv"), "--ray", "local")
    _run("mine", *texts, "--src-embeddings", str(tmp_path / "src-*.npy"), "--trg-embeddings",
         f"@{tmp_path / 'trg.list'}", *approximate, "-o", str(tmp_path / "many.tsv"),
         "--ray", "local")
    assert (tmp_path / "many.tsv").read_bytes() == (tmp_path / "one.tsv").read_bytes()
