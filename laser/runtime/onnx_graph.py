"""The BiLSTM encoder as an ONNX graph, run by ONNX Runtime (float32, or int8 weights).

The graph is written from the checkpoint's weights with `onnx.helper` (no torch export):

    tokens (batch, time) int64, right-padded; lengths (batch,) int64
    -> Gather(embeddings) -> one ONNX `LSTM` per layer (both directions in one op, `sequence_lens`
       = lengths) -> max over each sentence's valid time steps -> (batch, output_dim) float32

ONNX Runtime's LSTM runs the backward direction from each sentence's own last step and writes
zeros past the length, so, as in `BiLSTMEncoder`, padding never reaches a real step; the
max-pooling masks the padded steps to -inf. torch orders the gates i, f, g, o; ONNX i, o, f, c
(c = torch's g), and takes both biases as one row `B = [Wb, Rb]`.

`quantize_int8` turns each LSTM into ONNX Runtime's `DynamicQuantizeLSTM` (int8 weights,
activations quantized per call); embeddings stay float32, as in `laser.runtime.quantize`.
`laser.runtime.onnx_runtime` runs either graph without torch.
"""
from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..errors import LaserError
from ..models.checkpoint import WEIGHT_NAMES, Checkpoint

OPSET = 17
# The model format version written, the oldest that OPSET needs, rather than the installed onnx's
# newest: ONNX Runtime refuses graphs of a newer format than its own (onnx 1.23 writes 14,
# onnxruntime 1.30 reads up to 13), and every onnxruntime this package allows reads 8.
IR_VERSION = 8
TORCH_TO_ONNX_GATES = [0, 3, 1, 2]  # ONNX (i, o, f, c) from torch (i, f, g, o)
OUTPUT = "sentence_embeddings"


def bilstm_graph(checkpoint: Checkpoint, metadata: Optional[dict[str, str]] = None) -> onnx.ModelProto:
    """The ONNX model of a BiLSTM checkpoint: (tokens, lengths) -> (batch, output_dim), with
    `metadata` as its string properties."""
    check_shapes(checkpoint)
    params, state = checkpoint.params, checkpoint.state
    hidden = params["hidden_size"]
    suffixes = ("", "_reverse") if params.get("bidirectional", False) else ("",)
    initializers = [
        _tensor("embeddings", _numpy(state["embed_tokens.weight"])),
        _tensor("minus_inf", np.array(-np.inf, dtype=np.float32)),
        _tensor("merge_directions", np.array([0, 0, -1], dtype=np.int64)),
        _tensor("zero", np.array(0, dtype=np.int64)),
        _tensor("one", np.array(1, dtype=np.int64)),
        _tensor("axis1", np.array([1], dtype=np.int64)),
        _tensor("axis2", np.array([2], dtype=np.int64)),
    ]
    nodes = [
        helper.make_node("Transpose", ["tokens"], ["tokens_tb"], perm=[1, 0]),
        helper.make_node("Gather", ["embeddings", "tokens_tb"], ["x0"]),  # (time, batch, dim)
        helper.make_node("Cast", ["lengths"], ["lengths32"], to=TensorProto.INT32),
    ]
    for layer in range(params["num_layers"]):
        for name, value in _layer_weights(state, layer, suffixes, hidden).items():
            initializers.append(_tensor(f"{name}{layer}", value))
        nodes += _lstm_layer(layer, len(suffixes), hidden)
    nodes += _max_over_valid_steps(f"x{params['num_layers']}")
    graph = helper.make_graph(
        nodes, "laser_bilstm",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, ["batch", "time"]),
         helper.make_tensor_value_info("lengths", TensorProto.INT64, ["batch"])],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT,
                                       ["batch", len(suffixes) * hidden])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="laser", ir_version=IR_VERSION)
    helper.set_model_props(model, metadata or {})
    onnx.checker.check_model(model)
    return model


def _numpy(array: np.ndarray) -> np.ndarray:
    """A weight as float32 (checkpoints may store float16)."""
    return np.asarray(array, dtype=np.float32)


