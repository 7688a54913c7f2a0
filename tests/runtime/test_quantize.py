"""int8 inference (`quantize="int8"`, `--quantize int8`): a BiLSTM runs as an int8 ONNX graph
in ONNX Runtime, cached per checkpoint; a LASER3 transformer (or a BiLSTM with `runtime="torch"`)
through torch dynamic quantization; vectors close to float32, refused where it cannot run, and
recorded in the provenance sidecar. The light install (no torch, no onnx) runs what here needs
neither; tests/models/test_torch_format.py builds int8 graphs with both unimportable."""
import gzip
import itertools
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.errors import LaserError
from laser.encoder import Encoder
from laser.runtime.onnx_runtime import OnnxEncoder, usable_cores
from laser.runtime.onnx_cache import GRAPH_VERSION, graph_path
from laser.runtime.quantize import check_quantize

from conftest import CORPUS_SAMPLE, PARITY3, needs_torch, read_fixture_lines

SENTENCES = 200
ORT_RUNTIME = "onnxruntime " + __import__("onnxruntime").__version__


def torch_runtime():
    import torch
    return f"torch {torch.__version__}"


def french_dev(count=SENTENCES):
    with gzip.open(CORPUS_SAMPLE / "dev" / "fra-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [line.split("\t")[0] for line in itertools.islice(f, count)]


@pytest.fixture(scope="module")
def module_home(tmp_path_factory):
    return tmp_path_factory.mktemp("int8-home")


@pytest.fixture(scope="module")
def encoders(module_home):
    """The shipped model in float32 and in int8, its int8 graph cached in `module_home`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LASER_HOME", str(module_home))
        return Encoder.load("default"), Encoder.load("default", quantize="int8")


def cosines(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def cached_int8_graphs():
    return sorted(graph_path("x").parent.glob("*int8*"))


def test_int8_bilstm_runs_an_int8_graph_in_onnx_runtime(encoders, module_home):
    fp32, int8 = encoders
    assert isinstance(int8.model, OnnxEncoder) and isinstance(fp32.model, OnnxEncoder)
    assert int8.dim == fp32.dim and int8.quantize == "int8" and fp32.quantize is None
    assert int8.runtime == fp32.runtime == ORT_RUNTIME
    [path] = (module_home / "onnx").glob("*int8*")
    assert path.name == f"{fp32.files.sha256()}.int8.v{GRAPH_VERSION}.onnx"


def test_the_cached_int8_graph_has_one_dynamic_quantize_lstm_per_layer(encoders, module_home):
    onnx = pytest.importorskip("onnx")
    [path] = (module_home / "onnx").glob("*int8*")
    graph = onnx.load(str(path))
    onnx.checker.check_model(graph)
    ops = [node.op_type for node in graph.graph.node]
    assert ops.count("DynamicQuantizeLSTM") == 2 and "LSTM" not in ops  # the model's two layers


def test_int8_vectors_stay_close_to_float32(encoders):
    fp32, int8 = encoders
    sentences = french_dev()
    exact, approximate = fp32.encode(sentences, "fr"), int8.encode(sentences, "fr")
    assert approximate.dtype == np.float32 and approximate.shape == exact.shape
    similarity = cosines(exact, approximate)
    assert np.median(similarity) >= 0.99 and similarity.min() >= 0.95
    assert np.abs(exact - approximate).max() > 1e-4  # the weights really are int8
    # each sentence still finds its own float32 vector first among the 200
    normed = [m / np.linalg.norm(m, axis=1, keepdims=True) for m in (exact, approximate)]
    assert (np.argmax(normed[1] @ normed[0].T, axis=1) == np.arange(len(sentences))).all()


def test_int8_gives_one_row_per_line_empty_lines_included(encoders):
    fp32, int8 = encoders
    lines = ["", *french_dev(3), "", "   "]
    exact, approximate = fp32.encode(lines, "fr"), int8.encode(lines, "fr")
    assert approximate.shape == exact.shape == (6, fp32.dim) and approximate.dtype == np.float32
    assert cosines(exact, approximate).min() >= 0.99


def test_int8_graph_is_built_once_per_checkpoint_and_reused_with_the_asked_threads(
        encoders, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    first = Encoder.load("default", quantize="int8")
    [path] = cached_int8_graphs()  # no temp file left beside it
    assert path == graph_path(first.files.sha256(), "int8")
    built = os.stat(path)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # as a one-core Ray worker sets it
    second = Encoder.load("default", quantize="int8")
    reused = os.stat(path)
    assert (reused.st_ino, reused.st_mtime_ns) == (built.st_ino, built.st_mtime_ns)
    # each batch runs on one thread; OMP_NUM_THREADS batches at a time, else one per core
    assert [encoder.model.session.get_session_options().intra_op_num_threads
             for encoder in (first, second)] == [1, 1]
    assert [encoder.model.workers for encoder in (first, second)] == [usable_cores(), 1]
    sentences = french_dev(300)
    vectors = first.encode(sentences, "fr")
    assert np.array_equal(encoders[1].encode(sentences, "fr"), vectors)  # built elsewhere, same
    # batches run side by side: int8 rows move by a hair with their batch companions, no more
    # (activations are quantized per batch: 0.99968 at the least with 16 cores against one)
    assert cosines(second.encode(sentences, "fr"), vectors).min() >= 0.999


def test_unwritable_cache_builds_the_graph_for_this_run_only(encoders, tmp_path, monkeypatch):
    home = tmp_path / "not-a-directory"
    home.write_text("")
    monkeypatch.setenv("LASER_HOME", str(home))
    with pytest.warns(UserWarning, match="int8 ONNX graph cannot be cached"):
        int8 = Encoder.load("default", quantize="int8")
    sentences = french_dev(30)
    assert np.array_equal(int8.encode(sentences, "fr"), encoders[1].encode(sentences, "fr"))
    assert home.read_text() == ""


@needs_torch
def test_laser3_int8_runs_through_torch():
    from torch.ao.nn.quantized.dynamic import Linear as Int8Linear
    model = str(PARITY3 / "model" / "A")
    fp32, int8 = Encoder.load(model), Encoder.load(model, quantize="int8")
    assert int8.runtime == torch_runtime() and not graph_path("x").parent.exists()
    assert any(isinstance(layer, Int8Linear) for layer in int8.model.modules())
    lines = read_fixture_lines(PARITY3 / "inputs" / "fr.txt")
    exact, approximate = fp32.encode(lines, "fr"), int8.encode(lines, "fr")
    assert approximate.shape == exact.shape and approximate.dtype == np.float32
    assert np.median(cosines(exact, approximate)) >= 0.99
    assert np.abs(exact - approximate).max() > 1e-5


@needs_torch
def test_bilstm_int8_on_torch_quantizes_its_lstms():
    from torch.ao.nn.quantized.dynamic import LSTM as Int8LSTM
    fp32, int8 = Encoder.load("default", runtime="torch"), Encoder.load("default", quantize="int8",
                                                                         runtime="torch")
    assert int8.runtime == torch_runtime() and not graph_path("x").parent.exists()
    assert any(isinstance(layer, Int8LSTM) for layer in int8.model.modules())
    sentences = french_dev(50)
    similarity = cosines(fp32.encode(sentences, "fr"), int8.encode(sentences, "fr"))
    assert np.median(similarity) >= 0.99 and similarity.max() < 1 - 1e-7


def test_unknown_or_non_cpu_quantization_is_refused():
    with pytest.raises(LaserError, match="unknown quantization 'int4'"):
        check_quantize("int4", "cpu")
    with pytest.raises(LaserError, match="CPU only"):
        check_quantize("int8", "cuda")
    check_quantize(None, "cuda")
    with pytest.raises(LaserError, match="unknown quantization"):
        Encoder.load("default", quantize="fp8")


@pytest.mark.parametrize("flags, quantize, on_torch", [
    ([], None, False),
    (["--quantize", "int8"], "int8", False),
    pytest.param(["--quantize", "int8", "--runtime", "torch"], "int8", True, marks=needs_torch),
    pytest.param(["--quantize", "fp16"], "fp16", True, marks=needs_torch),
])
def test_cli_records_quantization_and_runtime_in_the_sidecar(encoders, tmp_path, flags, quantize,
                                                             on_torch):
    source, output = tmp_path / "fr.txt", tmp_path / "rows.npy"
    sentences = french_dev(20)
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["embed", str(source), "-o", str(output), "-l", "fr", "-q",
                                       *flags])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "rows.npy.json").read_text())
    assert (record["quantize"], record["runtime"]) == (quantize,
                                                       torch_runtime() if on_torch else ORT_RUNTIME)
    if not on_torch:  # the rows of the library's encoder of the same precision
        expected = encoders[quantize == "int8"].encode(sentences, "fr")
        assert np.array_equal(np.load(output), expected)


@needs_torch
@pytest.mark.device
@pytest.mark.parametrize("model", ["default", str(PARITY3 / "model" / "A"),
                                   str(PARITY3 / "model" / "C")])
def test_fp16_runs_the_torch_network_in_float16_and_returns_float32_rows(model, device):
    """What `--device cuda --quantize fp16` runs, against float32 on the CPU; torch runs float16
    on the CPU too, so the same network is checked without a GPU as well."""
    import torch
    fp32 = Encoder.load(model, runtime="torch")
    fp16 = Encoder.load(model, quantize="fp16", device=device)
    assert fp16.runtime == torch_runtime() and not graph_path("x").parent.exists()
    assert {parameter.dtype for parameter in fp16.model.parameters()} == {torch.float16}
    sentences = (french_dev(50) if model == "default"
                 else read_fixture_lines(PARITY3 / "inputs" / "fr.txt"))
    exact, half = fp32.encode(sentences, "fr"), fp16.encode(sentences, "fr")
    assert half.dtype == np.float32 and half.shape == exact.shape
    similarity = cosines(exact, half)
    assert similarity.min() >= 0.999 and np.abs(exact - half).max() > 1e-6


def test_fp16_is_refused_on_onnx_runtime_and_int8_on_a_gpu():
    with pytest.raises(LaserError, match="fp16 runs in torch"):
        Encoder.load("default", quantize="fp16", runtime="onnxruntime")
    check_quantize("fp16", "cuda")
