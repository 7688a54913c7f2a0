"""tools/gpu/ end to end on this CPU: a `--teacher use` run's work folder is packed, the teacher
cache is rebuilt from the packed sentences and checked, the ids unpack to the very arrays
`laser train` wrote, and a variant trains from the packed init model and exports a LASER model;
a `--teacher use+e5` run's e5 block travels in int8 parts and is joined to the rebuilt USE."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import pytest

from laser.encoder import Encoder
from laser.models.files import ModelFiles

from test_training import read_log, tiny_corpus, train  # noqa: F401  (the shared fixture)

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "gpu"
PROBE_STEPS = 30  # tools/gpu/train.py's
TINY_RECIPE = {"embed_dim": 16, "hidden_size": 12, "num_layers": 1, "batch_size": 8, "lr": 1e-3,
               "warmup": 2, "alpha": 0.8, "distill_weight": 1.0,
               "topic_clusters": 4, "topic_band": 2, "pool_batches": 8, "dropout": 0.1}


def run_tool(name, *args, fails=False):
    """The script as the GPU machine runs it: a fresh process with the checkout on its path;
    its stdout, or its stderr where it is to fail."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    command = ["bash", str(TOOLS / name)] if name.endswith(".sh") else \
        [sys.executable, str(TOOLS / f"{name}.py")]
    result = subprocess.run([*command, *map(str, args)], capture_output=True, text=True, env=env)
    assert (result.returncode != 0) == fails, result.stderr
    return result.stderr if fails else result.stdout


def train_variant(packed, gpu, recipe, *options):
    """A variant with no time beyond its timed steps; its checkpoint's config."""
    run_tool("train", "run", packed / "data", gpu, "V", "--recipe", recipe, *options,
             "--seconds", "0", "--device", "cpu", "--threads", "1")
    return torch.load(gpu / "run-V" / "checkpoint.pt", weights_only=False)["config"]


def test_a_recipe_that_is_neither_a_file_nor_a_shipped_name_is_refused_before_any_work(tmp_path):
    error = run_tool("train", "run", tmp_path / "no-data", tmp_path / "gw", "V", "--recipe", "v9",
                     fails=True)
    assert error.splitlines()[-1] == ("train.py: error: --recipe v9: no such file, nor a shipped "
                                      "recipe (v2)")
    assert not (tmp_path / "gw").exists()


@pytest.mark.slow
@pytest.mark.teacher
def test_a_packed_run_unpacks_to_the_same_data_and_trains_a_variant(tiny_corpus, tmp_path):
    work, packed, gpu = tmp_path / "work", tmp_path / "packed", tmp_path / "gw"
    train(tiny_corpus, work, tmp_path / "init", 2, "--teacher", "use", "--topic-clusters", "4",
          "--topic-band", "2", "--pool-batches", "8")
    run_tool("pack", work, tiny_corpus / "train", tmp_path / "init", packed,
             "--topic-clusters", "4")
    assert sorted(p.name for p in (packed / "data").iterdir()) == [
        "index.json", "init", "lengths.u16.xz", "tokens.u16.xz"]

    assert "min cosine 1.000000" in run_tool("teacher", packed / "teacher", gpu)
    cache = np.load(gpu / "teacher" / "use.f16.npy")
    np.testing.assert_allclose(cache, np.load(work / "teacher" / "use.f16.npy"), atol=1e-3)
    assert (gpu / "teacher.done").exists()

    run_tool("train", "unpack", packed / "data", gpu)
    for ids in (work / "ids-train").glob("*.npy"):
        unpacked = np.load(gpu / "ids-train" / ids.name)
        assert unpacked.dtype == np.load(ids).dtype and np.array_equal(unpacked, np.load(ids))
    assert len(list((gpu / "ids-dev").glob("*.npy"))) == len(list((work / "ids-dev").glob("*.npy")))

    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps(TINY_RECIPE))
    config = train_variant(packed, gpu, recipe, "--embedding-dropout", "0.3", "--max-length", "9",
                           "--piece-sentences", "5")
    assert (config["embedding_dropout"], config["max_length"], config["piece_sentences"],
            config["teacher"]) == (0.3, 9, 5, "use")  # the variant's, and the packed teacher
    log = read_log(gpu / "run-V")
    assert [record.get("stage") for record in log[:3]] == ["init", "head", "start"]
    # no time left after the timed steps: the schedule gets one step more, run by the Trainer
    assert log[-1]["event"] == "end" and log[-1]["step"] == PROBE_STEPS + 1
    assert float((gpu / "best-V.txt").read_text()) == min(
        r["average_error"] for r in log[3:] if "average_error" in r)
    model = Encoder(ModelFiles.from_dir(gpu / "out-V"))
    assert model.encode(["Guten Morgen."], "de").shape == (1, 24)


@pytest.mark.slow
@pytest.mark.teacher
def test_a_use_e5_run_carries_its_e5_block_in_parts_joined_to_the_rebuilt_use(tiny_corpus,
                                                                                tmp_path):
    work, packed, gpu = tmp_path / "work", tmp_path / "packed", tmp_path / "gw"
    train(tiny_corpus, work, tmp_path / "init", 2, "--teacher", "use+e5", "--topic-clusters", "4",
          "--topic-band", "2", "--pool-batches", "8")
    original = np.load(work / "teacher" / "use+e5.f16.npy").astype(np.float32)
    part_mib = 0.4 * len(original) * (384 + 4) / 2 ** 20  # three parts
    run_tool("pack", work, tiny_corpus / "train", tmp_path / "init", packed, "--topic-clusters",
             "4", "--teacher", "use+e5", "--part-mib", part_mib)
    parts = sorted(packed.glob("e5-*"))
    assert [p.name for p in parts] == ["e5-0", "e5-1", "e5-2"]

    run_tool("stash.sh", parts[0], gpu)
    assert "hold" in run_tool("teacher", packed / "teacher", gpu, fails=True)  # two parts missing
    for part in parts[1:]:
        run_tool("stash.sh", part, gpu)
    printed = run_tool("teacher", packed / "teacher", gpu)
    assert "USE against the packed rows" in printed and "carried e5 block against" in printed
    joined = np.load(gpu / "teacher" / "use+e5.f16.npy").astype(np.float32)
    assert joined.shape == original.shape == (len(original), 896)
    np.testing.assert_allclose(joined[:, :512], original[:, :512], atol=1e-3)
    step = np.abs(original[:, 512:]).max(1, keepdims=True) / 127  # int8, a scale per row
    assert (np.abs(joined[:, 512:] - original[:, 512:]) <= step / 2 + 1e-3).all()
    e5 = joined[:, 512:] / np.linalg.norm(joined[:, 512:], axis=1, keepdims=True)
    assert (np.einsum("ij,ij->i", e5, original[:, 512:]) > 0.999).all()  # unit vectors there

    run_tool("train", "unpack", packed / "data", gpu)
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps(TINY_RECIPE))
    assert train_variant(packed, gpu, recipe)["teacher"] == "use+e5"
    head = [r for r in read_log(gpu / "run-V") if r.get("stage") == "head"]
    assert head and head[0]["cosine_after"] > head[0]["cosine_before"]
    assert Encoder(ModelFiles.from_dir(gpu / "out-V")).encode(["Hallo."], "de").shape == (1, 24)
