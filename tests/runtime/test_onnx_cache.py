"""BiLSTMs on the CPU run in ONNX Runtime from a graph cached per checkpoint
(`laser.runtime.onnx_cache`): equal to torch, loaded later without torch, rebuilt when the file is
bad or the checkpoint changes; `runtime` picks or refuses what runs the network."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch

from laser.errors import LaserError
from laser.encoder import Encoder, check_runtime
from laser.runtime.onnx_cache import GRAPH_VERSION, METADATA_KEY, graph_path
from laser.runtime.onnx_graph import IR_VERSION
from laser.runtime.onnx_runtime import OnnxEncoder

from conftest import PARITY, PARITY3, PARITY_MODEL, ROOT, read_fixture_lines

LINES = read_fixture_lines(PARITY / "inputs" / "batching_fr.txt")[:40]
# Embeds LINES in a fresh interpreter; prints the heavy packages it imported.
PROBE = """
import json, sys
import numpy as np
from laser.encoder import Encoder, check_runtime
encoder = Encoder.load(sys.argv[1])
np.save(sys.argv[2], encoder.encode(json.loads(sys.argv[3]), "fr"))
print(json.dumps([encoder.runtime, sorted(m for m in ("torch", "onnx") if m in sys.modules)]))
"""


@pytest.fixture(scope="module")
def torch_rows():
    return Encoder.load(str(PARITY_MODEL), runtime="torch").encode(LINES, "fr")


def test_the_cpu_default_is_the_cached_fp32_graph_equal_to_torch(torch_rows):
    encoder = Encoder.load(str(PARITY_MODEL))
    assert isinstance(encoder.model, OnnxEncoder) and encoder.runtime.startswith("onnxruntime ")
    [path] = graph_path("x").parent.iterdir()  # no temp file beside it
    assert path == graph_path(encoder.files.sha256())
    assert path.name.endswith(f".fp32.v{GRAPH_VERSION}.onnx")
    graph = onnx.load(str(path))
    checkpoint = torch.load(PARITY_MODEL / "encoder.pt", weights_only=True)
    layers = [node.op_type for node in graph.graph.node].count("LSTM")
    assert layers == checkpoint["params"]["num_layers"] == 3
    facts = json.loads({prop.key: prop.value for prop in graph.metadata_props}[METADATA_KEY])
    assert facts["dictionary"] == checkpoint["dictionary"] and facts["prepend_bos"] is False
    rows = encoder.encode(LINES, "fr")
    assert rows.dtype == np.float32 and np.abs(rows - torch_rows).max() <= 1e-6


@pytest.mark.parametrize("quantize", [None, "int8"])
def test_graphs_are_written_in_the_oldest_format_their_opset_needs(quantize):
    """Not the installed onnx's newest format: an older ONNX Runtime would refuse the graph."""
    encoder = Encoder.load(str(PARITY_MODEL), quantize=quantize)
    graph = onnx.load(str(graph_path(encoder.files.sha256(), quantize)))
    assert graph.ir_version == IR_VERSION < onnx.IR_VERSION


def test_a_graph_onnxruntime_cannot_load_is_a_one_line_error(tmp_path):
    encoder = Encoder.load(str(PARITY_MODEL))
    graph = onnx.load(str(graph_path(encoder.files.sha256())))
    graph.ir_version = onnx.IR_VERSION + 50  # a format from the future
    onnx.save_model(graph, str(tmp_path / "future.onnx"))
    with pytest.raises(LaserError) as refused:
        OnnxEncoder.load(tmp_path / "future.onnx")
    message = str(refused.value)
    assert "\n" not in message and "future.onnx" in message and "--runtime torch" in message
    assert message.startswith("onnxruntime ") and "IR version" in message


def test_a_cached_graph_embeds_without_torch_in_a_fresh_process(tmp_path):
    expected = Encoder.load(str(PARITY_MODEL)).encode(LINES, "fr")  # builds the cache
    built = os.stat(graph_path(Encoder.load(str(PARITY_MODEL)).files.sha256()))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(PARITY_MODEL), str(tmp_path / "rows.npy"),
         json.dumps(LINES)], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    assert done.returncode == 0, done.stderr
    runtime, heavy = json.loads(done.stdout)
    assert runtime.startswith("onnxruntime ") and heavy == []
    assert np.array_equal(np.load(tmp_path / "rows.npy"), expected)
    reused = os.stat(graph_path(Encoder.load(str(PARITY_MODEL)).files.sha256()))
    assert (reused.st_ino, reused.st_mtime_ns) == (built.st_ino, built.st_mtime_ns)


@pytest.mark.parametrize("content", [b"", b"not an onnx graph" * 10])
def test_an_unreadable_cached_graph_is_built_again(torch_rows, content):
    first = Encoder.load(str(PARITY_MODEL))
    path = graph_path(first.files.sha256())
    path.write_bytes(content)
    rebuilt = Encoder.load(str(PARITY_MODEL))
    assert path.stat().st_size > 1000 and np.abs(rebuilt.encode(LINES, "fr") - torch_rows).max() <= 1e-6


def test_a_changed_checkpoint_gets_its_own_graph(tmp_path, torch_rows):
    model = tmp_path / "model"
    shutil.copytree(PARITY_MODEL, model)
    Encoder.load(str(model))
    checkpoint = torch.load(model / "encoder.pt", weights_only=True)
    checkpoint["model"]["embed_tokens.weight"] *= 2
    torch.save(checkpoint, model / "encoder.pt")
    changed = Encoder.load(str(model))
    assert len(list(graph_path("x").parent.iterdir())) == 2
    expected = Encoder.load(str(model), runtime="torch").encode(LINES, "fr")
    rows = changed.encode(LINES, "fr")
    assert np.abs(rows - expected).max() <= 1e-6 and np.abs(rows - torch_rows).max() > 1e-3


def test_torch_runtime_writes_no_graph():
    encoder = Encoder.load(str(PARITY_MODEL), runtime="torch")
    assert isinstance(encoder.model, torch.nn.Module)
    assert encoder.runtime == f"torch {torch.__version__}"
    assert not graph_path("x").parent.exists()


def test_laser3_runs_in_torch_and_onnxruntime_is_refused_for_it():
    model = str(PARITY3 / "model" / "A")
    assert Encoder.load(model).runtime == f"torch {torch.__version__}"
    with pytest.raises(LaserError, match="runs BiLSTM models .*not this transformer"):
        Encoder.load(model, runtime="onnxruntime")


@pytest.mark.parametrize("runtime, device, message", [
    ("tensorrt", "cpu", "unknown runtime 'tensorrt'; choose auto, torch, onnxruntime"),
    ("onnxruntime", "cuda", "runs on the CPU only, not on cuda"),
])
def test_unknown_or_impossible_runtimes_are_refused(runtime, device, message):
    with pytest.raises(LaserError, match=message):
        check_runtime(runtime, device)
    assert check_runtime("auto", "cuda") == "auto"
