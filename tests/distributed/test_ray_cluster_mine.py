"""`laser mine --ray` on a real multi-node Ray cluster on this machine (`ray.cluster_utils.Cluster`:
a head and two worker nodes of one CPU each), every stage's shard tasks on it, a worker node
removed while a stage runs: the output equals the single-process output with one BLAS thread.
From precomputed embeddings (the node lost in the k-NN, exact and approximate), and from raw
text in compressed files with duplicates across them, split and unified by tasks (one a file,
one a key partition), embedded with the shipped model (a worker node removed while the
embedding runs; the head has no CPU there, so that every task runs on a worker node that can
be removed) and mined with provenance and --lid-filter; a re-run after the loss computes only
the shard then removed.

The cluster runs in a child process (this file run as a script), apart from the local runtime
the other distributed tests share."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
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
from laser.io.sources import zstd_module  # noqa: E402

pytestmark = pytest.mark.slow

MAIN = MINING_FIXTURES / "main"  # 600 x 700 sentences, 64-d
RUNS = {"exact": [], "approximate": ["--index", "IVF8,Flat", "--nprobe", "3"]}
CORPUS = ROOT / "tests" / "data" / "corpus" / "dev"
MODEL = ROOT / "models" / "default"
COMPRESS = {".gz": lambda data: gzip.compress(data, mtime=0), ".xz": lzma.compress,
            ".zst": lambda data: zstd_module().compress(data), ".bz2": bz2.compress}


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


def _pairs(name: str, count: int) -> list[list[str]]:
    """The first `count` (foreign, English) pairs of a vendored corpus sample."""
    with gzip.open(CORPUS / f"{name}-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for _, line in zip(range(count), f)]


def _write(path: Path, lines: list[str]) -> None:
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    path.write_bytes(COMPRESS[path.suffix](data))


def raw_text(folder: Path) -> tuple[str, str]:
    """German in a directory and English behind a glob, 4 files a side, each compressed its
    own way; lines repeated across files, and French lines among the German with their English
    (pairs --lid-filter drops). Returns (SRC, TRG)."""
    german, french = _pairs("deu", 240), _pairs("fra", 20)
    de, en = [pair[0] for pair in german], [pair[1] for pair in german]
    (folder / "de").mkdir()
    (folder / "en").mkdir()
    _write(folder / "de" / "a.txt.gz", de[:80])
    _write(folder / "de" / "b.txt.xz", de[80:160] + de[:10])
    _write(folder / "de" / "c.txt.zst", de[160:] + de[100:105])
    _write(folder / "de" / "d.txt.bz2", [pair[0] for pair in french] + de[200:205])
    _write(folder / "en" / "part-1.txt.bz2", en[::2][::-1])
    _write(folder / "en" / "part-2.txt.gz", en[1::2] + en[:8])
    _write(folder / "en" / "part-3.txt.zst", [pair[1] for pair in french])
    _write(folder / "en" / "part-4.txt.xz", en[50:55])
    return str(folder / "de"), str(folder / "en" / "part-*")


def _mine_text(folder: Path, sides: tuple[str, str], output: str, work: str,
               *options: str) -> None:
    result = CliRunner().invoke(main, [
        "mine", *sides, "--src-lang", "de", "--trg-lang", "en", "--model", str(MODEL),
        "--unify", "--provenance", "--lid-filter", "--shard-lines", "20", "--work-dir",
        str(folder / work), "-o", str(folder / output), *options])
    assert result.exit_code == 0, result.output


def _remove_the_first_to_finish(cluster, nodes: list, stage: Path, seen: dict) -> None:
    """Remove the worker node that finished the stage's first task, once its manifest records
    it (the node's worker runs the next one by then); note how many were done at that time."""
    deadline, done = time.monotonic() + 300, {}
    while not done and time.monotonic() < deadline:
        time.sleep(0.01)
        try:
            done = json.loads((stage / "manifest.json").read_text())["done"]
        except (OSError, ValueError, KeyError):
            pass
    first = next(iter(done.values()), {}).get("node")
    node = next((node for node in nodes if node.node_id == first), nodes[0])
    cluster.remove_node(node)
    seen["done_at_removal"] = len(done)
    seen["removed"] = node.node_id


def text_on_cluster(folder: Path) -> None:
    """Mine raw text in one process with one thread, then on a cluster of a head without CPUs
    and two worker nodes, the worker node that embedded the first source shard removed right
    after it, then again there with one embedding shard deleted (a resumed run); what the test
    checks goes to seen.json."""
    import ray
    from ray.cluster_utils import Cluster
    from laser.distributed.work import pin_threads
    pin_threads(1)
    sides = raw_text(folder)
    _mine_text(folder, sides, "alone.tsv", "alone-stages")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
    ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR",
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        seen: dict = {"nodes": [node.node_id for node in nodes]}
        embed = folder / "stages" / "src-embed"
        killer = threading.Thread(target=_remove_the_first_to_finish,
                                  args=(cluster, nodes, embed, seen))
        killer.start()
        _mine_text(folder, sides, "ray.tsv", "stages", "--ray", "auto")
        killer.join()
        seen["embedded"] = json.loads((embed / "manifest.json").read_text())["done"]
        before = _stamps(embed)
        (embed / "embeddings-000003.npy").unlink()
        _mine_text(folder, sides, "resumed.tsv", "stages", "--ray", "auto")
        after = _stamps(embed)
        seen["recomputed"] = sorted(name for name in after if after[name] != before.get(name))
        (folder / "seen.json").write_text(json.dumps(seen))
    finally:
        ray.shutdown()
        cluster.shutdown()


def _stamps(stage: Path) -> dict[str, int]:
    return {path.name: path.stat().st_mtime_ns for path in stage.glob("embeddings-*.npy")}


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


def test_raw_text_on_a_cluster_with_a_node_lost_while_embedding_writes_the_one_process_bytes(
        tmp_path):
    pytest.importorskip("ray")
    child = subprocess.run([sys.executable, __file__, str(tmp_path), "text"],
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
    alone = (tmp_path / "alone.tsv").read_bytes()
    rows = [line.split("\t") for line in alone.decode("utf-8").splitlines()]
    assert len(rows) > 200 and {Path(row[3]).name for row in rows} == {
        "a.txt.gz", "b.txt.xz", "c.txt.zst"}  # the French of d.txt.bz2 dropped by --lid-filter
    assert (tmp_path / "ray.tsv").read_bytes() == alone
    assert (tmp_path / "resumed.tsv").read_bytes() == alone
    seen = json.loads((tmp_path / "seen.json").read_text())
    record = json.loads((tmp_path / "stages" / "src-split" / "split.json").read_text())
    shards = range(0, record["sentences"], 20)  # the embed tasks: 20 sentences each
    assert len(seen["embedded"]) == len(shards) > 10
    assert sum(task["rows"] for task in seen["embedded"].values()) == record["sentences"]
    assert len(shards) < len(record["shards"])  # of 20 lines: the repeats are not embedded
    assert seen.get("removed") in seen["nodes"], "no node was removed"
    assert seen.get("done_at_removal", len(shards)) < len(shards), \
        "the node was not removed while the embedding ran"
    ran_on = {record["node"] for record in seen["embedded"].values()}
    assert seen["removed"] in ran_on and ran_on == set(seen["nodes"]), "not embedded on the cluster"
    assert seen["recomputed"] == ["embeddings-000003.npy"]
    split = json.loads((tmp_path / "stages" / "src-split" / "manifest.json").read_text())["done"]
    assert sorted(name for name in split if name.startswith("read-")) == [
        f"read-{index:06d}" for index in range(4)]  # one task a file
    assert sum(name.startswith("resolve-") for name in split) == 16  # one a partition
    assert {record["node"] for record in split.values()} <= set(seen["nodes"])


if __name__ == "__main__":
    if sys.argv[2:] == ["text"]:
        text_on_cluster(Path(sys.argv[1]))
    else:
        on_cluster(Path(sys.argv[1]))
