"""tools/gpu/ end to end on this CPU: a `--teacher use` run's work folder is packed, the teacher
cache is rebuilt from the packed sentences and checked, the ids unpack to the very arrays
`laser train` wrote, and a variant trains from the packed init model and exports a LASER model."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import pytest

from laser.models.encoder import Encoder
from laser.models.files import ModelFiles

from test_training import read_log, tiny_corpus, train  # noqa: F401  (the shared fixture)

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "gpu"
PROBE_STEPS = 30  # tools/gpu/train.py's
TINY_RECIPE = {"embed_dim": 16, "hidden_size": 12, "num_layers": 1, "batch_size": 8, "lr": 1e-3,
               "warmup": 2, "alpha": 0.8, "teacher": "use", "distill_weight": 1.0,
               "topic_clusters": 4, "topic_band": 2, "pool_batches": 8, "dropout": 0.1}


def run_tool(name, *args):
    """The script as the GPU machine runs it: a fresh process with the checkout on its path."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    result = subprocess.run([sys.executable, str(TOOLS / f"{name}.py"), *map(str, args)],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


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
    run_tool("train", "run", packed / "data", gpu, "V", "--recipe", recipe,
             "--embedding-dropout", "0.3", "--max-length", "9", "--piece-sentences", "5",
             "--seconds", "0", "--device", "cpu", "--threads", "1")
    config = torch.load(gpu / "run-V" / "checkpoint.pt", weights_only=False)["config"]
    assert (config["embedding_dropout"], config["max_length"], config["piece_sentences"]) == \
        (0.3, 9, 5)  # the variant's
    log = read_log(gpu / "run-V")
    assert [record.get("stage") for record in log[:3]] == ["init", "head", "start"]
    # no time left after the timed steps: the schedule gets one step more, run by the Trainer
    assert log[-1]["event"] == "end" and log[-1]["step"] == PROBE_STEPS + 1
    assert float((gpu / "best-V.txt").read_text()) == min(
        r["average_error"] for r in log[3:] if "average_error" in r)
    model = Encoder(ModelFiles.from_dir(gpu / "out-V"))
    assert model.encode(["Guten Morgen."], "de").shape == (1, 24)
