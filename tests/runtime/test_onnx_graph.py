"""The BiLSTM as an ONNX graph (`laser.runtime.onnx_graph`): float32 equal to the torch encoder,
padding never reaching a real step in either direction, and int8 close to float32; the bytes
written without the onnx package are those of onnx.helper's graph, and the int8 graph gives
quantize_dynamic's vectors."""
import gzip
import itertools
import os
import signal
import threading
import time

import numpy as np
import pytest
import torch
from torch import nn

onnx = pytest.importorskip("onnx")  # the reference: onnx.helper, onnx.checker, quantize_dynamic

from laser.runtime.bilstm import BiLSTMEncoder, Checkpoint
from laser.encoder import Encoder
from laser.runtime.onnx_graph import bilstm_graph
from laser.runtime.onnx_runtime import BATCH_TOKENS, OnnxEncoder
from laser.runtime.sequences import BatchPool, embed_in_batches, pad_ids

from conftest import CORPUS_SAMPLE
from onnx_reference import reference_graph, reference_int8

MAX_TOKENS = 12000


@pytest.fixture(scope="module")
def default_model():
    """The ids of 200 French dev sentences, their vectors by the shipped model's torch encoder,
    and the model's graph."""
    encoder = Encoder.load("default", runtime="torch")
    with gzip.open(CORPUS_SAMPLE / "dev" / "fra-eng.tsv.gz", "rt", encoding="utf-8") as f:
        sentences = [line.split("\t")[0] for line in itertools.islice(f, 200)]
    ids = encoder.prepare(sentences, "fr")
    checkpoint = Checkpoint(encoder.network.module.params,
                            encoder.network.module.official_state(), encoder.dictionary)
    return ids, encoder.encode_ids(ids), bilstm_graph(checkpoint), checkpoint


def random_checkpoint(bidirectional: bool, layers: int = 2) -> Checkpoint:
    torch.manual_seed(3)
    params = dict(num_embeddings=40, embed_dim=6, hidden_size=5, num_layers=layers,
                  bidirectional=bidirectional, padding_idx=1)
    lstm = nn.LSTM(6, 5, layers, bidirectional=bidirectional)
    state = {"embed_tokens.weight": torch.randn(40, 6)}
    state.update({f"lstm.{name}": value.detach() for name, value in lstm.state_dict().items()})
    return Checkpoint(params, state, {})


