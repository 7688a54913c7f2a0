"""`laser mine` in stages over a work directory: shards smaller than the inputs give the bytes
of one shard (the digests test_same_results.py recorded with the in-memory code), a re-run
resumes, a changed option recomputes only the stages after it, and bad shards are one line."""
import hashlib
import json

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.io.embeddings import open_embeddings
from laser.mining.corpus import corpus_vectors, scan_corpus
from laser.mining.mine import MineOptions, mine
from laser.mining.output import write_pairs
from laser.search.approximate import ApproximateSearch

from test_same_results import CORPUS, RECORDED, embeddings, mined_digest  # noqa: F401


@pytest.mark.parametrize("shard_lines", [150])
@pytest.mark.parametrize("name", sorted(RECORDED))
def test_small_shards_write_the_recorded_bytes(tmp_path, embeddings, name, shard_lines):
    options = [*RECORDED[name]["options"], "--shard-lines", str(shard_lines)]
    digest = mined_digest(tmp_path, CORPUS / "src.txt", CORPUS / "trg.txt",
                          embeddings / "src.npy", embeddings / "trg.npy", options)
    assert digest == RECORDED[name]["sha256"]


def _mine(folder, *options):
    result = CliRunner().invoke(main, [
        "mine", str(CORPUS / "src.txt"), str(CORPUS / "trg.txt"), "--src-embeddings",
        str(folder / "src.npy"), "--trg-embeddings", str(folder / "trg.npy"), "--unify",
        "--shard-lines", "256", "--work-dir", str(folder / "work"), "-o", str(folder / "out"),
        *options])
    return result


@pytest.fixture
def work(tmp_path, embeddings):
    for side in ("src", "trg"):
        (tmp_path / f"{side}.npy").write_bytes((embeddings / f"{side}.npy").read_bytes())
    assert _mine(tmp_path).exit_code == 0
    return tmp_path


def _stamps(folder, stage):
    return {path.name: path.stat().st_mtime_ns for path in (folder / "work" / stage).iterdir()
            if path.name != "manifest.json"}


def test_a_rerun_recomputes_only_missing_shards(work):
    expected = (work / "out").read_bytes()
    knn = _stamps(work, "knn")
    (work / "work" / "margins" / "fwd-000001.scores.npy").unlink()
    (work / "out").unlink()
    assert _mine(work).exit_code == 0
    assert (work / "out").read_bytes() == expected
    assert _stamps(work, "knn") == knn
    manifest = json.loads((work / "work" / "knn" / "manifest.json").read_text())
    assert sorted(manifest["done"]) == ["fwd-000000", "fwd-000001", "fwd-000002"]
    assert manifest["wall_s"] > 0 and manifest["cpu_s"] > 0


def test_a_changed_option_recomputes_only_the_stages_after_it(work, tmp_path):
    knn, margins = _stamps(work, "knn"), _stamps(work, "margins")
    assert _mine(work, "--threshold", "1.05").exit_code == 0
    assert (_stamps(work, "knn"), _stamps(work, "margins")) == (knn, margins)
    assert _mine(work, "--margin", "distance").exit_code == 0
    assert _stamps(work, "knn") == knn and _stamps(work, "margins") != margins


def test_a_changed_input_recomputes_its_side(work):
    split, knn = _stamps(work, "trg-split"), _stamps(work, "knn")
    rows = np.load(work / "src.npy")
    np.save(work / "src.npy", rows[::-1].copy())
    assert _mine(work).exit_code == 0
    assert _stamps(work, "trg-split") == split and _stamps(work, "knn") != knn


def test_a_shard_changed_between_stages_is_one_line_naming_it(work):
    shard = work / "work" / "trg-split" / "text-000000.txt"
    shard.write_bytes(shard.read_bytes()[:-5])
    result = _mine(work, "--threshold", "1.01")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith(f"laser: error: {shard}: changed")


