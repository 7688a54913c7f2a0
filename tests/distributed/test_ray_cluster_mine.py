"""`laser mine --ray` on a real multi-node Ray cluster on this machine (`ray.cluster_utils.Cluster`:
a head and two worker nodes of one CPU each), every stage's shard tasks on it, a worker node
removed while the k-NN stage runs: the output equals the single-process output with one BLAS
thread, exact and approximate.

The cluster runs in a child process (this file run as a script), apart from the local runtime
the other distributed tests share."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import MINING_FIXTURES  # noqa: E402
from laser.cli import main  # noqa: E402

pytestmark = pytest.mark.slow

MAIN = MINING_FIXTURES / "main"  # 600 x 700 sentences, 64-d
RUNS = {"exact": [], "approximate": ["--index", "IVF8,Flat", "--nprobe", "3"]}


def _mine(output: Path, *options: str) -> None:
    result = CliRunner().invoke(main, [
        "mine", str(MAIN / "src.txt"), str(MAIN / "trg.txt"), "--src-embeddings",
        str(MAIN / "src.npy"), "--trg-embeddings", str(MAIN / "trg.npy"), "--unify",
        "--shard-lines", "100", "-o", str(output), *options])
    assert result.exit_code == 0, result.output


def _remove_when_running(cluster, node, stage: Path, removed: list) -> None:
    """Remove `node` once the stage has finished a task (so that others are in flight)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if json.loads((stage / "manifest.json").read_text()).get("done"):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    cluster.remove_node(node)
    removed.append(node)


def on_cluster(folder: Path) -> None:
    """Mine both ways on a 3-node cluster, a worker node removed during the exact k-NN."""
    import ray
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
    ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR",
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        removed: list = []
        work = folder / "exact-stages"
        killer = threading.Thread(target=_remove_when_running,
                                  args=(cluster, nodes[0], work / "knn", removed))
        killer.start()
        _mine(folder / "exact-ray.tsv", "--ray", "auto", "--work-dir", str(work))
        killer.join()
        assert removed, "no node was removed"
        _mine(folder / "approximate-ray.tsv", "--ray", "auto", *RUNS["approximate"])
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_every_stage_on_a_cluster_with_a_node_lost_writes_the_one_process_bytes(tmp_path):
    pytest.importorskip("ray")
    with threadpool_limits(1):
        for name, options in RUNS.items():
            _mine(tmp_path / f"{name}-alone.tsv", *options)
    child = subprocess.run([sys.executable, __file__, str(tmp_path)], capture_output=True,
                           text=True, timeout=600)
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
    for name in RUNS:
        alone = (tmp_path / f"{name}-alone.tsv").read_bytes()
        assert len(alone.splitlines()) > 100
        assert (tmp_path / f"{name}-ray.tsv").read_bytes() == alone
    manifest = json.loads((tmp_path / "exact-stages" / "knn" / "manifest.json").read_text())
    assert len(manifest["done"]) > 1 and manifest["wall_s"] > 0 and manifest["cpu_s"] > 0


if __name__ == "__main__":
    on_cluster(Path(sys.argv[1]))