def cosines(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def mixed_lengths():
    """Padded ids of six sentences of 1 to 30 tokens, an empty one among them."""
    rng = np.random.default_rng(0)
    return pad_ids([list(rng.integers(4, 40, size=length)) + [2]
                    for length in (0, 29, 3, 11, 1, 17)])


def initializers(model):
    return {tensor.name: onnx.numpy_helper.to_array(tensor) for tensor in model.graph.initializer}


METADATA = {"laser.network": '{"dictionary": {"été": 4}}', "second": ""}


@pytest.mark.parametrize("bidirectional", [True, False])
def test_the_written_bytes_are_onnx_helpers_graph(bidirectional):
    checkpoint = random_checkpoint(bidirectional, layers=3)
    written = bilstm_graph(checkpoint, METADATA)
    reference = reference_graph(checkpoint, METADATA)
    assert written == reference.SerializeToString()
    loaded = onnx.load_from_string(written)
    onnx.checker.check_model(loaded, full_check=True)
    assert loaded == reference
    assert {prop.key: prop.value for prop in loaded.metadata_props} == METADATA


def half_table(checkpoint: Checkpoint) -> Checkpoint:
    """`checkpoint` with its embedding table stored in float16, as the shipped model stores it."""
    state = dict(checkpoint.state, **{
        "embed_tokens.weight": np.asarray(checkpoint.state["embed_tokens.weight"], np.float16)})
    return Checkpoint(checkpoint.params, state, checkpoint.dictionary)


@pytest.mark.parametrize("int8", [False, True])
def test_a_float16_table_stays_float16_and_gives_the_float32_tables_vectors(int8):
    half = half_table(random_checkpoint(True))
    upcast = Checkpoint(half.params, dict(half.state, **{
        "embed_tokens.weight": half.state["embed_tokens.weight"].astype(np.float32)}), {})
    written = bilstm_graph(half, int8=int8)
    assert initializers(onnx.load_from_string(written))["embeddings"].dtype == np.float16
    if not int8:
        assert written == reference_graph(half).SerializeToString()
    tokens, lengths = mixed_lengths()
    assert np.array_equal(OnnxEncoder.load(written)(tokens, lengths),
                          OnnxEncoder.load(bilstm_graph(upcast, int8=int8))(tokens, lengths))


def test_the_default_models_graph_is_onnx_helpers_graph(default_model):
    checkpoint = default_model[3]
    assert default_model[2] == reference_graph(checkpoint).SerializeToString()


@pytest.mark.parametrize("bidirectional", [True, False])
def test_the_int8_graph_has_quantize_dynamics_weights_and_vectors(bidirectional, tmp_path):
    checkpoint = random_checkpoint(bidirectional)
    written = onnx.load_from_string(bilstm_graph(checkpoint, METADATA, int8=True))
    onnx.checker.check_model(written)
    reference = reference_int8(reference_graph(checkpoint, METADATA), tmp_path / "int8.onnx")
    ours, theirs = initializers(written), initializers(reference)
    assert sorted(ours) == sorted(theirs)
    for name, array in theirs.items():
        assert ours[name].dtype == array.dtype and np.array_equal(ours[name], array), name
    assert ({(node.op_type, node.domain, tuple(node.input), tuple(node.output))
             for node in written.graph.node}
            == {(node.op_type, node.domain, tuple(node.input), tuple(node.output))
                for node in reference.graph.node})
    assert ({(opset.domain, opset.version) for opset in written.opset_import}
            == {(opset.domain, opset.version) for opset in reference.opset_import})
    tokens, lengths = mixed_lengths()
    rows = OnnxEncoder.load(written.SerializeToString())(tokens, lengths)
    assert np.array_equal(rows, OnnxEncoder.load(tmp_path / "int8.onnx")(tokens, lengths))


def test_the_default_models_int8_vectors_are_quantize_dynamics(default_model, tmp_path):
    ids, exact, graph, checkpoint = default_model
    reference_int8(onnx.load_from_string(graph), tmp_path / "int8.onnx")
    theirs = OnnxEncoder.load(tmp_path / "int8.onnx").embed(ids, MAX_TOKENS)
    ours = OnnxEncoder.load(bilstm_graph(checkpoint, int8=True)).embed(ids, MAX_TOKENS)
    assert np.array_equal(ours, theirs) and np.abs(ours - exact).max() > 1e-4


def test_fp32_graph_equals_the_torch_encoder_on_the_default_model(default_model):
    ids, exact, graph, _ = default_model
    onnx_vectors = OnnxEncoder.load(graph).embed(ids, MAX_TOKENS)
    assert onnx_vectors.dtype == np.float32 and onnx_vectors.shape == exact.shape == (200, 576)
    assert np.abs(onnx_vectors - exact).max() <= 1e-5


@pytest.mark.parametrize("bidirectional", [True, False])
def test_fp32_graph_equals_a_random_two_layer_encoder_on_mixed_lengths(bidirectional):
    checkpoint = random_checkpoint(bidirectional)
    tokens, lengths = mixed_lengths()
    with torch.inference_mode():
        exact = BiLSTMEncoder.from_checkpoint(checkpoint)(torch.from_numpy(tokens),
                                                          torch.from_numpy(lengths)).numpy()
    session = OnnxEncoder.load(bilstm_graph(checkpoint))
    batched = session(tokens, lengths)
    assert batched.shape == (6, 10 if bidirectional else 5)
    assert np.abs(batched - exact).max() <= 1e-5
    # each sentence alone, without padding, gives the same vector: padding reached no real step
    alone = np.vstack([session(*pad_ids([row[:length]]))
                       for row, length in zip(tokens.tolist(), lengths)])
    assert np.abs(alone - batched).max() <= 1e-6


def test_int8_graph_stays_close_to_float32(default_model):
    ids, exact, _, checkpoint = default_model
    graph = bilstm_graph(checkpoint, int8=True)
    ops = [node.op_type for node in onnx.load_from_string(graph).graph.node]
    assert "DynamicQuantizeLSTM" in ops and "LSTM" not in ops
    approximate = OnnxEncoder.load(graph).embed(ids, MAX_TOKENS)
    similarity = cosines(exact, approximate)
    assert np.median(similarity) >= 0.99 and similarity.min() >= 0.95
    assert np.abs(exact - approximate).max() > 1e-4  # the weights really are int8


def test_batches_run_side_by_side_give_the_rows_of_one_at_a_time(default_model):
    ids, exact, graph, _ = default_model
    one, three = OnnxEncoder.load(graph, threads=1), OnnxEncoder.load(graph, threads=3)
    assert (one.workers, three.workers) == (1, 3)
    small_batches = 400  # padded tokens: dozens of batches, so three threads really share them
    assert np.array_equal(three.embed(ids, small_batches, 8), one.embed(ids, small_batches, 8))
    assert np.abs(three.embed(ids, small_batches) - exact).max() <= 1e-5


def test_a_small_input_is_split_so_that_every_worker_gets_a_batch():
    seen = []

    def run(tokens, lengths):
        seen.append(len(lengths))
        return np.zeros((len(lengths), 2), dtype=np.float32)

    rows = embed_in_batches(run, 2, [[5, 2]] * 10, MAX_TOKENS, pool=BatchPool(3))
    assert rows.shape == (10, 2) and sorted(seen) == [2, 4, 4]
    seen.clear()
    embed_in_batches(run, 2, [[5, 2]] * 10, MAX_TOKENS)
    assert seen == [10]


def test_a_pool_keeps_its_threads_and_runs_a_lone_batch_in_the_calling_thread():
    threads = []

    def run(tokens, lengths):
        threads.append(threading.current_thread())
        return np.zeros((len(lengths), 2), dtype=np.float32)

    pool = BatchPool(2)
    embed_in_batches(run, 2, [[5, 2]], MAX_TOKENS, pool=pool)
    assert threads == [threading.current_thread()]  # one sentence: no thread is started for it
    threads.clear()
    for _ in range(3):
        embed_in_batches(run, 2, [[5, 2]] * 10, MAX_TOKENS, pool=pool)
    assert len(threads) == 6 and threading.current_thread() not in threads
    assert len(set(threads)) <= 2  # the same two threads every call


def test_a_failed_batch_drops_the_batches_not_started_and_raises():
    started = []

    def run(tokens, lengths):
        started.append(len(lengths))
        time.sleep(0.01)
        raise ValueError("bad batch")

    with pytest.raises(ValueError, match="bad batch"):
        embed_in_batches(run, 2, [[5, 2]] * 200, MAX_TOKENS, max_sentences=2, pool=BatchPool(2))
    time.sleep(0.05)
    assert len(started) < 10  # of 100 batches


def test_a_forked_process_starts_its_own_pool_threads(default_model, tmp_path):
    ids, exact, graph, _ = default_model
    session = OnnxEncoder.load(graph, threads=2)
    session.embed(ids, MAX_TOKENS)  # the pool's threads start here, and a fork has none of them
    child = os.fork()
    if child == 0:
        try:
            np.save(tmp_path / "rows.npy", session.embed(ids, MAX_TOKENS))
        finally:
            os._exit(0)
    deadline = time.monotonic() + 60
    while os.waitpid(child, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the forked process waited for threads it does not have")
        time.sleep(0.05)
    assert np.abs(np.load(tmp_path / "rows.npy") - exact).max() <= 1e-5


def test_batches_in_flight_share_the_token_budget():
    padded = []

    def run(tokens, lengths):
        padded.append(tokens.size)
        return np.zeros((len(lengths), 2), dtype=np.float32)

    sequences = [[5] * 9 + [2]] * 40  # 400 tokens
    embed_in_batches(run, 2, sequences, 100, pool=BatchPool(2))
    assert max(padded) <= 50 and sum(padded) == 400
    padded.clear()
    embed_in_batches(run, 2, sequences, 100)
    assert max(padded) == 100


def test_onnx_runtime_batches_stay_cache_sized_under_a_large_budget(default_model):
    ids, exact, graph, _ = default_model
    padded = []

    class Recording(OnnxEncoder):
        def __call__(self, tokens, lengths):
            padded.append(tokens.size)
            return super().__call__(tokens, lengths)

    session = OnnxEncoder.load(graph, threads=2)
    recording = Recording(session.session, session.output_dim, session.workers)
    rows = recording.embed(ids, MAX_TOKENS)
    assert max(padded) <= BATCH_TOKENS < MAX_TOKENS // 2 and len(padded) > 2
    assert np.abs(rows - exact).max() <= 1e-5