def test_without_a_work_dir_the_shards_are_removed_on_success(tmp_path, embeddings):
    out = tmp_path / "mined.tsv"
    result = CliRunner().invoke(main, [
        "mine", str(CORPUS / "src.txt"), str(CORPUS / "trg.txt"), "--src-embeddings",
        str(embeddings / "src.npy"), "--trg-embeddings", str(embeddings / "trg.npy"),
        "--shard-lines", "300", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [path.name for path in tmp_path.iterdir()] == ["mined.tsv"]


@pytest.mark.parametrize("factory", ["IVF8,Flat", "IVF8,PQ8x4fs"])
def test_approximate_shards_write_what_one_process_finds_in_memory(tmp_path, embeddings, factory):
    """The index trained on the same sample and populated in its own task, searched by query
    shards: the pairs and scores of `mine` on whole arrays in memory."""
    src, trg = (scan_corpus(str(CORPUS / f"{side}.txt"), unify=True) for side in ("src", "trg"))
    x, y = (corpus_vectors(corpus, open_embeddings(embeddings / f"{side}.npy"), side)
            for corpus, side in ((src, "src"), (trg, "trg")))
    options = MineOptions(approximate=ApproximateSearch(factory, nprobe=3))
    write_pairs(str(tmp_path / "memory.tsv"), mine(src, trg, x, y, options), src, trg)
    digest = mined_digest(tmp_path, CORPUS / "src.txt", CORPUS / "trg.txt",
                          embeddings / "src.npy", embeddings / "trg.npy",
                          ["--unify", "--index", factory, "--nprobe", "3", "--shard-lines", "150"])
    assert digest == hashlib.sha256((tmp_path / "memory.tsv").read_bytes()).hexdigest()


def test_text_embedded_in_shards_mines_as_in_one(tmp_path):
    lines = ["Hello world.", "The book is on the table.", "Where is the station?",
             "I like green tea.", "It is raining today.", "My brother plays the piano.",
             "Hello world."]
    for side in ("src", "trg"):
        (tmp_path / f"{side}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    outputs = []
    for shard_lines in ("3", "100"):
        out = tmp_path / f"{shard_lines}.tsv"
        result = CliRunner().invoke(main, [
            "mine", str(tmp_path / "src.txt"), str(tmp_path / "trg.txt"), "--src-lang", "en",
            "--trg-lang", "en", "--unify", "--shard-lines", shard_lines,
            "--work-dir", str(tmp_path / f"work-{shard_lines}"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 6
    # the 6 distinct sentences (not the 7 lines) in shards of 3
    assert len(list((tmp_path / "work-3" / "src-embed").glob("embeddings-*.npy"))) == 2


# A re-run in a kept work directory after a run with the first options, with the second: each
# option that a stage's key depends on (split: --unify, --unify-by, --legacy-line-map,
# --shard-lines; knn: -k, --index, --nprobe, --refine; index: its factory; margins: --margin;
# runs: --retrieval, --candidates; retrieve: --mode, --threshold).
UNIFIED = ("--unify",)
RERUNS = {
    "retrieval-fwd": (UNIFIED, ("--unify", "--retrieval", "fwd")),
    "retrieval-bwd": (UNIFIED, ("--unify", "--retrieval", "bwd")),
    "retrieval-intersect": (UNIFIED, ("--unify", "--retrieval", "intersect")),
    "candidates": (UNIFIED, ("--unify", "--candidates")),
    "candidates-fwd": (("--unify", "--candidates"), ("--unify", "--candidates", "--retrieval",
                                                     "fwd")),
    "margin-distance": (UNIFIED, ("--unify", "--margin", "distance")),
    "margin-absolute": (UNIFIED, ("--unify", "--margin", "absolute")),
    "k": (UNIFIED, ("--unify", "-k", "2")),
    "threshold": (UNIFIED, ("--unify", "--threshold", "1.05")),
    "mode-search": (UNIFIED, ("--unify", "--mode", "search")),
    "mode-score": ((), ("--mode", "score")),
    "unify": ((), UNIFIED),
    "unify-by": (UNIFIED, ("--unify", "--unify-by", "normalized")),
    "legacy-line-map": (("--mode", "search"), ("--mode", "search", "--legacy-line-map")),
    "shard-lines": (UNIFIED, ("--unify", "--shard-lines", "100")),
    "index": (UNIFIED, ("--unify", "--index", "IVF8,Flat")),
    "index-factory": (("--unify", "--index", "IVF8,Flat"), ("--unify", "--index", "IVF4,Flat")),
    "nprobe": (("--unify", "--index", "IVF8,Flat"), ("--unify", "--index", "IVF8,Flat",
                                                      "--nprobe", "2")),
    "refine": (("--unify", "--index", "IVF8,PQ8x4fs"), ("--unify", "--index", "IVF8,PQ8x4fs",
                                                         "--refine", "1")),
}


def _mined(folder, work, embeddings, options) -> bytes:
    out = folder / "out"
    result = CliRunner().invoke(main, [
        "mine", str(CORPUS / "src.txt"), str(CORPUS / "trg.txt"), "--src-embeddings",
        str(embeddings / "src.npy"), "--trg-embeddings", str(embeddings / "trg.npy"),
        "--shard-lines", "256", "--work-dir", str(work), "-o", str(out), *options])
    assert result.exit_code == 0, result.output
    return out.read_bytes()


@pytest.mark.parametrize("case", sorted(RERUNS))
def test_a_rerun_with_a_changed_option_writes_what_a_fresh_run_writes(tmp_path, embeddings,
                                                                       case):
    before, after = RERUNS[case]
    first = _mined(tmp_path, tmp_path / "kept", embeddings, before)
    rerun = _mined(tmp_path, tmp_path / "kept", embeddings, after)
    fresh = _mined(tmp_path, tmp_path / "fresh", embeddings, after)
    assert rerun == fresh
    if case != "shard-lines":  # the same bytes whatever the shards (its stages' files differ)
        assert first != fresh, "the changed option must change the output to test anything"


def test_a_rerun_with_another_model_option_writes_what_a_fresh_run_writes(tmp_path):
    """The embed stage's key: the model's options (here --max-length, which cuts sentences)."""
    lines = ["Hello world.", "The book is on the table.", "Where is the station?",
             "I like green tea.", "It is raining today.", "My brother plays the piano."]
    for side, ordered in (("src", lines), ("trg", lines[::-1])):
        (tmp_path / f"{side}.txt").write_text("\n".join(ordered) + "\n", encoding="utf-8")

    def mined(work: str, *options: str) -> bytes:
        out = tmp_path / "out.tsv"
        result = CliRunner().invoke(main, [
            "mine", str(tmp_path / "src.txt"), str(tmp_path / "trg.txt"), "--src-lang", "en",
            "--trg-lang", "en", "--mode", "score", "--work-dir", str(tmp_path / work), "-o",
            str(out), *options])
        assert result.exit_code == 0, result.output
        return out.read_bytes()
    first = mined("kept")
    assert mined("kept", "--max-length", "2") == mined("fresh", "--max-length", "2") != first
