"""The reference for `laser.runtime.onnx_graph`: the BiLSTM graph built with the onnx package's
`onnx.helper` (as the project built it before writing the bytes itself), and its int8 version by
onnxruntime's `quantize_dynamic`. Imported only where onnx is installed (not the light install)."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from laser.models.checkpoint import Checkpoint
from laser.runtime.onnx_graph import IR_VERSION, OPSET, OUTPUT, _layer_weights


def _tensor(name: str, array: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def reference_graph(checkpoint: Checkpoint, metadata: dict[str, str] | None = None) -> onnx.ModelProto:
    """The float32 graph, node for node as onnx.helper writes it, checked by onnx.checker."""
    params, state = checkpoint.params, checkpoint.state
    hidden, layers = params["hidden_size"], params["num_layers"]
    suffixes = ("", "_reverse") if params.get("bidirectional", False) else ("",)
    table = np.asarray(state["embed_tokens.weight"])
    half = table.dtype == np.float16  # kept in float16, its rows cast after the lookup
    initializers = [
        _tensor("embeddings", table if half else table.astype(np.float32)),
        _tensor("minus_inf", np.array(-np.inf, dtype=np.float32)),
        _tensor("merge_directions", np.array([0, 0, -1], dtype=np.int64)),
        *(_tensor(name, np.array(value, dtype=np.int64))
          for name, value in (("zero", 0), ("one", 1), ("axis1", [1]), ("axis2", [2]))),
    ]
    make = helper.make_node
    nodes = [make("Transpose", ["tokens"], ["tokens_tb"], perm=[1, 0]),
             make("Gather", ["embeddings", "tokens_tb"], ["x0_half" if half else "x0"]),
             *([make("Cast", ["x0_half"], ["x0"], to=TensorProto.FLOAT)] if half else []),
             make("Cast", ["lengths"], ["lengths32"], to=TensorProto.INT32)]
    for layer in range(layers):
        for name, value in _layer_weights(state, layer, suffixes, hidden).items():
            initializers.append(_tensor(f"{name}{layer}", value))
        y = f"y{layer}"
        nodes += [make("LSTM", [f"x{layer}", f"W{layer}", f"R{layer}", f"B{layer}", "lengths32"],
                       [y], hidden_size=hidden,
                       direction="bidirectional" if len(suffixes) == 2 else "forward"),
                  make("Transpose", [y], [f"{y}_t"], perm=[0, 2, 1, 3]),
                  make("Reshape", [f"{y}_t", "merge_directions"], [f"x{layer + 1}"])]
    nodes += [make("Shape", ["tokens"], ["steps_1d"], start=1, end=2),
              make("Squeeze", ["steps_1d"], ["steps"]),
              make("Range", ["zero", "steps", "one"], ["time"]),
              make("Unsqueeze", ["time", "axis1"], ["time_column"]),
              make("Less", ["time_column", "lengths"], ["valid"]),
              make("Unsqueeze", ["valid", "axis2"], ["valid3"]),
              make("Where", ["valid3", f"x{layers}", "minus_inf"], ["masked"]),
              make("ReduceMax", ["masked"], [OUTPUT], axes=[0], keepdims=0)]
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


def reference_int8(model: onnx.ModelProto, output: Path) -> onnx.ModelProto:
    """`model` with int8 LSTMs by onnxruntime's quantize_dynamic, as the project quantized it."""
    from onnxruntime.quantization import quantize_dynamic
    quiet = logging.NullHandler()  # its advice to pre-process goes nowhere, not to stderr
    logging.getLogger().addHandler(quiet)
    try:
        quantize_dynamic(model, output, op_types_to_quantize=["LSTM", "MatMul"],
                         per_channel=True, reduce_range=True)
    finally:
        logging.getLogger().removeHandler(quiet)
    return onnx.load(str(output))
