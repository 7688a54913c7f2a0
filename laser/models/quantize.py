"""int8 inference on CPU: PyTorch dynamic quantization of the encoder's LSTM (and linear) layers.

Weights are stored as int8 with one scale per tensor; activations are quantized on the fly, per
call, from their observed range. Token embeddings stay float32 (a lookup costs no arithmetic).
Because an activation's range is taken over the whole batch, an int8 vector can move by a hair
with its batch companions, unlike the float32 path (docs/performance.md has the measured effect).
"""
from __future__ import annotations

import warnings
from typing import Optional

import torch
from torch import nn

from ..errors import LaserError

QUANTIZATIONS = ("int8",)


def check_quantize(quantize: Optional[str], device: str) -> None:
    """Refuse an unknown quantization, or one asked for on a device other than the CPU."""
    if quantize is None:
        return
    if quantize not in QUANTIZATIONS:
        raise LaserError(f"unknown quantization {quantize!r}; choose {', '.join(QUANTIZATIONS)}")
    if device != "cpu":
        raise LaserError(f"--quantize {quantize} runs on the CPU only, not on {device}")


def quantize_model(model: nn.Module, quantize: Optional[str]) -> nn.Module:
    """`model` with its nn.LSTM and nn.Linear layers in int8 (`quantize="int8"`), else unchanged."""
    if quantize is None:
        return model
    from torch.ao.quantization import quantize_dynamic
    with warnings.catch_warnings():
        # torch.ao.quantization announces its move to torchao; its kernels are what runs here.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8)
