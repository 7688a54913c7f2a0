"""`laser mine --ray` and `laser knn build --ray` on a real local Ray runtime (2 CPUs): the
shard tasks on 2 workers give the single-process bytes (tests/distributed/
test_ray_cluster_mine.py: on a multi-node cluster that loses a node).

Workers have one core each, and BLAS rounds the last bit of a product by its thread count, so
the single-process references run on one thread too (`one_thread`)."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from threadpoolctl import threadpool_limits

from conftest import MINING_FIXTURES
from laser.cli import main

pytestmark = pytest.mark.slow

MAIN = MINING_FIXTURES / "main"  # 600 x 700 sentences, 64-d


def one_thread():
    """BLAS and OpenMP on one thread, as in a one-core worker."""
    return threadpool_limits(1)


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


def test_fast_scan_knn_build_on_ray_answers_every_search_as_one_process(ray_runtime, tmp_path):
    """A fast-scan index (`...x4fs`) on Ray is populated by one task in row order: merging shard
    indexes would append 256 rows (one list, shards of one block's 256 bytes) to a list of 256
    and FAISS's `merge_from` would write past its blocks (the process aborts)."""
    import faiss
    build = ("knn", "build", str(MAIN / "src.npy"), "--index", "IVF1,PQ16x4fs", "-q")
    with one_thread():
        _run(*build, "-o", str(tmp_path / "alone.index"))
    _run(*build, "-o", str(tmp_path / "ray.index"), "--ray", "local", "--shard-lines", "256")
    queries = np.load(MAIN / "src.npy")
    faiss.normalize_L2(queries)
    alone, ray = (faiss.read_index(str(tmp_path / name)) for name in ("alone.index", "ray.index"))
    assert ray.ntotal == alone.ntotal == len(queries)
    for found, expected in zip(ray.search(queries, 10), alone.search(queries, 10)):
        np.testing.assert_array_equal(found, expected)
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
    mined pairs as the rows in one file, exact and approximate."""
    for name, cuts in (("src", (0, 250, 250, 600)), ("trg", (0, 333, 700))):
        rows = np.load(MAIN / f"{name}.npy")
        for part, (start, stop) in enumerate(zip(cuts, cuts[1:])):
            np.save(tmp_path / f"{name}-{part}.npy", rows[start:stop])
    (tmp_path / "trg.list").write_text("trg-0.npy\ntrg-1.npy\n")
    texts = (str(MAIN / "src.txt"), str(MAIN / "trg.txt"))
    for search in ((), ("--index", "IVF8,Flat", "--nprobe", "3")):
        _run("mine", *texts, "--src-embeddings", str(MAIN / "src.npy"), "--trg-embeddings",
             str(MAIN / "trg.npy"), *search, "--unify", "-o", str(tmp_path / "one.tsv"),
             "--ray", "local", "--shard-lines", "150")
        _run("mine", *texts, "--src-embeddings", str(tmp_path / "src-*.npy"), "--trg-embeddings",
             f"@{tmp_path / 'trg.list'}", *search, "--unify", "-o", str(tmp_path / "many.tsv"),
             "--ray", "local", "--shard-lines", "150")
        assert (tmp_path / "many.tsv").read_bytes() == (tmp_path / "one.tsv").read_bytes()


def test_unified_text_on_ray_embeds_each_sentence_once_as_one_process(ray_runtime, tmp_path):
    """Lines repeated within and across a side's files: the embed shard tasks on Ray hold one
    row per distinct sentence and give the pairs of one process."""
    lines = ["Hello world.", "The book is on the table.", "Hello world.", "I like green tea.",
             "Where is the station?", "The book is on the table.", "It is raining today."]
    for side, cut, repeat in (("src", 3, "Hello world."), ("trg", 4, "I like green tea.")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "a.txt").write_text("\n".join(lines[:cut]) + "\n", encoding="utf-8")
        (tmp_path / side / "b.txt").write_text("\n".join([*lines[cut:], repeat]) + "\n",
                                               encoding="utf-8")
    sides = (str(tmp_path / "src"), str(tmp_path / "trg"), "--src-lang", "en", "--trg-lang",
             "en", "--unify", "--shard-lines", "2")
    with one_thread():
        _run("mine", *sides, "-o", str(tmp_path / "alone.tsv"))
    _run("mine", *sides, "-o", str(tmp_path / "ray.tsv"), "--work-dir", str(tmp_path / "work"),
         "--ray", "local")
    assert (tmp_path / "ray.tsv").read_bytes() == (tmp_path / "alone.tsv").read_bytes()
    for side in ("src", "trg"):
        rows = [len(np.load(path)) for path in (tmp_path / "work" / f"{side}-embed").glob("*.npy")]
        assert sorted(rows) == [1, 2, 2]  # 5 distinct sentences of 8 lines, in shards of 2
