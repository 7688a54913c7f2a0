"""The BiLSTM encoder as an ONNX graph, run by ONNX Runtime (float32, or int8 weights).

The graph is written from the checkpoint's weights as protobuf bytes (`laser.runtime.onnx_proto`;
neither torch export nor the onnx package):

    tokens (batch, time) int64, right-padded; lengths (batch,) int64
    -> Gather(embeddings) -> one ONNX `LSTM` per layer (both directions in one op, `sequence_lens`
       = lengths) -> max over each sentence's valid time steps -> (batch, output_dim) float32

ONNX Runtime's LSTM runs the backward direction from each sentence's own last step and writes
zeros past the length, so, as in `BiLSTMEncoder`, padding never reaches a real step; the
max-pooling masks the padded steps to -inf. An embedding table stored in float16 stays float16
in the graph, and the rows looked up are cast to float32: the same values as a float32 table,
in half the file, memory and load time. torch orders the gates i, f, g, o; ONNX i, o, f, c
(c = torch's g), and takes both biases as one row `B = [Wb, Rb]`.

In int8 each LSTM is ONNX Runtime's `DynamicQuantizeLSTM` (int8 weights, activations quantized
per call), with the weights that onnxruntime's `quantize_dynamic(per_channel=True,
reduce_range=True)` gives; embeddings are not quantized, as in `laser.runtime.quantize`.
`laser.runtime.onnx_runtime` runs either graph without torch.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..errors import LaserError
from ..models.checkpoint import WEIGHT_NAMES, Checkpoint
from . import onnx_proto
from .onnx_proto import FLOAT, INT32, INT64, tensor

OPSET = 17
# The model format version written, the oldest that OPSET needs: ONNX Runtime refuses graphs of
# a newer format than its own (onnxruntime 1.30 reads up to 13), and every onnxruntime this
# package allows reads 8.
IR_VERSION = 8
# ONNX Runtime's own operators (DynamicQuantizeLSTM), version 1 of their domain.
MICROSOFT_DOMAIN = "com.microsoft"
TORCH_TO_ONNX_GATES = [0, 3, 1, 2]  # ONNX (i, o, f, c) from torch (i, f, g, o)
OUTPUT = "sentence_embeddings"
# int8 weights in 7 bits, [-64, 64] (`reduce_range`: an AVX2 CPU without VNNI saturates u8 x s8
# products of full-range weights), symmetric about 0, one scale per gate row (`per_channel`):
# what keeps the vectors closest to float32 (docs/performance.md).
INT8_LEVELS = 64


def bilstm_graph(checkpoint: Checkpoint, metadata: Optional[dict[str, str]] = None,
                 int8: bool = False) -> bytes:
    """The ONNX model (serialized) of a BiLSTM checkpoint: (tokens, lengths) -> (batch,
    output_dim), with `metadata` as its string properties and, if `int8`, int8 LSTM weights."""
    check_shapes(checkpoint)
    params, state = checkpoint.params, checkpoint.state
    hidden = params["hidden_size"]
    suffixes = ("", "_reverse") if params.get("bidirectional", False) else ("",)
    table = np.asarray(state["embed_tokens.weight"])
    half = table.dtype == np.float16  # kept in float16, the rows looked up cast to float32
    looked_up = "x0_half" if half else "x0"
    initializers = [
        tensor("embeddings", table if half else _numpy(table)),
        # one-element vectors: ONNX Runtime takes them where Range asks for scalars
        tensor("minus_inf", np.array([-np.inf], dtype=np.float32)),
        tensor("merge_directions", np.array([0, 0, -1], dtype=np.int64)),
        tensor("zero", np.array([0], dtype=np.int64)),
        tensor("one", np.array([1], dtype=np.int64)),
        tensor("axis1", np.array([1], dtype=np.int64)),
        tensor("axis2", np.array([2], dtype=np.int64)),
    ]
    nodes = [
        onnx_proto.node("Transpose", ["tokens"], ["tokens_tb"], perm=[1, 0]),
        onnx_proto.node("Gather", ["embeddings", "tokens_tb"], [looked_up]),  # (time, batch, dim)
        *([onnx_proto.node("Cast", [looked_up], ["x0"], to=FLOAT)] if half else []),
        onnx_proto.node("Cast", ["lengths"], ["lengths32"], to=INT32),
    ]
    for layer in range(params["num_layers"]):
        weights = _layer_weights(state, layer, suffixes, hidden)
        if int8:
            initializers += _int8_weights(layer, weights)
            nodes += _lstm_layer(layer, len(suffixes), hidden, _int8_lstm)
        else:
            initializers += [tensor(f"{name}{layer}", value) for name, value in weights.items()]
            nodes += _lstm_layer(layer, len(suffixes), hidden, _lstm)
    nodes += _max_over_valid_steps(f"x{params['num_layers']}")
    graph = onnx_proto.graph(
        "laser_bilstm", nodes,
        [onnx_proto.tensor_value("tokens", INT64, ["batch", "time"]),
         onnx_proto.tensor_value("lengths", INT64, ["batch"])],
        [onnx_proto.tensor_value(OUTPUT, FLOAT, ["batch", len(suffixes) * hidden])],
        initializers)
    opsets = {"": OPSET, **({MICROSOFT_DOMAIN: 1} if int8 else {})}
    return onnx_proto.model(graph, opsets, "laser", IR_VERSION, metadata or {})


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


def _int8_rows(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights (directions, rows, columns) as int8 in [-INT8_LEVELS, INT8_LEVELS] and their
    scales (directions, rows): per row, scale = max |w| / INT8_LEVELS (1 for a row of zeros) and
    q = w / scale rounded half to even, computed as quantize_dynamic does (float64 scale stored
    as float32, float32 division)."""
    scale = np.abs(weights).max(axis=-1).astype(np.float64) / INT8_LEVELS
    scale = np.where(scale < np.finfo(np.float32).tiny, 1.0, scale).astype(np.float32)
    return np.round(weights / scale[..., None]).astype(np.int8), scale


