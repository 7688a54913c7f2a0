"""int8 inference on the CPU (`quantize="int8"`, `--quantize int8`).

* BiLSTM (LASER1, LASER2) on ONNX Runtime (the default runtime on the CPU): the checkpoint's
  ONNX graph (`laser.runtime.onnx_graph`) with its LSTMs quantized to int8 (one scale per gate row,
  7-bit weights), built once and cached like the float32 graph (`laser.runtime.onnx_cache`).
* On torch (LASER3 transformers, or `runtime="torch"`): PyTorch dynamic quantization of the
  `nn.Linear` and `nn.LSTM` layers.

`quantize="fp16"` (`--quantize fp16`) is for GPUs (`--device cuda`): the torch network's weights
and activations in float16, rows returned as float32. It runs in torch on any device.

Either way token embeddings are not quantized (a lookup costs no arithmetic) and activations are
quantized on the fly, per call, from their observed range: an int8 vector can move by a hair
with its batch companions, unlike the float32 path (docs/performance.md has the measured effect).
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Optional

from ..errors import LaserError

if TYPE_CHECKING:
    from torch import nn

QUANTIZATIONS = ("int8", "fp16")


def check_quantize(quantize: Optional[str], device: str) -> None:
    """Refuse an unknown quantization, or int8 asked for on a device other than the CPU."""
    if quantize is None:
        return
    if quantize not in QUANTIZATIONS:
        raise LaserError(f"unknown quantization {quantize!r}; choose {', '.join(QUANTIZATIONS)}")
    if quantize == "int8" and device != "cpu":
        raise LaserError(f"--quantize {quantize} runs on the CPU only, not on {device}")


def reduced_precision(model: nn.Module, quantize: str) -> nn.Module:
    """`model` as `quantize` asks: int8 layers, or float16 weights and activations (`fp16`,
    what a GPU's tensor cores run fastest; torch also runs it on the CPU, slowly)."""
    return model.half() if quantize == "fp16" else quantize_torch_layers(model)


def quantize_torch_layers(model: nn.Module) -> nn.Module:
    """`model` with its nn.Linear and nn.LSTM layers in int8 (PyTorch dynamic quantization)."""
    import torch
    from torch import nn
    from torch.ao.quantization import quantize_dynamic
    with warnings.catch_warnings():
        # torch.ao.quantization announces its move to torchao; its kernels are what runs here.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=torch.qint8)
