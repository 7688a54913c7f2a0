"""int8 inference on the CPU (`quantize="int8"`, `--quantize int8`).

* BiLSTM (LASER1, LASER2): ONNX Runtime. The checkpoint becomes an ONNX graph
  (`laser.models.onnx_graph`) whose LSTMs are quantized to int8 (one scale per gate row, 7-bit
  weights); the graph is built once per checkpoint and cached as
  `$LASER_HOME/onnx/<checkpoint sha256>.int8.v<GRAPH_VERSION>.onnx`. Where that folder cannot be written, the
  graph is built in a temporary directory for this run only (with one warning).
* Transformer (LASER3): PyTorch dynamic quantization of its `nn.Linear` layers.

Either way token embeddings stay float32 (a lookup costs no arithmetic) and activations are
quantized on the fly, per call, from their observed range: an int8 vector can move by a hair
with its batch companions, unlike the float32 path (docs/performance.md has the measured effect).
"""
from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Optional

import torch
from torch import nn

from ..errors import LaserError
from ..io.atomic import atomic_path
from .bilstm import BiLSTMEncoder, Checkpoint
from .onnx_runtime import OnnxEncoder
from .registry import laser_home

QUANTIZATIONS = ("int8",)
CACHE_DIR = "onnx"  # under $LASER_HOME
# Part of the cached file's name: raise it when the graph builder or the quantisation settings
# change, so that graphs built by an earlier version are not reused.
GRAPH_VERSION = 1


def check_quantize(quantize: Optional[str], device: str) -> None:
    """Refuse an unknown quantization, or one asked for on a device other than the CPU."""
    if quantize is None:
        return
    if quantize not in QUANTIZATIONS:
        raise LaserError(f"unknown quantization {quantize!r}; choose {', '.join(QUANTIZATIONS)}")
    if device != "cpu":
        raise LaserError(f"--quantize {quantize} runs on the CPU only, not on {device}")


def quantize_linear_layers(model: nn.Module) -> nn.Module:
    """`model` with its nn.Linear layers in int8 (PyTorch dynamic quantization)."""
    from torch.ao.quantization import quantize_dynamic
    with warnings.catch_warnings():
        # torch.ao.quantization announces its move to torchao; its kernels are what runs here.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)


def int8_graph_path(sha256: str) -> Path:
    """Where the int8 graph of the checkpoint with this sha256 is cached."""
    return laser_home() / CACHE_DIR / f"{sha256}.int8.v{GRAPH_VERSION}.onnx"


def int8_bilstm(module: BiLSTMEncoder, sha256: str, threads: int) -> OnnxEncoder:
    """An ONNX Runtime session (`threads` intra-op) of the int8 graph of `module`, whose
    checkpoint has this sha256: read from the cache, else built and cached first."""
    cached = int8_graph_path(sha256)
    if not cached.is_file():
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(cached) as tmp:
                _write_int8_graph(module, tmp)
        except (OSError, LaserError) as error:
            warnings.warn(f"the int8 graph cannot be cached ({error}); building it for this run "
                          "only", stacklevel=4)
            with tempfile.TemporaryDirectory(prefix="laser-onnx-") as tmp:
                return OnnxEncoder.load(_write_int8_graph(module, Path(tmp) / cached.name),
                                        threads)
    return OnnxEncoder.load(cached, threads)


def _write_int8_graph(module: BiLSTMEncoder, output: str | Path) -> Path:
    from .onnx_graph import bilstm_graph, quantize_int8
    checkpoint = Checkpoint(module.params, module.official_state(), {})
    return quantize_int8(bilstm_graph(checkpoint), output)