def _int8_weights(layer: int, weights: dict[str, np.ndarray]) -> list[bytes]:
    """W and R of a layer as DynamicQuantizeLSTM takes them: int8, transposed to (directions,
    columns, 4h), with per-row scales and zero points (all 0: symmetric); B stays float32."""
    tensors = []
    for name in ("W", "R"):
        quantized, scale = _int8_rows(weights[name])
        tensors += [tensor(f"{name}{layer}_quantized", quantized.transpose(0, 2, 1)),
                    tensor(f"{name}{layer}_scale", scale),
                    tensor(f"{name}{layer}_zero_point", np.zeros(scale.shape, dtype=np.int8))]
    return tensors + [tensor(f"B{layer}", weights["B"])]


def _lstm(layer: int, y: str, **attributes) -> bytes:
    """ONNX's float32 LSTM of a layer."""
    return onnx_proto.node("LSTM", [f"x{layer}", f"W{layer}", f"R{layer}", f"B{layer}",
                                    "lengths32"], [y], **attributes)


def _int8_lstm(layer: int, y: str, **attributes) -> bytes:
    """ONNX Runtime's DynamicQuantizeLSTM of a layer (no initial states, no peepholes)."""
    weights = [f"W{layer}_quantized", f"R{layer}_quantized", f"B{layer}", "lengths32", "", "", ""]
    quantization = [f"{name}{layer}_{part}" for name in ("W", "R") for part in ("scale",
                                                                                  "zero_point")]
    return onnx_proto.node("DynamicQuantizeLSTM", [f"x{layer}", *weights, *quantization], [y],
                           domain=MICROSOFT_DOMAIN, **attributes)


def _lstm_layer(layer: int, directions: int, hidden: int, lstm) -> list[bytes]:
    """x{layer} (time, batch, in) -> x{layer+1} (time, batch, directions*hidden), the LSTM
    itself written by `lstm` (`_lstm` or `_int8_lstm`)."""
    y = f"y{layer}"
    return [
        lstm(layer, y, hidden_size=hidden,
             direction="bidirectional" if directions == 2 else "forward"),
        # Y is (time, directions, batch, hidden): put directions next to hidden, then merge
        onnx_proto.node("Transpose", [y], [f"{y}_t"], perm=[0, 2, 1, 3]),
        onnx_proto.node("Reshape", [f"{y}_t", "merge_directions"], [f"x{layer + 1}"]),
    ]


def _max_over_valid_steps(x: str) -> list[bytes]:
    """Max over time of x (time, batch, width), steps at or past a sentence's length left out."""
    node = onnx_proto.node
    return [
        node("Shape", ["tokens"], ["steps_1d"], start=1, end=2),
        node("Squeeze", ["steps_1d"], ["steps"]),
        node("Range", ["zero", "steps", "one"], ["time"]),
        node("Unsqueeze", ["time", "axis1"], ["time_column"]),  # (time, 1)
        node("Less", ["time_column", "lengths"], ["valid"]),  # (time, batch)
        node("Unsqueeze", ["valid", "axis2"], ["valid3"]),
        node("Where", ["valid3", x, "minus_inf"], ["masked"]),
        node("ReduceMax", ["masked"], [OUTPUT], axes=[0], keepdims=0),
    ]