def check_shapes(checkpoint: Checkpoint) -> None:
    """Refuse weights whose shapes do not match the checkpoint's params, naming the first."""
    params, state = checkpoint.params, checkpoint.state
    hidden = params["hidden_size"]
    directions = ("", "_reverse") if params.get("bidirectional", False) else ("",)
    expected = {"embed_tokens.weight": (params["num_embeddings"], params["embed_dim"])}
    for layer in range(params["num_layers"]):
        width = params["embed_dim"] if layer == 0 else len(directions) * hidden
        for suffix in directions:
            for name, shape in zip(WEIGHT_NAMES, [(4 * hidden, width), (4 * hidden, hidden),
                                                  (4 * hidden,), (4 * hidden,)]):
                expected[f"lstm.{name}_l{layer}{suffix}"] = shape
    for name, shape in expected.items():
        found = np.shape(state[name]) if name in state else None
        if found != shape:
            raise LaserError(f"checkpoint weights do not match its params: {name} is "
                             f"{'missing' if found is None else found}, expected {shape}")


def _tensor(name: str, array: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def _onnx_gates(matrix: np.ndarray, hidden: int) -> np.ndarray:
    """Rows of a torch gate-stacked weight (4*hidden, ...) in ONNX's gate order."""
    return matrix.reshape(4, hidden, *matrix.shape[1:])[TORCH_TO_ONNX_GATES].reshape(matrix.shape)


def _layer_weights(state: dict, layer: int, suffixes: Sequence[str],
                   hidden: int) -> dict[str, np.ndarray]:
    """W (directions, 4h, in), R (directions, 4h, h) and B (directions, 8h) of one layer."""
    weights = [{name: _onnx_gates(_numpy(state[f"lstm.{name}_l{layer}{suffix}"]), hidden)
                for name in WEIGHT_NAMES} for suffix in suffixes]
    return {"W": np.stack([w["weight_ih"] for w in weights]),
            "R": np.stack([w["weight_hh"] for w in weights]),
            "B": np.stack([np.concatenate([w["bias_ih"], w["bias_hh"]]) for w in weights])}


def _lstm_layer(layer: int, directions: int, hidden: int) -> list[onnx.NodeProto]:
    """x{layer} (time, batch, in) -> x{layer+1} (time, batch, directions*hidden)."""
    y = f"y{layer}"
    return [
        helper.make_node("LSTM", [f"x{layer}", f"W{layer}", f"R{layer}", f"B{layer}", "lengths32"],
                         [y], hidden_size=hidden,
                         direction="bidirectional" if directions == 2 else "forward"),
        # Y is (time, directions, batch, hidden): put directions next to hidden, then merge
        helper.make_node("Transpose", [y], [f"{y}_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", [f"{y}_t", "merge_directions"], [f"x{layer + 1}"]),
    ]


def _max_over_valid_steps(x: str) -> list[onnx.NodeProto]:
    """Max over time of x (time, batch, width), steps at or past a sentence's length left out."""
    return [
        helper.make_node("Shape", ["tokens"], ["steps_1d"], start=1, end=2),
        helper.make_node("Squeeze", ["steps_1d"], ["steps"]),
        helper.make_node("Range", ["zero", "steps", "one"], ["time"]),
        helper.make_node("Unsqueeze", ["time", "axis1"], ["time_column"]),  # (time, 1)
        helper.make_node("Less", ["time_column", "lengths"], ["valid"]),  # (time, batch)
        helper.make_node("Unsqueeze", ["valid", "axis2"], ["valid3"]),
        helper.make_node("Where", ["valid3", x, "minus_inf"], ["masked"]),
        helper.make_node("ReduceMax", ["masked"], [OUTPUT], axes=[0], keepdims=0),
    ]


def quantize_int8(model: onnx.ModelProto, output: Union[str, os.PathLike]) -> Path:
    """Write `model` with int8 LSTM weights (ONNX Runtime's DynamicQuantizeLSTM) to `output`.

    One weight scale per gate row (`per_channel`) and 7-bit weights (`reduce_range`: an AVX2 CPU
    without VNNI saturates u8 x s8 products of full-range weights) keep the vectors closest to
    float32 (docs/performance.md)."""
    from onnxruntime.quantization import quantize_dynamic
    with _without_preprocessing_advice():
        quantize_dynamic(model, output, op_types_to_quantize=["LSTM", "MatMul"],
                         per_channel=True, reduce_range=True)
    return Path(output)


@contextmanager
def _without_preprocessing_advice() -> Iterator[None]:
    """Drop `quantize_dynamic`'s advice to pre-process the model (a warning on the root logger;
    the LSTMs here are quantized from their weights alone), and keep that `logging.warning` call
    from configuring the root logger, as it does when the root has no handler."""
    root = logging.getLogger()
    guard = logging.NullHandler()
    advice = "consider to run pre-processing"

    def keep(record: logging.LogRecord) -> bool:
        return advice not in record.getMessage()

    root.addHandler(guard)
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)
        root.removeHandler(guard)
